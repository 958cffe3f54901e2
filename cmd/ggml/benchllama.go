package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ggml-go/ggml/bench"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
)

// llamaChildEnv, set in the environment, makes this binary (ggml, or the
// cmd/ggml test binary, whose TestMain checks it too) the libllama side of
// `ggml bench model` instead of what its arguments ask: a process of its
// own in which nothing but libllama computes, as llama-bench runs it.
// Timed inside the bench's own process, beside our runner, libllama ran
// 1.3-2x slower (issue 22), a ratio that flattered us; see bench/README.md
// for what the difference was made of.
const llamaChildEnv = "GGML_GO_BENCH_LLAMA_CHILD"

// llamaRequest is the first line the bench writes to the child's stdin:
// the model and the shape of one run. The child answers with a
// llamaReply saying what it loaded, then one llamaReply per "run" line,
// and exits at the end of its stdin.
type llamaRequest struct {
	Model       string `json:"model"`
	Threads     int    `json:"threads"`
	PP          int    `json:"pp"`
	TG          int    `json:"tg"`
	Ctx         int    `json:"ctx"`
	VocabTokens int    `json:"vocab_tokens"`
	// Lib is which libllama: "npm" (the npm package's, with ggml's best
	// CPU build for this machine or GGML_REF_CPU_VARIANT's) or "rpc-ref"
	// (llama-cpp-python's llama.cpp that scripts/fetch-rpc-ref builds,
	// its CPU backend linked in).
	Lib string `json:"lib"`
}

// llamaLibs are the values of llamaRequest.Lib (bench model -llama).
var llamaLibs = []string{"npm", "rpc-ref"}

// llamaReply is one line of the child's stdout (JSON).
type llamaReply struct {
	// Variant is the ggml CPU build libllama computes with (first reply).
	Variant string `json:"variant,omitempty"`
	// RSSLoaded and RSSStart are the child's resident size after loading
	// the model and making its context (with one warm-up run) and before
	// loading anything: what libllama holds for the file (first reply).
	RSSStart  uint64 `json:"rss_start,omitempty"`
	RSSLoaded uint64 `json:"rss_loaded,omitempty"`
	// PPNs and TGNs time one run's prompt and generation (run replies),
	// PPCPUNs and TGCPUNs in the child's CPU time.
	PPNs    int64 `json:"pp_ns,omitempty"`
	TGNs    int64 `json:"tg_ns,omitempty"`
	PPCPUNs int64 `json:"pp_cpu_ns,omitempty"`
	TGCPUNs int64 `json:"tg_cpu_ns,omitempty"`
	// Err is set when the child failed; it then exits.
	Err string `json:"error,omitempty"`
}

// benchPrompt is the prompt both sides decode: tokens spread over the
// vocabulary, the same on both sides.
func benchPrompt(n, nVocab int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32((i*37 + 11) % nVocab)
	}
	return p
}

// timeLlama times one run as llama-bench runs its pp and tg tests: the
// prompt in one llama_decode asking for the last token's logits only
// (llama_batch_get_one), then, from an empty cache, tg single-token
// decodes of tokens that do not depend on the logits (llama-bench feeds
// rand() % n_vocab): benchToken's, the same tokens our side decodes, each
// asking for its logits on both sides.
func timeLlama(rc *llamaref.Context, prompt []int32, tg, nVocab int) (runTimes, error) {
	last := make([]bool, len(prompt))
	last[len(last)-1] = true
	var clock runClock
	rc.ClearMemory()
	clock.start()
	if err := rc.Decode(prompt, 0, last); err != nil {
		return runTimes{}, err
	}
	clock.split()
	rc.ClearMemory()
	for i := range tg {
		if err := rc.Decode([]int32{benchToken(i, nVocab)}, i, []bool{true}); err != nil {
			return runTimes{}, err
		}
	}
	return clock.stop(), nil
}

