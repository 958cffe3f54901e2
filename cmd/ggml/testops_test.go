package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/internal/testkit/optest"
	"github.com/ggml-go/ggml/ops"
)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestTestOpsCPU(t *testing.T) {
	cases := optest.Cases(false, []string{"ADD"})
	require.NotEmpty(t, cases)
	code, out, errOut := runCmd("test-ops", "-o", "ADD", "-ref", "cpu", "-v")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, fmt.Sprintf("%d passed, 0 failed, 0 skipped", len(cases)), lastLine(out))
	require.Contains(t, out, "passed  "+cases[0].Name+"\n")
	require.Regexp(t, fmt.Sprintf(`(?m)^ +ADD +%d +0 +0$`, len(cases)), out)
	require.NotContains(t, out, "SUB")
}

func TestTestOpsGGML(t *testing.T) {
	reftest.Lib(t)
	n := len(optest.Cases(false, []string{"ADD", "MUL"}))
	code, out, errOut := runCmd("test-ops", "-o", "add,mul", "-ref", "ggml")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "against ggml")
	var passed, skipped int
	_, err := fmt.Sscanf(lastLine(out), "%d passed, 0 failed, %d skipped", &passed, &skipped)
	require.NoError(t, err, lastLine(out))
	require.Equal(t, n, passed+skipped)
	require.Greater(t, passed, n/2)
}

func TestTestOpsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-b", "GPU"}, {"-ref", "other"}, {"-cases", "some"}, {"-o", "NO_SUCH_OP"}, {"-threads", "0"}, {"extra"}, {"-nosuchflag"},
	} {
		code, _, errOut := runCmd(append([]string{"test-ops"}, args...)...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.True(t, strings.HasPrefix(errOut, "ggml test-ops: "), "%v: %s", args, errOut)
		require.NotContains(t, errOut, "usage:", "%v: the error is the sentence, without a prefix", args)
	}
}

// The command's fake devices: an asynchronous one with memory of its own,
// and one that computes ADD as SUB.
var (
	asyncFake = devtest.New(devtest.Config{Name: "ASYNCFAKE0", Type: backend.DeviceGPU, Async: true})
	badAdd    = devtest.New(devtest.Config{Name: "BADADD0", Type: backend.DeviceGPU, Supports: devtest.F32Ops(ops.Add, ops.Mul),
		Faults: devtest.Faults{Tamper: func(n *graph.Tensor) {
			if n.Op == ops.Add {
				n.Op = ops.Sub
			}
		}}})
	registerFakes sync.Once
)

func fakes(t *testing.T) {
	registerFakes.Do(func() {
		for _, d := range []*devtest.Device{asyncFake, badAdd} {
			require.NoError(t, backend.Register(d.Registry()))
		}
	})
}

