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
		if doubleExecutes(c) {
			cases = append(cases, c)
		}
	}
	rep := optest.TestDevice(t, devs[0], optest.Options{Cases: cases, Seed: 1})
	require.Empty(t, d.Violations())
	require.Positive(t, rep.Tally.Count(optest.Passed))
	t.Logf("the double executed %d ops", d.Stat("ops"))
}
