package cpu

import (
	"fmt"
	"sync"
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
}

// Barrier waits until every thread of the operation has reached it.
func (p *Params) Barrier() { p.barrier.wait() }

// Rows returns the half-open range of n rows thread Ith handles.
func (p *Params) Rows(n int64) (int64, int64) {
	per := (n + int64(p.Nth) - 1) / int64(p.Nth)
	lo := min(per*int64(p.Ith), n)
	return lo, min(lo+per, n)
}

// pool runs an operation on n threads: the caller's goroutine is thread 0,
// n-1 persistent workers are the others, as ggml's threadpool.
type pool struct {
	n       int
	jobs    []chan job
	done    sync.WaitGroup
	closing sync.Once
}

type job struct {
	fn     func(*Params)
	params *Params
	errs   []any
}

func newPool(n int) *pool {
	p := &pool{n: n, jobs: make([]chan job, n-1)}
	for i := range p.jobs {
		p.jobs[i] = make(chan job)
		go p.worker(p.jobs[i])
	}
	return p
}

func (p *pool) worker(jobs chan job) {
	for j := range jobs {
		p.call(j)
		p.done.Done()
	}
}

// call runs one thread's share, turning a kernel panic (a bug, or a layout
// a supports rule let through) into an error instead of killing the process.
func (p *pool) call(j job) {
	defer func() {
		if r := recover(); r != nil {
			j.errs[j.params.Ith] = r
			// Release threads waiting for this one at a barrier.
			j.params.barrier.abandon()
		}
	}()
	j.fn(j.params)
}

func (p *pool) run(fn func(*Params), work []byte) error {
	b := newBarrier(p.n)
	errs := make([]any, p.n)
	params := make([]Params, p.n)
	for i := range params {
		params[i] = Params{Ith: i, Nth: p.n, Work: work, barrier: b}
	}
	p.done.Add(p.n - 1)
	for i, ch := range p.jobs {
		ch <- job{fn: fn, params: &params[i+1], errs: errs}
	}
	p.call(job{fn: fn, params: &params[0], errs: errs})
	p.done.Wait()
	for i, e := range errs {
		if e != nil {
			if err, ok := e.(error); ok {
				return fmt.Errorf("cpu: kernel failed on thread %d: %w", i, err)
			}
			return fmt.Errorf("cpu: kernel failed on thread %d: %v", i, e)
		}
	}
	return nil
}

func (p *pool) close() {
	p.closing.Do(func() {
		for _, ch := range p.jobs {
			close(ch)
		}
	})
}

// barrier is a reusable rendezvous for the threads of one operation.
type barrier struct {
	mu        sync.Mutex
	cond      *sync.Cond
	n, count  int
	phase     int
	abandoned bool
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.abandoned {
		return
	}
	phase := b.phase
	b.count++
	if b.count == b.n {
		b.count = 0
		b.phase++
		b.cond.Broadcast()
		return
	}
	for phase == b.phase && !b.abandoned {
		b.cond.Wait()
	}
}

// abandon lets every waiter through for good: a thread failed, and the
// others must finish (with garbage) rather than wait forever.
func (b *barrier) abandon() {
	b.mu.Lock()
	b.abandoned = true
	b.cond.Broadcast()
	b.mu.Unlock()
}
