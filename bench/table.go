package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// tableHeader names the columns of WriteTable; "speed" is ggml's time
// over ours (above 1: we are faster).
var tableHeader = []string{"figure", "threads", "unit", "ours", "ggml", "speed", "ours_cpu", "ggml_cpu", "speed_cpu"}

// WriteHeader writes the table's header: tab-separated with tsv, else
// aligned (then rows must go through the same writer, see NewTable).
func WriteHeader(w io.Writer) error {
	_, err := fmt.Fprintln(w, strings.Join(tableHeader, "\t"))
	return err
}

// NewTable returns the writer the rows go through: w itself for
// tab-separated output, else a tabwriter the caller flushes.
func NewTable(w io.Writer, tsv bool) io.Writer {
	if tsv {
		return w
	}
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// WriteRow writes one result: times per iteration (per operation when the
// figure has Ops) in one unit, the speed ratios with three decimals, "-"
// where there is no reference or no CPU time.
func WriteRow(w io.Writer, r Result) error {
	ops := max(r.Figure.Ops, 1)
	unit, scale := "ms", float64(time.Millisecond)
	switch {
	case ops > 1:
		unit, scale = "ns/op", float64(ops)
	case r.Ours.Wall < time.Millisecond:
		unit, scale = "us", float64(time.Microsecond)
	}
	val := func(d time.Duration) string {
		if d <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.4g", float64(d)/scale)
	}
	speed := func(s float64) string {
		if s <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", s)
	}
	cols := []string{r.Figure.Name, fmt.Sprint(r.Figure.Threads), unit,
		val(r.Ours.Wall), val(r.Ref.Wall), speed(r.SpeedWall()),
		val(r.Ours.CPU), val(r.Ref.CPU), speed(r.SpeedCPU())}
	_, err := fmt.Fprintln(w, strings.Join(cols, "\t"))
	return err
}
