package tokenizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/modelcache"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/npmvocab"
	"github.com/ggml-go/ggml/internal/testkit/realmodel"
	"github.com/ggml-go/ggml/quant"
)

// vocabModel is a generated model with a real vocabulary, read by us and,
// when the test asks for it, by libllama.
type vocabModel struct {
	path string
	tok  *Tokenizer
	ref  *llamaref.Model
}

var (
	modelDir  string
	modelOnce = map[string]*sync.Once{"spm": {}, "bpe": {}, "spm-variant": {}, "bpe-variant": {}, "smollm2": {}, "gemma3": {}}
	models    = map[string]*vocabModel{}
	modelErr  = map[string]error{}
)

// userDefined are tokens the variants make USER_DEFINED: found in any
// text before tokenization, parseSpecial or not.
var userDefined = map[string][]string{"spm": {"ing", "▁the", "<0x41>", "ll"}, "bpe": {"ing", "the", "<", "ll"}}

// variant returns the metadata that turns the real vocabulary base into
// one exercising what it does not: user-defined tokens, add_eos, no
// add_bos, and (SentencePiece) no space prefix.
func variant(base string) ([]gguf.KV, error) {
	v, err := npmvocab.Load(base)
	if err != nil {
		return nil, err
	}
	types := slices.Clone(v.Types)
	for _, s := range userDefined[base] {
		i := slices.Index(v.Tokens, s)
		if i < 0 {
			return nil, fmt.Errorf("%s has no token %q", base, s)
		}
		types[i] = TypeUserDefined
	}
	kv := func(k string, val gguf.Value) gguf.KV { return gguf.KV{Key: "tokenizer.ggml." + k, Value: val} }
	return []gguf.KV{kv("token_type", gguf.ArrayValue(types)), kv("add_bos_token", gguf.ScalarValue(base == "spm")),
		kv("add_eos_token", gguf.ScalarValue(true)), kv("add_space_prefix", gguf.ScalarValue(false))}, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, v := range models {
		if v.ref != nil {
			v.ref.Free()
		}
	}
	if modelDir != "" {
		os.RemoveAll(modelDir)
	}
	os.Exit(code)
}

// realVocabs are the real model files (internal/modelcache) whose
// tokenizers the tests compare, by the name tests give them.
var realVocabs = map[string]modelcache.Model{"smollm2": modelcache.SmolLM2, "gemma3": modelcache.Gemma3}

// model returns the vocabulary name's model, generated once per test
// binary (the 128k vocabulary takes a while to load), or for smollm2 and
// gemma3 the real model file. Without the npm vocabularies or the real
// files the test skips, or fails when GGML_REF_REQUIRED=1.
func model(t testing.TB, name string) *vocabModel {
	t.Helper()
	real := ""
	if m, ok := realVocabs[name]; ok {
		real = realmodel.Path(t, m)
	}
	modelOnce[name].Do(func() {
		if real != "" {
			models[name], modelErr[name] = readVocab(real)
			return
		}
		if modelDir == "" {
			d, err := os.MkdirTemp("", "tokenizer-test")
			if err != nil {
				modelErr[name] = err
				return
			}
			modelDir = d
		}
		p := filepath.Join(modelDir, name+".gguf")
		// Small and tied: only the vocabulary matters here.
		base, isVariant := strings.CutSuffix(name, "-variant")
		c := genmodel.Config{Vocab: base, Type: quant.Q8_0, Embd: 64, Layers: 1, Heads: 2, KVHeads: 1, FF: 64, Tied: true}
		if isVariant {
			kvs, err := variant(base)
			if err != nil {
				modelErr[name] = err
				return
			}
			c.KVs = kvs
		}
		if err := genmodel.WriteFile(p, c); err != nil {
			modelErr[name] = err
			return
		}
		models[name], modelErr[name] = readVocab(p)
	})
	if err := modelErr[name]; err != nil {
		if errors.Is(err, npmvocab.ErrMissing) && os.Getenv("GGML_REF_REQUIRED") != "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return models[name]
}

// readVocab reads the tokenizer of the model file at path.
func readVocab(path string) (*vocabModel, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tok, err := FromGGUF(f)
	if err != nil {
		return nil, err
	}
	return &vocabModel{path: path, tok: tok}, nil
}

// withRef returns the model with libllama's view of it loaded (once).
func withRef(t testing.TB, name string) *vocabModel {
	t.Helper()
	m := model(t, name)
	if m.ref == nil {
		lib := llamaref.ForTest(t)
		ref, err := lib.LoadModel(m.path)
		if err != nil {
			t.Fatal(err)
		}
		m.ref = ref
	}
	return m
}
