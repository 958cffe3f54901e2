package openvino

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/internal/mmap"
	"github.com/ggml-go/ggml/quant"
)

// With SPILL_DIR and RELEASE_WEIGHTS, the weight buffers' file pages are
// unmapped within a few spillUnmapInterval of being written or read
// (unmapSpill), and a MUL_MAT computed meanwhile reads the weights, not
// zeros; without the release they stay mapped (the control: the check can
// fail).
func TestSpillWeightPagesUnmapped(t *testing.T) {
	p := buildDouble(t)
	r := rand.New(rand.NewPCG(9, 9))
	const k, rows = 4096, 64 // 278 KiB of Q8_0
	vals := make([]float32, k*rows)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	q, err := quant.Quantize(quant.Q8_0, vals, rows, k, nil)
	require.NoError(t, err)
	deq, err := quant.Dequantize(quant.Q8_0, q, len(vals))
	require.NoError(t, err)
	xs := make([]float32, 2*k)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	want := make([]float32, 2*rows)
	for c := range 2 {
		for o := range rows {
			var s float64
			for i := range k {
				s += float64(deq[o*k+i]) * float64(xs[c*k+i])
			}
			want[c*rows+o] = float32(s)
		}
	}
	for _, release := range []Tri{Off, On} {
		t.Run(map[Tri]string{Off: "release off", On: "release on"}[release], func(t *testing.T) {
			dev := openDevice(t, p, Options{ReleaseWeights: release, SpillDir: t.TempDir()})
			w := weightMatrix(t, dev, quant.Q8_0, k, rows, q)
			mem := w.Extra.(*tensorExtra).st.mem
			unmapped := func() bool {
				deadline := time.Now().Add(time.Second)
				for time.Now().Before(deadline) {
					n, ok := mmap.MappedResident(mem)
					require.True(t, ok, "no smaps entry for the weight buffer")
					if n == 0 {
						return true
					}
					time.Sleep(spillUnmapInterval)
				}
				return false
			}
			require.Equal(t, release == On, unmapped(), "the spill pages unmapped after the weights were set")
			be := newBackend(dev)
			defer be.Close()
			g, x, y := mulMatGraph(t, dev, w, 2)
			require.NoError(t, buffer.SetTensor(x, quant.F32Bytes(xs), 0))
			for range 2 { // a compile, then a hit (the release)
				require.NoError(t, be.GraphCompute(g))
				require.Less(t, nmse(getF32(t, y), want), 1e-10)
			}
			require.Equal(t, release == On, unmapped(), "the spill pages unmapped after the compile read them")
		})
	}
}
