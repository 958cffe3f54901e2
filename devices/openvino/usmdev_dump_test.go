//go:build unix

package openvino

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// GGML_OPENVINO_DUMP_IR reads the inputs and outputs of a cache in device
// memory through the queue: the dumps of a GPU run on device memory are
// byte for byte those of the same run on USM host memory (the decode
// model's first run reads the caches the prompt wrote).
func TestKVCacheUSMDeviceDumpIR(t *testing.T) {
	p := buildDouble(t)
	needsDouble(t, "a GPU and its OpenCL")
	wd, err := os.Getwd()
	require.NoError(t, err)
	defer os.Chdir(wd)
	dumps := map[string][]string{}
	for _, mem := range kvMemories {
		require.NoError(t, os.Chdir(t.TempDir()))
		o := mem.opts
		o.DumpIR = true
		r, err := runGPUModel(t, p, gpuDevice(t, p, o))
		require.NoError(t, err)
		require.Equal(t, mem.dev, r.kvDev)
		for _, m := range dumpPrefixes(t, dumpDir) {
			man, err := readManifest(m)
			require.NoError(t, err)
			for _, io := range []struct {
				kind string
				n    int
			}{{".input", len(man.Inputs)}, {".output", len(man.Outputs)}} {
				for i := range io.n {
					b, err := os.ReadFile(m + io.kind + strconv.Itoa(i) + ".bin")
					require.NoError(t, err)
					dumps[mem.name] = append(dumps[mem.name], string(b))
				}
			}
		}
	}
	require.NotEmpty(t, dumps["device"])
	require.Equal(t, dumps["host"], dumps["device"])
}
