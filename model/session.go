package model

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// SessionOptions configure NewSession.
type SessionOptions struct {
	// Ctx is the longest sequence the session holds; 0 takes the model's
	// training context, at most 4096. The cache has Ctx cells rounded up
	// to a multiple of 64 (cachePad).
	Ctx int
	// Batch is the most tokens one graph computes; longer inputs to Decode
	// are cut into batches of this size. 0 means 512 (at most Ctx).
	Batch int
	// FlashAttn computes attention with FLASH_ATTN_EXT (V cache not
	// transposed) instead of MUL_MAT, SOFT_MAX and MUL_MAT.
	FlashAttn bool
	// CacheType is the KV cache's type: quant.F32 (the zero value) or
	// quant.F16 (llama.cpp's default, half the memory).
	CacheType quant.Type
}

// Session is one sequence decoded with a model: its KV cache and the
// scheduler computing its graphs. One call at a time: a Decode, Generate
// or Close while another call of the same session runs returns ErrBusy
// instead of corrupting the cache.
type Session struct {
	m      *Model
	opts   SessionOptions
	vTrans bool
	// cells is the KV cache's length: opts.Ctx padded to cachePad.
	cells int
	// stepPad is the multiple of cells a one-token step attends over:
	// cpuStepKVPad or stepKVPad.
	stepPad int
	k, v    []*graph.Tensor
	caches  []buffer.Buffer // the KV cache, one buffer per device holding layers
	sched   *backend.Scheduler
	// nPast is how many positions the cache holds (cell i is position i).
	nPast int
	// busy is set for the duration of a call (enter/leave).
	busy atomic.Bool
	// closed is why the session may not be used: nil while open.
	closed error
	// timings are the last Generate's.
	timings Timings
	// cur is the graph of the last batch, still placed by the scheduler
	// (nil when none is: before the first batch, after a failure): a batch
	// of the same shape computes it again with new inputs.
	cur *batchGraph
	// last is the graph of the last batch, for Placement.
	last *graph.Graph
	// scratch holds the input bytes and the logits read back, reused by
	// every batch.
	scratch inputScratch
}

// batchGraph is a built and placed graph with its inputs and its logits.
type batchGraph struct {
	bs     batchShape
	g      *graph.Graph
	in     batchInputs
	logits *graph.Tensor
}

// inputScratch is memory setInputs and decodeBatch reuse across batches,
// so that a decoded token allocates only the logits it returns.
type inputScratch struct {
	tokens, pos, kIdx, vIdx, mask, maskSWA, outIDs, logits []byte
	idx                                                    []int32
}

// NewSession makes a session with an empty KV cache in the model's device
// memory and sizes the compute buffers for the largest batch.
func (m *Model) NewSession(opts SessionOptions) (s *Session, err error) {
	if m.closed {
		return nil, errModelClosed
	}
	h := &m.HParams
	if opts.Ctx == 0 {
		opts.Ctx = min(max(h.NCtxTrain, 1), 4096)
	}
	if opts.Batch == 0 {
		opts.Batch = 512
	}
	if opts.Ctx < 0 || opts.Batch < 0 {
		return nil, fmt.Errorf("%w: context %d, batch %d", ErrArgument, opts.Ctx, opts.Batch)
	}
	opts.Batch = min(opts.Batch, opts.Ctx)
	if opts.CacheType != quant.F32 && opts.CacheType != quant.F16 {
		return nil, fmt.Errorf("%w: KV cache type %s (F32 or F16)", ErrArgument, opts.CacheType)
	}
	s = &Session{m: m, opts: opts, vTrans: !opts.FlashAttn, cells: int(padTo(int64(opts.Ctx), cachePad)), stepPad: stepKVPad}
	if !opts.FlashAttn && m.onCPU() {
		s.stepPad = cpuStepKVPad
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
			s = nil
		}
	}()
	c := graph.NewContext(graph.ContextOptions{})
	var devs []backend.Device // in first use order
	byDev := map[backend.Device][]*graph.Tensor{}
	for il := range h.NLayer {
		k := c.SetName(c.NewTensor(opts.CacheType, int64(h.NEmbdKGQA(il)), int64(s.cells)), fmt.Sprintf("cache_k_l%d", il))
		v := c.SetName(c.NewTensor(opts.CacheType, int64(h.NEmbdVGQA(il)), int64(s.cells)), fmt.Sprintf("cache_v_l%d", il))
		s.k, s.v = append(s.k, k), append(s.v, v)
		d := m.cacheDevice(opts.CacheType, m.layerDev[il])
		if byDev[d] == nil {
			devs = append(devs, d)
		}
		byDev[d] = append(byDev[d], k, v)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	for _, d := range devs {
		b, err := buffer.AllocTensors(d.BufferType(), byDev[d])
		if err != nil {
			return nil, fmt.Errorf("%w: KV cache of %d cells on %s: %w", ErrMemory, s.cells, d.Name(), err)
		}
		s.caches = append(s.caches, b)
		// Masked cells are multiplied by zero weights: they must hold
		// finite values, as llama.cpp clears its cache buffer.
		if err := b.Clear(0); err != nil {
			return nil, err
		}
	}
	if s.sched, err = backend.NewScheduler(m.backends, backend.SchedulerOptions{}); err != nil {
		return nil, err
	}
	b := &builder{s: s, c: graph.NewContext(graph.ContextOptions{}), g: graph.NewGraph(),
		bs: batchShape{nTokens: opts.Batch, nKV: s.cells, nOutputs: opts.Batch}}
	if _, err := b.build(); err != nil {
		return nil, err
	}
	if err := s.sched.Reserve(b.g); err != nil {
		return nil, fmt.Errorf("model: sizing compute buffers: %w", err)
	}
	m.mu.Lock()
	if m.sessions == nil {
		m.sessions = map[*Session]struct{}{}
	}
	m.sessions[s] = struct{}{}
	m.mu.Unlock()
	return s, nil
}

