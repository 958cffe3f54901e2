package rpcref

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ggml-go/ggml/internal/testkit/llamaref"
)

// openLlama loads the peer's libllama once per process.
var openLlama = sync.OnceValues(func() (*llamaref.Lib, error) {
	dir, err := LibDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "libllama.so")); err != nil {
		return nil, fmt.Errorf("%w: %s has no libllama.so (run scripts/fetch-rpc-ref, which builds it since the real client's model runs)", ErrNotAvailable, dir)
	}
	return llamaref.OpenLinked(dir)
})

// Llama returns libllama of the peer's llama.cpp (llama-cpp-python
// 0.3.36), with ggml's RPC client: the real client on a model. A missing
// build skips the test (fails it when GGML_REF_REQUIRED=1, as in CI).
func Llama(t testing.TB) *llamaref.Lib {
	t.Helper()
	l, err := openLlama()
	if err != nil {
		skipOrFail(t, err)
	}
	return l
}

// OpenLlama is Llama for programs (ggml bench rpc): the peer's libllama,
// loaded once per process, or why it cannot be.
func OpenLlama() (*llamaref.Lib, error) { return openLlama() }

// LlamaRun is what LlamaSteps measured.
type LlamaRun struct {
	// Logits are every position's: the prompt's, then each step's.
	Logits [][]float32
	// PerToken is one decode step's time.
	PerToken time.Duration
	// Wire is traffic's growth per decode step.
	Wire uint64
}

// LlamaSteps evaluates, in a fresh context of m, a prompt of the given
// length, then steps single tokens one at a time, keeping every
// position's logits (the tokens spread over the vocabulary as the RPC
// device's model tests pick them); traffic, when set, counts the bytes on
// the wire.
func LlamaSteps(m *llamaref.Model, prompt, steps int, traffic func() uint64) (LlamaRun, error) {
	var r LlamaRun
	c, err := m.NewContext(llamaref.CompareOptions(prompt+steps, prompt, 1))
	if err != nil {
		return r, err
	}
	defer c.Free()
	n := m.NVocab()
	tokens := make([]int32, prompt)
	for i := range tokens {
		tokens[i] = int32((i*37 + 11) % n)
	}
	if r.Logits, err = c.Evaluate(tokens, 0, nil); err != nil {
		return r, err
	}
	if traffic == nil {
		traffic = func() uint64 { return 0 }
	}
	w0 := traffic()
	start := time.Now()
	for i := range steps {
		lg, err := c.Evaluate([]int32{int32((i*53 + 7) % n)}, prompt+i, nil)
		if err != nil {
			return r, err
		}
		r.Logits = append(r.Logits, lg...)
	}
	r.PerToken = time.Since(start) / time.Duration(steps)
	r.Wire = (traffic() - w0) / uint64(steps)
	return r, nil
}
