package model_test

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// vmRSS is the process's resident size from /proc/self/status.
func vmRSS(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestResidentMemory: on the CPU the weights are the file's own pages, so
// loading and running a model grows the resident size by the file (its
// pages read) plus the session's buffers, not by a copy: at most 10% over.
func TestResidentMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	path := genFile(t, genmodel.Config{Arch: "llama", Type: quant.Q8_0, Embd: 1024, Layers: 4, Heads: 16, KVHeads: 4, FF: 2816, VocabSize: 4096, Ctx: 128})
	fi, err := os.Stat(path)
	require.NoError(t, err)
	runtime.GC()
	before := vmRSS(t)
	m, err := model.Open(path, model.Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	s, err := m.NewSession(model.SessionOptions{Ctx: 64, Batch: 16})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Generate(context.Background(), prompt(16, 4096, 0), 4, model.Sampler{}, nil)
	require.NoError(t, err)
	grow := vmRSS(t) - before - int64(s.BufferBytes())
	t.Logf("resident size grew %d KiB beyond the session's %d KiB of buffers for a %d KiB file (%.3f x)",
		grow>>10, s.BufferBytes()>>10, fi.Size()>>10, float64(grow)/float64(fi.Size()))
	require.LessOrEqual(t, grow, fi.Size()*11/10)
}
