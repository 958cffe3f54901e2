//go:build (amd64 || arm64) && !purego

package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQKXSearchMatchesGo checks the vector trial search of makeQKXQuants
// bit for bit against the Go loop, with every parameter set ggml's
// quantizers use, on gaussian, skewed, all-positive, constant and tiny
// groups, and on half-integers from 0 to nmax (where a trial's inverse
// scale is 1, so its levels are exact ties), with and without
// importance-like weights, weights whose sums overflow, and every group
// length up to the largest.
func TestQKXSearchMatchesGo(t *testing.T) {
	if !haveQKXTrials {
		t.Skip("no assembly search here: the Go search is the only one")
	}
	defer func() { haveQKXTrials = true }()
	params := []struct {
		nmax         int32
		n            int
		rmin, rdelta float32
		nstep        int
		useMAD       bool
	}{
		{15, 32, -1, 0.1, 20, false},
		{31, 32, -0.5, 0.1, 15, false},
		{15, 32, -0.9, 0.05, 36, false},
		{31, 32, -0.9, 0.05, 36, false},
		{3, 16, -0.5, 0.1, 15, true},
		{3, 16, -0.9, 0.05, 36, false},
	}
	r := rand.New(rand.NewPCG(uint64(testSeed(t)), 11))
	kinds := []func() float32{
		func() float32 { return float32(r.NormFloat64()) },
		func() float32 { return float32(math.Exp(r.NormFloat64())) },
		func() float32 { return float32(r.NormFloat64()*0.1 + 3) },
		func() float32 { return 0.75 },
		func() float32 { return float32(r.NormFloat64() * 1e-20) },
		func() float32 { return float32(r.IntN(7) - 3) },
		nil, // half-integer ties, below
	}
	for trial := range 8000 {
		p := params[trial%len(params)]
		kind := kinds[trial/len(params)%len(kinds)]
		n := p.n
		if trial%5 == 4 {
			n = 1 + r.IntN(maxSearchGroup)
		}
		x, w := make([]float32, n), make([]float32, n)
		for i := range x {
			if kind != nil {
				x[i] = kind()
			} else {
				x[i] = float32(r.IntN(int(p.nmax))) + 0.5
			}
			w[i] = absf(x[i]) + 0.5
			switch trial % 7 {
			case 0, 3:
				w[i] = float32(r.Float64())
			case 5:
				w[i] = float32(math.Exp((r.Float64()*2 - 1) * 80))
			}
		}
		if kind == nil && n >= 2 {
			x[r.IntN(n)], x[r.IntN(n)] = 0, float32(p.nmax)
		}
		run := func(asm bool) (float32, float32, []uint8) {
			haveQKXTrials = asm
			L, aux := make([]uint8, n), make([]uint8, n)
			s, m := makeQKXQuants(p.nmax, x, w, L, aux, p.rmin, p.rdelta, p.nstep, p.useMAD)
			return s, m, L
		}
		ws, wm, wl := run(false)
		gs, gm, gl := run(true)
		require.Equal(t, math.Float32bits(ws), math.Float32bits(gs), "trial %d scale (x %v, w %v)", trial, x, w)
		require.Equal(t, math.Float32bits(wm), math.Float32bits(gm), "trial %d min (x %v, w %v)", trial, x, w)
		require.Equal(t, wl, gl, "trial %d levels (x %v, w %v)", trial, x, w)
	}
}

// TestQXSearchMatchesGo does the same for makeQXQuants's vector trials
// (Q6_K, Q3_K and the sub-block scale groups), over every group length up
// to the largest, with half-integers after a first value of magnitude nmax
// (the first guess's scale is then 1 or -1, and its levels exact ties),
// NaN and infinity included, which must take the Go loop.
func TestQXSearchMatchesGo(t *testing.T) {
	if !haveQXTrials {
		t.Skip("no assembly search here: the Go search is the only one")
	}
	defer func() { haveQXTrials = true }()
	r := rand.New(rand.NewPCG(uint64(testSeed(t)), 12))
	for trial := range 8000 {
		nmax := []int32{32, 4, 16}[trial%3]
		n := 16
		if trial%5 == 4 {
			n = 1 + r.IntN(maxSearchGroup)
		}
		ties := trial%13 == 6
		x, w := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(trial%7-3)))
			if ties {
				x[i] = float32(r.IntN(int(2*nmax-1))-int(nmax)+1) - 0.5*float32(1-2*r.IntN(2))
				x[i] = max(-float32(nmax)+0.5, min(float32(nmax)-0.5, x[i]))
			}
			w[i] = x[i] * x[i]
			if trial%2 == 0 {
				w[i] = float32(r.Float64())
			}
		}
		if ties {
			x[0] = float32(nmax) * float32(1-2*r.IntN(2))
		}
		switch trial % 11 {
		case 3:
			x[r.IntN(n)] = float32(math.NaN())
		case 7:
			x[r.IntN(n)] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 9:
			w[r.IntN(n)] = float32(math.NaN())
		}
		run := func(asm bool) (float32, []int8) {
			haveQXTrials = asm
			L := make([]int8, len(x))
			return makeQXQuants(nmax, x, w, L), L
		}
		ws, wl := run(false)
		gs, gl := run(true)
		require.Equal(t, math.Float32bits(ws), math.Float32bits(gs), "trial %d scale (x %v)", trial, x)
		require.Equal(t, wl, gl, "trial %d levels (x %v)", trial, x)
	}
}
