package model_test

import (
	"bufio"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssProbe samples the process's resident set every few milliseconds
// (/proc/self/status) through the phases a test marks, each phase cut
// again where the device finishes a compile or starts a graph, and breaks the resident set
// down by what holds it (/proc/self/smaps, the device's weights by
// mincore, the Go runtime's own figures) at the end of every phase and
// near the highest sample: the RSS test's diagnostic of where its peak
// comes from. Linux only.
type rssProbe struct {
	modelPath string
	counts    func() (compiled, graphs int)
	weights   func() uint64 // resident bytes of the device's weights

	mu     sync.Mutex
	mark   string
	first  map[string]int // graphs at a mark and compile count's first sample
	phases []*rssPhase
	peak   rssBreakdown // at the highest sample (within snapStep)
	top    int64        // the highest sample
	stop   chan struct{}
	done   chan struct{}
}

// rssPhase is one phase's samples (VmRSS): first, highest and last, and
// the breakdown at its end.
type rssPhase struct {
	name             string
	start, max, last int64
	end              rssBreakdown
}

// rssBreakdown is the resident set by holder, in bytes.
type rssBreakdown struct {
	rss, libs, modelFile, spill, blob, weightsAnon, goRuntime, other int64
}

// snapStep is how far a new highest sample must rise over the last
// breakdown taken at one for another (reading smaps costs a millisecond
// or two).
const snapStep = 2 << 20

func newRSSProbe(modelPath string, counts func() (compiled, graphs int), weights func() uint64) *rssProbe {
	p := &rssProbe{modelPath: modelPath, counts: counts, weights: weights, first: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	p.Mark("start")
	go p.loop()
	return p
}

// Mark starts a phase of the test.
func (p *rssProbe) Mark(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mark = name
	p.sampleLocked()
}

func (p *rssProbe) loop() {
	defer close(p.done)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
			p.mu.Lock()
			p.sampleLocked()
			p.mu.Unlock()
		}
	}
}

// sampleLocked takes one sample into the current phase, starting a new
// one when the mark or the device's counts changed: a phase "k compiled,
// n graphs" runs from the end of the compile or the start of the graph
// that made the counts so (a miss counts when its compile ends, a hit
// when its model is found) to the next such event.
func (p *rssProbe) sampleLocked() {
	rss := statusField("VmRSS")
	c, g := p.counts()
	// Graphs after the second of a mark and compile count are one phase
	// (a decode step each, all alike).
	base := fmt.Sprintf("%s, %d compiled", p.mark, c)
	first, ok := p.first[base]
	if !ok {
		first = g
		p.first[base] = g
	}
	name := fmt.Sprintf("%s, %d graphs", base, g)
	if g > first+1 {
		name = fmt.Sprintf("%s, %d+ graphs", base, first+2)
	}
	var ph *rssPhase
	if n := len(p.phases); n > 0 && p.phases[n-1].name == name {
		ph = p.phases[n-1]
	} else {
		if n > 0 {
			p.phases[n-1].end = p.breakdown(p.phases[n-1].last)
		}
		ph = &rssPhase{name: name, start: rss}
		p.phases = append(p.phases, ph)
	}
	ph.last, ph.max = rss, max(ph.max, rss)
	if rss > p.top {
		p.top = rss
		if rss >= p.peak.rss+snapStep {
			p.peak = p.breakdown(rss)
		}
	}
}

// Stop ends the sampling and returns the report: a line per phase and
// the breakdown near the peak.
func (p *rssProbe) Stop() string {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sampleLocked()
	last := p.phases[len(p.phases)-1]
	last.end = p.breakdown(last.last)
	var b strings.Builder
	fmt.Fprintf(&b, "RSS by phase (MB: start, highest sample, end; at the end: libraries and binary | GGUF file pages | SPILL_DIR pages | imported blobs | our weight buffers, anonymous | Go runtime | other anonymous: the plugin's heap, KV, compute buffers):\n")
	for _, ph := range p.phases {
		fmt.Fprintf(&b, "  %-44s %6.1f %6.1f %6.1f | %s\n", ph.name, mb(ph.start), mb(ph.max), mb(ph.last), ph.end)
	}
	fmt.Fprintf(&b, "  highest sample %.1f MB; at %.1f MB of it: %s", mb(p.top), mb(p.peak.rss), p.peak)
	return b.String()
}

func (r rssBreakdown) String() string {
	return fmt.Sprintf("libs %.1f | file %.1f | spill %.1f | blob %.1f | weights %.1f | Go %.1f | other %.1f",
		mb(r.libs), mb(r.modelFile), mb(r.spill), mb(r.blob), mb(r.weightsAnon), mb(r.goRuntime), mb(r.other))
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// breakdown reads smaps: file mappings by what they map, the rest
// anonymous, of which the device's anonymous weight memory (its buffers
// and conversions, mincore) and the Go runtime's memory not returned to
// the system are taken out.
func (p *rssProbe) breakdown(rss int64) rssBreakdown {
	r := rssBreakdown{rss: rss}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return r
	}
	defer f.Close()
	exe, _ := os.Executable()
	var anon int64
	var into *int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			path := strings.Join(fs[5:], " ")
			switch {
			case strings.Contains(path, ".so") || path == exe:
				into = &r.libs
			case path == p.modelPath:
				into = &r.modelFile
			case strings.Contains(path, "ggml-ov-weights"):
				into = &r.spill
			case strings.HasSuffix(path, ".blob"):
				into = &r.blob
			default:
				into = &anon
			}
			continue
		}
		if len(fs) == 3 && fs[0] == "Rss:" {
			kb, _ := strconv.ParseInt(fs[1], 10, 64)
			*into += kb << 10
		}
	}
	r.weightsAnon = min(anon, int64(p.weights()))
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	r.goRuntime = min(anon-r.weightsAnon, int64(s[0].Value.Uint64()-s[1].Value.Uint64()))
	r.other = anon - r.weightsAnon - r.goRuntime
	return r
}

// statusField reads a field of /proc/self/status in bytes (0 if absent).
func statusField(name string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name+":"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}
