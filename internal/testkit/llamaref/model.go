package llamaref

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// Model is a loaded llama_model.
type Model struct {
	l     *Lib
	ptr   uintptr
	vocab uintptr
	log   string
}

// LoadModel loads the GGUF model at path with the default model
// parameters (mmap on, CPU only: this build has no GPU backend).
func (l *Lib) LoadModel(path string) (*Model, error) {
	return l.LoadModelParams(path, l.DefaultModelParams())
}

// LoadModelParams loads the model at path with p.
func (l *Lib) LoadModelParams(path string, p ModelParams) (*Model, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	logs.reset()
	cpath := cStr(path)
	m := callWithStruct(l.fn.modelLoad, uintptr(unsafe.Pointer(&cpath[0])), unsafe.Pointer(&p), unsafe.Sizeof(p))
	runtime.KeepAlive(cpath)
	if m == 0 {
		return nil, fmt.Errorf("%w: llama_model_load_from_file(%s): %s", ErrLlama, path, logs.last())
	}
	v, _, _ := purego.SyscallN(l.fn.modelGetVocab, m)
	return &Model{l: l, ptr: m, vocab: v, log: logs.all()}, nil
}

// LoadLog is what libllama logged while loading the model (its last
// lines): where it placed each layer's weights ("RPC0[...] model buffer
// size = ...").
func (m *Model) LoadLog() string { return m.log }

// Free is llama_model_free; contexts of the model must be freed first.
func (m *Model) Free() {
	if m.ptr != 0 {
		purego.SyscallN(m.l.fn.modelFree, m.ptr)
		m.ptr = 0
	}
}

func (m *Model) int32Call(fn, arg uintptr) int {
	r, _, _ := purego.SyscallN(fn, arg)
	return int(int32(r))
}

// NVocab is llama_vocab_n_tokens.
func (m *Model) NVocab() int { return m.int32Call(m.l.fn.vocabNTokens, m.vocab) }

// NEmbd is llama_model_n_embd.
func (m *Model) NEmbd() int { return m.int32Call(m.l.fn.modelNEmbd, m.ptr) }

// NCtxTrain is llama_model_n_ctx_train.
func (m *Model) NCtxTrain() int { return m.int32Call(m.l.fn.modelNCtxTrain, m.ptr) }

// EOT is llama_vocab_eot (-1 when absent).
func (m *Model) EOT() int32 { return int32(m.int32Call(m.l.fn.vocabEOT, m.vocab)) }

// IsEOG is llama_vocab_is_eog: whether token ends generation.
func (m *Model) IsEOG(token int32) bool {
	r, _, _ := purego.SyscallN(m.l.fn.vocabIsEOG, m.vocab, uintptr(uint32(token)))
	return r&0xff != 0 // a C bool comes back in the low byte
}

// BOS and EOS are llama_vocab_bos and llama_vocab_eos (-1 when absent).
func (m *Model) BOS() int32 { return int32(m.int32Call(m.l.fn.vocabBOS, m.vocab)) }

// EOS is llama_vocab_eos.
func (m *Model) EOS() int32 { return int32(m.int32Call(m.l.fn.vocabEOS, m.vocab)) }

// Tokenize is llama_tokenize: addSpecial adds BOS/EOS as the vocabulary
// says, parseSpecial turns special-token text into those tokens.
func (m *Model) Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	if len(text) > math.MaxInt32 {
		return nil, fmt.Errorf("llamaref: text of %d bytes", len(text))
	}
	b := []byte(text)
	var bp uintptr
	if len(b) > 0 {
		bp = uintptr(unsafe.Pointer(&b[0]))
	}
	call := func(out []int32) int32 {
		var op uintptr
		if len(out) > 0 {
			op = uintptr(unsafe.Pointer(&out[0]))
		}
		r, _, _ := purego.SyscallN(m.l.fn.tokenize, m.vocab, bp, uintptr(len(b)), op, uintptr(len(out)),
			boolArg(addSpecial), boolArg(parseSpecial))
		runtime.KeepAlive(b)
		runtime.KeepAlive(out)
		return int32(r)
	}
	out := make([]int32, len(b)+8)
	n := call(out)
	if n < 0 {
		// Too small: libllama says how many it needs.
		if n == math.MinInt32 {
			return nil, fmt.Errorf("%w: llama_tokenize overflowed", ErrLlama)
		}
		out = make([]int32, -n)
		n = call(out)
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: llama_tokenize returned %d", ErrLlama, n)
	}
	return out[:n], nil
}

