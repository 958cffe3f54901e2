package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
)

// chatAnswerTokens is the most tokens of an answer when -n is not given:
// `ggml chat`'s default too.
const chatAnswerTokens = 256

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// progressMin is the file size from which loading draws a progress bar.
const progressMin = 64 << 20

func runRun(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	path := fs.String("m", "", "model `FILE` (GGUF: llama, qwen2 or gemma3); none: SmolLM2 from the cache, else a generated model")
	text := fs.String("p", "", "prompt `TEXT` (needs a model with a vocabulary)")
	tokList := fs.String("tokens", "", "prompt as token ids `1,2,3`")
	n := fs.Int("n", 32, "tokens to generate (unset: 256 for an answer in the chat template, which ends at its end-of-turn token)")
	dev := fs.String("device", "", "device `NAME`, optionally NAME:key=value (default: "+backend.EnvDevice+", else the best)")
	threads := fs.Int("threads", 0, "CPU threads (0: all)")
	seed := fs.Uint64("seed", 0, "sampling seed")
	logitsOut := fs.String("logits", "", "write every prompt position's logits to `OUT` (raw little-endian float32, n_tokens x n_vocab)")
	var sm model.Sampler
	fs.Func("temp", "sampling temperature (0: greedy)", floatFlag(&sm.Temp))
	fs.IntVar(&sm.TopK, "top-k", 0, "keep the K most likely tokens (0: all)")
	fs.Func("top-p", "keep the most likely tokens up to probability P (0 or 1: all)", floatFlag(&sm.TopP))
	fs.Func("min-p", "keep tokens at least P times as likely as the best (0: all)", floatFlag(&sm.MinP))
	fs.Func("repeat-penalty", "penalty for the last -repeat-last-n tokens (1: off)", floatFlag(&sm.RepeatPenalty))
	fs.IntVar(&sm.RepeatLastN, "repeat-last-n", 64, "tokens the repetition penalty looks back")
	ctxLen := fs.Int("ctx", 0, "context length (0: the model's, at most 4096)")
	fa := fs.Bool("fa", false, "flash attention")
	raw := fs.Bool("raw", false, "feed -p as it is, without the model's chat template")
	tmplName := fs.String("template", "", "chat template `NAME` for -p (chatml, gemma, llama3, phi3) instead of the file's")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml run [-m FILE] [-p TEXT [-raw] [-template NAME] | -tokens 1,2,3] [-n N] [-device NAME] [-threads N]\n"+
			"                [-seed N] [-logits OUT] [-temp T -top-k K -top-p P -min-p P -repeat-penalty R]\n\n"+
			"Runs a llama, qwen2 or gemma3 GGUF model: -p goes in the file's chat template as a user turn (as it is\n"+
			"with -raw), the answer streams until the end-of-turn token, then tokens/s. Without -m: SmolLM2 from the\n"+
			"cache (scripts/fetch-models), else a generated model.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	sm.Seed = *seed
	if err := sm.Check(); err != nil {
		return usageErrorf("%v", err)
	}
	if *text != "" && *tokList != "" {
		return usageErrorf("-p and -tokens exclude each other")
	}
	if *n < 0 || *threads < 0 {
		return usageErrorf("-n and -threads must be >= 0")
	}
	// Everything the command line can get wrong is checked before a
	// model is generated or loaded.
	opts := model.Options{Threads: *threads, BestDevice: true}
	if *dev != "" {
		d, sel, err := deviceFlag("-device", *dev)
		if err != nil {
			return err
		}
		opts.Device, opts.Params = d, sel.Params
	}
	var prompt []int32
	if *tokList != "" {
		var err error
		if prompt, err = parseTokens(*tokList); err != nil {
			return usageErrorf("-tokens: %v", err)
		}
	}
	if *path != "" && *text == "" && *tokList == "" {
		return usageErrorf("give a prompt with -p or -tokens")
	}
	if *path == "" && *tokList == "" {
		if p, ok := defaultModel(stdout); ok {
			*path = p
			if *text == "" {
				*text = "What can you do?"
			}
		}
	}
	if *path == "" {
		dir, err := os.MkdirTemp("", "ggml-run-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*path = filepath.Join(dir, "model.gguf")
		c := genmodel.Default()
		if err := genmodel.WriteFile(*path, c); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "no -m: generated a random-weight %s model (%d wide, %d layers, %s weights, %d tokens, no vocabulary)\n",
			c.Arch, c.Embd, c.Layers, c.Type, c.VocabSize)
		fmt.Fprintln(stdout, fetchHint)
		if *text == "" && *tokList == "" {
			prompt = []int32{1, 2, 3, 4, 5, 6, 7, 8}
		}
	}
	if fi, err := os.Stat(*path); err == nil && fi.Size() >= progressMin && progressOut != nil {
		opts.Progress = func(done, total uint64) {
			fmt.Fprintf(progressOut, "\rloading %3d%%", done*100/max(total, 1))
			if done == total {
				fmt.Fprint(progressOut, "\r            \r")
			}
		}
	}
	m, err := model.Open(*path, opts)
	if err != nil {
		return err
	}
	defer m.Close()
	h := m.HParams
	fmt.Fprintf(stdout, "model: %s, %d layers, %d wide, %d heads (%d KV), %d tokens, on %s\n",
		h.Arch, h.NLayer, h.NEmbd, h.NHead[0], h.NHeadKV[0], h.NVocab, m.DeviceName())
	// chatted: the answer is a turn of its own, printed on the line after
	// the user's text rather than as its continuation.
	chatted := false
	if *text != "" {
		p := *text
		if m.HasText() {
			if p, err = chatPrompt(stdout, m, p, *raw, *tmplName); err != nil {
				return err
			}
			chatted = p != *text
			if chatted && !flagSet(fs, "n") {
				// An answer ends at its end-of-turn token: 32 tokens cut
				// most answers short.
				*n = chatAnswerTokens
			}
		}
		if prompt, err = m.Tokenize(p, true); err != nil {
			return err
		}
	}
	if len(prompt) == 0 {
		return usageErrorf("empty prompt")
	}
	s, err := m.NewSession(model.SessionOptions{Ctx: *ctxLen, FlashAttn: *fa})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *logitsOut != "" {
		if err := writeLogits(ctx, s, prompt, *logitsOut); err != nil {
			return err
		}
		s.Reset()
	}
	// The prompt first, as the text the model continues.
	if *text != "" {
		_, err = io.WriteString(stdout, *text)
		if err == nil && chatted {
			_, err = io.WriteString(stdout, "\n")
		}
	} else {
		_, err = fmt.Fprintf(stdout, "%v ", prompt)
	}
	if err != nil {
		return err
	}
	_, err = s.Generate(ctx, prompt, *n, sm, func(t int32) error {
		if m.HasText() {
			piece, err := m.Piece(t)
			if err != nil {
				return err
			}
			_, err = io.WriteString(stdout, piece)
			return err
		}
		_, err := fmt.Fprintf(stdout, "%d ", t)
		return err
	})
	fmt.Fprintln(stdout)
	if err != nil {
		return err
	}
	tm := s.Timings()
	fmt.Fprintln(stdout, tm)
	if tm.Generated < *n {
		fmt.Fprintf(stdout, "stopped at an end-of-generation token after %d of %d tokens\n", tm.Generated, *n)
	}
	return writePlacement(stdout, s)
}

