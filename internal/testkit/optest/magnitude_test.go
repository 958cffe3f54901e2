package optest

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// Every magnitude case, full set included, agrees with the real ggml.
func TestMagnitudeAgainstGGML(t *testing.T) {
	rep := TestDevice(t, cpu.Device(), Options{Ref: ggmlExecutor(t), Cases: magnitudeCases(true), Seed: 7})
	assert.Zero(t, rep.Tally.Count(Skipped))
}

// naiveSoftMax is a device whose SOFT_MAX skips the max subtraction:
// exp(scale*x + mask) / sum, in float32. It takes masks but not sinks,
// ALiBi or results in place (which overwrite the input the fault reads).
func naiveSoftMax() backend.Device {
	return devtest.New(devtest.Config{Name: "NAIVE0", Type: backend.DeviceGPU,
		Supports: func(t *graph.Tensor) bool {
			return t.Op == ops.SoftMax && t.Type == quant.F32 && t.Src[2] == nil && t.ViewSrc == nil && ops.SoftMaxParamsOf(t.Params).MaxBias == 0 &&
				t.Src[0].IsContiguous() && (t.Src[1] == nil || t.Src[1].IsContiguous()) && t.IsContiguous()
		},
		Faults: devtest.Faults{Corrupt: func(n *graph.Tensor, mem []byte, at uint64) {
			x, err := Floats(n.Src[0])
			if err != nil {
				panic(err)
			}
			var m []float32
			if n.Src[1] != nil {
				if m, err = Floats(n.Src[1]); err != nil {
					panic(err)
				}
			}
			scale := ops.SoftMaxParamsOf(n.Params).Scale
			ne := n.Ne
			y := make([]float32, len(x))
			for r := 0; r < len(x); r += int(ne[0]) {
				row := int64(r) / ne[0]
				i1, i2, i3 := row%ne[1], row/ne[1]%ne[2], row/(ne[1]*ne[2])
				var mrow []float32
				if m != nil {
					me := n.Src[1].Ne
					mr := (i3%me[3]*me[2]+i2%me[2])*me[1] + i1%me[1]
					mrow = m[mr*me[0]:]
				}
				var sum float32
				for i := range int(ne[0]) {
					v := scale * x[r+i]
					if mrow != nil {
						v += mrow[i]
					}
					y[r+i] = float32(math.Exp(float64(v)))
					sum += y[r+i]
				}
				for i := range int(ne[0]) {
					y[r+i] /= sum
				}
			}
			out := *n
			out.Data = mem[at : at+n.NBytes()]
			if err := SetFloats(&out, y); err != nil {
				panic(err)
			}
		}}})
}

// Uniform [-1, 1] inputs cannot tell a softmax that skips the max
// subtraction from a correct one (test-backend-ops' cases, quick or with
// OPTEST_FULL=1 all of them); the large logits can.
func TestNaiveSoftMaxFails(t *testing.T) {
	ref, closeRef := CPURef()
	defer closeRef()
	var plain, large []Case
	for _, c := range Cases(true, []string{"SOFT_MAX"}) {
		switch {
		case strings.Contains(c.Name, "logits="):
			large = append(large, c)
		case testFull() || !c.Full:
			plain = append(plain, c)
		}
	}
	require.NotEmpty(t, large)
	rep, err := RunDevice(naiveSoftMax(), Options{Ref: ref, Cases: plain})
	require.NoError(t, err)
	assert.Zero(t, rep.Tally.Count(Failed), "the gap the magnitude cases close")
	assert.NotZero(t, rep.Tally.Count(Passed))
	t.Logf("test-backend-ops' SOFT_MAX cases on the naive softmax: %s", rep.Tally.String())

	rep, err = RunDevice(naiveSoftMax(), Options{Ref: ref, Cases: large})
	require.NoError(t, err)
	for _, r := range rep.Results {
		if r.Status != Skipped {
			assert.Equal(t, Failed, r.Status, r.Case.Name)
		}
	}
	assert.GreaterOrEqual(t, rep.Tally.Count(Failed), 3)
	t.Logf("the large-logit cases: %s", rep.Tally.String())
}
