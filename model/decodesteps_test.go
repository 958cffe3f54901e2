package model_test

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// TestDecodeStepsMatchLlama decodes a prompt in calls of 40, 2, 3 and 7
// tokens, then one token at a time past 256 cells with calls of 5 and 9
// among them, on a generated F32 model (whose every node our kernels
// compute as the build they follow does), and wants libllama's logits bit
// for bit at every position. A one-token step's P·V product takes
// ggml_vec_dot_f32, whose leftover loop (the floats past the last whole
// step: 64 on AVX-512, 32 on AVX2) sums after the vector sums, so how many
// cells the step attends over decides its sums: with steps padded to 32
// cells (as batches are) the amx level parted from the sapphirerapids
// build from position 64 on (96 cells against libllama's 256; the haswell
// and x64 builds' sums were the same either way). On the CPU device alone
// the steps attend over 64-cell multiples (cpuStepKVPad), which must sum as
// libllama's 256 do: padded to 48, positions 128 on parted from the
// haswell build. The batches of several
// tokens attend over 32-cell multiples, and must give libllama's sums
// all the same. Again in a context of 100, which libllama rounds up to
// 256 cells: a cache of just 100 cells parted from it from position 64 on
// the amx level (cachePad).
func TestDecodeStepsMatchLlama(t *testing.T) {
	if os.Getenv(ggmlref.EnvVariant) != "" && os.Getenv(ggmlref.EnvVariant) != llamaref.KernelVariant() {
		t.Skip("bit for bit only against the build our kernels follow")
	}
	lib := llamaref.ForTest(t)
	c := genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 256, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 300, Seed: 41}
	path := genFile(t, c)
	m, err := model.Open(path, model.Options{Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	for _, ctx := range []int{512, 100} {
		t.Run(fmt.Sprint("ctx=", ctx), func(t *testing.T) {
			_, rc := llamaContext(t, lib, path, ctx, 1)
			tokens := prompt(min(300, ctx), c.VocabSize, int(c.Seed))
			calls := []int{40, 2, 3, 7}
			for at := 52; at < len(tokens); {
				n := 1
				switch at {
				case 265:
					n = 5
				case 270:
					n = 9
				}
				calls = append(calls, n)
				at += n
			}
			want, err := rc.Evaluate(tokens, 0, calls)
			require.NoError(t, err)
			s, err := m.NewSession(model.SessionOptions{Ctx: ctx, Batch: 64})
			require.NoError(t, err)
			defer s.Close()
			got := evaluate(t, s, tokens, calls)
			var differ []int
			for p := range want {
				for j := range want[p] {
					if math.Float32bits(got[p][j]) != math.Float32bits(want[p][j]) {
						differ = append(differ, p)
						break
					}
				}
			}
			require.Empty(t, differ, "positions whose logits are not libllama's bit for bit")
		})
	}
}
