package model_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
	"github.com/ggml-go/ggml/tokenizer"
)

// run opens path on dev (nil: the CPU) and returns the prompt's logits
// (three calls) and 16 greedy tokens after it.
func run(t *testing.T, path string, dev backend.Device, so model.SessionOptions) ([][]float32, []int32, error) {
	t.Helper()
	m, err := model.Open(path, model.Options{Device: dev, Threads: 2})
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	s, err := m.NewSession(so)
	require.NoError(t, err)
	defer s.Close()
	tokens := prompt(24, m.HParams.NVocab, 1)
	lg := evaluate(t, s, tokens, []int{10, 10, 4})
	s.Reset()
	gen, err := s.Generate(context.Background(), tokens, 16, model.Sampler{}, nil)
	return lg, gen, err
}

func TestFakeDevice(t *testing.T) {
	path := genFile(t, genmodel.Config{Arch: "qwen2", Type: quant.Q4_0, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300})
	so := model.SessionOptions{Ctx: 128, Batch: 32}
	want, wantGen, err := run(t, path, nil, so)
	require.NoError(t, err)
	for _, cfg := range []devtest.Config{
		// Everything on the device, its work queued on a goroutine.
		{Name: "FAKE_ALL", Type: backend.DeviceGPU, Async: true},
		// Only F32 element-wise work on the device: the matrix products
		// on its weights go back to the CPU, many splits.
		{Name: "FAKE_F32", Type: backend.DeviceGPU, Supports: devtest.F32Ops(ops.Add, ops.Mul, ops.RMSNorm)},
	} {
		t.Run(cfg.Name, func(t *testing.T) {
			got, gen, err := run(t, path, devtest.New(cfg), so)
			require.NoError(t, err)
			for i := range want {
				require.Less(t, nmse(got[i], want[i]), 1e-10, "position %d", i)
			}
			require.Equal(t, wantGen, gen)
		})
	}
	// A device that damages one matrix product's result is caught.
	bad := devtest.Config{Name: "FAKE_BAD", Type: backend.DeviceGPU, Faults: devtest.Faults{
		Corrupt: func(n *graph.Tensor, mem []byte, at uint64) {
			if n.Op == ops.MulMat && n.Ne[0] == 128 {
				v := math.Float32frombits(uint32(mem[at]) | uint32(mem[at+1])<<8 | uint32(mem[at+2])<<16 | uint32(mem[at+3])<<24)
				b := math.Float32bits(v + 1)
				mem[at], mem[at+1], mem[at+2], mem[at+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
			}
		}}}
	got, _, err := run(t, path, devtest.New(bad), so)
	require.NoError(t, err)
	worst := 0.0
	for i := range want {
		worst = max(worst, nmse(got[i], want[i]))
	}
	require.Greater(t, worst, 1e-6, "a corrupted product must show in the logits")
}

// smallDevice reports little memory.
type smallDevice struct{ *devtest.Device }

func (smallDevice) Memory() (free, total uint64) { return 1 << 16, 1 << 20 }

func TestDeviceLoadProgress(t *testing.T) {
	path := genFile(t, genmodel.Config{Arch: "llama", Type: quant.Q8_0, Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, VocabSize: 100})
	var calls int
	var last, total uint64
	d := devtest.New(devtest.Config{Name: "FAKE_LOAD", Type: backend.DeviceGPU})
	m, err := model.Open(path, model.Options{Device: d, Progress: func(done, all uint64) {
		require.GreaterOrEqual(t, done, last)
		calls, last, total = calls+1, done, all
	}})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	// Every weight but the token embedding (which stays on the CPU) went
	// through SetTensor, one report each.
	require.Equal(t, 2*9+2, calls, "9 weights a layer, output_norm and output")
	require.Equal(t, total, last)
	require.NotZero(t, total)
}

// TestWeightsTheDeviceRefuses: a weight whose matrix product the device
// refuses stays on the host (llama.cpp's weight_buft_supported), where the
// CPU computing that product reads it; only the norms, which the device's
// element-wise ops read, go to the device. Without the rule the model
// could not run (a weight in device memory that no backend using it can
// compute with: Gemma 3's Q5_0 weights on OPENVINO0).
func TestWeightsTheDeviceRefuses(t *testing.T) {
	c := genmodel.Config{Arch: "llama", Type: quant.Q8_0, Embd: 64, Layers: 2, Heads: 4, KVHeads: 2, FF: 128, VocabSize: 100}
	path := genFile(t, c)
	calls := 0
	d := devtest.New(devtest.Config{Name: "FAKE_F32_ONLY", Type: backend.DeviceGPU, Supports: devtest.F32Ops(ops.Add, ops.Mul, ops.RMSNorm, ops.MulMat)})
	m, err := model.Open(path, model.Options{Device: d, Progress: func(done, all uint64) { calls++ }})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.Equal(t, 2*2+1, calls, "attn_norm and ffn_norm of each layer, output_norm")
	want, wantGen, err := run(t, path, nil, model.SessionOptions{Ctx: 64, Batch: 16})
	require.NoError(t, err)
	got, gen, err := run(t, path, d, model.SessionOptions{Ctx: 64, Batch: 16})
	require.NoError(t, err)
	for i := range want {
		require.Less(t, nmse(got[i], want[i]), 1e-10, "position %d", i)
	}
	require.Equal(t, wantGen, gen)
}

func TestDeviceTooSmall(t *testing.T) {
	path := genFile(t, genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300})
	sets := 0
	d := devtest.New(devtest.Config{Name: "FAKE_SMALL", Type: backend.DeviceGPU, Faults: devtest.Faults{
		Set: func(*graph.Tensor) error { sets++; return nil }}})
	_, err := model.Open(path, model.Options{Device: smallDevice{d}})
	require.ErrorIs(t, err, model.ErrMemory)
	require.Contains(t, err.Error(), "FAKE_SMALL")
	require.Zero(t, sets, "nothing is copied before the memory check")
}

