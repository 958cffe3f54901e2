package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/hexagon"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/block"
	"github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/quant"
)

func TestMain(m *testing.M) {
	// bench model re-executes this binary as its libllama side.
	if os.Getenv(llamaChildEnv) != "" {
		os.Exit(runLlamaChild(os.Stdin, os.Stdout))
	}
	code := m.Run()
	hexdouble.Cleanup()
	os.Exit(code)
}

// childEnv marks a re-executed test binary: the registered Hexagon
// registry reads GGML_HEXAGON_* once, so the runs over the double get a
// process of their own.
const childEnv = "GGML_GO_HEXAGON_CHILD"

// inChild runs the test named test in a child process with the
// environment env gives (from the double's folder, built here once), and
// reports whether this is the child.
func inChild(t *testing.T, test string, env func(dir string) []string) bool {
	if os.Getenv(childEnv) == test {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(append(os.Environ(), childEnv+"="+test), env(hexdouble.Dir(t))...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+test)
	return false
}

// TestHexagonDevices: `ggml devices` lists HTP; over the double in
// "no DSP" mode as unavailable with the DSP's code and its meaning.
func TestHexagonDevices(t *testing.T) {
	if !inChild(t, "TestHexagonDevices", func(dir string) []string {
		return []string{"GGML_HEXAGON_LIB=" + filepath.Join(dir, "nosysreq", "libcdsprpc.so"), "HTPDOUBLE_CONFIG=nodsp=1"}
	}) {
		return
	}
	code, out, errOut := runCmd("devices")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^HTP0 +GPU +unavailable`, out)
	require.Contains(t, out, "0x72 ECONNREFUSED")
	require.Contains(t, out, "no FastRPC device")
}

// TestDemoOnHexagon: the demo block runs on HTP0 over the double, every
// node on HTP0 in one split, matching the CPU-only run.
func TestDemoOnHexagon(t *testing.T) {
	if !inChild(t, "TestDemoOnHexagon", func(dir string) []string {
		return []string{"GGML_HEXAGON_LIB=" + filepath.Join(dir, "libcdsprpc.so")}
	}) {
		return
	}
	code, out, errOut := runCmd("demo", "-device", "HTP0", "-tokens", "5", "-ctx", "24", "-embd", "256")
	require.Equal(t, 0, code, errOut)
	t.Log(out)
	require.Contains(t, out, "\nsplits: 1\n")
	require.Regexp(t, regexp.MustCompile(`(?m)^FLASH_ATTN_EXT +fattn +HTP0$`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^MUL_MAT +ffn_out +HTP0$`), out)
	require.NotRegexp(t, regexp.MustCompile(`(?m) CPU$`), out)
	m := regexp.MustCompile(`agreement with a CPU-only run: max abs diff \S+, nmse (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	nmse, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	require.Less(t, nmse, 5e-4, "test-backend-ops' tolerance for MUL_MAT and FLASH_ATTN_EXT")
}

// TestDemoOnHexagonGroup: the demo block on a two-core group device over
// the double speaking the fence protocol (every batch starts with
// MDEV_GROUP and goes to both cores, which split the work), matching the
// CPU-only run.
func TestDemoOnHexagonGroup(t *testing.T) {
	if !inChild(t, "TestDemoOnHexagonGroup", func(dir string) []string {
		return []string{"GGML_HEXAGON_LIB=" + filepath.Join(dir, "libcdsprpc.so"), "GGML_HEXAGON_PROTOCOL=fence",
			"GGML_HEXAGON_DEVICES=G[0-1]", "HTPDOUBLE_CONFIG=protocol=fence;cores=2"}
	}) {
		return
	}
	code, out, errOut := runCmd("demo", "-device", "G", "-tokens", "5", "-ctx", "24", "-embd", "256")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "\nsplits: 1\n")
	require.Regexp(t, regexp.MustCompile(`(?m)^MUL_MAT +ffn_out +G$`), out)
	m := regexp.MustCompile(`agreement with a CPU-only run: max abs diff \S+, nmse (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	nmse, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	require.Less(t, nmse, 5e-4)
}

// TestDemoOnVirtualSession: a device name with a virtual-session suffix
// (HTP0:1) is a device on the command line, not parameters, and takes
// parameters after it.
func TestDemoOnVirtualSession(t *testing.T) {
	if !inChild(t, "TestDemoOnVirtualSession", func(dir string) []string {
		return []string{"GGML_HEXAGON_LIB=" + filepath.Join(dir, "libcdsprpc.so"), "GGML_HEXAGON_DEVICES=HTP0,HTP0:1"}
	}) {
		return
	}
	code, out, errOut := runCmd("demo", "-device", "HTP0:1:dsp_errors=per_call", "-tokens", "5", "-ctx", "24", "-embd", "256")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "\nsplits: 1\n")
	require.Regexp(t, regexp.MustCompile(`(?m)^MUL_MAT +ffn_out +HTP0:1$`), out)
}