var (
	errSessionClosed = fmt.Errorf("%w: session closed", ErrArgument)
	errModelClosed   = fmt.Errorf("%w: model closed", ErrArgument)
)

// enter marks the session busy for one call, or says why it cannot be
// used: closed, or busy with another call. leave ends the call.
func (s *Session) enter() error {
	if !s.busy.CompareAndSwap(false, true) {
		return ErrBusy
	}
	if s.closed != nil {
		s.busy.Store(false)
		return s.closed
	}
	return nil
}

func (s *Session) leave() { s.busy.Store(false) }

// cacheDevice is where a layer's KV cache lives: the layer's device d when
// it writes cache rows (SET_ROWS) of type typ, else the CPU, which always
// does.
func (m *Model) cacheDevice(typ quant.Type, d backend.Device) backend.Device {
	c := graph.NewContext(graph.ContextOptions{})
	probe := c.SetRows(c.NewTensor(typ, 64, 4), c.NewTensor(quant.F32, 64, 1), c.NewTensor(quant.I64, 1))
	if probe != nil && d.SupportsOp(probe) {
		return d
	}
	return m.backends[len(m.backends)-1].Device()
}

// BufferBytes is the device memory the session holds: its KV cache and the
// scheduler's compute buffers (the model's weights not included).
func (s *Session) BufferBytes() uint64 {
	var n uint64
	for _, c := range s.caches {
		n += c.Size()
	}
	for _, b := range s.m.backends {
		n += s.sched.BufferSize(b)
	}
	return n
}

// Placement is where the scheduler put the last batch's graph: its
// number of splits and how many nodes each backend computed, by device
// name. Tests use it to show that a device did the work rather than the
// CPU fallback; it is empty before the first Decode.
func (s *Session) Placement() (splits int, nodes map[string]int) {
	nodes = map[string]int{}
	if s.last == nil || s.sched == nil {
		return 0, nodes
	}
	for _, t := range s.last.Nodes {
		if b := s.sched.TensorBackend(t); b != nil {
			nodes[b.Device().Name()]++
		}
	}
	return s.sched.NSplits(), nodes
}

// Pos is the number of positions the session's cache holds: the position
// the next token gets.
func (s *Session) Pos() int { return s.nPast }

// Ctx is the session's context length (cache cells).
func (s *Session) Ctx() int { return s.opts.Ctx }

// Reset empties the cache: the next Decode starts at position 0.
func (s *Session) Reset() { s.nPast = 0 }

