package optest

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/ops"
)

// Fakes with memory of their own, synchronous, asynchronous and slow,
// pass every case through their own buffers (TestCasesAgainstGGML runs the
// CPU device this way).
func TestRunDevice(t *testing.T) {
	ref, closeRef := CPURef()
	defer closeRef()
	for _, dev := range []backend.Device{
		devtest.New(devtest.Config{Type: backend.DeviceGPU}),
		devtest.New(devtest.Config{Name: "ASYNC0", Type: backend.DeviceGPU, Async: true, Threads: 2}),
		devtest.NewWithEvents(devtest.Config{Name: "SLOW0", Type: backend.DeviceGPU, Faults: devtest.Faults{Delay: 100 * time.Microsecond}}),
	} {
		t.Run(dev.Name(), func(t *testing.T) {
			// -short (the race detector's run) keeps the ops with
			// weights, views, in-place results and index inputs.
			var only []string
			if testing.Short() {
				only = []string{"ADD", "MUL_MAT", "GET_ROWS", "CPY", "SET_ROWS", "SOFT_MAX", "ROPE"}
			}
			rep := TestDevice(t, dev, Options{Ref: ref, Full: testFull(), Ops: only, Seed: 3})
			// The fakes take what the CPU computes: the only skips are
			// the full set's type pairs the CPU refuses.
			for _, r := range rep.Results {
				if r.Status == Skipped {
					assert.True(t, strings.HasPrefix(r.Detail, dev.Name()+": not supported: "), "%s: %s", r.Case.Name, r.Detail)
				}
			}
			if !testFull() {
				assert.Zero(t, rep.Tally.Count(Skipped))
			}
			assert.Equal(t, len(Cases(testFull(), only)), len(rep.Results))
		})
	}
}

// recorder is a testing.TB that keeps TestDevice's errors instead of
// failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Helper()             {}

// runFaulty runs the cases of op on a fake device with faults, returning
// the report and what TestDevice reported.
func runFaulty(t *testing.T, op string, supports func(*graph.Tensor) bool, f devtest.Faults) (*Report, []string) {
	t.Helper()
	ref, closeRef := CPURef()
	defer closeRef()
	dev := devtest.New(devtest.Config{Name: "BAD0", Type: backend.DeviceGPU, Async: true, Supports: supports, Faults: f})
	rec := &recorder{TB: t}
	rep := TestDevice(rec, dev, Options{Ref: ref, Ops: []string{op}, Seed: 5})
	return rep, rec.errs
}

// The suite fails a device that computes wrongly, and names each case.
func TestRunDeviceFailsWrongDevice(t *testing.T) {
	nbytes := func(n *graph.Tensor) uint64 { return n.NBytes() }
	for _, tc := range []struct {
		name, op string
		supports func(*graph.Tensor) bool
		faults   devtest.Faults
		detail   string
		all      bool // every case the device takes must fail, not just some
	}{{
		// F32 only: the CPU has no SUB of quantized tensors.
		name: "ADD as SUB", op: "ADD", all: true, detail: "outputs differ", supports: devtest.F32Ops(ops.Add),
		faults: devtest.Faults{Tamper: func(n *graph.Tensor) {
			if n.Op == ops.Add {
				n.Op = ops.Sub
			}
		}},
	}, {
		name: "ROPE one position off", op: "ROPE", all: true, detail: "outputs differ",
		faults: devtest.Faults{Tamper: func(n *graph.Tensor) {
			if n.Op != ops.Rope {
				return
			}
			pos := n.Src[1].Data
			for i := 0; i+4 <= len(pos); i += 4 {
				binary.LittleEndian.PutUint32(pos[i:], binary.LittleEndian.Uint32(pos[i:])+1)
			}
		}},
	}, {
		name: "one byte of the next sentinel", op: "ADD", all: true, detail: "changed at byte 0",
		faults: devtest.Faults{Corrupt: func(n *graph.Tensor, mem []byte, at uint64) {
			end := at + (nbytes(n)+31)&^31 // the sentinel after the result, 32-byte aligned
			mem[end] ^= 0x40
		}},
	}, {
		name: "result at the wrong offset", op: "MUL_MAT", all: true, detail: "",
		faults: devtest.Faults{Corrupt: func(n *graph.Tensor, mem []byte, at uint64) {
			size := nbytes(n)
			res := append([]byte(nil), mem[at:at+size]...)
			clear(mem[at : at+size])
			copy(mem[at+32:], res)
		}},
	}, {
		name: "a failing compute", op: "SOFT_MAX", all: true, detail: devtest.ErrFault.Error(),
		faults: devtest.Faults{Compute: func(*graph.Tensor) error { return devtest.ErrFault }},
	}, {
		name: "a failing get", op: "CPY", all: true, detail: devtest.ErrFault.Error(),
		faults: devtest.Faults{Get: func(*graph.Tensor) error { return devtest.ErrFault }},
	}, {
		name: "a failing set", op: "GET_ROWS", all: true, detail: devtest.ErrFault.Error(),
		faults: devtest.Faults{Set: func(*graph.Tensor) error { return devtest.ErrFault }},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rep, errs := runFaulty(t, tc.op, tc.supports, tc.faults)
			n := len(rep.Results) - rep.Tally.Count(Skipped)
			require.NotZero(t, n)
			fails := rep.Failures()
			if tc.all {
				require.Len(t, fails, n, "every %s case must fail", tc.op)
			}
			require.NotEmpty(t, fails)
			for _, f := range fails {
				assert.Contains(t, f.Detail, tc.detail, f.Case.Name)
			}
			// TestDevice reports each failed case by name, and that no
			// case passed.
			require.Len(t, errs, len(fails)+1)
			for i, f := range fails {
				assert.True(t, strings.HasPrefix(errs[i], f.Case.Name+" on BAD0: "), errs[i])
			}
			assert.Contains(t, errs[len(errs)-1], "no case passed")
		})
	}
}