// benchToken is generation's i-th token on both sides: spread over the
// vocabulary, independent of the logits, as llama-bench's rand() % n_vocab.
func benchToken(i, nVocab int) int32 { return int32((i*7919 + 13) % nVocab) }

// runTimes are one run's prompt and generation times, by the clock and in
// the process's CPU time ([0] the prompt, [1] generation).
type runTimes struct{ wall, cpu [2]time.Duration }

// runClock takes runTimes: start, split between the phases, stop.
type runClock struct {
	t    runTimes
	w, c time.Duration // the phase's start
	at   time.Time
}

func (c *runClock) start() { c.at, c.c = time.Now(), bench.ProcessCPU() }

func (c *runClock) split() {
	now, cpu := time.Now(), bench.ProcessCPU()
	c.t.wall[0], c.t.cpu[0] = now.Sub(c.at), cpu-c.c
	c.at, c.c = now, cpu
}

func (c *runClock) stop() runTimes {
	c.t.wall[1], c.t.cpu[1] = time.Since(c.at), bench.ProcessCPU()-c.c
	return c.t
}

// llamaBench is a loaded libllama model and context ready to be timed.
type llamaBench struct {
	lib    *llamaref.Lib
	ref    *llamaref.Model
	rc     *llamaref.Context
	prompt []int32
	tg     int
	nVocab int
}

// openLlamaBench loads the request's model into libllama with the default
// model parameters (as llama-bench: mmap, the CPU's repacked weights),
// flash attention off and an F32 KV cache.
func openLlamaBench(req llamaRequest) (*llamaBench, error) {
	var lib *llamaref.Lib
	var err error
	switch req.Lib {
	case "", "npm":
		lib, err = llamaref.Default()
	case "rpc-ref":
		lib, err = rpcref.OpenLlama()
	default:
		err = fmt.Errorf("libllama %q: want one of %s", req.Lib, strings.Join(llamaLibs, ", "))
	}
	if err != nil {
		return nil, err
	}
	ref, err := lib.LoadModel(req.Model)
	if err != nil {
		return nil, err
	}
	o := llamaref.CompareOptions(req.Ctx, req.PP, req.Threads)
	o.FlashAttn = llamaref.FlashAttnDisabled
	rc, err := ref.NewContext(o)
	if err != nil {
		ref.Free()
		return nil, err
	}
	if n := ref.NVocab(); n != req.VocabTokens {
		rc.Free()
		ref.Free()
		return nil, fmt.Errorf("libllama reads a vocabulary of %d tokens, our runner %d", n, req.VocabTokens)
	}
	return &llamaBench{lib: lib, ref: ref, rc: rc, prompt: benchPrompt(req.PP, req.VocabTokens), tg: req.TG, nVocab: req.VocabTokens}, nil
}

func (b *llamaBench) run() (runTimes, error) {
	return timeLlama(b.rc, b.prompt, b.tg, b.nVocab)
}

func (b *llamaBench) close() {
	b.rc.Free()
	b.ref.Free()
}

