package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMeasureInterleavesAndTakesMedians(t *testing.T) {
	var calls []string
	f := Figure{
		Name: "fake", Threads: 1,
		Ours: func() error { calls = append(calls, "o"); return nil },
		Ref:  func() error { calls = append(calls, "r"); return nil },
	}
	r, err := Measure(f, Options{Reps: 2, MinSample: 0})
	require.NoError(t, err)
	// A warm-up of each side, then at least five samples of one
	// iteration each, alternating which side goes first.
	require.Equal(t, "o r o r r o o r r o o r", strings.Join(calls, " "))
	require.Equal(t, 1, r.OursIters)
	require.Equal(t, 1, r.RefIters)
	require.True(t, r.HasRef())
}

func TestMeasureReportsErrors(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	_, err := Measure(Figure{Ours: func() error { n++; return nil }, Ref: func() error {
		if n > 2 {
			return boom
		}
		return nil
	}}, Options{})
	require.ErrorIs(t, err, boom)
	_, err = Measure(Figure{}, Options{})
	require.Error(t, err)
}

func TestMedian(t *testing.T) {
	require.Equal(t, 3*time.Second, medianOf([]time.Duration{5 * time.Second, 1 * time.Second, 3 * time.Second, 9 * time.Second, 2 * time.Second}))
	require.Equal(t, 25*time.Millisecond, medianOf([]time.Duration{10 * time.Millisecond, 40 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}))
	require.Zero(t, medianOf(nil))
}

func TestWriteRow(t *testing.T) {
	var buf bytes.Buffer
	r := Result{
		Figure: Figure{Name: "dispatch", Threads: 2, Ops: 1000, Ref: func() error { return nil }},
		Ours:   Time{Wall: 100 * time.Microsecond, CPU: 200 * time.Microsecond},
		Ref:    Time{Wall: 50 * time.Microsecond, CPU: 0},
	}
	require.NoError(t, WriteRow(&buf, r))
	require.Equal(t, "dispatch\t2\tns/op\t100\t50\t0.500\t200\t-\t-\n", buf.String())

	buf.Reset()
	r = Result{Figure: Figure{Name: "matmul", Threads: 1}, Ours: Time{Wall: 3 * time.Millisecond, CPU: 3 * time.Millisecond}}
	require.NoError(t, WriteRow(&buf, r))
	require.Equal(t, "matmul\t1\tms\t3\t-\t-\t3\t-\t-\n", buf.String())
}
