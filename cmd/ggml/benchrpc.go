package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/devices/rpc"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/block"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

type benchRPCFlags struct {
	servers             string
	ref                 string
	embd, layers, vocab int
	tokens, runs        int
	threads             int
}

// runBenchRPC times a decode step of a generated model split over two RPC
// servers on loopback (ours, started here, or -servers) against the same
// model on the local CPU: time and bytes on the wire per token, and the
// bytes the second load sends with the servers' hash cache on. With -ref
// ggml it does the same over two of ggml's rpc-servers, the same decode
// step through ggml's client (libllama) over two of ggml's servers and two
// of ours, and times one graph's round trip (inputs and weights up,
// compute, result down) through our client and server beside ggml's
// client and server, with the ratio.
func runBenchRPC(args []string, stdout io.Writer) error {
	var f benchRPCFlags
	fs := flag.NewFlagSet("bench rpc", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml bench rpc [flags]\n\nA decode step of a generated model split over two RPC servers on loopback\n(llama.cpp's layer split) against the model on the local CPU: time per token, bytes\non the wire per token, and what the hash cache saves on a second load; with -ref ggml\nalso over two of ggml's rpc-servers, the same step through ggml's client (libllama)\nover two of ggml's servers and two of ours, and one graph's round trip through our\nclient and server beside ggml's client and server.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.servers, "servers", "", "two or more host:port servers to split over (default: start two of ours on loopback, each with a cache folder)")
	fs.StringVar(&f.ref, "ref", "", "ggml: also ggml's rpc-server and client (scripts/fetch-rpc-ref), none: ours only; default ggml when built")
	fs.IntVar(&f.embd, "embd", 256, "embedding width (a multiple of 64)")
	fs.IntVar(&f.layers, "layers", 4, "layers")
	fs.IntVar(&f.vocab, "vocab", 12000, "vocabulary (12000 by 256 makes the output weight 12 MB, over ggml's 10 MiB hash threshold)")
	fs.IntVar(&f.tokens, "tokens", 16, "decode steps timed, after an 8-token prompt")
	fs.IntVar(&f.runs, "runs", 5, "graph round trips timed (the median is reported)")
	fs.IntVar(&f.threads, "threads", 2, "threads of the local CPU (the servers compute on one each)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	case f.embd < 64 || f.embd%64 != 0 || f.layers < 2 || f.vocab < 16 || f.tokens < 1 || f.runs < 1:
		return usageErrorf("-embd must be a multiple of 64, -layers at least 2, -vocab at least 16, -tokens and -runs at least 1")
	case f.ref != "" && f.ref != "ggml" && f.ref != "none":
		return usageErrorf("-ref must be ggml or none, not %q", f.ref)
	}
	if err := backend.CheckThreads(f.threads); err != nil {
		return usageErrorf("-threads: %v", err)
	}
	ref := f.ref != "none"
	if _, err := rpcref.LibDir(); err != nil && ref {
		if f.ref == "ggml" {
			return err
		}
		fmt.Fprintf(stdout, "note: ggml's RPC peer is not built, showing ours only (%v)\n", err)
		ref = false
	}
	dir, err := os.MkdirTemp("", "ggml-bench-rpc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.gguf")
	heads := f.embd / 64
	cfg := genmodel.Config{Arch: "llama", Type: quant.F32, Embd: f.embd, Layers: f.layers, Heads: heads,
		KVHeads: max(heads/2, 1), FF: 2 * f.embd, VocabSize: f.vocab}
	if err := genmodel.WriteFile(path, cfg); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "model: generated llama, %d layers, embd %d, %d heads (%d KV), vocab %d, F32 weights (%.1f MiB); %d decode steps after an 8-token prompt; CPU threads %d\n",
		f.layers, f.embd, heads, cfg.KVHeads, f.vocab, float64(fi.Size())/(1<<20), f.tokens, f.threads)

	local, err := decodeSteps(path, model.Options{Threads: f.threads}, f.tokens)
	if err != nil {
		return fmt.Errorf("local CPU: %w", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "decode step\tms/token\tvs local\twire B/token\t1st load sent\t2nd load sent\t")
	row := func(name string, r decodeRun) {
		fmt.Fprintf(tw, "%s\t%.3f\t%.2fx\t%d\t%s\t%s\t\n", name, msf(r.perToken), float64(r.perToken)/float64(local.perToken),
			r.wire, mib(r.load), mib(r.reload))
	}
	fmt.Fprintf(tw, "local CPU\t%.3f\t1.00x\t0\t-\t-\t\n", msf(local.perToken))

	var addrs []string
	what := "given servers"
	if f.servers != "" {
		addrs = strings.Split(f.servers, ",")
		if len(addrs) < 2 {
			return usageErrorf("-servers names %d server; the split needs two or more", len(addrs))
		}
	} else {
		what = "2 of our servers, 1 thread each"
		for range 2 {
			addr, stop, err := serveLoopback(filepath.Join(dir, fmt.Sprintf("cache-%d", len(addrs))))
			if err != nil {
				return err
			}
			defer stop()
			addrs = append(addrs, addr)
		}
	}
	r, err := splitRun(path, addrs, f)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	row(what+" (split)", r)
	if ref {
		var real []string
		for i := range 2 {
			s, err := rpcref.Start(rpcref.Config{Threads: 1, CacheDir: filepath.Join(dir, fmt.Sprintf("ggml-cache-%d", i))})
			if err != nil {
				return err
			}
			defer s.Kill()
			real = append(real, s.Addr)
		}
		r, err := splitRun(path, real, f)
		if err != nil {
			return fmt.Errorf("ggml's servers: %w", err)
		}
		row("2 of ggml's servers, 1 thread each (split)", r)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !ref {
		return nil
	}
	if err := benchLlama(stdout, path, f); err != nil {
		return fmt.Errorf("ggml's client (libllama): %w", err)
	}
	return benchRoundTrip(stdout, f)
}

// benchLlama times the same decode step through ggml's own client:
// libllama of the peer's llama.cpp with the model's layers and output on
// two RPC devices (llama-cli --rpc A,B -ngl all), over two of ggml's
// servers and two of ours, against libllama on the local CPU; the bytes
// on the wire are counted by a proxy in front of each server.
func benchLlama(stdout io.Writer, path string, f benchRPCFlags) error {
	lib, err := rpcref.OpenLlama()
	if err != nil {
		fmt.Fprintf(stdout, "note: libllama of ggml's RPC peer is not built, no ggml-client rows (%v)\n", err)
		return nil
	}
	params := lib.CompareModelParams()
	params.NGPULayers = 0
	lm, err := lib.LoadModelParams(path, params)
	if err != nil {
		return err
	}
	local, err := rpcref.LlamaSteps(lm, 8, f.tokens, nil)
	lm.Free()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ggml's client: libllama (llama-cpp-python %s), 1 thread, every layer and the output on the two servers\n", rpcref.Version)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "decode step\tms/token\tvs local\twire B/token\tlogits vs local\t")
	fmt.Fprintf(tw, "libllama, local CPU\t%.3f\t1.00x\t0\t-\t\n", msf(local.PerToken))
	for _, pair := range []struct {
		name  string
		start func() (string, func(), error)
	}{
		{"libllama, 2 of ggml's servers (split)", func() (string, func(), error) {
			s, err := rpcref.Start(rpcref.Config{Threads: 1})
			if err != nil {
				return "", nil, err
			}
			return s.Addr, s.Kill, nil
		}},
		{"libllama, 2 of our servers (split)", func() (string, func(), error) { return serveLoopback("") }},
	} {
		var devs []llamaref.Device
		var proxies []*rpcref.Proxy
		for range 2 {
			addr, stop, err := pair.start()
			if err != nil {
				return err
			}
			defer stop()
			p, err := rpcref.NewProxy(addr)
			if err != nil {
				return err
			}
			defer p.Close()
			proxies = append(proxies, p)
			ds, err := lib.RPCDevices(p.Addr)
			if err != nil {
				return err
			}
			devs = append(devs, ds[0])
		}
		m, err := lib.LoadModelOn(path, lib.CompareModelParams(), devs, 1<<20)
		if err != nil {
			return err
		}
		r, err := rpcref.LlamaSteps(m, 8, f.tokens, func() uint64 { return proxies[0].Bytes() + proxies[1].Bytes() })
		m.Free()
		if err != nil {
			return err
		}
		var d float64
		for i := range local.Logits {
			for j, v := range local.Logits[i] {
				d = max(d, float64(abs32(v-r.Logits[i][j])))
			}
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.2fx\t%d\t%.3g\t\n", pair.name, msf(r.PerToken), float64(r.PerToken)/float64(local.PerToken), r.Wire, d)
	}
	return tw.Flush()
}

// decodeRun is what decodeSteps measured.
type decodeRun struct {
	perToken     time.Duration
	wire         uint64 // bytes sent and received per decode step
	load, reload uint64 // bytes sent loading the model, the first time and the second
}

// decodeSteps opens path with opts, evaluates an 8-token prompt and times
// tokens single-token decode steps; the traffic counted is that of the
// RPC devices of opts.Split.
func decodeSteps(path string, opts model.Options, tokens int) (decodeRun, error) {
	var r decodeRun
	traffic := func() (total uint64) {
		seen := map[string]bool{}
		for _, d := range opts.Split {
			if d, ok := d.(*rpc.Device); ok && !seen[d.Addr()] {
				seen[d.Addr()] = true
				s, rcv := d.Traffic()
				total += s + rcv
			}
		}
		return total
	}
	t0 := traffic()
	m, err := model.Open(path, opts)
	if err != nil {
		return r, err
	}
	defer m.Close()
	r.load = traffic() - t0
	s, err := m.NewSession(model.SessionOptions{Ctx: 8 + tokens, Batch: 8})
	if err != nil {
		return r, err
	}
	defer s.Close()
	prompt := make([]int32, 8)
	for i := range prompt {
		prompt[i] = int32((i*37 + 11) % m.HParams.NVocab)
	}
	if _, err := s.Decode(context.Background(), prompt, nil); err != nil {
		return r, err
	}
	t1 := traffic()
	start := time.Now()
	for i := range tokens {
		if _, err := s.Decode(context.Background(), []int32{int32((i*53 + 7) % m.HParams.NVocab)}, nil); err != nil {
			return r, err
		}
	}
	r.perToken = time.Since(start) / time.Duration(tokens)
	r.wire = (traffic() - t1) / uint64(tokens)
	return r, nil
}

// splitRun connects to the servers, splits the model's layers over their
// first devices, and loads it twice: the second load's traffic shows what
// the servers' hash cache saved.
func splitRun(path string, addrs []string, f benchRPCFlags) (decodeRun, error) {
	var devs []backend.Device
	for _, a := range addrs {
		ds, err := rpc.Connect(rpc.Options{Servers: []string{strings.TrimSpace(a)}})
		if err != nil {
			return decodeRun{}, err
		}
		devs = append(devs, ds[0])
	}
	opts := model.Options{Threads: f.threads, Split: devs}
	r, err := decodeSteps(path, opts, f.tokens)
	if err != nil {
		return r, err
	}
	again, err := decodeSteps(path, opts, 1)
	r.reload = again.load
	return r, err
}

// serveLoopback serves the CPU on a free loopback port, with a cache
// folder when cacheDir is set, quietly, until stop. Every server of the
// benchmark, ours and ggml's, computes on one thread: ggml's CPU workers
// spin between graphs, and servers spinning two threads each beside the
// client would take every core of a small machine.
func serveLoopback(cacheDir string) (addr string, stop func(), err error) {
	if cacheDir != "" {
		if err := os.MkdirAll(cacheDir, 0o755); err != nil {
			return "", nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &rpc.Server{Devices: []backend.Device{cpu.Device()}, Threads: 1, CacheDir: cacheDir,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Close(); <-done }, nil
}

// benchRoundTrip times the demo's decoder block (two layers, one token,
// Q4_0 weights) computed from scratch on a server, as ggml's client does
// it in rpcref: one buffer allocated, every leaf uploaded, the graph
// computed, the result read back and the buffer freed; through our client
// on our server and through ggml's client on ggml's server.
func benchRoundTrip(stdout io.Writer, f benchRPCFlags) error {
	d, err := block.NewDims(f.embd, 1, 64, true)
	if err != nil {
		return err
	}
	build := func() (*graph.Graph, *graph.Tensor, map[*graph.Tensor][]byte, error) {
		c := graph.NewContext(graph.ContextOptions{})
		g, _, out, err := block.BuildLayers(c, d, 2, func(name string, typ quant.Type, ne ...int64) *graph.Tensor {
			return c.SetName(c.NewTensor(typ, ne...), name)
		})
		if err != nil {
			return nil, nil, nil, err
		}
		data := map[*graph.Tensor][]byte{}
		for _, t := range mirror.Reachable(g) {
			if t.Op == ops.None && t.ViewSrc == nil {
				if data[t], err = block.Data(t, d, 1); err != nil {
					return nil, nil, nil, fmt.Errorf("%s: %w", t.Name, err)
				}
			}
		}
		return g, out, data, nil
	}
	addr, stop, err := serveLoopback("")
	if err != nil {
		return err
	}
	defer stop()
	ds, err := rpc.Connect(rpc.Options{Servers: []string{addr}})
	if err != nil {
		return err
	}
	dev := ds[0]
	be, err := dev.Init(backend.Options{})
	if err != nil {
		return err
	}
	defer be.Close()
	ours := func() (time.Duration, []byte, error) {
		g, out, data, err := build()
		if err != nil {
			return 0, nil, err
		}
		start := time.Now()
		ga, err := buffer.NewGraphAllocator(dev.BufferType())
		if err != nil {
			return 0, nil, err
		}
		defer ga.Free()
		if err := ga.AllocGraph(g); err != nil {
			return 0, nil, err
		}
		for t, b := range data {
			if err := buffer.SetTensor(t, b, 0); err != nil {
				return 0, nil, err
			}
		}
		if err := backend.Compute(be, g); err != nil {
			return 0, nil, err
		}
		res := make([]byte, out.NBytes())
		err = buffer.GetTensor(out, res, 0)
		return time.Since(start), res, err
	}

	s, err := rpcref.Start(rpcref.Config{Threads: 1})
	if err != nil {
		return err
	}
	defer s.Kill()
	c, err := rpcref.Dial(s.Addr, true)
	if err != nil {
		return err
	}
	defer c.Close()
	var up uint64 // the bytes of one round trip's leaves
	theirs := func() (time.Duration, []byte, error) {
		g, out, data, err := build()
		if err != nil {
			return 0, nil, err
		}
		up = 0
		for t, b := range data {
			t.Data = b
			up += uint64(len(b))
		}
		out.Data = make([]byte, out.NBytes())
		if err := c.Supports(g); err != nil {
			return 0, nil, err
		}
		start := time.Now()
		err = c.Compute(g)
		return time.Since(start), out.Data, err
	}
	var ourT, refT []time.Duration
	var ourOut, refOut []byte
	for range f.runs {
		// Interleaved, so that a busy machine slows both alike.
		dt, o, err := ours()
		if err != nil {
			return fmt.Errorf("our pair: %w", err)
		}
		ourT, ourOut = append(ourT, dt), o
		dt, o, err = theirs()
		if err != nil {
			return fmt.Errorf("ggml's pair: %w", err)
		}
		refT, refOut = append(refT, dt), o
	}
	diff, err := maxAbsDiff(ourOut, refOut)
	if err != nil {
		return err
	}
	om, rm := median(ourT), median(refT)
	fmt.Fprintf(stdout, "graph round trip: the decoder block, 2 layers, 1 token, ctx %d, Q4_0 weights (%s up each time), median of %d\n", d.Ctx, mib(up), f.runs)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pair\tms\t")
	fmt.Fprintf(tw, "our client, our server\t%.3f\t\n", msf(om))
	fmt.Fprintf(tw, "ggml's client, ggml's server\t%.3f\t\n", msf(rm))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ratio ours/ggml: %.2f (results within %.3g of each other)\n", float64(om)/float64(rm), diff)
	return nil
}

func maxAbsDiff(a, b []byte) (float64, error) {
	if len(a) != len(b) || len(a)%4 != 0 {
		return 0, errors.New("bench rpc: the two pairs' results differ in size")
	}
	x, y := quant.BytesF32(a), quant.BytesF32(b)
	var d float64
	for i := range x {
		d = max(d, float64(abs32(x[i]-y[i])))
	}
	return d, nil
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(n uint64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
