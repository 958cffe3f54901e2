package model

import (
	"context"
	"fmt"
	"strings"
)

// Message is one turn of a conversation.
type Message struct {
	// Role is "system", "user" or "assistant".
	Role string
	// Content is the turn's text.
	Content string
}

// ChatTemplate is a chat format of the families llama.cpp recognises in a
// file's tokenizer.chat_template (llm_chat_detect_template) and formats
// itself, without a Jinja engine, as llama_chat_apply_template does.
// Implemented: ChatML (<|im_start|>, SmolLM2, Qwen), Gemma (<start_of_turn>),
// Llama 3 (<|start_header_id|>) and Phi-3 (<|assistant|> with <|end|>). Other
// families llama.cpp knows (Mistral/Llama 2 [INST] variants, Zephyr,
// DeepSeek, Command R, ...) are refused with ErrTemplate.
type ChatTemplate struct {
	// Name is llama.cpp's name of the family: "chatml", "gemma", "llama3"
	// or "phi3".
	Name string
	// format writes the messages, then the opening of the assistant's
	// turn when addAssistant is set.
	format func(b *strings.Builder, msgs []Message, addAssistant bool)
}

// ErrTemplate reports a chat template this package cannot format.
var ErrTemplate = fmt.Errorf("%w: chat template not supported", ErrArgument)

// chatFamilies are the implemented families, in llama.cpp's detection
// order (ChatML's markers first: a Phi-4 or SmolVLM template also has
// them and is detected by an extra marker, which this package refuses).
var chatFamilies = []struct {
	name   string
	detect func(src string) bool
	format func(b *strings.Builder, msgs []Message, addAssistant bool)
}{
	{"chatml", func(s string) bool {
		return strings.Contains(s, "<|im_start|>") && !strings.Contains(s, "<|im_sep|>") && !strings.Contains(s, "<end_of_utterance>")
	}, formatChatML},
	{"phi3", func(s string) bool {
		return !strings.Contains(s, "[INST]") && strings.Contains(s, "<|assistant|>") && strings.Contains(s, "<|end|>")
	}, formatPhi3},
	{"gemma", func(s string) bool { return strings.Contains(s, "<start_of_turn>") }, formatGemma},
	{"llama3", func(s string) bool {
		return strings.Contains(s, "<|start_header_id|>") && strings.Contains(s, "<|end_header_id|>")
	}, formatLlama3},
}

// TemplateByName returns the family of that name ("chatml", "gemma",
// "llama3", "phi3").
func TemplateByName(name string) (ChatTemplate, error) {
	for _, f := range chatFamilies {
		if f.name == name {
			return ChatTemplate{Name: f.name, format: f.format}, nil
		}
	}
	return ChatTemplate{}, fmt.Errorf("%w: no template named %q (chatml, gemma, llama3, phi3)", ErrTemplate, name)
}

// DetectTemplate finds the family of a tokenizer.chat_template text by the
// markers llama.cpp looks for.
func DetectTemplate(src string) (ChatTemplate, error) {
	for _, f := range chatFamilies {
		if f.detect(src) {
			return ChatTemplate{Name: f.name, format: f.format}, nil
		}
	}
	return ChatTemplate{}, fmt.Errorf("%w: tokenizer.chat_template is of no family implemented here (chatml, gemma, llama3, phi3)", ErrTemplate)
}

// ChatTemplate is the model's chat format: from the file's
// tokenizer.chat_template, or, for a file without one, Gemma's for a gemma
// architecture and else ChatML (llama.cpp's own fallback); fromFile tells
// which.
func (m *Model) ChatTemplate() (t ChatTemplate, fromFile bool, err error) {
	if v, ok := m.file.Lookup("tokenizer.chat_template"); ok {
		src, isStr := v.Interface().(string)
		if !isStr {
			return t, false, fmt.Errorf("%w: tokenizer.chat_template is %s, want a string", ErrModel, v.Type())
		}
		t, err = DetectTemplate(src)
		return t, true, err
	}
	if strings.HasPrefix(m.HParams.Arch, "gemma") {
		t, err = TemplateByName("gemma")
	} else {
		t, err = TemplateByName("chatml")
	}
	return t, false, err
}

// Apply formats msgs, then the start of the assistant's answer when
// addAssistant is set, as llama_chat_apply_template does for the family.
func (t ChatTemplate) Apply(msgs []Message, addAssistant bool) string {
	var b strings.Builder
	t.format(&b, msgs, addAssistant)
	return b.String()
}