// Decode runs tokens through the model at the next positions, appending
// them to the cache, in batches of at most SessionOptions.Batch tokens.
// logits[i] asks for token i's logits; nil asks for the last token's only.
// The result has one entry per token: its logits (n_vocab values), or nil
// when not asked. When ctx ends between batches, the tokens decoded so far
// stay in the cache and the error wraps ctx.Err().
func (s *Session) Decode(ctx context.Context, tokens []int32, logits []bool) ([][]float32, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	return s.decode(ctx, tokens, logits, nil)
}

// DecodeInto is Decode writing into out (one entry per token) where it is
// given: a row already n_vocab long is overwritten rather than made, as
// llama_get_logits hands out one buffer for every call. A loop decoding
// token by token then allocates nothing per token (Gemma 3's 262,144
// logits made afresh were a megabyte of garbage a token).
func (s *Session) DecodeInto(ctx context.Context, tokens []int32, logits []bool, out [][]float32) ([][]float32, error) {
	if out != nil && len(out) != len(tokens) {
		return nil, fmt.Errorf("%w: %d output rows for %d tokens", ErrArgument, len(out), len(tokens))
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	return s.decode(ctx, tokens, logits, out)
}

// decode is Decode, in a call already entered, writing into out when it
// is given (one entry per token): a row already n_vocab long is
// overwritten rather than made, so that Generate reuses one row for every
// token.
func (s *Session) decode(ctx context.Context, tokens []int32, logits []bool, out [][]float32) ([][]float32, error) {
	if logits != nil && len(logits) != len(tokens) {
		return nil, fmt.Errorf("%w: %d logits flags for %d tokens", ErrArgument, len(logits), len(tokens))
	}
	if s.nPast+len(tokens) > s.opts.Ctx {
		return nil, fmt.Errorf("%w: %d tokens after %d of %d cells", ErrContextFull, len(tokens), s.nPast, s.opts.Ctx)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= s.m.HParams.NVocab {
			return nil, fmt.Errorf("%w: token %d (index %d) outside the %d-token vocabulary", ErrArgument, t, i, s.m.HParams.NVocab)
		}
	}
	if logits == nil && len(tokens) > 0 {
		logits = make([]bool, len(tokens))
		logits[len(logits)-1] = true
	}
	if out == nil {
		out = make([][]float32, len(tokens))
	}
	for i := 0; i < len(tokens); i += s.opts.Batch {
		j := min(i+s.opts.Batch, len(tokens))
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("model: decode stopped after %d tokens: %w", i, err)
		}
		if err := s.decodeBatch(ctx, tokens[i:j], logits[i:j], out[i:j]); err != nil {
			return out, err
		}
	}
	return out, nil
}

// stepKVPad, cpuStepKVPad and batchKVPad are the multiples of cells a
// batch attends over. One token, or with flash attention: 256, llama.cpp's
// (llama_kv_cache::get_n_kv pads every batch so). The padding is part of a
// one-token step's arithmetic: its P·V product sums as ggml_vec_dot_f32
// does, the cells past its last whole step (64 floats on AVX-512, 32 on
// AVX2, 16 on NEON) in a scalar loop after the vector sums, so the same
// live cells padded to 288 or to 512 sum otherwise (SmolLM2's prompt 1
// parted from libllama at position 256 when steps padded to 32). Any
// multiple of 64 leaves that loop empty, and the cells past the live ones
// add exact zeros to every vector sum (their weights are zero, their
// values finite): on the CPU device alone, without flash attention, a
// step attends over 64-cell multiples, libllama's sums with up to four
// times less of the cache read (TestDecodeStepsMatchLlama steps one token
// at a time across 256 cells). Other devices keep 256: their graphs are
// compiled per shape (OpenVINO), and their sums are not ggml's to reason
// about. A batch of two tokens or more takes llamafile's sgemm for P·V,
// one sum per output over 16 cells (8 on AVX2) at a time, where the
// padding's zero weights add nothing exactly (as to SOFT_MAX's sums, and
// Q·K is per cell): 32 gives libllama's sums there with less work (a
// 64-token prompt of SmolLM2 computed in 186 ms against 250-270 padded to
// 256, load 2.4).
const (
	stepKVPad    = 256
	cpuStepKVPad = 64
	batchKVPad   = 32
)

