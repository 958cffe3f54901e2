package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/model"
)

// chatIn is what `ggml chat` reads the user's lines from (tests replace
// it).
var chatIn io.Reader = os.Stdin

// defaultModel is the model `ggml run` and `ggml chat` use without -m:
// SmolLM2 when scripts/fetch-models has installed it.
func defaultModel(stdout io.Writer) (string, bool) {
	p, err := modelcache.SmolLM2.Path()
	if err != nil {
		return "", false
	}
	fmt.Fprintf(stdout, "no -m: using %s from the cache (%s)\n", modelcache.SmolLM2.Name, p)
	return p, true
}

// fetchHint is the line that tells a user without the cached model how to
// get it.
const fetchHint = "for a real model, run scripts/fetch-models (SmolLM2 135M and Gemma 3 270M, about 350 MB), then ggml run -p TEXT"

// chatTemplate is the template a run or chat formats with: the one named,
// else the model's (its file's, or its family's fallback, said on stdout).
func chatTemplate(stdout io.Writer, m *model.Model, name string) (model.ChatTemplate, error) {
	if name != "" {
		t, err := model.TemplateByName(name)
		if err != nil {
			return t, fmt.Errorf("%w: -template: %w", errUsage, err)
		}
		fmt.Fprintf(stdout, "chat template: %s (-template)\n", t.Name)
		return t, nil
	}
	t, fromFile, err := m.ChatTemplate()
	if err != nil {
		return t, err
	}
	if fromFile {
		fmt.Fprintf(stdout, "chat template: %s (the file's tokenizer.chat_template)\n", t.Name)
	} else {
		fmt.Fprintf(stdout, "chat template: %s (the file has none; -template NAME picks another)\n", t.Name)
	}
	return t, nil
}

// chatPrompt is the text `ggml run -p` tokenizes: the user's text in the
// model's chat template as one user turn with the assistant's turn opened,
// or as it is with -raw or for a file without a chat template (a base
// model), which continues text rather than answering.
func chatPrompt(stdout io.Writer, m *model.Model, text string, raw bool, name string) (string, error) {
	if raw {
		return text, nil
	}
	if _, ok := m.File().Lookup("tokenizer.chat_template"); !ok && name == "" {
		fmt.Fprintln(stdout, "chat template: none in the file, the prompt goes in as it is (-template NAME formats it as a chat)")
		return text, nil
	}
	t, err := chatTemplate(stdout, m, name)
	if err != nil {
		return "", err
	}
	return t.Apply([]model.Message{{Role: "user", Content: text}}, true), nil
}

func runChat(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	path := fs.String("m", "", "model `FILE` (GGUF with a vocabulary); none: SmolLM2 from the cache")
	n := fs.Int("n", chatAnswerTokens, "most tokens of one answer")
	threads := fs.Int("threads", 0, "CPU threads (0: all)")
	ctxLen := fs.Int("ctx", 4096, "context length: the conversation's tokens")
	system := fs.String("system", "", "system message `TEXT`")
	name := fs.String("template", "", "chat template `NAME` (chatml, gemma, llama3, phi3) instead of the file's")
	seed := fs.Uint64("seed", 0, "sampling seed")
	var sm model.Sampler
	fs.Func("temp", "sampling temperature (0: greedy)", floatFlag(&sm.Temp))
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml chat [-m FILE] [-system TEXT] [-template NAME] [-n N] [-ctx N] [-threads N] [-temp T -seed N]\n\n"+
			"An interactive conversation: each line read is a user turn, the answer streams back; the conversation\n"+
			"stays in the KV cache between turns. /reset starts over; end of input (Ctrl-D) quits.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	sm.Seed = *seed
	if err := sm.Check(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *path == "" {
		p, ok := defaultModel(stdout)
		if !ok {
			return fmt.Errorf("%w: give a model with -m (%s)", errUsage, fetchHint)
		}
		*path = p
	}
	m, err := model.Open(*path, model.Options{Threads: *threads})
	if err != nil {
		return err
	}
	defer m.Close()
	if !m.HasText() {
		return fmt.Errorf("%w: a chat needs a model with a vocabulary", model.ErrNoVocab)
	}
	t, err := chatTemplate(stdout, m, *name)
	if err != nil {
		return err
	}
	s, err := m.NewSession(model.SessionOptions{Ctx: *ctxLen})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := model.NewChat(s, t, *system)
	in := bufio.NewScanner(chatIn)
	in.Buffer(nil, 1<<20)
	for {
		fmt.Fprint(stdout, "> ")
		if !in.Scan() {
			fmt.Fprintln(stdout)
			return in.Err()
		}
		line := strings.TrimSpace(in.Text())
		switch line {
		case "":
			continue
		case "/reset":
			c = model.NewChat(s, t, *system)
			continue
		}
		_, err := c.Send(ctx, line, *n, sm, func(p string) error {
			_, err := io.WriteString(stdout, p)
			return err
		})
		fmt.Fprintln(stdout)
		if err != nil {
			return err
		}
	}
}
