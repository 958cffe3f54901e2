package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ggml-go/ggml/graph"
)

// Params is what a kernel's thread sees: its index and the thread count
// (kernels split their rows by them), a scratch buffer shared by the
// threads of one operation, and a barrier for kernels with phases.
type Params struct {
	Ith, Nth int
	// Work is scratch memory of the size the kernel asked for, shared by
	// all threads of the operation.
	Work []byte

	barrier *barrier
	kset    *kernelSet // the engine's kernels (traits.go)
	// own is ownScratch's memory.
	own []byte
}

// ownScratch is n bytes (not cleared) that only the thread running this
// share uses, kept across operations: for work each thread can do alone
// rather than share through Work behind a barrier.
func (p *Params) ownScratch(n int) []byte {
	if cap(p.own) < n {
		p.own = make([]byte, n)
	}
	return p.own[:n]
}

// threadWork is thread Ith's n bytes of Work for kernels that ask nth*n
// (its share from Ith*n), or new memory when p comes without them (a
// Params made outside an engine).
func (p *Params) threadWork(n int) []byte {
	if lo := p.Ith * n; len(p.Work) >= lo+n {
		return p.Work[lo : lo+n : lo+n]
	}
	return make([]byte, n)
}

// Barrier waits until every thread of the operation has reached it.
func (p *Params) Barrier() { p.barrier.wait() }

// Rows returns the half-open range of n rows thread Ith handles.
func (p *Params) Rows(n int64) (int64, int64) {
	if p.Nth == 1 {
		return 0, n // most tiny operations: no division
	}
	per := (n + int64(p.Nth) - 1) / int64(p.Nth)
	lo := min(per*int64(p.Ith), n)
	return lo, min(lo+per, n)
}

// spinRounds is how many times a waiting thread checks for its signal
// (with a pause between checks: a few microseconds in all on AMD EPYC,
// about 77 on Sapphire Rapids, whose PAUSE takes longer) before it
// blocks: as ggml's threadpool polls before it sleeps, so that a graph of
// tiny operations hands each one over without waking a thread.
const spinRounds = 4096

// pool runs an operation on n threads: the caller's goroutine and n-1
// persistent workers, as ggml's threadpool. An operation is n shares
// (Params.Ith 0..n-1); the caller runs share 0 and the threads claim the
// others from a counter, so a worker that is asleep, or off the processor
// on a machine running other work, does not hold up an operation it has
// not started: the caller runs the unclaimed shares itself, and waits
// only for shares in progress. (A kernel with barriers cannot finish a
// share before every share has reached the barrier, so its shares are
// always claimed by n threads at once.) Each share computes the same bytes
// whichever thread runs it. Handing an operation over and waiting for it
// allocates nothing: the workers spin on the operation word briefly, then
// block on a channel, and the caller waits for the last share the same
// way. One goroutine at a time calls run (the Engine's contract).
type pool struct {
	n int
	// spin is false when there are more threads than Go runs at once:
	// spinning would then take the time of the thread being waited for.
	spin bool

	// The current operation, written by run before gen moves on.
	fn     func(*Params, *graph.Tensor)
	t      *graph.Tensor
	params []Params
	errs   []any
	b      barrier
	// alone is thread 0's view of an operation it runs by itself.
	alone  Params
	aloneB barrier

	// op is the current operation: its generation (which counts
	// operations handed over) in the high 32 bits, the next share to
	// claim in the low 32.
	op atomic.Uint64
	// done counts the shares of the current operation finished.
	done    atomic.Int32
	workers []*sleeper
	// caller is where run waits for the workers.
	caller  sleeper
	quit    atomic.Bool
	closing sync.Once
	stopped sync.WaitGroup
}

// sleeper is a thread that waits by spinning, then by blocking on wake.
type sleeper struct {
	asleep atomic.Bool
	wake   chan struct{}
}

func newSleeper() sleeper { return sleeper{wake: make(chan struct{}, 1)} }

// await returns once done reports true: it polls, then blocks until
// signal. done must turn true before signal is called.
func (s *sleeper) await(spin bool, done func() bool) {
	if spin {
		for i := 0; i < spinRounds; i++ {
			if done() {
				return
			}
			pause()
		}
	}
	for !done() {
		s.asleep.Store(true)
		if done() {
			// The signal may have seen asleep and be on its way.
			if !s.asleep.CompareAndSwap(true, false) {
				<-s.wake
			}
			return
		}
		<-s.wake
	}
}

// signal wakes the sleeper if it blocked; call it after its condition
// turned true.
func (s *sleeper) signal() {
	if s.asleep.CompareAndSwap(true, false) {
		s.wake <- struct{}{}
	}
}

func newPool(n int) *pool {
	p := newIdlePool(n)
	p.stopped.Add(n - 1)
	for _, w := range p.workers {
		go p.worker(w)
	}
	return p
}

// newIdlePool is newPool without running its workers: a pool whose
// workers never come, for the tests of an operation that does not wait
// for them.
func newIdlePool(n int) *pool {
	p := &pool{
		n:       n,
		spin:    n <= runtime.GOMAXPROCS(0),
		params:  make([]Params, n),
		errs:    make([]any, n),
		workers: make([]*sleeper, n-1),
		caller:  newSleeper(),
	}
	p.b.init(n, p.spin)
	p.aloneB.init(1, false)
	p.alone = Params{Ith: 0, Nth: 1, barrier: &p.aloneB}
	for i := range p.params {
		p.params[i] = Params{Ith: i, Nth: n, barrier: &p.b}
	}
	for i := range p.workers {
		w := newSleeper()
		p.workers[i] = &w
	}
	return p
}