func TestTestOpsAnyDevice(t *testing.T) {
	fakes(t)
	n := len(optest.Cases(false, []string{"ADD", "MUL_MAT", "ROPE"}))
	code, out, errOut := runCmd("test-ops", "-b", "ASYNCFAKE0", "-o", "ADD,MUL_MAT,ROPE", "-ref", "cpu")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "device ASYNCFAKE0 (devtest fake device, 2 threads) against CPU")
	require.Equal(t, fmt.Sprintf("%d passed, 0 failed, 0 skipped", n), lastLine(out))
	// Parameters reach the device, which refuses one it does not have.
	code, _, errOut = runCmd("test-ops", "-b", "ASYNCFAKE0:threads=1", "-o", "ADD", "-ref", "cpu")
	require.Equal(t, 0, code, errOut)
	code, _, errOut = runCmd("test-ops", "-b", "ASYNCFAKE0:nope=1", "-o", "ADD", "-ref", "cpu")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `has no parameter "nope"`)
	code, _, errOut = runCmd("test-ops", "-b", "ASYNCFAKE0,CPU")
	require.Equal(t, 2, code, errOut)

	// A wrong device fails, each case named, and the report says so.
	dir := t.TempDir()
	code, out, errOut = runCmd("test-ops", "-b", "BADADD0", "-o", "ADD,MUL", "-ref", "cpu", "-report", filepath.Join(dir, "run.json"))
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "cases failed")
	adds := optest.Cases(false, []string{"ADD"})
	var f32Adds []string
	for _, c := range adds {
		if strings.Contains(c.Name, "type=f32") || strings.Contains(c.Name, "type_a=f32,type_b=f32,type_dst=f32") {
			f32Adds = append(f32Adds, c.Name)
			require.Contains(t, out, "FAILED  "+c.Name+": output 0")
		}
	}
	require.NotEmpty(t, f32Adds)
	require.Regexp(t, `(?m)^ +MUL +[1-9]\d* +0 +\d+$`, out)
	js, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	var rep struct {
		Device   struct{ Name string }
		Failed   int
		Ops      []struct{ Op string }
		Failures []struct{ Case, Error string }
	}
	require.NoError(t, json.Unmarshal(js, &rep))
	require.Equal(t, "BADADD0", rep.Device.Name)
	require.NotZero(t, rep.Failed)
	require.Len(t, rep.Failures, rep.Failed)
	require.Contains(t, rep.Failures[0].Error, "outputs differ")
	md, err := os.ReadFile(filepath.Join(dir, "run.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "# ggml test-ops: BADADD0")
	require.Contains(t, string(md), "| ADD |")
	require.Contains(t, string(md), "- `"+rep.Failures[0].Case+"`: ")
}

// -mode support writes cpu_support.csv's layout; for our CPU it agrees
// with ggml's file on every case both list.
func TestTestOpsSupport(t *testing.T) {
	dir := reftest.OracleDir(t)
	code, out, errOut := runCmd("test-ops", "-mode", "support", "-b", "CPU")
	require.Equal(t, 0, code, errOut)
	oracle, err := os.ReadFile(filepath.Join(dir, "cpu_support.csv"))
	require.NoError(t, err)
	// The oracle keeps only the columns the tests read; ours has ggml's
	// full layout. Both are read by column name.
	rows := func(s string) map[string]string { // op, params -> supported
		recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
		require.NoError(t, err)
		require.NotEmpty(t, recs)
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, h := range []string{"backend_name", "op_name", "op_params", "test_mode", "supported"} {
			require.Contains(t, col, h)
		}
		m := map[string]string{}
		for _, r := range recs[1:] {
			require.Equal(t, "support", r[col["test_mode"]])
			m[r[col["op_name"]]+" "+r[col["op_params"]]] = r[col["supported"]]
		}
		return m
	}
	require.True(t, strings.HasPrefix(out, `"backend_name","op_name","op_params","test_mode","supported","error_message","backend_reg_name"`+"\n"), "ggml's support-mode header")
	ours, ggml := rows(out), rows(string(oracle))
	require.Len(t, ours, len(optest.Cases(false, nil)))
	common := 0
	for k, v := range ours {
		if w, ok := ggml[k]; ok {
			common++
			require.Equal(t, w, v, k)
		}
	}
	require.Greater(t, common, len(ours)/2, "most quick cases are ggml's own")

	fakes(t)
	code, out, errOut = runCmd("test-ops", "-mode", "support", "-b", "BADADD0", "-o", "ADD")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"BADADD0","ADD","type=f32,ne=[10,5,4,3],nr=[2,1,1,1],nf=1,perm1=0,src_overlap=0","support","1","yes","BADADD0"`)
	require.Regexp(t, `"BADADD0","ADD","type=f16,[^"]*","support","0","no","BADADD0"`, out)
}

// The progress line goes to a terminal only, and not with -q.
func TestTestOpsProgress(t *testing.T) {
	var bar bytes.Buffer
	progressOut = &bar
	defer func() { progressOut = nil }()
	code, out, errOut := runCmd("test-ops", "-o", "ADD", "-ref", "cpu", "-q")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, bar.String())
	code, out2, errOut := runCmd("test-ops", "-o", "ADD", "-ref", "cpu")
	require.Equal(t, 0, code, errOut)
	n := len(optest.Cases(false, []string{"ADD"}))
	require.Contains(t, bar.String(), fmt.Sprintf("] %d/%d cases, 0 failed", n, n))
	require.NotContains(t, out+out2, "\r", "stdout stays parseable")
}

// Every device the command links (and the tests' fakes) keeps its caps and
// optional interfaces consistent; RunDevice refuses one that does not.
func TestDevicesCaps(t *testing.T) {
	fakes(t)
	require.NotEmpty(t, backend.Devices())
	for _, d := range backend.Devices() {
		require.NoError(t, backend.CheckCaps(d), d.Name())
	}
}
