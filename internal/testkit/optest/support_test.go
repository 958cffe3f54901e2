package optest

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/ops"
)

// supportTally counts, per operation, how our CPU device's supports-op
// compares with the real ggml's on the cases cpu_support.csv lists.
type supportTally struct {
	agree, disagree map[string]int
	undescribed     map[string]int
	mismatches      []string
	failures        []string
}

// describer says whether operation op has cases built from descriptions,
// and builds them (described and FromDesc, or a test's stand-in).
type describer struct {
	has      func(op string) bool
	fromDesc func(op, desc string) (Case, error)
}

var registered = describer{
	has:      func(op string) bool { _, ok := described[op]; return ok },
	fromDesc: FromDesc,
}

// checkSupport reads a cpu_support.csv and, for every CPU support row of
// an operation d describes, builds the case and compares cpu.SupportsOp on
// its output with the row's "supported" column.
func checkSupport(r io.Reader, d describer) (*supportTally, error) {
	rd := csv.NewReader(r)
	header, err := rd.Read()
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, h := range []string{"backend_name", "op_name", "op_params", "test_mode", "supported"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("no %q column", h)
		}
	}
	tally := &supportTally{agree: map[string]int{}, disagree: map[string]int{}, undescribed: map[string]int{}}
	for {
		row, err := rd.Read()
		if err == io.EOF {
			return tally, nil
		}
		if err != nil {
			return nil, err
		}
		if row[col["backend_name"]] != "CPU" || row[col["test_mode"]] != "support" {
			continue
		}
		op, params := row[col["op_name"]], row[col["op_params"]]
		if !d.has(op) {
			tally.undescribed[op]++
			continue
		}
		got, err := caseSupported(d, op, params)
		if err != nil {
			tally.failures = append(tally.failures, fmt.Sprintf("%s(%s): %v", op, params, err))
			continue
		}
		if want := row[col["supported"]] == "1"; got != want {
			tally.disagree[op]++
			tally.mismatches = append(tally.mismatches, fmt.Sprintf("%s(%s): ggml supported=%v, ours %v", op, params, want, got))
			continue
		}
		tally.agree[op]++
	}
}

// caseSupported builds the case op(params) describes and its graph and
// asks the CPU device about the output, as test-backend-ops' support mode
// asks the backend about the output of build_graph.
func caseSupported(d describer, op, params string) (bool, error) {
	c, err := d.fromDesc(op, params)
	if err != nil {
		return false, err
	}
	ctx := graph.NewContext(graph.ContextOptions{})
	outs := c.Build(ctx)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if len(outs) == 0 || outs[0] == nil {
		return false, fmt.Errorf("case %s builds no output", c.Name)
	}
	if _, err := ctx.Build(outs...); err != nil {
		return false, err
	}
	// test-backend-ops names a few composite cases itself
	// ("MUL_MAT_HADAMARD"); only a ggml operation's name is checked.
	if name := outs[0].OpDesc(); name != op && isOpName(op) {
		return false, fmt.Errorf("case %s computes %s, not %s", c.Name, name, op)
	}
	return cpu.SupportsOp(outs[0]), nil
}

// isOpName reports whether name is one of ggml's operations, unary
// operations or gated linear units.
func isOpName(name string) bool {
	_, errOp := ops.ParseOp(name)
	_, errUnary := ops.ParseUnaryOp(name)
	_, errGLU := ops.ParseGluOp(name)
	return errOp == nil || errUnary == nil || errGLU == nil
}

func (s *supportTally) log(t *testing.T) {
	ops := map[string]bool{}
	for _, m := range []map[string]int{s.agree, s.disagree} {
		for op := range m {
			ops[op] = true
		}
	}
	var names []string
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	for _, op := range names {
		t.Logf("%-24s %5d agree, %d disagree", op, s.agree[op], s.disagree[op])
	}
	var rows int
	names = names[:0]
	for op, n := range s.undescribed {
		rows += n
		names = append(names, op)
	}
	sort.Strings(names)
	t.Logf("%d rows of %d operations no family describes yet: %s", rows, len(names), strings.Join(names, " "))
}

