package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The program runs and prints the product.
func Example_main() {
	main()
	// Output: [-2 -2]
}

// TestREADMEShowsThisProgram: README's "Use it as a library" section is
// this file, verbatim, so the program users copy is the one tested.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Use it as a library\n")
	require.True(t, ok, "README has no \"Use it as a library\" section")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the section has no Go block")
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok, "the Go block is not closed")
	require.Equal(t, string(src), block, "README's program differs from examples/library/main.go")
}
