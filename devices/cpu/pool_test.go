package cpu

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
)

// runWithin runs p.run and fails t if it does not return in time (a
// barrier that never opens).
func runWithin(t *testing.T, p *pool, fn func(*Params), work []byte) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.run(func(q *Params, _ *graph.Tensor) { fn(q) }, nil, work, p.n) }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("pool.run did not return")
		return nil
	}
}

func TestPoolThreads(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8} {
		p := newPool(n)
		var calls [8]atomic.Int32
		var nth atomic.Int32
		for range 20 { // the workers persist from one run to the next
			err := runWithin(t, p, func(q *Params) {
				calls[q.Ith].Add(1)
				nth.Store(int32(q.Nth))
			}, nil)
			require.NoError(t, err)
		}
		for i := range 8 {
			want := int32(0)
			if i < n {
				want = 20
			}
			require.Equal(t, want, calls[i].Load(), "thread %d of %d", i, n)
		}
		require.EqualValues(t, n, nth.Load())
		p.close()
	}
}

// TestPoolRows: the threads' row ranges cover every row once, in order.
func TestPoolRows(t *testing.T) {
	for _, nth := range []int{1, 2, 3, 7, 16} {
		for _, n := range []int64{0, 1, 2, 5, 16, 17, 100} {
			next := int64(0)
			for ith := range nth {
				lo, hi := (&Params{Ith: ith, Nth: nth}).Rows(n)
				require.LessOrEqual(t, lo, hi)
				if lo < hi {
					require.Equal(t, next, lo, "nth %d n %d", nth, n)
					next = hi
				}
			}
			require.Equal(t, n, next, "nth %d n %d", nth, n)
		}
	}
}

// TestPoolBarrierPhases: what every thread wrote before a barrier is seen
// by every thread after it, phase after phase, through shared Work.
func TestPoolBarrierPhases(t *testing.T) {
	const nth, phases = 5, 50
	p := newPool(nth)
	defer p.close()
	work := make([]byte, nth*phases)
	var bad atomic.Int32
	err := runWithin(t, p, func(q *Params) {
		for ph := range phases {
			q.Work[ph*q.Nth+q.Ith] = byte(ph + 1)
			q.Barrier()
			for i := range q.Nth {
				if q.Work[ph*q.Nth+i] != byte(ph+1) {
					bad.Add(1)
				}
			}
			q.Barrier() // nobody writes the next phase before all have read
		}
	}, work)
	require.NoError(t, err)
	require.Zero(t, bad.Load())
}

// TestPoolPanic: a panicking kernel thread becomes an error naming it,
// the other threads are released from their barriers, and the pool works
// afterwards.
func TestPoolPanic(t *testing.T) {
	p := newPool(4)
	defer p.close()
	for _, culprit := range []int{0, 2, 3} {
		var finished atomic.Int32
		err := runWithin(t, p, func(q *Params) {
			if q.Ith == culprit {
				var s []int
				_ = s[q.Nth] // an index out of range, as a bad stride would cause
			}
			q.Barrier()
			q.Barrier()
			finished.Add(1)
		}, nil)
		require.Error(t, err)
		require.Contains(t, err.Error(), "thread "+string(rune('0'+culprit)))
		require.Contains(t, err.Error(), "index out of range")
		require.EqualValues(t, 3, finished.Load())

		require.NoError(t, runWithin(t, p, func(q *Params) { q.Barrier() }, nil))
	}
	// Every thread failing reports the first.
	err := runWithin(t, p, func(q *Params) { panic(q.Ith) }, nil)
	require.EqualError(t, err, "cpu: kernel failed on thread 0: 0")
}

// TestPoolClose: Close stops the workers and may be called again.
func TestPoolClose(t *testing.T) {
	p := newPool(6)
	require.NoError(t, runWithin(t, p, func(*Params) {}, nil))
	running := runtime.NumGoroutine() // the 5 workers and whatever else
	p.close()
	p.close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > running-5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), running-5, "the workers did not stop")
}

// TestPoolNoAllocation: handing an operation to the threads and waiting
// for them allocates nothing.
func TestPoolNoAllocation(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		p := newPool(n)
		var sum atomic.Int64
		fn := func(q *Params, _ *graph.Tensor) { sum.Add(int64(q.Ith)); q.Barrier() }
		allocs := testing.AllocsPerRun(200, func() {
			if err := p.run(fn, nil, nil, n); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "%d threads", n)
		require.EqualValues(t, 201*n*(n-1)/2, sum.Load())
		p.close()
	}
}

// TestPoolHandOver: thousands of operations in a row, with the threads
// spinning and (with more threads than GOMAXPROCS, or after a pause longer
// than the spin) blocking, every thread running each operation once and
// no wake-up lost.
func TestPoolHandOver(t *testing.T) {
	for _, n := range []int{2, 3, 2 * runtime.GOMAXPROCS(0)} {
		p := newPool(n)
		counts := make([]atomic.Int32, n)
		for i := range 3000 {
			err := runWithin(t, p, func(q *Params) {
				counts[q.Ith].Add(1)
				if i%500 == q.Ith {
					time.Sleep(200 * time.Microsecond)
				}
				q.Barrier()
			}, nil)
			require.NoError(t, err)
			if i%1000 == 999 {
				time.Sleep(2 * time.Millisecond) // everybody blocks
			}
		}
		for i := range counts {
			require.EqualValues(t, 3000, counts[i].Load(), "thread %d of %d", i, n)
		}
		p.close()
	}
}

// TestPoolAlone: an operation run on one thread of a larger pool sees
// Nth 1, passes its barriers, reports a panic, and allocates nothing.
func TestPoolAlone(t *testing.T) {
	p := newPool(3)
	defer p.close()
	var seen []int
	fn := func(q *Params, _ *graph.Tensor) {
		seen = append(seen[:0], q.Ith, q.Nth)
		q.Barrier()
	}
	require.NoError(t, p.run(fn, nil, nil, 1))
	require.Equal(t, []int{0, 1}, seen)
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = p.run(fn, nil, nil, 1) }))
	err := p.run(func(*Params, *graph.Tensor) { panic("boom") }, nil, nil, 1)
	require.EqualError(t, err, "cpu: kernel failed on thread 0: boom")
	require.NoError(t, runWithin(t, p, func(q *Params) { q.Barrier() }, nil))
}

// TestPoolUnclaimedShares: the caller runs the shares no worker has
// claimed, so an operation without barriers finishes even when the
// workers never come (asleep, or off the processor on a busy machine);
// each share runs once, with its own Ith.
func TestPoolUnclaimedShares(t *testing.T) {
	for _, n := range []int{2, 3} {
		p := newIdlePool(n)
		for range 3 {
			var ran []int
			require.NoError(t, runWithin(t, p, func(q *Params) { ran = append(ran, q.Ith) }, nil))
			require.Equal(t, []int{0, 1, 2}[:n], ran, "%d threads", n)
		}
	}
}
