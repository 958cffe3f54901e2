package sentinel

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// libraryDirs are the packages whose errors reach programs.
var libraryDirs = []string{"quant", "ops", "graph", "buffer", "backend", "devices", "internal/dynlib", "internal/devlib", "internal/testkit/ggmlref"}

// TestErrorfKeepsCauses: no fmt.Errorf of the library formats an error
// with %v, which would cut it from errors.Is and errors.As; %w keeps it.
// An argument counts as an error when it is named err or ends in err/Err,
// which is how the code names them.
func TestErrorfKeepsCauses(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range libraryDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			checked++
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isErrorf(call) || len(call.Args) < 2 {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok {
					return true
				}
				format, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for i, verb := range verbs(format) {
					if i+1 >= len(call.Args) || verb != 'v' {
						continue
					}
					if id, ok := call.Args[i+1].(*ast.Ident); ok && looksLikeError(id.Name) {
						t.Errorf("%s: %%v of %s drops the cause; use %%w", fset.Position(call.Pos()), id.Name)
					}
				}
				return true
			})
			return nil
		})
		require.NoError(t, err)
	}
	assert.Greater(t, checked, 50, "the walk found the library's files")
}

func isErrorf(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "fmt" && sel.Sel.Name == "Errorf"
}

func looksLikeError(name string) bool {
	return name == "err" || strings.HasSuffix(name, "err") || strings.HasSuffix(name, "Err")
}

// verbs returns the verb letter of each argument-consuming directive of a
// format, in order (flags, widths and %% skipped).
func verbs(format string) []rune {
	var out []rune
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.ContainsRune("+-# 0123456789.*[]", rune(format[i])) {
			i++
		}
		if i < len(format) && format[i] != '%' {
			out = append(out, rune(format[i]))
		}
	}
	return out
}