// TokenToPiece is llama_token_to_piece(token, lstrip, special).
func (m *Model) TokenToPiece(token int32, lstrip int, special bool) (string, error) {
	buf := make([]byte, 64)
	for range 2 {
		r, _, _ := purego.SyscallN(m.l.fn.tokenToPiece, m.vocab, uintptr(token), uintptr(unsafe.Pointer(&buf[0])),
			uintptr(len(buf)), uintptr(lstrip), boolArg(special))
		n := int32(r)
		if n >= 0 {
			return string(buf[:n]), nil
		}
		buf = make([]byte, -n)
	}
	return "", fmt.Errorf("%w: llama_token_to_piece(%d) did not fit", ErrLlama, token)
}

func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// ContextOptions are what a comparison sets; everything else keeps
// llama_context_default_params.
type ContextOptions struct {
	// NCtx is the context length (libllama raises small values to 256);
	// NBatch the most tokens one Decode takes (also the micro-batch size).
	NCtx, NBatch int
	// Threads computes with this many threads (0: libllama's default, 4).
	Threads int
	// FlashAttn is FlashAttnDisabled, FlashAttnEnabled or FlashAttnAuto.
	FlashAttn int32
	// TypeK and TypeV are the KV cache's ggml types (0 F32, 1 F16).
	TypeK, TypeV int32
}

// CompareOptions are the settings for logit comparisons: flash attention
// off and an F32 cache (libllama's CPU defaults, flash attention and an
// F16 cache, move logits by NMSE ~1e-7).
func CompareOptions(nCtx, nBatch, threads int) ContextOptions {
	return ContextOptions{NCtx: nCtx, NBatch: nBatch, Threads: threads, FlashAttn: FlashAttnDisabled}
}

// Context is a llama_context with one sequence and a batch for Decode. It
// is not safe for concurrent use.
type Context struct {
	m      *Model
	ptr    uintptr
	batch  Batch
	nBatch int
	nVocab int
}

// NewContext is llama_init_from_model with o.
func (m *Model) NewContext(o ContextOptions) (*Context, error) {
	if o.NCtx <= 0 || o.NBatch <= 0 || o.NCtx > math.MaxInt32 || o.NBatch > math.MaxInt32 || o.Threads < 0 {
		return nil, fmt.Errorf("llamaref: context of %d tokens, batches of %d, %d threads", o.NCtx, o.NBatch, o.Threads)
	}
	l := m.l
	p := l.DefaultContextParams()
	p.NCtx, p.NBatch, p.NUbatch = uint32(o.NCtx), uint32(o.NBatch), uint32(o.NBatch)
	if o.Threads > 0 {
		p.NThreads, p.NThreadsBatch = int32(o.Threads), int32(o.Threads)
	}
	p.FlashAttnType, p.TypeK, p.TypeV = o.FlashAttn, o.TypeK, o.TypeV
	l.mu.Lock()
	logs.reset()
	ptr := callWithStruct(l.fn.initFromModel, m.ptr, unsafe.Pointer(&p), unsafe.Sizeof(p))
	l.mu.Unlock()
	if ptr == 0 {
		return nil, fmt.Errorf("%w: llama_init_from_model: %s", ErrLlama, logs.last())
	}
	c := &Context{m: m, ptr: ptr, nBatch: o.NBatch, nVocab: m.NVocab()}
	// llama_batch_init(n_tokens, embd = 0, n_seq_max = 1) returns the
	// struct through a hidden pointer.
	purego.SyscallN(l.fn.batchInit, uintptr(unsafe.Pointer(&c.batch)), uintptr(o.NBatch), 0, 1)
	if c.batch.Token == 0 {
		c.Free()
		return nil, fmt.Errorf("%w: llama_batch_init(%d) failed", ErrLlama, o.NBatch)
	}
	return c, nil
}

