package modelcache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GGML_MODELS_CACHE", dir)
	m := Model{Name: "tiny", File: "tiny.gguf", Size: 4}
	if _, err := m.Path(); !errors.Is(err, ErrMissing) {
		t.Fatalf("absent file: %v, want ErrMissing", err)
	}
	p := filepath.Join(dir, m.File)
	if err := os.WriteFile(p, []byte("GGU"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Path(); !errors.Is(err, ErrMissing) {
		t.Fatalf("short file: %v, want ErrMissing", err)
	}
	if err := os.WriteFile(p, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := m.Path()
	if err != nil || got != p {
		t.Fatalf("Path() = %q, %v; want %q", got, err, p)
	}
}
