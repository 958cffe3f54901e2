package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/gguf/genmodel"
	"github.com/ggml-go/ggml/internal/llamaref"
	"github.com/ggml-go/ggml/internal/npmvocab"
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
	modelOnce = map[string]*sync.Once{"spm": {}, "bpe": {}}
	models    = map[string]*vocabModel{}
	modelErr  = map[string]error{}
)

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

// model returns the vocabulary name's model, generated once per test
// binary (the 128k vocabulary takes a while to load). Without the npm
// vocabularies the test skips, or fails when GGML_REF_REQUIRED=1.
func model(t testing.TB, name string) *vocabModel {
	t.Helper()
	modelOnce[name].Do(func() {
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
		c := genmodel.Config{Vocab: name, Type: quant.Q8_0, Embd: 64, Layers: 1, Heads: 2, KVHeads: 1, FF: 64, Tied: true}
		if err := genmodel.WriteFile(p, c); err != nil {
			modelErr[name] = err
			return
		}
		f, err := gguf.Open(p)
		if err != nil {
			modelErr[name] = err
			return
		}
		defer f.Close()
		tok, err := FromGGUF(f)
		if err != nil {
			modelErr[name] = err
			return
		}
		models[name] = &vocabModel{path: p, tok: tok}
	})
	if err := modelErr[name]; err != nil {
		if errors.Is(err, npmvocab.ErrMissing) && os.Getenv("GGML_REF_REQUIRED") != "1" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return models[name]
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