// TestCPUSupportMatchesGGML: for every case of cpu_support.csv whose
// operation a family describes, our CPU device supports it exactly when the
// real ggml's does. Operations nobody describes yet are counted, not failed.
func TestCPUSupportMatchesGGML(t *testing.T) {
	f, err := os.Open(filepath.Join(reftest.OracleDir(t), "cpu_support.csv"))
	require.NoError(t, err)
	defer f.Close()
	tally, err := checkSupport(f, registered)
	require.NoError(t, err)
	tally.log(t)
	for i, m := range append(tally.failures, tally.mismatches...) {
		if i == 100 {
			t.Errorf("... and %d more", len(tally.failures)+len(tally.mismatches)-i)
			break
		}
		t.Error(m)
	}
}

// fakeAdd stands in for a family's describer of ADD, to test the support
// check itself; relabel=1 makes a case that computes SUB instead, and
// ADD_AS_COMPOSITE stands for a case test-backend-ops names itself.
var fakeAdd = describer{
	has: func(op string) bool { return op == "ADD" || op == "ADD_AS_COMPOSITE" },
	fromDesc: func(op, desc string) (Case, error) {
		d, err := ParseDesc(desc)
		if err != nil {
			return Case{}, err
		}
		typ, err := d.Type("type")
		if err != nil {
			return Case{}, err
		}
		ne, err := d.Ne("ne")
		if err != nil {
			return Case{}, err
		}
		return Case{Name: op, Build: func(c *graph.Context) []*graph.Tensor {
			a := c.NewTensor(typ, ne[:]...)
			t := c.Add(a, a)
			if t != nil && d["relabel"] == "1" {
				t.Op = ops.Sub
			}
			return []*graph.Tensor{t}
		}}, nil
	},
}

func TestCheckSupport(t *testing.T) {
	row := func(op, params, supported string) string {
		return fmt.Sprintf("%q,%q,%q,%q,%q,%q,%q\n", "CPU", op, params, "support", supported, "yes", "CPU")
	}
	in := `"backend_name","op_name","op_params","test_mode","supported","error_message","backend_reg_name"` + "\n" +
		row("ADD", "type=f32,ne=[4,3,1,1]", "1") + // agrees
		row("ADD", "type=f32,ne=[4,3,1,1]", "0") + // disagrees
		row("ADD", "type=f16,ne=[4,3,1,1]", "1") + // agrees: F16 adds
		row("ADD", "type=q4_0,ne=[32,1,1,1]", "0") + // agrees: not a float type
		row("ADD", "type=f32,ne=[4,3,1,1],relabel=1", "1") + // not the op it claims
		row("ADD", "type=f32,ne=[-4]", "1") + // does not build
		row("ADD", "type=f32", "1") + // does not parse
		row("ADD_AS_COMPOSITE", "type=f32,ne=[4,3,1,1]", "1") + // a name test-backend-ops made up: not checked
		row("NOT_DESCRIBED", "x=1", "1") +
		row("NOT_DESCRIBED", "x=2", "0") +
		`"Vulkan0","ADD","type=f32,ne=[4,3,1,1]","support","0","no","Vulkan"` + "\n"
	tally, err := checkSupport(strings.NewReader(in), fakeAdd)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"ADD": 3, "ADD_AS_COMPOSITE": 1}, tally.agree)
	require.Equal(t, map[string]int{"ADD": 1}, tally.disagree)
	require.Len(t, tally.mismatches, 1)
	require.Contains(t, tally.mismatches[0], "ggml supported=false, ours true")
	require.Len(t, tally.failures, 3)
	require.Contains(t, tally.failures[0], "computes SUB")
	require.Contains(t, tally.failures[1], "negative")
	require.Contains(t, tally.failures[2], `no "ne"`)
	require.Equal(t, map[string]int{"NOT_DESCRIBED": 2}, tally.undescribed)

	_, err = checkSupport(strings.NewReader(`"backend_name","op_name"`+"\n"), fakeAdd)
	require.ErrorContains(t, err, "op_params")
}
