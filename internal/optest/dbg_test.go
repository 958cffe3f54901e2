package optest

import (
	"os"
	"testing"
	"time"

	"github.com/ggml-go/ggml/devices/cpu"
)

func TestDbgLayout(t *testing.T) {
	ref := ggmlExecutor(t)
	eng := cpu.New(cpu.Options{Threads: 2})
	defer eng.Close()
	var tally Tally
	full := os.Getenv("DBG_FULL") == "1"
	for _, c := range layoutCases(full) {
		t0 := time.Now()
		r := Run(c, CPU{eng}, ref, 1)
		tally.Add(r)
		if r.Status != Passed {
			t.Logf("%v %s: %s", r.Status, c.Name, r.Detail)
		}
		if d := time.Since(t0); d > 500*time.Millisecond {
			t.Logf("slow %v %s", d, c.Name)
		}
	}
	t.Log(tally.String())
	var b = new(stringsBuilder)
	tally.WriteTable(b)
	t.Log(b.s)
}

type stringsBuilder struct{ s string }

func (b *stringsBuilder) Write(p []byte) (int, error) { b.s += string(p); return len(p), nil }