// cachePad is the multiple of cells the KV cache is allocated in, so that
// the cells a batch attends over, capped at the cache's end, are never
// other than libllama's in their sums: llama.cpp rounds n_ctx up to 256
// (a context of 100 has 256 cells there), and a one-token step over a
// cache of 100 cells summed cells 64-99 in ggml_vec_dot_f32's leftover
// loop where libllama's 256 have none (the amx level parted from the
// sapphirerapids build from position 64, TestDecodeStepsMatchLlama). 64,
// the widest one-column step (AVX-512's) and a multiple of the others,
// gives the same sums with less memory than 256: past the live cells
// every weight is an exact zero.
const cachePad = 64

// nKV is how many cells a batch of n tokens ending at position end
// attends over, padded (stepKVPad, batchKVPad) so that every sum is
// libllama's and graphs of nearby lengths have the same shape.
func (s *Session) nKV(end, n int) int {
	pad := int64(batchKVPad)
	if n == 1 || s.opts.FlashAttn {
		pad = int64(s.stepPad)
	}
	return int(min(padTo(int64(end), pad), int64(s.cells)))
}

func (s *Session) decodeBatch(ctx context.Context, tokens []int32, want []bool, out [][]float32) error {
	outIdx := s.scratch.outIdx(want)
	n := len(tokens)
	bs := batchShape{nTokens: n, nKV: s.nKV(s.nPast+n, n), nOutputs: max(len(outIdx), 1)}
	if len(outIdx) == 0 {
		// The graph always produces a row; llama.cpp computes the last.
		outIdx = []int32{int32(n - 1)}
	}
	bg, err := s.placedGraph(bs)
	if err != nil {
		return err
	}
	if err := s.setInputs(&bg.in, bs, tokens, outIdx); err != nil {
		s.dropGraph()
		return err
	}
	if err := s.sched.GraphComputeContext(ctx, bg.g); err != nil {
		s.dropGraph()
		return fmt.Errorf("model: computing: %w", err)
	}
	s.nPast += n
	if len(outIdx) > 0 && want[outIdx[0]] {
		nv := s.m.HParams.NVocab
		if littleEndian {
			// The tensor's little-endian floats are the rows' own
			// bytes: each row is read straight into its memory (the
			// conversion loop was 2% of Gemma 3's decode step).
			for r, i := range outIdx {
				row := out[i]
				if len(row) != nv {
					row = make([]float32, nv)
				}
				if err := buffer.GetTensor(bg.logits, floatBytes(row), uint64(4*r*nv)); err != nil {
					return fmt.Errorf("model: reading logits: %w", err)
				}
				out[i] = row
			}
			return nil
		}
		raw := grow(&s.scratch.logits, int(bg.logits.NBytes()))
		if err := buffer.GetTensor(bg.logits, raw, 0); err != nil {
			return fmt.Errorf("model: reading logits: %w", err)
		}
		for r, i := range outIdx {
			row := out[i]
			if len(row) != nv {
				row = make([]float32, nv)
			}
			for j := range row {
				row[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(r*nv+j):]))
			}
			out[i] = row
		}
	}
	return nil
}

// placedGraph returns the graph of a batch of shape bs, placed by the
// scheduler. The graph depends on the batch only through its shape (the
// tokens, positions, cache cells, mask and output rows are input tensors),
// so while the shape stays the same, as it does for 256 consecutive
// tokens of generation, the last graph is computed
// again with new inputs: nothing is built, split or placed per token, and
// a device caching its compiled graph sees the same graph.
func (s *Session) placedGraph(bs batchShape) (*batchGraph, error) {
	if s.cur != nil && s.cur.bs == bs {
		return s.cur, nil
	}
	s.dropGraph()
	b := &builder{s: s, c: graph.NewContext(graph.ContextOptions{}), g: graph.NewGraph(), bs: bs}
	res, err := b.build()
	if err != nil {
		return nil, err
	}
	if err := s.sched.AllocGraph(b.g); err != nil {
		return nil, fmt.Errorf("model: placing the graph: %w", err)
	}
	s.cur = &batchGraph{bs: bs, g: b.g, in: b.in, logits: res}
	s.last = b.g
	return s.cur, nil
}

// dropGraph forgets the placed graph; the next batch builds and places its
// own. After a failed batch the scheduler's state is not trusted.
func (s *Session) dropGraph() {
	s.cur = nil
	s.sched.Reset()
}

