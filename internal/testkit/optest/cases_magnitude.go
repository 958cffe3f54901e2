package optest

import (
	"math"
	"math/rand"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// The magnitude family feeds operations the values language models really
// produce, which test-backend-ops' uniform [-1, 1] inputs never reach:
// logits in the hundreds and -inf mask entries (a softmax that skips the
// max subtraction overflows), large activations and large offsets into
// norms (sums of squares overflow half precision; one-pass variances
// cancel), and values so small they are subnormal in half precision (a
// device that flushes them to zero loses them). Case names carry the
// magnitude ("logits=300") so they never collide with test-backend-ops'.
func init() { Register("magnitude", magnitudeCases) }

func magnitudeCases(full bool) []Case {
	f32, f16 := quant.F32, quant.F16
	var cases []Case
	add := func(quick bool, c Case) {
		if !quick {
			c.Full = true
		}
		cases = append(cases, c)
	}
	for _, s := range []struct {
		ne     [4]int64
		mask   bool
		mPrec  quant.Type
		sinks  bool
		scale  float32
		logits float32
	}{
		{[4]int64{32, 4, 2, 1}, false, f32, false, 1, 300},
		{[4]int64{32, 4, 2, 1}, true, f16, false, 1, 300},
		{[4]int64{64, 8, 4, 1}, true, f32, true, 0.125, 2000},
		{[4]int64{1000, 3, 1, 1}, false, f32, false, 1, 100},
		{[4]int64{256, 16, 2, 1}, true, f16, true, 1, 500},
	} {
		add(s.ne[0] <= 64, largeLogitsSoftMax(s.ne, s.mask, s.mPrec, s.sinks, s.scale, s.logits))
	}
	for _, hsk := range []int64{64, 128} {
		add(hsk == 64, largeLogitsFlashAttn(hsk, 200))
	}
	for _, op := range []string{"NORM", "RMS_NORM", "L2_NORM"} {
		add(true, activationNorm(op, [4]int64{4096, 3, 1, 1}, 0, 2000))
		add(false, activationNorm(op, [4]int64{8192, 2, 2, 1}, 0, 30000))
		add(op != "NORM", activationNorm(op, [4]int64{512, 4, 1, 1}, 0, 1e-3))
	}
	// A large offset: one-pass E[x^2]-E[x]^2 cancels away the variance.
	add(true, activationNorm("NORM", [4]int64{1024, 4, 1, 1}, 10000, 1))
	for _, c := range []struct{ src, dst quant.Type }{{f32, f16}, {f16, f32}} {
		add(true, subnormalCopy(c.src, c.dst))
	}
	return cases
}

// causalMask is a causal -inf mask over rows of n0 keys for n1 queries
// (the last n1 of the keys), zeros elsewhere, repeated over dimensions 2
// and 3: every row keeps n0-n1+1 keys, so none is fully masked (ggml's
// result would be NaN).
func causalMask(ne [4]int64) []float32 {
	v := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
	for r := range ne[1] * ne[2] * ne[3] {
		i1 := r % ne[1]
		for i0 := range ne[0] {
			if i0 > ne[0]-ne[1]+i1 {
				v[r*ne[0]+i0] = float32(math.Inf(-1))
			}
		}
	}
	return v
}

// withParams appends parameters to a case name: withParams("A(x=1)", "y",
// 2) is "A(x=1,y=2)".
func withParams(name string, kv ...any) string {
	return name[:len(name)-1] + "," + Fmt("", kv...)[1:]
}

func largeLogitsSoftMax(ne [4]int64, mask bool, mPrec quant.Type, sinks bool, scale, logits float32) Case {
	return Case{
		Name: Fmt("SOFT_MAX", "type", quant.F32, "ne", ne, "mask", b2i(mask), "sinks", b2i(sinks), "m_prec", mPrec,
			"scale", fmtF(scale), "logits", fmtF(logits), "mask_inf", b2i(mask)),
		Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(quant.F32, ne[:]...)
			var m, s *graph.Tensor
			if mask {
				m = c.SetName(c.NewTensor(mPrec, ne[:]...), "m")
			}
			if sinks {
				s = c.SetName(c.NewTensor(quant.F32, ne[2]), "s")
			}
			return []*graph.Tensor{c.SoftMaxAddSinks(c.SoftMaxExt(a, m, scale, 0), s)}
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool {
			switch t.Name {
			case "m":
				return SetFloats(t, causalMask(t.Ne)) == nil
			case "s": // sinks as large as the scaled logits
				return FillUniform(rng, t, -logits*scale, logits*scale) == nil
			}
			return FillUniform(rng, t, -logits, logits) == nil
		},
		Tol: Tolerance{MaxNMSE: softMaxNMSE},
	}
}

func largeLogitsFlashAttn(hsk int64, q float32) Case {
	f := flashAttnCase{hsk: hsk, hsv: hsk, nh: 2, nr23: [2]int64{2, 1}, kv: 96, nb: 8, mask: true,
		prec: 0, typeK: quant.F16, typeV: quant.F16, permute: [4]int{0, 1, 2, 3}}
	return Case{
		Name: withParams(f.name(), "q", fmtF(q), "mask_inf", 1),
		Build: func(c *graph.Context) []*graph.Tensor {
			outs := f.build(c)
			if len(outs) == 1 && outs[0] != nil {
				c.SetName(outs[0].Src[0], "q")
			}
			return outs
		},
		Init: func(rng *rand.Rand, t *graph.Tensor) bool {
			switch t.Name {
			case "q":
				return FillUniform(rng, t, -q, q) == nil
			case "m":
				return SetFloats(t, causalMask(t.Ne)) == nil
			}
			return false
		},
		Tol: Tolerance{MaxNMSE: FlashAttnNMSE},
	}
}

func activationNorm(op string, ne [4]int64, offset, spread float32) Case {
	c := normCase(op, quant.F32, ne, 1e-6, normVariant{})
	c.Name = withParams(c.Name, "offset", fmtF(offset), "spread", fmtF(spread))
	c.Init = func(rng *rand.Rand, t *graph.Tensor) bool {
		v := make([]float32, t.NElements())
		for i := range v {
			v[i] = offset + spread*(2*rng.Float32()-1)
		}
		// A few outliers per row, as LLM activations have.
		for r := 0; r < len(v); r += int(t.Ne[0]) {
			v[r+rng.Intn(int(t.Ne[0]))] = offset + 20*spread
		}
		return SetFloats(t, v) == nil
	}
	return c
}

func subnormalCopy(src, dst quant.Type) Case {
	ne := [4]int64{256, 4, 1, 1}
	return Case{
		Name: Fmt("CPY", "type_src", src, "type_dst", dst, "ne", ne, "values", "f16_subnormal"),
		Build: func(c *graph.Context) []*graph.Tensor {
			return []*graph.Tensor{c.Cpy(c.NewTensor(src, ne[:]...), c.NewTensor(dst, ne[:]...))}
		},
		// Only the copied source matters; ggml's smallest normal half is
		// 6.1e-5.
		Init: func(rng *rand.Rand, t *graph.Tensor) bool {
			return FillUniform(rng, t, -6e-5, 6e-5) == nil
		},
		Tol: Tolerance{Exact: true},
	}
}