func TestRefused(t *testing.T) {
	_, err := model.Open(genFile(t, genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 64, Layers: 1, Heads: 2, FF: 64, VocabSize: 64,
		KVs: []gguf.KV{{Key: "general.architecture", Value: gguf.ScalarValue("falcon")}}}), model.Options{})
	require.ErrorIs(t, err, model.ErrArch)
	require.Contains(t, err.Error(), `"falcon"`)
	_, err = model.Open(genFile(t, genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 64, Layers: 1, Heads: 2, FF: 64, VocabSize: 64,
		KVs: []gguf.KV{{Key: "llama.attention.head_count", Value: gguf.ScalarValue(uint32(3))}}}), model.Options{})
	require.ErrorIs(t, err, model.ErrModel)
	_, err = model.Open(genFile(t, genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 64, Layers: 1, Heads: 2, FF: 64, VocabSize: 64,
		KVs: []gguf.KV{{Key: "llama.context_length", Value: gguf.ScalarValue(uint32(0))}}}), model.Options{})
	require.ErrorIs(t, err, model.ErrModel)
	require.ErrorContains(t, err, "llama.context_length: 0, want the number of positions")
	c := genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 64, Layers: 1, Heads: 2, FF: 64, VocabSize: 64}
	path := genFile(t, c)
	m, err := model.Open(path, model.Options{})
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Tokenize("hello", true)
	require.ErrorIs(t, err, model.ErrNoVocab)
	require.Contains(t, err.Error(), "none")
	s, err := m.NewSession(model.SessionOptions{Ctx: 16})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Decode(context.Background(), []int32{64}, nil)
	require.ErrorIs(t, err, model.ErrArgument)
	_, err = s.Decode(context.Background(), make([]int32, 17), nil)
	require.ErrorIs(t, err, model.ErrContextFull)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Decode(ctx, []int32{1}, nil)
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
}

// byteTok is a stand-in tokenizer: one token per byte.
type byteTok struct{}

func (byteTok) Encode(text string, addSpecial, _ bool) ([]int32, error) {
	var ids []int32
	if addSpecial {
		ids = append(ids, 1)
	}
	for _, b := range []byte(text) {
		ids = append(ids, int32(b))
	}
	return ids, nil
}

func (byteTok) TokenToPiece(id int32, _ bool) string { return string(rune(id)) }

func TestTokenizerHook(t *testing.T) {
	c := genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 64, Layers: 1, Heads: 2, FF: 64, VocabSize: 256,
		KVs: []gguf.KV{{Key: "tokenizer.ggml.model", Value: gguf.ScalarValue("llama")}}}
	path := genFile(t, c)
	_, err := model.Open(path, model.Options{})
	require.ErrorIs(t, err, tokenizer.ErrVocab, "the default tokenizer refuses a vocabulary with no tokens")

	// A vocabulary type the tokenizer does not implement leaves token ids.
	c.KVs = []gguf.KV{{Key: "tokenizer.ggml.model", Value: gguf.ScalarValue("bert")}}
	m, err := model.Open(genFile(t, c), model.Options{})
	require.NoError(t, err)
	require.False(t, m.HasText())
	_, err = m.Tokenize("hi", true)
	require.ErrorIs(t, err, model.ErrNoVocab)
	require.ErrorIs(t, err, tokenizer.ErrUnsupported)
	require.ErrorContains(t, err, "bert")
	require.NoError(t, m.Close())

	m, err = model.Open(path, model.Options{NewTokenizer: func(*gguf.File) (model.Tokenizer, error) { return byteTok{}, nil }})
	require.NoError(t, err)
	defer m.Close()
	ids, err := m.Tokenize("hi", true)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 'h', 'i'}, ids)
	p, err := m.Piece('h')
	require.NoError(t, err)
	require.Equal(t, "h", p)
	_, err = m.Piece(256)
	require.ErrorIs(t, err, model.ErrArgument)
}
