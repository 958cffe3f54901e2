package hexagon

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
	"github.com/ggml-go/ggml/internal/testkit/optest"
)

// doubleOps are the ops (test-backend-ops names) the double executes
// (testdata/README.md, "Ops executed").
var doubleOps = map[string]bool{
	"ADD": true, "SUB": true, "MUL": true, "DIV": true, "RMS_NORM": true, "SCALE": true, "SILU": true, "GELU_QUICK": true,
	"SIGMOID": true, "EXP": true, "NEG": true, "SOFTPLUS": true, "TANH": true, "SQR": true, "SQRT": true,
	"SWIGLU": true, "GEGLU": true, "SWIGLU_OAI": true, "SOFT_MAX": true, "ROPE": true, "GET_ROWS": true,
	"SET_ROWS": true, "CPY": true, "CONT": true, "DUP": true, "FLASH_ATTN_EXT": true, "MUL_MAT": true,
	"MUL_MAT_ID": true, "ADD_ID": true, "SUM_ROWS": true, "CUMSUM": true, "NORM": true, "L2_NORM": true,
	"SOLVE_TRI": true, "CLAMP": true, "FILL": true, "TRI": true, "REPEAT": true, "CONCAT": true, "DIAG": true,
	"PAD": true, "ARGSORT": true,
	"NONE": true, "VIEW": true, "RESHAPE": true, "PERMUTE": true, "TRANSPOSE": true,
}

// doubleExecutes keeps the cases the double can compute: its ops, and of
// ROPE the modes it knows (NORMAL, NEOX, MROPE, VISION, IMROPE). A case
// it cannot compute gets NO_SUPPORT from it, which (as from a real DSP)
// marks the session. Quantized MUL_MATs include weights whose ne1 is not
// a multiple of 32 (sent with their own ne and the padded layout's
// strides, as upstream does).
func doubleExecutes(c optest.Case) bool {
	op := optest.OpNameOf(c.Name)
	if !doubleOps[op] {
		return false
	}
	if op == "ROPE" {
		for _, m := range []string{"mode=0,", "mode=2,", "mode=8,", "mode=24,", "mode=40,"} {
			if strings.Contains(c.Name, m) {
				return true
			}
		}
		return false
	}
	return true
}

// TestConformance runs the conformance suite on HTP0 over the double
// through the device's own buffers (optest.TestDevice), on the cases the
// double executes; every case the device accepts must match the
// reference. With OPTEST_FULL=1 (about 2,600 cases) it needs more than go
// test's default 10 minutes on a busy machine: -timeout 30m; the command
// line's `ggml test-ops -b HTP0 -cases full` runs the same cases and more.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance run is in the full pass; -short is the race pass")
	}
	d := double.Open(t, double.Full)
	o := testOptions(d)
	// The double computes in plain C on a shared machine: the full set's
	// largest cases take seconds.
	o.ResponseTimeout = 2 * time.Minute
	_, devs := openRegistry(t, o)
	require.NoError(t, backend.Availability(devs[0]))
	var cases []optest.Case
	full := os.Getenv("OPTEST_FULL") == "1"
	for _, c := range optest.Cases(full, nil) {
		// A real DSP library runs every case the device claims.
		if d.Real() || doubleExecutes(c) {
			cases = append(cases, c)
		}
	}
	rep := optest.TestDevice(t, devs[0], optest.Options{Cases: cases, Seed: 1})
	require.Empty(t, d.Violations())
	require.Positive(t, rep.Tally.Count(optest.Passed))
	if !d.Real() {
		t.Logf("the double executed %d ops", d.Stat("ops"))
	}
}

// TestConformanceGoesOn: a case that breaks the DSP session (the double
// fails its op) is counted as failed, the session is reopened and the
// later cases run and pass; past the reopen limit the run stops with an
// error instead of failing every later case.
func TestConformanceGoesOn(t *testing.T) {
	d := double.Open(t, double.Full)
	_, devs := openRegistry(t, testOptions(d))
	require.NoError(t, backend.Availability(devs[0]))
	var cases []optest.Case
	for _, c := range optest.Cases(false, []string{"ADD"}) {
		if len(cases) < 3 && strings.Contains(c.Name, "type=f32") {
			cases = append(cases, c)
		}
	}
	require.Len(t, cases, 3)
	d.Configure(t, "fail.op=1:2")
	rep, err := optest.RunDevice(devs[0], optest.Options{Cases: cases, Seed: 1, Ref: refOf(t)})
	require.NoError(t, err)
	require.Equal(t, optest.Failed, rep.Results[0].Status)
	require.Contains(t, rep.Results[0].Detail, "restarted, 1 of at most 5")
	require.Equal(t, 2, rep.Tally.Count(optest.Passed), "the cases after the broken one run")
	require.Equal(t, d.Path, rep.Libraries["libcdsprpc"], "the report names the library")
	require.Equal(t, "libggml-htp-v73.so", rep.Libraries["htp library"])

	d.Configure(t, "fail.op=1x0:2")
	rep, err = optest.RunDevice(devs[0], optest.Options{Cases: cases, Seed: 1, Ref: refOf(t), MaxReopens: 2})
	require.ErrorContains(t, err, "broke 3 times")
	require.Len(t, rep.Results, 3, "stopped at the limit")
	require.Equal(t, 3, rep.Tally.Count(optest.Failed))
}

// refOf is our CPU device as the reference (the real ggml is not what
// these tests are about).
func refOf(t *testing.T) optest.Executor {
	ref, closeRef := optest.CPURef()
	t.Cleanup(closeRef)
	return ref
}