// runLlamaChild is the child's whole life (see llamaChildEnv); it returns
// the exit status.
func runLlamaChild(stdin io.Reader, stdout io.Writer) int {
	in := bufio.NewScanner(stdin)
	enc := json.NewEncoder(stdout)
	fail := func(err error) int {
		_ = enc.Encode(llamaReply{Err: err.Error()})
		return 1
	}
	if !in.Scan() {
		return fail(fmt.Errorf("no request on stdin: %v", in.Err()))
	}
	var req llamaRequest
	if err := json.Unmarshal(in.Bytes(), &req); err != nil {
		return fail(fmt.Errorf("request: %w", err))
	}
	if req.PP <= 0 || req.TG <= 0 || req.Threads <= 0 || req.Ctx < req.PP+req.TG || req.VocabTokens <= 0 {
		return fail(fmt.Errorf("request %+v: positive pp, tg, threads and vocabulary, ctx at least pp+tg", req))
	}
	rss0 := residentBytes()
	b, err := openLlamaBench(req)
	if err != nil {
		return fail(err)
	}
	defer b.close()
	// One warm-up run, as llama-bench makes: the first pays for page
	// faults on the mapped weights and the compute buffers.
	if _, err := b.run(); err != nil {
		return fail(err)
	}
	variant := b.lib.Variant()
	if variant == "" {
		variant = "linked in (" + req.Lib + ")"
	}
	if err := enc.Encode(llamaReply{Variant: variant, RSSStart: rss0, RSSLoaded: residentBytes()}); err != nil {
		return 1
	}
	for in.Scan() {
		if in.Text() != "run" {
			return fail(fmt.Errorf("unknown request %q", in.Text()))
		}
		r, err := b.run()
		if err != nil {
			return fail(err)
		}
		if err := enc.Encode(llamaReply{PPNs: r.wall[0].Nanoseconds(), TGNs: r.wall[1].Nanoseconds(),
			PPCPUNs: r.cpu[0].Nanoseconds(), TGCPUNs: r.cpu[1].Nanoseconds()}); err != nil {
			return 1
		}
	}
	return 0
}

// llamaChild is the bench's handle on a running child.
type llamaChild struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	stderr bytes.Buffer
	// First is the child's first reply: its variant and resident sizes.
	first llamaReply
}

// errNoChild marks a child that could not be started or loaded: the bench
// then prints why and times our side alone, as it does without libllama.
var errNoChild = errors.New("libllama child")

// startLlamaChild starts this executable as the libllama child with req
// and waits until it has loaded the model and made its warm-up run.
func startLlamaChild(req llamaRequest) (*llamaChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoChild, err)
	}
	c := &llamaChild{cmd: exec.Command(exe)}
	c.cmd.Env = append(os.Environ(), llamaChildEnv+"=1")
	c.cmd.Stderr = &c.stderr
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("%w: %w", errNoChild, err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoChild, err)
	}
	c.out = bufio.NewScanner(stdout)
	c.out.Buffer(nil, 1<<20)
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %w", errNoChild, err)
	}
	line, _ := json.Marshal(req)
	if _, err := fmt.Fprintf(c.stdin, "%s\n", line); err != nil {
		c.close()
		return nil, fmt.Errorf("%w: %w", errNoChild, err)
	}
	if c.first, err = c.reply(); err != nil {
		c.close()
		return nil, fmt.Errorf("%w: %w", errNoChild, err)
	}
	return c, nil
}

// reply reads the child's next line.
func (c *llamaChild) reply() (llamaReply, error) {
	var r llamaReply
	if !c.out.Scan() {
		msg := strings.TrimSpace(c.stderr.String())
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		return r, fmt.Errorf("the child ended without an answer (%v); its stderr: %q", c.out.Err(), msg)
	}
	if err := json.Unmarshal(c.out.Bytes(), &r); err != nil {
		return r, fmt.Errorf("the child's answer %q: %w", c.out.Text(), err)
	}
	if r.Err != "" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

// run asks the child for one timed run.
func (c *llamaChild) run() (runTimes, error) {
	if _, err := io.WriteString(c.stdin, "run\n"); err != nil {
		return runTimes{}, fmt.Errorf("libllama child: %w", err)
	}
	r, err := c.reply()
	if err != nil {
		return runTimes{}, fmt.Errorf("libllama child: %w", err)
	}
	if r.PPNs <= 0 || r.TGNs <= 0 {
		return runTimes{}, fmt.Errorf("libllama child: a run of %d and %d ns", r.PPNs, r.TGNs)
	}
	return runTimes{wall: [2]time.Duration{time.Duration(r.PPNs), time.Duration(r.TGNs)},
		cpu: [2]time.Duration{time.Duration(r.PPCPUNs), time.Duration(r.TGCPUNs)}}, nil
}

// close ends the child (its stdin's end tells it to exit) and waits.
func (c *llamaChild) close() {
	_ = c.stdin.Close()
	_ = c.cmd.Wait()
}
