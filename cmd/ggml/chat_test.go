package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/realmodel"
)

// TestRunDefaultModel: without -m, run takes SmolLM2 from the cache, says
// so, formats -p as a ChatML user turn and stops at the end of the turn;
// -raw feeds the text as it is.
func TestRunDefaultModel(t *testing.T) {
	realmodel.Run(t, modelcache.SmolLM2)
	code, out, errOut := runCmd("run", "-p", "What is the capital of France?", "-n", "48", "-threads", "2")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "using SmolLM2-135M-Instruct from the cache")
	require.Contains(t, out, "chat template: chatml (the file's tokenizer.chat_template)")
	require.Contains(t, out, "Paris")
	// The answer is a turn of its own: it starts on the line after the
	// question.
	require.Contains(t, out, "What is the capital of France?\n", out)
	// The answer ends at <|im_end|>, well before 48 tokens.
	require.NotContains(t, out, "generation: 47 tokens")
	require.Regexp(t, `stopped at an end-of-generation token after \d+ of 48 tokens`, out)
	// Without -n an answer may take 256 tokens (as ggml chat's), not 32.
	code, out, errOut = runCmd("run", "-p", "What is the capital of France?", "-threads", "2")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `stopped at an end-of-generation token after \d+ of 256 tokens`, out)
	code, out, errOut = runCmd("run", "-p", "The capital of France is", "-raw", "-n", "4", "-threads", "2")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "chat template")
	// -raw: the text the model continues, on the same line.
	require.NotContains(t, out, "The capital of France is\n", out)
	code, _, errOut = runCmd("run", "-p", "Hi", "-template", "vicuna", "-n", "1")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "no template named")
}

// TestChatCommand holds a two-turn conversation through `ggml chat`.
func TestChatCommand(t *testing.T) {
	path := realmodel.Run(t, modelcache.SmolLM2)
	chatIn = strings.NewReader("What is the capital of France?\n/reset\n\nAnd the capital of Italy?\n")
	defer func() { chatIn = nil }()
	code, out, errOut := runCmd("chat", "-m", path, "-n", "40", "-threads", "2", "-ctx", "512")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Paris")
	require.Contains(t, out, "Rome")
	require.Equal(t, 5, strings.Count(out, "> "), out) // four lines and the end of input
}