// outIdx lists the indices of the tokens whose logits are wanted, in
// memory reused by the next batch.
func (sc *inputScratch) outIdx(want []bool) []int32 {
	sc.idx = sc.idx[:0]
	for i, w := range want {
		if w {
			sc.idx = append(sc.idx, int32(i))
		}
	}
	return sc.idx
}

// grow returns (*buf)[:n], reallocating *buf when it is shorter.
func grow(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	return (*buf)[:n]
}

// setInputs writes a batch's tokens, positions, cache cells, mask and
// output rows into the tensors the scheduler placed.
func (s *Session) setInputs(in *batchInputs, bs batchShape, tokens, outIdx []int32) error {
	sc := &s.scratch
	n := len(tokens)
	i32 := func(buf *[]byte, vs []int32) []byte {
		raw := grow(buf, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
		}
		return raw
	}
	pos := grow(&sc.pos, 4*n)
	kIdx := grow(&sc.kIdx, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint32(pos[4*i:], uint32(s.nPast+i))
		binary.LittleEndian.PutUint64(kIdx[8*i:], uint64(s.nPast+i))
	}
	vIdx := kIdx
	if s.vTrans {
		kvDim := s.m.HParams.NEmbdVGQA(0)
		vIdx = grow(&sc.vIdx, 8*n*kvDim)
		for i := range n {
			for j := range kvDim {
				binary.LittleEndian.PutUint64(vIdx[8*(i*kvDim+j):], uint64(j*s.cells+s.nPast+i))
			}
		}
	}
	mask := s.fillMask(&sc.mask, in.mask, bs, n, 0)
	var maskSWA []byte
	if in.maskSWA != nil {
		maskSWA = s.fillMask(&sc.maskSWA, in.maskSWA, bs, n, s.m.HParams.SlidingWindow)
	}
	sets := [...]struct {
		t    *graph.Tensor
		data []byte
	}{
		{in.tokens, i32(&sc.tokens, tokens)}, {in.pos, pos}, {in.kIdx, kIdx}, {in.vIdx, vIdx}, {in.mask, mask},
		{in.maskSWA, maskSWA}, {in.outIDs, i32(&sc.outIDs, outIdx)},
	}
	for _, x := range sets {
		if x.t == nil {
			continue
		}
		if err := buffer.SetTensor(x.t, x.data, 0); err != nil {
			return fmt.Errorf("model: setting %s: %w", x.t.Name, err)
		}
	}
	return nil
}

// fillMask writes a batch's attention mask into *buf: token i at position
// nPast+i sees cells 0..nPast+i, and with a window only those fewer than
// window positions back (llama.cpp's is_masked_swa); other cells and the
// padding rows are -inf.
func (s *Session) fillMask(buf *[]byte, t *graph.Tensor, bs batchShape, n, window int) []byte {
	rows := int(t.Ne[1])
	mask := grow(buf, 4*bs.nKV*rows)
	negInf := math.Float32bits(float32(math.Inf(-1)))
	for r := range rows {
		p := s.nPast + r
		for cell := range bs.nKV {
			v := negInf
			if r < n && cell <= p && (window == 0 || p-cell < window) {
				v = 0
			}
			binary.LittleEndian.PutUint32(mask[4*(r*bs.nKV+cell):], v)
		}
	}
	return mask
}

// Close frees the cache and the scheduler's buffers. Closing again, or
// after Model.Close closed the session, does nothing; closing while
// another call of the session runs returns ErrBusy.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	return s.closeBy(errSessionClosed)
}

// closeBy closes s; why is what its later calls return.
func (s *Session) closeBy(why error) error {
	if err := s.enter(); err != nil {
		if errors.Is(err, ErrBusy) {
			return fmt.Errorf("model: closing a session: %w", err)
		}
		return nil // closed already
	}
	defer s.leave()
	s.closed = why
	s.m.mu.Lock()
	delete(s.m.sessions, s)
	s.m.mu.Unlock()
	var errs []error
	if s.sched != nil {
		errs = append(errs, s.sched.Close())
	}
	for _, c := range s.caches {
		errs = append(errs, c.Free())
	}
	return errors.Join(errs...)
}

// littleEndian reports whether this machine stores a float32 as the
// little-endian bytes tensors hold.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatBytes views f's memory as bytes.
func floatBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}