// setKernels gives every thread's Params the engine's kernel set (before
// the first run; the workers read it only inside an operation).
func (p *pool) setKernels(k *kernelSet) {
	for i := range p.params {
		p.params[i].kset = k
	}
	p.alone.kset = k
}

func (p *pool) worker(s *sleeper) {
	defer p.stopped.Done()
	seen := uint32(0)
	for {
		s.await(p.spin, func() bool { return p.generation() != seen })
		if p.quit.Load() {
			return
		}
		seen = p.generation()
		p.runShares(seen)
	}
}

// generation is the current operation's generation.
func (p *pool) generation() uint32 { return uint32(p.op.Load() >> 32) }

// runShares runs shares of operation gen until none is left to claim,
// and wakes the caller after the last share of all. A thread that comes
// late, after the operation is done or another has started, claims nothing:
// a share is claimed only while its operation is current, so p.fn and p.t
// are still that operation's when it reads them.
func (p *pool) runShares(gen uint32) {
	for {
		w := p.op.Load()
		i := int(uint32(w))
		if uint32(w>>32) != gen || i >= p.n {
			return
		}
		if !p.op.CompareAndSwap(w, w+1) {
			continue
		}
		p.call(i)
		if p.done.Add(1) == int32(p.n) {
			p.caller.signal()
		}
	}
}

// call runs thread ith's share, turning a kernel panic (a bug, or a layout
// a supports rule let through) into an error instead of killing the process.
func (p *pool) call(ith int) {
	defer func() {
		if r := recover(); r != nil {
			p.errs[ith] = r
			// Release threads waiting for this one at a barrier.
			p.b.abandon()
		}
	}()
	p.fn(&p.params[ith], p.t)
}

// run computes fn(params, t) on nth threads (1, or all of the pool's),
// with work as the shared scratch memory, and returns the first thread's
// panic as an error.
func (p *pool) run(fn func(*Params, *graph.Tensor), t *graph.Tensor, work []byte, nth int) error {
	if nth == 1 {
		return p.runAlone(fn, t, work)
	}
	p.fn, p.t = fn, t
	for i := range p.params {
		p.params[i].Work = work
		p.errs[i] = nil
	}
	p.b.reset()
	if p.n == 1 {
		p.call(0)
	} else {
		p.done.Store(0)
		// Share 0 is the caller's: claiming starts at 1.
		gen := p.generation() + 1
		p.op.Store(uint64(gen)<<32 | 1)
		for _, w := range p.workers {
			w.signal()
		}
		p.call(0)
		p.done.Add(1)
		p.runShares(gen)
		p.caller.await(p.spin, func() bool { return p.done.Load() == int32(p.n) })
	}
	p.fn, p.t = nil, nil
	for i, e := range p.errs {
		if e != nil {
			return kernelError(i, e)
		}
	}
	return nil
}

// kernelError is the error of a kernel that panicked with r on thread ith.
func kernelError(ith int, r any) error {
	if err, ok := r.(error); ok {
		return fmt.Errorf("cpu: kernel failed on thread %d: %w", ith, err)
	}
	return fmt.Errorf("cpu: kernel failed on thread %d: %v", ith, r)
}

// runAlone runs fn on the calling thread only, the workers left waiting.
func (p *pool) runAlone(fn func(*Params, *graph.Tensor), t *graph.Tensor, work []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = kernelError(0, r)
		}
	}()
	p.runUnguarded(fn, t, work)
	return nil
}

// runUnguarded is runAlone without the recover, for a caller that
// recovers once around many operations (Engine.Compute): a deferred
// recover per node is a good part of what a tiny operation costs.
func (p *pool) runUnguarded(fn func(*Params, *graph.Tensor), t *graph.Tensor, work []byte) {
	p.alone.Work = work
	fn(&p.alone, t)
}

// close stops the workers and waits for them.
func (p *pool) close() {
	p.closing.Do(func() {
		p.quit.Store(true)
		p.op.Store(uint64(p.generation()+1) << 32)
		for _, w := range p.workers {
			w.signal()
		}
		p.stopped.Wait()
	})
}

// barrier is a reusable rendezvous for the threads of one operation: the
// last thread to arrive opens the next phase; the others spin briefly,
// then block on a condition variable.
type barrier struct {
	n         int32
	spin      bool
	count     atomic.Int32
	phase     atomic.Uint32
	abandoned atomic.Bool
	mu        sync.Mutex
	cond      sync.Cond
	sleepers  atomic.Int32
}

func (b *barrier) init(n int, spin bool) {
	b.n, b.spin = int32(n), spin
	b.cond.L = &b.mu
}

// reset readies the barrier for a new operation (after a thread abandoned
// the last one, its count is meaningless).
func (b *barrier) reset() {
	b.count.Store(0)
	b.abandoned.Store(false)
}

func (b *barrier) wait() {
	if b.n == 1 || b.abandoned.Load() {
		return
	}
	phase := b.phase.Load()
	if b.count.Add(1) == b.n {
		b.count.Store(0)
		b.phase.Add(1)
		b.broadcast()
		return
	}
	open := func() bool { return b.phase.Load() != phase || b.abandoned.Load() }
	if b.spin {
		for i := 0; i < spinRounds; i++ {
			if open() {
				return
			}
			pause()
		}
	}
	b.mu.Lock()
	b.sleepers.Add(1)
	for !open() {
		b.cond.Wait()
	}
	b.sleepers.Add(-1)
	b.mu.Unlock()
}

func (b *barrier) broadcast() {
	if b.sleepers.Load() > 0 {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	}
}

// abandon lets every waiter through until the next reset: a thread failed,
// and the others must finish (with garbage) rather than wait forever.
func (b *barrier) abandon() {
	b.abandoned.Store(true)
	b.mu.Lock()
	b.cond.Broadcast()
	b.mu.Unlock()
}
