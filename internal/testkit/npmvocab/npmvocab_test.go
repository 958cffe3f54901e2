package npmvocab

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// load returns the vocabulary, skipping without the packages unless
// GGML_REF_REQUIRED=1.
func load(t *testing.T, name string) *Vocab {
	v, err := Load(name)
	if errors.Is(err, ErrMissing) && os.Getenv("GGML_REF_REQUIRED") != "1" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLoad(t *testing.T) {
	spm := load(t, "spm")
	if len(spm.Tokens) != 32000 || spm.Tokens[1] != "<s>" || spm.Types[3] != TypeByte || spm.Types[258] != TypeByte || spm.Types[259] != TypeNormal {
		t.Fatal("spm tokens or types")
	}
	// The whitespace runs tie at the lowest score; other merge results
	// score in id order.
	if spm.Scores[259] != tiedScore || spm.Scores[268] != tiedScore || spm.Scores[260] <= spm.Scores[261] {
		t.Fatalf("spm scores %v", spm.Scores[259:270])
	}
	ties := 0
	for _, s := range spm.Scores {
		if s == tiedScore {
			ties++
		}
	}
	if ties != 15 {
		t.Fatalf("%d tied scores, want the 15 runs of 2-16 ▁", ties)
	}
	bpe := load(t, "bpe")
	if len(bpe.Tokens) != 128256 || len(bpe.Merges) != 280147 || bpe.Tokens[128009] != "<|eot_id|>" ||
		bpe.Tokens[128255] != "<|reserved_special_token_247|>" || bpe.Types[128000] != TypeControl || bpe.Types[127999] != TypeNormal {
		t.Fatal("bpe tokens, merges or types")
	}
	if bpe.Merges[0] != "Ġ Ġ" || strings.Count(bpe.Merges[1000], " ") != 1 {
		t.Fatalf("merges %q", bpe.Merges[:2])
	}
	kvs := bpe.KVs()
	if kvs[0].Key != "tokenizer.ggml.model" || len(kvs) != 9 { // model, pre, tokens, token_type, merges, bos, eos, add_bos, add_eos
		t.Fatalf("%d pairs", len(kvs))
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load("wordpiece"); err == nil {
		t.Fatal("unknown vocabulary accepted")
	}
	t.Setenv("GGML_VOCAB_CACHE", t.TempDir())
	if _, err := Load("spm"); !errors.Is(err, ErrMissing) {
		t.Fatalf("empty cache: %v", err)
	}
	dir := os.Getenv("GGML_VOCAB_CACHE")
	p := dir + "/" + spmFile
	if err := os.MkdirAll(p[:strings.LastIndexByte(p, '/')], 0o755); err != nil {
		t.Fatal(err)
	}
	for _, js := range []string{"nothing here", `const llama_vocab_base64 = "!!"`, `const llama_vocab_base64 = "YQ=="
const llama_merges_binary = ""`} {
		if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load("spm"); err == nil || errors.Is(err, ErrMissing) {
			t.Fatalf("%q: %v", js, err)
		}
	}
}