// Settings are the values the context reports having taken.
type Settings struct{ NCtx, NBatch, NUbatch, Threads, ThreadsBatch int }

// Settings asks the context for its sizes and threads (llama_n_ctx, ...).
func (c *Context) Settings() Settings {
	g := func(fn uintptr) int { r, _, _ := purego.SyscallN(fn, c.ptr); return int(int32(r)) }
	f := c.m.l.fn
	return Settings{NCtx: g(f.nCtx), NBatch: g(f.nBatch), NUbatch: g(f.nUbatch), Threads: g(f.nThreads), ThreadsBatch: g(f.nThreadsBatch)}
}

// Log returns what libllama logged since the last load or context creation
// (its last lines): how it set the context up.
func (c *Context) Log() string { return logs.all() }

// Free frees the batch and the context.
func (c *Context) Free() {
	f := c.m.l.fn
	if c.batch.Token != 0 {
		callWithStruct(f.batchFree, 0, unsafe.Pointer(&c.batch), unsafe.Sizeof(c.batch))
		c.batch = Batch{}
	}
	if c.ptr != 0 {
		purego.SyscallN(f.free, c.ptr)
		c.ptr = 0
	}
}

// ClearMemory empties the KV cache (llama_memory_clear with its data), so
// the next Decode starts a new sequence at position 0.
func (c *Context) ClearMemory() {
	mem, _, _ := purego.SyscallN(c.m.l.fn.getMemory, c.ptr)
	purego.SyscallN(c.m.l.fn.memoryClear, mem, 1)
}

// Decode runs tokens of sequence 0 at positions pos0, pos0+1, ... through
// llama_decode. outputs[i] asks for token i's logits; nil asks for all.
func (c *Context) Decode(tokens []int32, pos0 int, outputs []bool) error {
	if len(tokens) == 0 || len(tokens) > c.nBatch {
		return fmt.Errorf("llamaref: %d tokens in a batch of at most %d", len(tokens), c.nBatch)
	}
	if outputs != nil && len(outputs) != len(tokens) {
		return fmt.Errorf("llamaref: %d outputs for %d tokens", len(outputs), len(tokens))
	}
	n := len(tokens)
	b := &c.batch
	token := unsafe.Slice((*int32)(cPtr(b.Token)), n)
	pos := unsafe.Slice((*int32)(cPtr(b.Pos)), n)
	nSeq := unsafe.Slice((*int32)(cPtr(b.NSeqID)), n)
	seq := unsafe.Slice((*uintptr)(cPtr(b.SeqID)), n)
	logits := unsafe.Slice((*int8)(cPtr(b.Logits)), n)
	for i, t := range tokens {
		if t < 0 || int(t) >= c.nVocab {
			return fmt.Errorf("llamaref: token %d outside the vocabulary of %d", t, c.nVocab)
		}
		token[i], pos[i], nSeq[i] = t, int32(pos0+i), 1
		*(*int32)(cPtr(seq[i])) = 0
		logits[i] = 0
		if outputs == nil || outputs[i] {
			logits[i] = 1
		}
	}
	b.NTokens = int32(n)
	// Decoding runs on the thread kept for ggml's AMX code: where the
	// sapphirerapids build holds weights in its AMX buffer, a tile load
	// on a thread our amx level ran on would fault.
	var r int32
	ggmlref.OnAMXThread(func() { r = int32(callWithStruct(c.m.l.fn.decode, c.ptr, unsafe.Pointer(b), unsafe.Sizeof(*b))) })
	if r != 0 {
		return fmt.Errorf("%w: llama_decode returned %d: %s", ErrLlama, r, logs.last())
	}
	return nil
}

