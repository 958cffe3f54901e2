package model_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/realmodel"
	"github.com/ggml-go/ggml/model"
)

// realPrompts are the texts the real models are checked on: prose, code and
// a chat turn with digits and non-ASCII text, 40 to 250 tokens each.
var realPrompts = []string{
	"The history of the printing press begins in the fifteenth century, when Johannes Gutenberg " +
		"combined movable metal type, oil-based ink and a wooden screw press. Within fifty years,",
	`// Package ring implements a fixed-size ring buffer of bytes.
package ring

import "errors"

// ErrFull is returned by Write when the buffer has no room left.
var ErrFull = errors.New("ring: buffer full")

// Buffer is a ring buffer. The zero value is not usable; call New.
type Buffer struct {
	data       []byte
	head, tail int
	full       bool
}

// New returns a buffer holding at most n bytes.
func New(n int) *Buffer { return &Buffer{data: make([]byte, n)} }

// Len reports how many bytes are buffered.
func (b *Buffer) Len() int {
	switch {
	case b.full:
		return len(b.data)
	case b.tail >= b.head:
		return b.tail - b.head
	}
	return len(b.data) - b.head + b.tail
}

// Write`,
	"<|im_start|>user\nI have 3 apples and buy 14 more at 0.25 € each; my friend in Zürich gives me " +
		"another 7. How many apples do I have, what did I pay, and how do you say \"apple\" in " +
		"Japanese (りんご) and Chinese (苹果)? Please answer step by step.<|im_end|>\n<|im_start|>assistant\n",
}

// realBounds are what a real model must meet against libllama. The issue's
// targets (NMSE 1e-4 at every position, 99% top-1, 64 identical greedy
// tokens) hold only for bit-identical arithmetic: libllama's own x64 build
// against its haswell build, on SmolLM2 Q4_1 and these prompts, measured
// NMSE up to 6e-3 (prompt 0) and 2.9e-2 (prompt 1, 11 of 227 top-1 tokens
// different), from 4.9e-5 at position 0, where attention is trivial: the
// model's first-token activations are large, and every later position
// attends to them. Where our products sum in another order than the
// build's (the amx level's tile products against haswell) ours sits
// inside that spread; the bounds there are twice the builds' spread: a
// wrong rope, mask, scale or norm gives NMSE near 1.
// Gemma 3 270M, a base model with thin top-1 margins on prose, loses more
// top-1 positions to the same noise (ours 30 of 35 on prompt 0 against the
// haswell build; the x64 build 34 of 35, ours against x64 31 of 35, after
// positions 0-4 identical to x64's to NMSE 5e-15): its bound is 0.8.
type realBounds struct {
	worstNMSE, medianNMSE, top1 float64
	// greedy is how many leading generated tokens must be identical (0:
	// not checked).
	greedy int
	// buildExact says that the fast kernels compute every node of the
	// file as the libllama build of their level does, bit for bit
	// (TestRealModelNodes): the avx2 and avx512vnni levels as the haswell
	// build (both files' logits NMSE 0 at every position since the Q8_0
	// products of 8 or more columns take exact tiles), the amx level as
	// the sapphirerapids build (since its AMX and AVX-512 orders), so that
	// the exact targets apply there too.
	buildExact bool
}

// exactBounds are the targets, which hold where every node of the
// graph is the libllama build's bit for bit: the generic kernels against
// the x64 build (TestRealModelNodes), whose logits measured NMSE 0 at
// every position of every prompt.
var exactBounds = realBounds{worstNMSE: 1e-4, medianNMSE: 1e-4, top1: 0.99, greedy: 64}

// boundsFor is exactBounds when the comparison is the generic kernels
// against the x64 build, or the fast kernels against the build of their
// level (haswell, or sapphirerapids on the amx level) on a file loose
// marks buildExact; else loose.
// Where products sum in another order (the amx level's against haswell)
// they part by a rounding, and one rounding flips near-ties (Gemma 3's
// Q8_0 layers, before their exact tiles, left libllama's greedy tokens
// after 12 and 13 on prompts 0 and 1, NMSE 6e-3, within loose), so there
// greedy identity is logged, not required.
func boundsFor(loose realBounds) realBounds {
	variant := os.Getenv(ggmlref.EnvVariant)
	if variant == "" {
		variant = llamaref.KernelVariant()
	}
	// The amx level's tile products of a prompt sum in another order
	// (cpu.MatrixUnitTypes): against the haswell build they part as
	// Gemma 3's Q8_0 layers did (SmolLM2 measured NMSE 1.3e-2 at worst,
	// greedy identical for 13 tokens of prompt 0), so loose bounds apply
	// there (GGML_CPU_AMX=0 runs the exact comparison on such a machine).
	// Against sapphirerapids, which the amx level follows (AMX order for
	// the tile types' products of any column count, AVX-512 orders for
	// F32, SOFT_MAX, SWIGLU), every prompt logit and the 64 greedy tokens
	// of every prompt of both files are that build's (NMSE 0, 2026-12-03,
	// since the cache cells a step attends over are padded to 256 as
	// llama.cpp pads them).
	amx := len(cpu.MatrixUnitTypes()) > 0
	levelBuild := variant == "haswell" && !amx || variant == "sapphirerapids" && amx
	if variant == llamaref.KernelVariant() && (variant == "x64" || loose.buildExact && levelBuild) {
		return exactBounds
	}
	loose.greedy = 0
	return loose
}

