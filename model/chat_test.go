package model_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/realmodel"
	"github.com/ggml-go/ggml/model"
)

// conversation is a random conversation: an optional system message, then
// user and assistant turns, with leading and trailing whitespace that some
// families trim.
func conversation(r *rand.Rand) []model.Message {
	words := []string{"hello", "  padded  ", "\nnew line\n", "tabs\t", "你好", "🙂", "<b>", "42", "a\n\nb"}
	text := func() string {
		var b strings.Builder
		for range 1 + r.IntN(5) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	var msgs []model.Message
	if r.IntN(2) == 0 {
		msgs = append(msgs, model.Message{Role: "system", Content: text()})
	}
	for i := range 1 + r.IntN(5) {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, model.Message{Role: role, Content: text()})
	}
	return msgs
}

// TestChatTemplatesMatchLlama formats random conversations with each
// family and compares with llama_chat_apply_template given the family's
// name.
func TestChatTemplatesMatchLlama(t *testing.T) {
	lib := llamaref.ForTest(t)
	r := rand.New(rand.NewPCG(uint64(testSeedChat(t)), 3))
	for _, name := range []string{"chatml", "gemma", "llama3", "phi3"} {
		tmpl, err := model.TemplateByName(name)
		require.NoError(t, err)
		for c := range 200 {
			msgs := conversation(r)
			pairs := make([][2]string, len(msgs))
			for i, m := range msgs {
				pairs[i] = [2]string{m.Role, m.Content}
			}
			add := c%2 == 0
			want, err := lib.ChatApply(name, pairs, add)
			require.NoError(t, err)
			require.Equal(t, want, tmpl.Apply(msgs, add), "%s case %d: %q", name, c, msgs)
		}
	}
	_, err := model.TemplateByName("vicuna")
	require.ErrorIs(t, err, model.ErrTemplate)
	_, err = model.DetectTemplate("{{ '[INST] ' + message['content'] + ' [/INST]' }}")
	require.ErrorIs(t, err, model.ErrTemplate)
}

func testSeedChat(t *testing.T) int64 {
	seed := rand.Int64()
	t.Logf("seed %d", seed)
	return seed
}

// TestChatTemplateOfFile detects SmolLM2's template (ChatML) and formats as
// libllama formats with the file's own template text.
func TestChatTemplateOfFile(t *testing.T) {
	path := realmodel.Path(t, modelcache.SmolLM2)
	lib := llamaref.ForTest(t)
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	src, err := gguf.Get[string](f, "tokenizer.chat_template")
	require.NoError(t, err)
	tmpl, err := model.DetectTemplate(src)
	require.NoError(t, err)
	require.Equal(t, "chatml", tmpl.Name)
	msgs := []model.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi there"}}
	want, err := lib.ChatApply(src, [][2]string{{"system", "Be brief."}, {"user", "Hi there"}}, true)
	require.NoError(t, err)
	require.Equal(t, want, tmpl.Apply(msgs, true))
}

// TestChatKeepsCache runs two turns with SmolLM2: the second feeds only
// the tokens its turn adds, the cache holding the first turn and its
// answer up to and with the end-of-turn token.
func TestChatKeepsCache(t *testing.T) {
	path := realmodel.Run(t, modelcache.SmolLM2)
	m, err := model.Open(path, model.Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	s, err := m.NewSession(model.SessionOptions{Ctx: 1024})
	require.NoError(t, err)
	defer s.Close()
	tmpl, fromFile, err := m.ChatTemplate()
	require.NoError(t, err)
	require.True(t, fromFile)
	c := model.NewChat(s, tmpl, "")
	ctx := context.Background()
	var streamed strings.Builder
	a1, err := c.Send(ctx, "What is the capital of France?", 48, model.Sampler{}, func(p string) error {
		streamed.WriteString(p)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, a1, streamed.String())
	require.NotEmpty(t, strings.TrimSpace(a1))
	turn1, err := m.Tokenize(tmpl.Apply([]model.Message{{Role: "user", Content: "What is the capital of France?"}}, true), true)
	require.NoError(t, err)
	afterFirst := s.Pos()
	require.Greater(t, afterFirst, len(turn1), "the answer is in the cache")
	a2, err := c.Send(ctx, "And of Italy?", 48, model.Sampler{}, nil)
	require.NoError(t, err)
	added, err := m.Tokenize("\n<|im_start|>user\nAnd of Italy?<|im_end|>\n<|im_start|>assistant\n", false)
	require.NoError(t, err)
	require.GreaterOrEqual(t, s.Pos(), afterFirst+len(added), "the second turn appends to the cache")
	require.Len(t, c.Messages(), 4)
	t.Logf("turn 1 (%d cells): %q; turn 2 (%d cells): %q", afterFirst, a1, s.Pos(), a2)
}