// writePlacement says which device computed how much of the last graph.
func writePlacement(w io.Writer, s *model.Session) error {
	splits, nodes := s.Placement()
	names := make([]string, 0, len(nodes))
	for name := range nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %d nodes", name, nodes[name])
	}
	plural := "s"
	if splits == 1 {
		plural = ""
	}
	_, err := fmt.Fprintf(w, "ran on: %s (%d split%s)\n", strings.Join(parts, ", "), splits, plural)
	return err
}

// writeLogits decodes the prompt asking every position's logits and writes
// them as raw little-endian float32, one row of n_vocab per token.
func writeLogits(ctx context.Context, s *model.Session, prompt []int32, path string) error {
	all := make([]bool, len(prompt))
	for i := range all {
		all[i] = true
	}
	lg, err := s.Decode(ctx, prompt, all)
	if err != nil {
		return err
	}
	var raw []byte
	for _, row := range lg {
		for _, v := range row {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
	}
	return os.WriteFile(path, raw, 0o644)
}

func parseTokens(s string) ([]int32, error) {
	var ts []int32
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%q is not a token id", strings.TrimSpace(f))
		}
		if v < 0 {
			return nil, fmt.Errorf("token id %d is negative", v)
		}
		ts = append(ts, int32(v))
	}
	return ts, nil
}

// floatFlag parses a float32 flag value into p.
func floatFlag(p *float32) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return err
		}
		*p = float32(v)
		return nil
	}
}