// ErrNoLogits reports a batch position whose logits were not requested.
var ErrNoLogits = errors.New("llamaref: no logits for that position")

// Logits returns the logits of token i of the last Decode (n_vocab
// floats, copied), which must have asked for them.
func (c *Context) Logits(i int) ([]float32, error) {
	if i < 0 || i >= int(c.batch.NTokens) {
		return nil, fmt.Errorf("%w: %d of %d tokens", ErrNoLogits, i, c.batch.NTokens)
	}
	if *(*int8)(cPtr(c.batch.Logits + uintptr(i))) == 0 {
		return nil, fmt.Errorf("%w: token %d", ErrNoLogits, i)
	}
	r, _, _ := purego.SyscallN(c.m.l.fn.getLogitsIth, c.ptr, uintptr(i))
	if r == 0 {
		return nil, fmt.Errorf("%w: llama_get_logits_ith(%d): %s", ErrNoLogits, i, logs.last())
	}
	return append([]float32(nil), unsafe.Slice((*float32)(cPtr(r)), c.nVocab)...), nil
}

// Evaluate decodes tokens at positions pos0, ... in calls of the given
// sizes (which must add up to len(tokens); nil: calls of the batch size)
// and returns every position's logits: the shape of a prompt comparison.
func (c *Context) Evaluate(tokens []int32, pos0 int, calls []int) ([][]float32, error) {
	if calls == nil {
		for n := len(tokens); n > 0; n -= min(n, c.nBatch) {
			calls = append(calls, min(n, c.nBatch))
		}
	}
	out := make([][]float32, 0, len(tokens))
	done := 0
	for _, n := range calls {
		if n <= 0 || done+n > len(tokens) {
			return nil, fmt.Errorf("llamaref: calls %v do not split %d tokens", calls, len(tokens))
		}
		if err := c.Decode(tokens[done:done+n], pos0+done, nil); err != nil {
			return nil, err
		}
		for i := range n {
			lg, err := c.Logits(i)
			if err != nil {
				return nil, err
			}
			out = append(out, lg)
		}
		done += n
	}
	if done != len(tokens) {
		return nil, fmt.Errorf("llamaref: calls %v do not split %d tokens", calls, len(tokens))
	}
	return out, nil
}

// Greedy decodes prompt from position 0 and then n tokens, each the
// argmax (lowest id on ties) of the previous position's logits, stopping
// after an end-of-generation token (llama_vocab_is_eog: EOS, EOT, ...), as
// llama-cli stops. It returns the generated tokens.
func (c *Context) Greedy(prompt []int32, n int) ([]int32, error) {
	if len(prompt) == 0 {
		return nil, fmt.Errorf("llamaref: empty prompt")
	}
	var last []float32
	for done := 0; done < len(prompt); {
		k := min(len(prompt)-done, c.nBatch)
		outputs := make([]bool, k)
		outputs[k-1] = true
		if err := c.Decode(prompt[done:done+k], done, outputs); err != nil {
			return nil, err
		}
		var err error
		if last, err = c.Logits(k - 1); err != nil {
			return nil, err
		}
		done += k
	}
	var gen []int32
	for len(gen) < n {
		best := int32(0)
		for i, v := range last {
			if v > last[best] {
				best = int32(i)
			}
		}
		gen = append(gen, best)
		if c.m.IsEOG(best) || len(gen) == n {
			break
		}
		if err := c.Decode([]int32{best}, len(prompt)+len(gen)-1, nil); err != nil {
			return nil, err
		}
		var err error
		if last, err = c.Logits(0); err != nil {
			return nil, err
		}
	}
	return gen, nil
}