// checkReal compares a real model file, run as o says (the device, the
// threads), with libllama: every position's logits of each prompt
// (tokenized by libllama, evaluated in calls of 64 tokens), the top-1
// token, and 64 greedy tokens. The tests give one thread: on the two
// shared cores of CI, libllama's spinning thread pool at two threads ran
// 10x slower than at one. With a device, some of every prompt's nodes
// must have run on it. prompts picks realPrompts by index (none: all).
func checkReal(t *testing.T, path string, o model.Options, bd realBounds, prompts ...int) {
	for _, r := range measureReal(t, path, o, prompts...) {
		require.LessOrEqual(t, r.worst, bd.worstNMSE, "prompt %d: worst NMSE", r.prompt)
		require.LessOrEqual(t, r.median, bd.medianNMSE, "prompt %d: median NMSE", r.prompt)
		require.GreaterOrEqual(t, r.top1(), bd.top1, "prompt %d: top-1 agreement", r.prompt)
		if bd.greedy > 0 {
			require.GreaterOrEqual(t, r.greedy, min(bd.greedy, r.generated), "prompt %d: identical greedy tokens", r.prompt)
		}
	}
}

// realResult is one prompt's comparison with libllama (measureReal).
type realResult struct {
	prompt        int
	worst, median float64
	same, n       int // positions whose top-1 token is libllama's, of n
	greedy        int // leading generated tokens identical to libllama's
	generated     int // tokens libllama generated
}

func (r realResult) top1() float64 { return float64(r.same) / float64(r.n) }

// holds reports whether r meets bd.
func (bd realBounds) holds(r realResult) bool {
	return r.worst <= bd.worstNMSE && r.median <= bd.medianNMSE && r.top1() >= bd.top1 &&
		(bd.greedy == 0 || r.greedy >= min(bd.greedy, r.generated))
}

// measureReal runs checkReal's comparison and logs it, without the bounds.
func measureReal(t *testing.T, path string, o model.Options, prompts ...int) []realResult {
	lib := llamaref.ForTest(t)
	ref, rc := llamaContext(t, lib, path, 512, o.Threads)
	m, err := model.Open(path, o)
	require.NoError(t, err)
	defer m.Close()
	s, err := m.NewSession(model.SessionOptions{Ctx: 512, Batch: 64})
	require.NoError(t, err)
	defer s.Close()
	if len(prompts) == 0 {
		prompts = []int{0, 1, 2}
	}
	var out []realResult
	for _, i := range prompts {
		tokens, err := ref.Tokenize(realPrompts[i], true, true)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(tokens), 32, "prompt %d", i)
		require.LessOrEqual(t, len(tokens), 256, "prompt %d", i)
		var calls []int
		for n := len(tokens); n > 0; n -= min(n, 64) {
			calls = append(calls, min(n, 64))
		}
		rc.ClearMemory()
		want, err := rc.Evaluate(tokens, 0, calls)
		require.NoError(t, err)
		s.Reset()
		got := evaluate(t, s, tokens, calls)
		placed := ""
		if o.Device != nil {
			splits, nodes := s.Placement()
			require.NotZero(t, nodes[o.Device.Name()], "prompt %d: no node on %s", i, o.Device.Name())
			placed = fmt.Sprintf(" (last call: %d splits, nodes %v)", splits, nodes)
		}
		errs := make([]float64, len(want))
		r := realResult{prompt: i, n: len(want)}
		over := 0
		for p := range want {
			errs[p] = nmse(got[p], want[p])
			if errs[p] > 1e-4 {
				over++
			}
			if argmax(got[p]) == argmax(want[p]) {
				r.same++
			}
		}
		slices.Sort(errs)
		r.worst, r.median = errs[len(errs)-1], errs[len(errs)/2]
		rc.ClearMemory()
		wantGen, err := rc.Greedy(tokens, 64)
		require.NoError(t, err)
		s.Reset()
		gotGen, err := s.Generate(context.Background(), tokens, 64, model.Sampler{}, nil)
		require.NoError(t, err)
		for r.greedy < min(len(wantGen), len(gotGen)) && wantGen[r.greedy] == gotGen[r.greedy] {
			r.greedy++
		}
		r.generated = len(wantGen)
		t.Logf("prompt %d%s: %d tokens, NMSE worst %.3g median %.3g (%d positions above 1e-4), top-1 same at %d/%d, "+
			"greedy identical for %d of %d tokens: %q", i, placed, len(tokens), r.worst, r.median, over, r.same, r.n,
			r.greedy, r.generated, pieces(t, ref, gotGen[:r.greedy]))
		out = append(out, r)
	}
	return out
}

