// Package llamaref loads the real libllama (libllama.v0.5.0.so from the npm
// package @node-llama-cpp/linux-x64@3.22.1, beside the ggml libraries
// internal/testkit/ggmlref loads) through purego, without cgo, as an oracle for
// the model runner and the tokenizers: load a GGUF model, make a context,
// decode token batches, read logits, tokenize and detokenize. OpenLinked
// loads the other build the tests use, libllama of the llama.cpp that
// llama-cpp-python 0.3.36 vendors (scripts/fetch-rpc-ref), which has ggml's
// RPC client: a model loaded there with RPC devices is the real client on
// a model.
//
// libllama passes its parameter structs (80 and 160 bytes) by value on the
// stack, which purego cannot do for structs that large; an amd64
// assembly trampoline does it, so the package works on linux/amd64 only
// and reports ErrNotAvailable elsewhere.
package llamaref

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
)

// LibName is the library's file name in the npm package.
const LibName = "libllama.v0.5.0.so"

// ErrNotAvailable reports that libllama could not be loaded.
var ErrNotAvailable = errors.New("llamaref: libllama not available")

// ErrLlama reports a call libllama refused; the message carries its last
// log lines.
var ErrLlama = errors.New("llamaref: libllama failed")

// Lib is a loaded libllama with one ggml CPU variant registered.
type Lib struct {
	dir, variant string
	libs         []*dynlib.Library
	ggml         *dynlib.Library // libggml, whose dependencies include the RPC client when built
	fn           funcs
	mu           sync.Mutex // serializes calls: the log capture is shared
	closed       bool
}

// funcs are the entry points used; all are called with purego.SyscallN
// or, for the by-value structs, through callWithStruct.
type funcs struct {
	backendInit, backendFree, modelDefault, contextDefault, modelLoad, modelFree      uintptr
	initFromModel, free, modelGetVocab, vocabNTokens, modelNEmbd, modelNCtxTrain      uintptr
	nCtx, nBatch, nUbatch, nThreads, nThreadsBatch, batchInit, batchFree, decode      uintptr
	getLogitsIth, tokenize, tokenToPiece, getMemory, memoryClear, logSet, backendLoad uintptr
	vocabBOS, vocabEOS, vocabEOT, vocabIsEOG, chatApply, modelChatTemplate            uintptr
	regDevCount, regDevGet, devName                                                   uintptr
}

var (
	defaultOnce sync.Once
	defaultLib  *Lib
	defaultErr  error
)

// Default loads libllama once per process from ggmlref's library folder,
// with the CPU variant ggmlref uses (GGML_REF_CPU_VARIANT or the best for
// this machine), so the two oracles compute alike.
func Default() (*Lib, error) {
	defaultOnce.Do(func() {
		g, err := ggmlref.Default()
		if err != nil {
			defaultErr = fmt.Errorf("%w: %w", ErrNotAvailable, err)
			return
		}
		defaultLib, defaultErr = Open(g.Dir(), g.Variant())
	})
	return defaultLib, defaultErr
}

// Open loads libllama from dir and registers the named CPU variant of
// ggml ("haswell", "x64", ...) as its only backend.
func Open(dir, variant string) (*Lib, error) {
	return open(dir, "libggml.v0.5.0.so", LibName, variant)
}

// OpenLinked loads a libllama whose ggml backends are linked in rather
// than loaded (GGML_BACKEND_DL off, as scripts/fetch-rpc-ref builds it):
// libggml-base.so, libggml.so and libllama.so from dir, with ggml's CPU
// backend and, when built, its RPC client (RPCDevices).
func OpenLinked(dir string) (*Lib, error) { return open(dir, "libggml.so", "libllama.so", "") }

