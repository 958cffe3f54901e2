package backend

import (
	"time"

	"github.com/ggml-go/ggml/ops"
)

// splitTimes are one split's times in the last profiled computation.
type splitTimes struct{ copy, compute time.Duration }

// BackendProfile is what one backend did in a Scheduler's last
// computation.
type BackendProfile struct {
	Backend Backend
	// Nodes are the nodes its splits computed (views excepted), Splits
	// the splits it ran, Copies the split inputs copied to it.
	Nodes, Splits, Copies int
	// Compute is the time from the start of its splits' computations to
	// the end of their Synchronize; Copy the time spent filling their
	// inputs. Both are zero unless SchedulerOptions.Profile is set.
	Compute, Copy time.Duration
}

// Profile reports, per backend in the scheduler's order, what the last
// split graph gave it and, with SchedulerOptions.Profile, the times of the
// last computation. The host time around the backends' work (placing,
// scheduling, waiting) is a GraphCompute's wall time less the sum of
// Compute and Copy.
func (s *Scheduler) Profile() []BackendProfile {
	out := make([]BackendProfile, len(s.backends))
	for i, b := range s.backends {
		out[i].Backend = b
	}
	for k, sp := range s.splits {
		p := &out[sp.backend]
		p.Splits++
		p.Copies += len(sp.inputs)
		for _, n := range sp.g.Nodes {
			if n.Op != ops.None && !n.Op.IsView() {
				p.Nodes++
			}
		}
		if k < len(s.times) {
			p.Compute += s.times[k].compute
			p.Copy += s.times[k].copy
		}
	}
	return out
}