// smolBounds and gemmaBounds are the real files' bounds (see realBounds).
var (
	smolBounds  = realBounds{worstNMSE: 0.1, medianNMSE: 1e-2, top1: 0.9, greedy: 1, buildExact: true}
	gemmaBounds = realBounds{worstNMSE: 0.1, medianNMSE: 1e-2, top1: 0.8, greedy: 1, buildExact: true}
)

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func pieces(t *testing.T, ref *llamaref.Model, ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		p, err := ref.TokenToPiece(id, 0, false)
		require.NoError(t, err)
		b.WriteString(p)
	}
	return b.String()
}

// TestSmolLM2 is SmolLM2-135M-Instruct (llama architecture, Q4_1 layers,
// Q8_0 tied embedding) against libllama.
func TestSmolLM2(t *testing.T) {
	t.Parallel() // one thread each: with the package's other tests done, the second core takes one
	checkReal(t, realmodel.Run(t, modelcache.SmolLM2), model.Options{Threads: 1}, boundsFor(smolBounds))
}

// TestGemma3 is Gemma 3 270M (gemma3 architecture: Q5_0, Q8_0, Q4_K and
// Q6_K layers, Q8_0 tied embedding, sliding-window layers) against
// libllama.
func TestGemma3(t *testing.T) {
	t.Parallel() // one thread each: with the package's other tests done, the second core takes one
	checkReal(t, realmodel.Run(t, modelcache.Gemma3), model.Options{Threads: 1}, boundsFor(gemmaBounds))
}

// TestGemma3SlidingWindow runs Gemma 3 past its 512-position window: the
// logits of positions 512 and on, where five layers in six no longer see
// the start, against libllama, under checkReal's bounds. libllama's window
// layers keep a cache of their own, but CompareOptions leave swa_full at
// its default, true, so that cache has ctx cells filled in order as ours.
// Loaded with CompareModelParams instead of compareParams, the
// sapphirerapids build ran without its AMX buffer, unlike the amx level
// we follow, and every position parted (NMSE 5.7e-3 at worst here, from
// position 1 on); with them, all 600 positions measured NMSE 0 on the amx
// level and on GGML_CPU_AMX=0 against haswell (2026-12-03).
func TestGemma3SlidingWindow(t *testing.T) {
	t.Parallel() // one thread each: with the package's other tests done, the second core takes one
	path := realmodel.Run(t, modelcache.Gemma3)
	lib := llamaref.ForTest(t)
	ref, err := lib.LoadModelParams(path, compareParams(lib))
	require.NoError(t, err)
	defer ref.Free()
	text := strings.Repeat(realPrompts[1], 3)
	tokens, err := ref.Tokenize(text, true, true)
	require.NoError(t, err)
	tokens = tokens[:600]
	rc, err := ref.NewContext(llamaref.CompareOptions(1024, 128, 1))
	require.NoError(t, err)
	defer rc.Free()
	want, err := rc.Evaluate(tokens, 0, nil)
	require.NoError(t, err)
	m, err := model.Open(path, model.Options{Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, 512, m.HParams.SlidingWindow)
	s, err := m.NewSession(model.SessionOptions{Ctx: 1024, Batch: 128})
	require.NoError(t, err)
	defer s.Close()
	flags := make([]bool, len(tokens))
	for p := 512; p < len(tokens); p++ {
		flags[p] = true
	}
	got, err := s.Decode(context.Background(), tokens, flags)
	require.NoError(t, err)
	errs := make([]float64, 0, len(tokens)-512)
	same := 0
	for p := 512; p < len(tokens); p++ {
		errs = append(errs, nmse(got[p], want[p]))
		if argmax(got[p]) == argmax(want[p]) {
			same++
		}
	}
	slices.Sort(errs)
	worst, median, n := errs[len(errs)-1], errs[len(errs)/2], len(errs)
	t.Logf("positions 512-%d: NMSE worst %.3g median %.3g, top-1 same at %d/%d", len(tokens)-1, worst, median, same, n)
	bd := boundsFor(gemmaBounds)
	require.LessOrEqual(t, worst, bd.worstNMSE, "worst NMSE")
	require.LessOrEqual(t, median, bd.medianNMSE, "median NMSE")
	require.GreaterOrEqual(t, float64(same)/float64(n), bd.top1, "top-1 agreement")
}