func formatChatML(b *strings.Builder, msgs []Message, addAssistant bool) {
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	if addAssistant {
		b.WriteString("<|im_start|>assistant\n")
	}
}

// formatGemma has no system turn: llama.cpp puts the system text at the
// start of the next user turn; the assistant is "model"; contents are
// trimmed.
func formatGemma(b *strings.Builder, msgs []Message, addAssistant bool) {
	system := ""
	for _, m := range msgs {
		if m.Role == "system" {
			system += trim(m.Content)
			continue
		}
		role := m.Role
		if role == "assistant" {
			role = "model"
		}
		b.WriteString("<start_of_turn>" + role + "\n")
		if system != "" && role != "model" {
			b.WriteString(system + "\n\n")
			system = ""
		}
		b.WriteString(trim(m.Content) + "<end_of_turn>\n")
	}
	if addAssistant {
		b.WriteString("<start_of_turn>model\n")
	}
}

func formatLlama3(b *strings.Builder, msgs []Message, addAssistant bool) {
	for _, m := range msgs {
		b.WriteString("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n" + trim(m.Content) + "<|eot_id|>")
	}
	if addAssistant {
		b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	}
}

func formatPhi3(b *strings.Builder, msgs []Message, addAssistant bool) {
	for _, m := range msgs {
		b.WriteString("<|" + m.Role + "|>\n" + m.Content + "<|end|>\n")
	}
	if addAssistant {
		b.WriteString("<|assistant|>\n")
	}
}

// trim strips the ASCII whitespace llama.cpp's trim strips.
func trim(s string) string { return strings.Trim(s, " \t\n\r\v\f") }

// Chat is a conversation held in a session's KV cache, as llama-cli's
// conversation mode keeps it: each Send feeds only the text the template
// adds since the last turn (the new user message and the assistant's
// opening), generates the answer up to the end-of-turn token, and decodes
// that token too, so the cache ends where the formatted conversation does.
// When the template's text of the earlier turns changes (a template that
// reformats history), the cache is rebuilt from the whole conversation.
type Chat struct {
	s    *Session
	t    ChatTemplate
	msgs []Message
	// cached is the text whose tokens the cache holds.
	cached string
}

// NewChat starts a conversation in s (reset first) with the template t
// and, when system is not empty, a system message.
func NewChat(s *Session, t ChatTemplate, system string) *Chat {
	s.Reset()
	c := &Chat{s: s, t: t}
	if system != "" {
		c.msgs = append(c.msgs, Message{Role: "system", Content: system})
	}
	return c
}

// Messages is the conversation so far.
func (c *Chat) Messages() []Message { return c.msgs }

// Send adds the user's message, generates at most n tokens of answer with
// sm, calling emit with each piece of text as it comes, and returns the
// answer. The end-of-turn token ends the answer and is not part of it.
func (c *Chat) Send(ctx context.Context, user string, n int, sm Sampler, emit func(piece string) error) (string, error) {
	m := c.s.m
	if err := m.textAvailable(); err != nil {
		return "", err
	}
	msgs := append(c.msgs, Message{Role: "user", Content: user})
	full := c.t.Apply(msgs, true)
	delta := full
	if c.cached != "" && strings.HasPrefix(full, c.cached) {
		delta = full[len(c.cached):]
	} else {
		c.s.Reset()
	}
	first := c.s.Pos() == 0
	prompt, err := m.tok.Encode(delta, first, true)
	if err != nil {
		return "", err
	}
	var answer strings.Builder
	var last int32 = -1
	gen, err := c.s.Generate(ctx, prompt, n, sm, func(t int32) error {
		last = t
		if m.Vocab.IsStop(t) {
			return nil
		}
		p := m.tok.TokenToPiece(t, false)
		answer.WriteString(p)
		if emit != nil {
			return emit(p)
		}
		return nil
	})
	if err != nil {
		c.cached = ""
		return answer.String(), err
	}
	// Generate decodes every token but the last: put it in the cache too
	// (the end-of-turn token closes the turn the template will repeat).
	if len(gen) > 0 {
		if _, err := c.s.Decode(ctx, []int32{last}, nil); err != nil {
			c.cached = ""
			return answer.String(), err
		}
	}
	var cached strings.Builder
	cached.WriteString(full)
	for _, t := range gen {
		cached.WriteString(m.tok.TokenToPiece(t, true))
	}
	c.cached = cached.String()
	c.msgs = append(msgs, Message{Role: "assistant", Content: answer.String()})
	return answer.String(), nil
}
