package bench

import (
	"errors"
	"slices"
	"time"
)

// Figure is one row of a benchmark table: the same work done by ours and
// by the real ggml.
type Figure struct {
	// Name says what is measured, e.g. "matmul q4_0 n=32".
	Name    string
	Threads int
	// Ops is how many operations one iteration is (the dispatch graph's
	// 1000 nodes); above 1 the table shows time per operation.
	Ops int
	// Ours and Ref do one iteration each; Ref is nil without the
	// reference library.
	Ours, Ref func() error
}

// Options control a measurement.
type Options struct {
	// Reps is the number of samples of each side (at least 5).
	Reps int
	// MinSample is the least time one sample takes: an iteration is
	// repeated within a sample until it does (its time is the sample's
	// over the count).
	MinSample time.Duration
}

// DefaultOptions are 5 samples of at least 50 ms each.
var DefaultOptions = Options{Reps: 5, MinSample: 50 * time.Millisecond}

// Time is what one iteration took, the median over the samples.
type Time struct {
	Wall, CPU time.Duration
}

// Result is a measured figure.
type Result struct {
	Figure Figure
	// Ours and Ref are per iteration; Ref is zero without a reference,
	// and CPU is zero where the platform does not give it.
	Ours, Ref Time
	// Iters are the iterations each side ran per sample.
	OursIters, RefIters int
}

// HasRef reports whether the reference was measured.
func (r Result) HasRef() bool { return r.Figure.Ref != nil }

// SpeedWall is ggml's wall time over ours: above 1 we are faster.
func (r Result) SpeedWall() float64 { return ratio(r.Ref.Wall, r.Ours.Wall) }

// SpeedCPU is ggml's CPU time over ours: above 1 we use less.
func (r Result) SpeedCPU() float64 { return ratio(r.Ref.CPU, r.Ours.CPU) }

func ratio(ref, ours time.Duration) float64 {
	if ours <= 0 || ref <= 0 {
		return 0
	}
	return float64(ref) / float64(ours)
}

// Measure runs the figure's two sides interleaved: a warm-up iteration of
// each sizes the samples, then opts.Reps samples of ours and ggml
// alternate (in turn first, so drift in the machine's load falls on both),
// and each side's median wall and CPU time per iteration is kept. CPU time
// is the whole process's (every thread of ours or ggml, and Go's runtime).
func Measure(f Figure, opts Options) (Result, error) {
	if f.Ours == nil {
		return Result{}, errors.New("bench: figure without our side")
	}
	opts.Reps = max(opts.Reps, 5)
	r := Result{Figure: f}
	sides := []*side{{run: f.Ours}}
	if f.Ref != nil {
		sides = append(sides, &side{run: f.Ref})
	}
	for _, s := range sides {
		if err := s.size(opts.MinSample); err != nil {
			return r, err
		}
	}
	for rep := range opts.Reps {
		for i := range sides {
			if err := sides[(i+rep)%len(sides)].sample(); err != nil {
				return r, err
			}
		}
	}
	r.Ours, r.OursIters = sides[0].medians(), sides[0].iters
	if len(sides) > 1 {
		r.Ref, r.RefIters = sides[1].medians(), sides[1].iters
	}
	return r, nil
}

// side is one implementation's samples.
type side struct {
	run       func() error
	iters     int
	wall, cpu []time.Duration
}

// size runs one warm-up iteration and picks the iterations per sample.
func (s *side) size(minSample time.Duration) error {
	start := time.Now()
	if err := s.run(); err != nil {
		return err
	}
	once := max(time.Since(start), time.Microsecond)
	s.iters = max(1, int(minSample/once))
	return nil
}

func (s *side) sample() error {
	cpu0 := processCPU()
	start := time.Now()
	for range s.iters {
		if err := s.run(); err != nil {
			return err
		}
	}
	wall := time.Since(start)
	cpu1 := processCPU()
	s.wall = append(s.wall, wall/time.Duration(s.iters))
	s.cpu = append(s.cpu, (cpu1-cpu0)/time.Duration(s.iters))
	return nil
}

func (s *side) medians() Time { return Time{Wall: medianOf(s.wall), CPU: medianOf(s.cpu)} }

func medianOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
