package openvino

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// The double can fail our code: an IR with a swapped MatMul transpose
// flag or a wrong Constant offset is caught, by the reader or by the
// results.
func TestDoubleCatchesWrongIR(t *testing.T) {
	p := buildDouble(t)
	dev := openDevice(t, p, Options{DisableCache: true})
	r := rand.New(rand.NewPCG(7, 7))
	mutate := func(t *testing.T, f func([]byte) []byte) {
		irMutator = f
		t.Cleanup(func() { irMutator = nil })
	}

	t.Run("control", func(t *testing.T) {
		got, want, _, _ := mulMatWeights(t, dev, quant.Q8_0, "blk.0.w.weight", 64, 8, 3, r)
		require.Less(t, nmse(got, want), 1e-10)
	})
	t.Run("transpose_b swapped, shapes disagree", func(t *testing.T) {
		mutate(t, func(x []byte) []byte {
			return bytes.Replace(x, []byte(`transpose_a="false" transpose_b="true"`), []byte(`transpose_a="false" transpose_b="false"`), 1)
		})
		_, _, _, _, err := mulMatRun(t, dev, quant.Q8_0, "blk.0.bad.weight", 64, 8, 3, r)
		require.ErrorIs(t, err, ErrNative)
		t.Log(err)
	})
	t.Run("transpose flags swapped on a square product", func(t *testing.T) {
		mutate(t, func(x []byte) []byte {
			return bytes.Replace(x, []byte(`transpose_a="false" transpose_b="true"`), []byte(`transpose_a="true" transpose_b="false"`), 1)
		})
		got, want, _, _ := mulMatWeights(t, dev, quant.F32, "blk.0.sq.weight", 8, 8, 8, r)
		require.Greater(t, nmse(got, want), 1e-3, "a wrong product must not match")
	})
	offsetRE := regexp.MustCompile(`element_type="i8" shape="([0-9, ]+)" offset="([0-9]+)"`)
	t.Run("constant offset past the weights", func(t *testing.T) {
		mutate(t, func(x []byte) []byte {
			return offsetRE.ReplaceAll(x, []byte(`element_type="i8" shape="$1" offset="999999999999"`))
		})
		_, _, _, _, err := mulMatRun(t, dev, quant.Q8_0, "blk.0.bad.weight", 64, 8, 3, r)
		require.ErrorIs(t, err, ErrNative)
		require.Contains(t, err.Error(), "Incorrect weights in bin file")
	})
	// One byte too far: the i8 weight moved to end one byte past the blob
	// (whose size is the largest offset + size of any Constant).
	constRE := regexp.MustCompile(`offset="([0-9]+)" size="([0-9]+)"`)
	i8RE := regexp.MustCompile(`element_type="i8" shape="([0-9, ]+)" offset="([0-9]+)" size="([0-9]+)"`)
	t.Run("constant offset one byte past the weights", func(t *testing.T) {
		mutate(t, func(x []byte) []byte {
			end := 0
			for _, m := range constRE.FindAllSubmatch(x, -1) {
				off, _ := strconv.Atoi(string(m[1]))
				size, _ := strconv.Atoi(string(m[2]))
				end = max(end, off+size)
			}
			return i8RE.ReplaceAllFunc(x, func(m []byte) []byte {
				sub := i8RE.FindSubmatch(m)
				size, _ := strconv.Atoi(string(sub[3]))
				return []byte(`element_type="i8" shape="` + string(sub[1]) + `" offset="` + strconv.Itoa(end-size+1) + `" size="` + string(sub[3]) + `"`)
			})
		})
		_, _, _, _, err := mulMatRun(t, dev, quant.Q8_0, "blk.0.bad1.weight", 64, 8, 3, r)
		require.ErrorIs(t, err, ErrNative)
		require.Contains(t, err.Error(), "Incorrect weights in bin file")
	})
	t.Run("constant offset shifted inside the weights", func(t *testing.T) {
		mutate(t, func(x []byte) []byte {
			return offsetRE.ReplaceAllFunc(x, func(m []byte) []byte {
				sub := offsetRE.FindSubmatch(m)
				off, _ := strconv.Atoi(string(sub[2]))
				return []byte(`element_type="i8" shape="` + string(sub[1]) + `" offset="` + strconv.Itoa(off+64) + `"`)
			})
		})
		got, want, _, _ := mulMatWeights(t, dev, quant.Q8_0, "blk.0.w2.weight", 256, 8, 3, r)
		require.Greater(t, nmse(got, want), 1e-3)
	})
}
