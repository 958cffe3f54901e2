package main

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/npmvocab"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

func TestRunGenerated(t *testing.T) {
	// Not the best device: this binary's RPC tests leave RPC devices
	// registered whose servers have stopped (TestRunArguments shows the
	// choice).
	t.Setenv("GGML_DEVICE", "CPU")
	t.Setenv("GGML_MODELS_CACHE", t.TempDir()) // no SmolLM2 there
	code, out, errOut := runCmd("run", "-n", "5", "-threads", "2")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "generated a random-weight llama model")
	require.Contains(t, out, "scripts/fetch-models")
	require.Contains(t, out, "\n[1 2 3 4 5 6 7 8] ", "the prompt echoed before the tokens")
	require.Contains(t, out, "prompt: 8 tokens in ")
	require.Contains(t, out, "generation: 5 tokens in ", "the tokens -n asks for")
	require.Contains(t, out, "(4 decoded, ")
	require.Regexp(t, `\nran on: CPU \d+ nodes \(1 split\)\n`, out)
}

// TestRunArguments: what the command line gets wrong is refused, once
// and as a sentence, before any model is generated or loaded (the file
// given does not exist: loading it would fail otherwise).
func TestRunArguments(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.gguf")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-m", missing}, "ggml run: give a prompt with -p or -tokens\n"},
		{[]string{"-m", missing, "-tokens", "1,x"}, "ggml run: -tokens: \"x\" is not a token id\n"},
		{[]string{"-m", missing, "-tokens", "1,-2"}, "ggml run: -tokens: token id -2 is negative\n"},
		{[]string{"-m", missing, "-p", "a", "-tokens", "1"}, "ggml run: -p and -tokens exclude each other\n"},
		{[]string{"-m", missing, "-p", "a", "-device", "NOPE"}, "ggml run: -device: backend: no such device: \"NOPE\" (have "},
		{[]string{"-device", "CPU:x"}, "ggml run: -device: backend: bad argument: "},
	} {
		code, out, errOut := runCmd(append([]string{"run"}, c.args...)...)
		require.Equal(t, 2, code, "%q: %s", c.args, errOut)
		require.Empty(t, out, "%q: nothing generated or loaded", c.args)
		require.True(t, strings.HasPrefix(errOut, c.want), "%q: %s", c.args, errOut)
		require.LessOrEqual(t, strings.Count(errOut, "(have"), 1, "the devices listed once at most: %s", errOut)
		require.NotContains(t, errOut, "usage:")
	}
	// GGML_DEVICE is honoured: a bad value is an error, a good one runs.
	t.Setenv("GGML_DEVICE", "garbage")
	code, _, errOut := runCmd("run", "-n", "1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `GGML_DEVICE: backend: no such device: "garbage"`)
	t.Setenv("GGML_DEVICE", "CPU")
	code, out, errOut := runCmd("run", "-n", "1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "on CPU\n")
}

// TestRunText: a prompt's text is echoed before the text generated.
func TestRunText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spm.gguf")
	err := genmodel.WriteFile(path, genmodel.Config{Arch: "llama", Vocab: "spm", Type: quant.Q8_0, Embd: 32, Layers: 1, Heads: 2, KVHeads: 1, FF: 32})
	if errors.Is(err, npmvocab.ErrMissing) && os.Getenv(ggmlref.EnvRequired) != "1" {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Setenv("GGML_DEVICE", "CPU") // as in TestRunGenerated
	code, out, errOut := runCmd("run", "-m", path, "-p", "Once upon a time", "-n", "4", "-threads", "1")
	require.Equal(t, 0, code, errOut)
	// After the model line and the line saying the file has no chat
	// template (so the prompt goes in as it is).
	lines := strings.Split(out, "\n")
	require.Contains(t, lines[1], "chat template: none", out)
	require.True(t, strings.HasPrefix(lines[2], "Once upon a time"), out)
	require.Greater(t, len(lines[2]), len("Once upon a time"), "the generated text follows")
}

func TestRunLogits(t *testing.T) {
	t.Setenv("GGML_DEVICE", "CPU") // as in TestRunGenerated
	dir := t.TempDir()
	path := filepath.Join(dir, "m.gguf")
	c := genmodel.Config{Arch: "qwen2", Type: quant.Q8_0, Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, VocabSize: 100}
	require.NoError(t, genmodel.WriteFile(path, c))
	lg := filepath.Join(dir, "logits.bin")
	code, out, errOut := runCmd("run", "-m", path, "-tokens", "3,1,4,1,5", "-n", "3", "-logits", lg, "-temp", "0.7", "-top-k", "20", "-seed", "9")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "qwen2, 2 layers")
	raw, err := os.ReadFile(lg)
	require.NoError(t, err)
	require.Len(t, raw, 5*100*4)

	// The file holds what the API computes for every position.
	m, err := model.Open(path, model.Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	s, err := m.NewSession(model.SessionOptions{})
	require.NoError(t, err)
	defer s.Close()
	want, err := s.Decode(context.Background(), []int32{3, 1, 4, 1, 5}, []bool{true, true, true, true, true})
	require.NoError(t, err)
	for i, row := range want {
		for j, v := range row {
			require.Equal(t, v, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i*100+j):])))
		}
	}

	code, _, errOut = runCmd("run", "-m", path, "-p", "hello")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no vocabulary")
	code, _, errOut = runCmd("run", "-m", path, "-tokens", "1,x")
	require.Equal(t, 2, code, errOut)
	code, _, errOut = runCmd("run", "-m", path, "-tokens", "100")
	require.Equal(t, 1, code)
	require.True(t, strings.Contains(errOut, "outside"), errOut)
}

func TestBenchModel(t *testing.T) {
	t.Setenv("GGML_DEVICE", "CPU")
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, genmodel.WriteFile(path, genmodel.Config{Arch: "llama", Type: quant.Q4_0, Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, VocabSize: 100}))
	code, out, errOut := runCmd("bench", "model", "-m", path, "-pp", "8", "-tg", "4", "-reps", "1", "-threads", "1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "pp8")
	require.Contains(t, out, "tg4")
	require.Contains(t, out, "tokens/s")
	code, _, _ = runCmd("bench", "model", "-pp", "0")
	require.Equal(t, 2, code)
}

// TestRunOnHexagon: a model run on HTP0 over the Hexagon double (weights
// set through its repacking buffers, the ops it takes computed by the
// double) generates the tokens the CPU generates.
func TestRunOnHexagon(t *testing.T) {
	if !inChild(t, "TestRunOnHexagon", func(dir string) []string {
		return []string{"GGML_HEXAGON_LIB=" + filepath.Join(dir, "libcdsprpc.so")}
	}) {
		return
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, genmodel.WriteFile(path, genmodel.Config{Arch: "llama", Type: quant.Q4_0, Embd: 256, Layers: 2, Heads: 4, KVHeads: 2, FF: 512, VocabSize: 300}))
	tokenLine := func(out string) string {
		lines := strings.Split(out, "\n")
		require.Greater(t, len(lines), 2, out)
		return lines[1]
	}
	args := []string{"run", "-m", path, "-tokens", "5,17,42,99,7,3", "-n", "16", "-threads", "1"}
	code, cpuOut, errOut := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	code, htpOut, errOut := runCmd(append(args, "-device", "HTP0")...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, htpOut, "on HTP0")
	require.Equal(t, tokenLine(cpuOut), tokenLine(htpOut))
	t.Logf("HTP0: %s", strings.TrimSpace(htpOut))
}
