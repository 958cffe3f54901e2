package rpcref

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

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
