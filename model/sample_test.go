package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSampler(t *testing.T) {
	logits := []float32{1, 3, 3, 0.5, 2, -1}
	r := Sampler{}.NewRand()
	require.EqualValues(t, 1, Sampler{}.Next(logits, nil, r), "greedy: highest, lowest id on ties")
	// The penalty divides token 1's positive logit: token 2 wins.
	require.EqualValues(t, 2, Sampler{RepeatPenalty: 1.5}.Next(logits, []int32{1}, r))
	// Top-k 1 and a tiny top-p leave only the best token; min-p 0.99
	// the two equally best.
	for _, sm := range []Sampler{{Temp: 1, TopK: 1}, {Temp: 1, TopP: 0.01}, {Temp: 5, MinP: 0.99}} {
		seen := map[int32]bool{}
		for range 50 {
			seen[sm.Next(logits, nil, r)] = true
		}
		if sm.MinP > 0 {
			require.Equal(t, map[int32]bool{1: true, 2: true}, seen, "%+v", sm)
		} else {
			require.Equal(t, map[int32]bool{1: true}, seen, "%+v", sm)
		}
	}
	// A draw follows the softmax: over many draws, frequencies are close
	// to the probabilities, and a seed repeats its draws.
	sm := Sampler{Temp: 1, Seed: 4}
	counts := make([]int, len(logits))
	r = sm.NewRand()
	var first []int32
	for i := range 20000 {
		tok := sm.Next(logits, nil, r)
		counts[tok]++
		if i < 10 {
			first = append(first, tok)
		}
	}
	require.InDelta(t, 0.384, float64(counts[1])/20000, 0.02)
	require.InDelta(t, float64(counts[1]), float64(counts[2]), 600)
	require.Greater(t, counts[5], 0)
	r = sm.NewRand()
	for i := range 10 {
		require.Equal(t, first[i], sm.Next(logits, nil, r))
	}
	require.Error(t, Sampler{TopP: 2}.Check())
	require.Error(t, Sampler{TopK: -1}.Check())
}

// TestGreedyScan: plain greedy scans the float32 logits; the penalty path
// with nothing to penalize (no history) goes through the candidate list.
// Both pick the same token on logits with many ties, infinities and NaNs.
func TestGreedyScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		logits := make([]float32, 1+rng.IntN(40))
		for i := range logits {
			switch rng.IntN(12) {
			case 0:
				logits[i] = float32(math.NaN())
			case 1:
				logits[i] = float32(math.Inf(2*rng.IntN(2) - 1))
			default:
				logits[i] = float32(rng.IntN(7) - 3)
			}
		}
		got := Sampler{}.Next(logits, nil, nil)
		want := Sampler{RepeatPenalty: 1.5}.Next(logits, nil, nil)
		require.Equal(t, want, got, "%v", logits)
	}
}