// BenchmarkHexagonDecode measures the host overhead of the demo's decode
// graph (one token) on HTP0 over the double: our Go time to build,
// submit and complete the op batch, per node. The double computes
// nothing (exec=0), and its share of each batch's latency, which it
// counts (dsp_wall_ns: from our dspqueue_write to its answer, wake-up
// included; rsp_wakeup_ns: from its answer to our read returning), is
// taken out: host-ns/node is ours, total-ns/node everything.
func BenchmarkHexagonDecode(b *testing.B) {
	d := hexdouble.Open(b, hexdouble.Full)
	d.Configure(b, "exec=0")
	o := hexagon.DefaultOptions()
	o.Lib = d.Path
	r := hexagon.NewRegistry(o)
	defer r.Close()
	dev := r.Devices()[0]
	require.NoError(b, backend.Availability(dev))
	be, err := dev.Init(backend.Options{})
	require.NoError(b, err)
	defer be.Close()
	bt := dev.BufferType()
	c := graph.NewContext(graph.ContextOptions{})
	dims, err := block.NewDims(256, 1, 64, true)
	require.NoError(b, err)
	var bufs []buffer.Buffer
	defer func() {
		for _, x := range bufs {
			_ = x.Free()
		}
	}()
	leaf := func(name string, typ quant.Type, ne ...int64) *graph.Tensor {
		t := c.SetName(c.NewTensor(typ, ne...), name)
		buf, err := bt.Alloc(bt.AllocSize(t))
		require.NoError(b, err)
		buf.SetUsage(buffer.UsageWeights)
		require.NoError(b, buf.AllocTensor(t, 0))
		bufs = append(bufs, buf)
		data, err := block.LeafData(t, 1)
		require.NoError(b, err)
		require.NoError(b, buffer.SetTensor(t, data, 0))
		return t
	}
	g, in, _, err := block.BuildLayers(c, dims, 1, leaf)
	require.NoError(b, err)
	cb, err := buffer.AllocContextTensors(c, bt)
	require.NoError(b, err)
	bufs = append(bufs, cb)
	require.NoError(b, block.SetInputs(in, dims, 1, buffer.SetTensor))
	nodes := 0
	for _, n := range g.Nodes {
		if !n.Op.IsView() && n.Op != 0 {
			nodes++
		}
	}
	require.NoError(b, backend.Compute(be, g))
	dsp := func() uint64 { return d.Stat("dsp_wall_ns") + d.Stat("rsp_wakeup_ns") }
	v0 := dsp()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := backend.Compute(be, g); err != nil {
			b.Fatal(err)
		}
	}
	total := time.Since(start)
	b.StopTimer()
	dbl := time.Duration(dsp() - v0)
	per := float64(b.N * nodes)
	b.ReportMetric(float64(total.Nanoseconds())/per, "total-ns/node")
	b.ReportMetric(float64((total-dbl).Nanoseconds())/per, "host-ns/node")
	b.ReportMetric(float64(nodes), "nodes")
}
