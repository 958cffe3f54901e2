package bench

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// ReadBandwidth measures the memory bandwidth a streaming read reaches in
// this process: threads goroutines, each on an OS thread of its own, sum
// their share of a buffer of size bytes (readStreams parts of it at once) (make it several times the
// last-level cache so that the reads come from memory), the best of reps
// passes over it, in bytes per second. It is the physical limit of a
// decode step, which streams every weight once per token: tokens/s times
// the bytes read per token over this figure is the fraction of it a
// runner reaches.
//
// A pass's time is its slowest thread's CPU time where the system reports
// thread CPU time (linux, darwin, freebsd), else wall time: on a machine
// whose cores other processes share, a thread descheduled halfway through
// would otherwise count the other processes' turns as slow memory (on the
// 2-core machine of bench/README.md at load 6.4-7.4, one thread over 512
// MiB read as one stream: 1.7-2.3 GB/s by wall time, 9.1 by CPU time). Threads that were not
// on cores at the same time did not share the memory system either, so at
// more than one thread under such load the figure can be high: a fraction
// computed over it is then low, never flattering.
func ReadBandwidth(threads, size, reps int) (float64, error) {
	if threads <= 0 || reps <= 0 || size < threads*4096 {
		return 0, errors.New("bench: ReadBandwidth needs threads and reps > 0, and at least 4 KiB per thread")
	}
	buf := make([]uint64, size/8)
	// Touch every page first (make's zeroed pages may all map one
	// shared zero page until written), with values the sum cannot fold.
	for i := range buf {
		buf[i] = uint64(i)
	}
	share := len(buf) / threads
	var best time.Duration
	var sink uint64
	for range reps {
		sums := make([]uint64, threads)
		took := make([]time.Duration, threads)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for t := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				<-start
				c0, cpuOK := threadCPU()
				t0 := time.Now()
				sums[t] = sumWords(buf[t*share : (t+1)*share])
				took[t] = time.Since(t0)
				if c1, ok := threadCPU(); cpuOK && ok {
					took[t] = c1 - c0
				}
			}()
		}
		close(start)
		wg.Wait()
		if d := slices.Max(took); d > 0 && (best == 0 || d < best) {
			best = d
		}
		for _, s := range sums {
			sink += s
		}
	}
	// The sums go somewhere the compiler cannot see through, so the reads
	// stay.
	bandwidthSink = sink
	if best == 0 {
		return 0, errors.New("bench: ReadBandwidth's passes took no measurable time")
	}
	return float64(share*threads*int(unsafe.Sizeof(buf[0]))) / best.Seconds(), nil
}

var bandwidthSink uint64

// readStreams is how many parts of its share a thread reads at once: a
// single sequential stream leaves the memory system idle between misses.
// One thread over 512 MiB on the machine of bench/README.md: 8.4 GB/s as
// one stream, 10.1 as two, 14.3 as four, 14.6 as eight. A decode step's
// products read several weight rows at once too. sumStreams reads eight.
const readStreams = 8

// sumWords adds the words of b, read as readStreams interleaved
// sequential streams, eight words of each at a time: in 256-bit loads
// (sumStreams) where the processor has them, since the scalar loop's four
// times as many loads left bandwidth unread (one thread over 512 MiB on
// the machine of bench/README.md, the two in turns in one process:
// 10.5-11.9 GB/s scalar, 11.8-15.0 in AVX2 loads), else in Go.
func sumWords(b []uint64) uint64 {
	q := len(b) / readStreams &^ 7
	var s uint64
	if sumStreams != nil && q > 0 {
		s = sumStreams(&b[0], q)
	} else {
		for off := 0; off < q; off += 8 {
			for k := range readStreams {
				c := b[k*q+off : k*q+off+8 : k*q+off+8]
				s += c[0] + c[1] + c[2] + c[3] + c[4] + c[5] + c[6] + c[7]
			}
		}
	}
	for _, v := range b[readStreams*q:] {
		s += v
	}
	return s
}

// ProcessCPU is the user and system time of every thread of this process
// so far (0 where the platform does not report it): `ggml bench model`
// times each side's runs by it as well as by the clock, which on a machine
// other processes share counts their turns too.
func ProcessCPU() time.Duration { return processCPU() }