// open loads the ggml libraries and libllama from dir; variant, when set,
// names the CPU backend library to load and register (the npm build's
// backends are separate libraries, one per CPU level).
func open(dir, ggmlName, llamaName, variant string) (*Lib, error) {
	if !platformOK || runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("%w: libllama is built for linux/amd64 and its by-value structs need the amd64 trampoline; this is %s/%s",
			ErrNotAvailable, runtime.GOOS, runtime.GOARCH)
	}
	cpu := filepath.Join(dir, "libggml-cpu-"+variant+".so")
	if variant != "" {
		if _, err := os.Stat(cpu); err != nil {
			return nil, fmt.Errorf("%w: CPU variant %q: %w", ErrNotAvailable, variant, err)
		}
	}
	l := &Lib{dir: dir, variant: variant}
	var llama, ggml *dynlib.Library
	// The ggml libraries first, by path: libllama's NEEDED entries then
	// resolve to them.
	for _, p := range []struct {
		name string
		dst  **dynlib.Library
	}{{"libggml-base.so", nil}, {ggmlName, &ggml}, {llamaName, &llama}} {
		lib, err := dynlib.Open(filepath.Join(dir, p.name))
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
		}
		l.libs = append(l.libs, lib)
		if p.dst != nil {
			*p.dst = lib
		}
	}
	l.ggml = ggml
	syms := []struct {
		lib  *dynlib.Library
		name string
		dst  *uintptr
	}{
		{ggml, "ggml_backend_load", &l.fn.backendLoad},
		{ggml, "ggml_backend_reg_dev_count", &l.fn.regDevCount}, {ggml, "ggml_backend_reg_dev_get", &l.fn.regDevGet},
		{ggml, "ggml_backend_dev_name", &l.fn.devName},
		{llama, "llama_backend_init", &l.fn.backendInit}, {llama, "llama_backend_free", &l.fn.backendFree},
		{llama, "llama_model_default_params", &l.fn.modelDefault}, {llama, "llama_context_default_params", &l.fn.contextDefault},
		{llama, "llama_model_load_from_file", &l.fn.modelLoad}, {llama, "llama_model_free", &l.fn.modelFree},
		{llama, "llama_init_from_model", &l.fn.initFromModel}, {llama, "llama_free", &l.fn.free},
		{llama, "llama_model_get_vocab", &l.fn.modelGetVocab}, {llama, "llama_vocab_n_tokens", &l.fn.vocabNTokens},
		{llama, "llama_model_n_embd", &l.fn.modelNEmbd}, {llama, "llama_model_n_ctx_train", &l.fn.modelNCtxTrain},
		{llama, "llama_n_ctx", &l.fn.nCtx}, {llama, "llama_n_batch", &l.fn.nBatch}, {llama, "llama_n_ubatch", &l.fn.nUbatch},
		{llama, "llama_n_threads", &l.fn.nThreads}, {llama, "llama_n_threads_batch", &l.fn.nThreadsBatch},
		{llama, "llama_batch_init", &l.fn.batchInit}, {llama, "llama_batch_free", &l.fn.batchFree},
		{llama, "llama_decode", &l.fn.decode}, {llama, "llama_get_logits_ith", &l.fn.getLogitsIth},
		{llama, "llama_tokenize", &l.fn.tokenize}, {llama, "llama_token_to_piece", &l.fn.tokenToPiece},
		{llama, "llama_get_memory", &l.fn.getMemory}, {llama, "llama_memory_clear", &l.fn.memoryClear},
		{llama, "llama_log_set", &l.fn.logSet}, {llama, "llama_vocab_bos", &l.fn.vocabBOS}, {llama, "llama_vocab_eos", &l.fn.vocabEOS},
		{llama, "llama_vocab_eot", &l.fn.vocabEOT}, {llama, "llama_vocab_is_eog", &l.fn.vocabIsEOG},
		{llama, "llama_chat_apply_template", &l.fn.chatApply}, {llama, "llama_model_chat_template", &l.fn.modelChatTemplate},
	}
	for _, s := range syms {
		p, err := s.lib.Sym(s.name)
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("%w: %w", ErrNotAvailable, err)
		}
		*s.dst = p
	}
	purego.SyscallN(l.fn.logSet, logCallback(), 0)
	if variant != "" {
		ccpu := cStr(cpu)
		reg, _, _ := purego.SyscallN(l.fn.backendLoad, uintptr(unsafe.Pointer(&ccpu[0])))
		runtime.KeepAlive(ccpu)
		if reg == 0 {
			l.Close()
			return nil, fmt.Errorf("%w: ggml_backend_load(%s) failed: %s", ErrNotAvailable, cpu, logs.last())
		}
	}
	purego.SyscallN(l.fn.backendInit)
	return l, nil
}

// Close unloads the libraries; models and contexts must be freed first.
func (l *Lib) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	if l.fn.backendFree != 0 {
		purego.SyscallN(l.fn.backendFree)
	}
	for i := len(l.libs) - 1; i >= 0; i-- {
		_ = l.libs[i].Close()
	}
	l.libs = nil
}

// Variant is the ggml CPU variant libllama computes with ("" for a build
// whose CPU backend is linked in).
func (l *Lib) Variant() string { return l.variant }

// Dir is the directory libllama and its ggml libraries were loaded from.
func (l *Lib) Dir() string { return l.dir }

// DefaultModelParams is llama_model_default_params (returned through a
// hidden pointer, so callable with SyscallN).
func (l *Lib) DefaultModelParams() ModelParams {
	var p ModelParams
	purego.SyscallN(l.fn.modelDefault, uintptr(unsafe.Pointer(&p)))
	return p
}

// DefaultContextParams is llama_context_default_params.
func (l *Lib) DefaultContextParams() ContextParams {
	var p ContextParams
	purego.SyscallN(l.fn.contextDefault, uintptr(unsafe.Pointer(&p)))
	return p
}

// logBuffer keeps libllama's recent log text: it is silenced (libllama
// logs every tensor it loads) but its last lines explain a failure.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

var logs logBuffer

func (b *logBuffer) add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, strings.TrimRight(s, "\n"))
	// A context's set-up logs a few hundred lines; keep them, but not
	// forever.
	if len(b.lines) > 8192 {
		b.lines = b.lines[len(b.lines)-4096:]
	}
}

// reset forgets what was logged.
func (b *logBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = b.lines[:0]
}

// last returns the last few lines logged.
func (b *logBuffer) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.lines)
	return strings.Join(b.lines[max(0, n-6):], " | ")
}

// all returns everything logged since reset (at most the last 4096-8192 lines).
func (b *logBuffer) all() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// logCallback is the ggml_log_callback every Lib installs; callbacks are a
// limited resource, so there is one per process.
var logCallback = sync.OnceValue(func() uintptr {
	return purego.NewCallback(func(level, text, user uintptr) {
		logs.add(goString(text))
	})
})

func cStr(s string) []byte { return append([]byte(s), 0) }

// cPtr turns an address libllama returned into a pointer: the memory is
// the library's, never the Go heap's.
func cPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	n := 0
	for *(*byte)(cPtr(p + uintptr(n))) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(cPtr(p)), n))
}
