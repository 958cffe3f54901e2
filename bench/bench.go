// Package bench holds ggml-go's benchmarks. Wherever the real ggml has the
// same operation, a benchmark runs it in the same process and reports the
// ratio, so every performance claim is a side-by-side measurement:
//
//	go test ./bench -bench . -benchtime 1s
//
// Each benchmark reports "ggml-ns/op" (the reference, measured once per
// sub-benchmark) and "speedup" (ggml's time over ours; above 1 we are faster).
// Without the reference library the ggml columns are omitted.
package bench

import (
	"sync"
	"testing"
	"time"
)

var (
	refMu    sync.Mutex
	refTimes = map[string]float64{}
)

// SideBySide runs ours under b and reports the reference's time for the same
// work, measured once per benchmark name (the testing package calls a
// benchmark several times while it sizes b.N). testing.Benchmark cannot be
// used for the reference: it deadlocks inside a running benchmark.
func SideBySide(b *testing.B, ours, ref func()) {
	b.Helper()
	var refNs float64
	if ref != nil {
		refMu.Lock()
		ns, ok := refTimes[b.Name()]
		if !ok {
			ns = timeRef(ref)
			refTimes[b.Name()] = ns
		}
		refMu.Unlock()
		refNs = ns
	}
	b.ResetTimer()
	for b.Loop() {
		ours()
	}
	if refNs > 0 && b.N > 0 {
		oursNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(refNs, "ggml-ns/op")
		b.ReportMetric(refNs/oursNs, "speedup")
	}
}

// timeRef returns the mean time of ref over at least 3 runs and 300 ms, after
// one warm-up run.
func timeRef(ref func()) float64 {
	ref()
	start := time.Now()
	n := 0
	for n < 3 || time.Since(start) < 300*time.Millisecond {
		ref()
		n++
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}
