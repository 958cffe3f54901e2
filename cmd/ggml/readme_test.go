package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// listed collects the commands and bench benchmarks a text names in the
// form "ggml NAME" or "ggml bench A|B|C" matched by re (group 1: the name
// or names after ggml).
func listed(text string, re *regexp.Regexp) (cmds, benches []string) {
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		name, rest, _ := strings.Cut(m[1], " ")
		if !slices.Contains(cmds, name) {
			cmds = append(cmds, name)
		}
		if name == "bench" {
			benches = append(benches, strings.Split(rest, "|")...)
		}
	}
	slices.Sort(cmds)
	slices.Sort(benches)
	return cmds, slices.Compact(benches)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestDocumentedCommands: README's list of commands, docs/commands.md's
// entries and this package's doc comment name exactly the commands and
// benchmarks the tool has.
func TestDocumentedCommands(t *testing.T) {
	wantCmds, wantBench := sortedKeys(commands), sortedKeys(benchmarks)
	read := func(path string) string {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(b)
	}

	readme := read(filepath.Join("..", "..", "README.md"))
	m := regexp.MustCompile("`go run ./cmd/ggml help` lists the other commands \\(([^)]*)\\)").FindStringSubmatch(readme)
	require.NotNil(t, m, "README lists the commands after `go run ./cmd/ggml help`")
	got := append(strings.Split(strings.Join(strings.Fields(m[1]), " "), ", "), "run")
	slices.Sort(got)
	require.Equal(t, wantCmds, got, "README's command list")

	// An entry is a bullet "- `ggml NAME [flags]`".
	cmds, benches := listed(read(filepath.Join("..", "..", "docs", "commands.md")), regexp.MustCompile("(?m)^- `ggml ([a-z-]+(?: [a-z|]+)?)"))
	require.Equal(t, wantCmds, cmds, "docs/commands.md's entries")
	require.Equal(t, wantBench, benches, "docs/commands.md's bench entries")

	// The doc comment: lines "//	ggml NAME ...".
	cmds, benches = listed(read("main.go"), regexp.MustCompile("(?m)^//\tggml ([a-z-]+(?: [a-z|]+)?)"))
	require.Equal(t, wantCmds, cmds, "the doc comment of package main")
	require.Equal(t, wantBench, benches, "the doc comment's bench lines")
}
