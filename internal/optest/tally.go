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
	ops := make([]string, 0, len(t.perOp))
	for op := range t.perOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tpassed\tfailed\tskipped\t")
	for _, op := range ops {
		c := t.perOp[op]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", op, c[Passed], c[Failed], c[Skipped])
	}
	return tw.Flush()
}

// String is "N passed, M failed, K skipped".
func (t *Tally) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", t.total[Passed], t.total[Failed], t.total[Skipped])
}