// Cases the device refuses are skipped, never passed or failed; a device
// that refuses everything fails TestDevice.
func TestRunDeviceSkipsRefused(t *testing.T) {
	ref, closeRef := CPURef()
	defer closeRef()
	dev := devtest.New(devtest.Config{Name: "ADDONLY0", Type: backend.DeviceGPU, Supports: devtest.F32Ops(ops.Add)})
	rep, err := RunDevice(dev, Options{Ref: ref, Ops: []string{"ADD", "MUL"}})
	require.NoError(t, err)
	assert.Zero(t, rep.Tally.Count(Failed))
	assert.NotZero(t, rep.Tally.Count(Passed))
	for _, r := range rep.Results {
		if r.Op == "MUL" {
			assert.Equal(t, Skipped, r.Status, r.Case.Name)
			assert.Contains(t, r.Detail, "ADDONLY0: not supported: MUL ")
		}
	}
	rec := &recorder{TB: t}
	TestDevice(rec, dev, Options{Ref: ref, Ops: []string{"MUL"}})
	assert.Equal(t, []string{"ADDONLY0: no case passed (0 passed, 0 failed, " + fmt.Sprint(len(Cases(false, []string{"MUL"}))) + " skipped)"}, rec.errs)
}

// lyingDevice claims events it does not have.
type lyingDevice struct{ *devtest.Device }

func (d lyingDevice) Props() backend.Props {
	p := d.Device.Props()
	p.Caps.Events = true
	return p
}

func TestRunDeviceChecksCaps(t *testing.T) {
	ref, closeRef := CPURef()
	defer closeRef()
	_, err := RunDevice(lyingDevice{devtest.New(devtest.Config{Name: "LIAR0"})}, Options{Ref: ref, Ops: []string{"ADD"}})
	require.ErrorIs(t, err, backend.ErrArgument)
	require.ErrorContains(t, err, "Caps.Events is true")
}

// A cancelled context stops the run between cases, keeping what ran.
func TestRunDeviceCancel(t *testing.T) {
	ref, closeRef := CPURef()
	defer closeRef()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []int
	rep, err := RunDevice(devtest.New(devtest.Config{Name: "CANCEL0", Type: backend.DeviceGPU}), Options{
		Ref: ref, Ops: []string{"ADD"}, Context: ctx,
		OnResult: func(i, n int, r Result) {
			seen = append(seen, i)
			if i == 3 {
				cancel()
			}
		},
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, rep.Results, 3)
	assert.Equal(t, []int{1, 2, 3}, seen)
	assert.Equal(t, 3, rep.Tally.Count(Passed))
}
