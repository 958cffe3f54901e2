package optest

import (
	"fmt"
	"math/rand"

	"github.com/ggml-go/ggml/graph"
)

// Small helpers shared by the case families.

// b2i is a flag as test-backend-ops prints it in case names (0 or 1).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// uniformInit is an Init filling every float input uniformly in [lo, hi).
func uniformInit(lo, hi float32) func(*rand.Rand, *graph.Tensor) bool {
	return func(rng *rand.Rand, t *graph.Tensor) bool { return FillUniform(rng, t, lo, hi) == nil }
}

// fmtF formats a float parameter as test-backend-ops does (%f).
func fmtF(v float32) string { return fmt.Sprintf("%f", v) }
