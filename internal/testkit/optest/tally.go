package optest

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
)

// Tally counts results per operation, for run summaries.
type Tally struct {
	perOp map[string]*[3]int
	total [3]int
}

// Add counts r under its operation.
func (t *Tally) Add(r Result) {
	if t.perOp == nil {
		t.perOp = map[string]*[3]int{}
	}
	c := t.perOp[r.Op]
	if c == nil {
		c = new([3]int)
		t.perOp[r.Op] = c
	}
	c[r.Status]++
	t.total[r.Status]++
}

// Count is the number of results with status s.
func (t *Tally) Count(s Status) int { return t.total[s] }

// WriteTable writes one line per operation (op, passed, failed, skipped),
// sorted by operation name.
func (t *Tally) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tpassed\tfailed\tskipped\t")
	for _, c := range t.Ops() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", c.Op, c.Passed, c.Failed, c.Skipped)
	}
	return tw.Flush()
}

// String is "N passed, M failed, K skipped".
func (t *Tally) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", t.total[Passed], t.total[Failed], t.total[Skipped])
}

// OpCount is one operation's line of a Tally.
type OpCount struct {
	Op                      string
	Passed, Failed, Skipped int
}

// Ops returns the per-operation counts, sorted by operation name.
func (t *Tally) Ops() []OpCount {
	out := make([]OpCount, 0, len(t.perOp))
	for op, c := range t.perOp {
		out = append(out, OpCount{op, c[Passed], c[Failed], c[Skipped]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Op < out[j].Op })
	return out
}
