//go:build unix

package openvino

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// dumpPrefixes lists the models dumped into dir (model_<n>, by n).
func dumpPrefixes(t testing.TB, dir string) []string {
	t.Helper()
	xmls, err := filepath.Glob(filepath.Join(dir, "model_*.xml"))
	require.NoError(t, err)
	num := func(p string) int {
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "model_"), ".xml"))
		return n
	}
	for i := 1; i < len(xmls); i++ {
		for j := i; j > 0 && num(xmls[j]) < num(xmls[j-1]); j-- {
			xmls[j], xmls[j-1] = xmls[j-1], xmls[j]
		}
	}
	for i, x := range xmls {
		xmls[i] = strings.TrimSuffix(x, ".xml")
	}
	return xmls
}

var constOffset = regexp.MustCompile(`offset="([0-9]+)" size="([0-9]+)"`)

// DUMP_IR writes exactly what is compiled: the XML after the IR mutator
// (its mark is in the dump) with the live Constant offsets (a weight in
// a WEIGHTS buffer, converted in place, and the side blob's constants),
// the weights blob those offsets point into, and the first run's inputs
// and outputs. Replayed through the library's C API from the files alone,
// the dump gives the outputs it recorded and the graph computed.
func TestDumpIR(t *testing.T) {
	p := buildDouble(t)
	dir := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	defer os.Chdir(wd)
	// what the mutator hands on is what ov_core_read_model_from_memory_buffer reads
	var read [][]byte
	irMutator = func(x []byte) []byte {
		x = bytes.Replace(x, []byte(`<net name="ggml_graph"`), []byte(`<net name="ggml_graph_mutated"`), 1)
		read = append(read, x)
		return x
	}
	defer func() { irMutator = nil }()
	dev := openDevice(t, p, Options{DumpIR: true})
	r := rand.New(rand.NewPCG(3, 4))
	got, _, _, _ := mulMatWeights(t, dev, quant.Q4_0, "blk.0.ffn_up.weight", 64, 8, 3, r)
	be := newBackend(dev)
	defer be.Close()
	g, _, _, y := addGraph(t, dev, 8)
	require.NoError(t, be.GraphCompute(g))

	models := dumpPrefixes(t, dumpDir)
	require.Len(t, models, 2)
	for i, m := range models {
		xml, err := os.ReadFile(m + ".xml")
		require.NoError(t, err)
		require.Equal(t, string(read[i]), string(xml), "the XML read, byte for byte")
		require.Contains(t, string(xml), `name="ggml_graph_mutated"`, "the XML after the mutator")
		man, err := readManifest(m)
		require.NoError(t, err)
		fi, err := os.Stat(m + ".bin")
		require.NoError(t, err)
		require.EqualValues(t, man.Weights, fi.Size())
		offs := constOffset.FindAllSubmatch(xml, -1)
		require.NotEmpty(t, offs, "%s has Constants", m)
		for _, o := range offs {
			off, _ := strconv.ParseUint(string(o[1]), 10, 64)
			size, _ := strconv.ParseUint(string(o[2]), 10, 64)
			require.LessOrEqual(t, off+size, man.Weights)
		}
		rep := replayDump(dev.rt.lib, dev.rt.core, dev.rt.device, m)
		require.Equal(t, "ok", rep.Stage, "%s: %s", m, rep.Msg)
		require.Len(t, rep.Outputs, len(man.Outputs))
		for j, o := range rep.Outputs {
			want, err := os.ReadFile(m + ".output" + strconv.Itoa(j) + ".bin")
			require.NoError(t, err)
			e, err := outputNMSE(man.Outputs[j].Type, o, want)
			require.NoError(t, err)
			require.LessOrEqual(t, e, 1e-12, "%s output %d: the replay gives the dumped result", m, j)
		}
		var graphOut []float32
		if i == 0 {
			require.Equal(t, []string{"MUL_MAT"}, man.Ops)
			graphOut = got
		} else {
			require.Equal(t, []string{"ADD"}, man.Ops)
			require.Len(t, man.Inputs, 2)
			graphOut = getF32(t, y)
		}
		require.Equal(t, quant.F32Bytes(graphOut), rep.Outputs[0], "%s: the replay gives what the graph computed", m)
	}
}
