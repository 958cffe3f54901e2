package layers

import (
	"go/build"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ggml-go/ggml"

// order lists the layers from the bottom up; a package may import its own
// layer and the ones below. A pattern is a package path relative to the
// module root; "x/..." is x and everything under it. The library (every
// layer up to model) never links the test kit: oracles, doubles' loaders
// and fixtures live in internal/testkit, which may import any library
// package, and the tools at the top may import everything.
var order = []struct {
	name string
	pkgs []string
}{
	{"base", []string{"ops", "internal/cpuid", "internal/sentinel", "internal/dynlib", "internal/mmap", "internal/envopt", "internal/modelcache"}},
	{"quant", []string{"quant"}},
	{"graph and file format", []string{"graph", "gguf"}},
	{"buffers and tokenizer", []string{"buffer", "tokenizer"}},
	{"backend", []string{"backend"}},
	{"device support", []string{"internal/devlib", "devices/hexagon/internal/..."}},
	{"devices", []string{"devices/cpu", "devices/openvino", "devices/hexagon", "devices/rpc"}},
	{"model", []string{"model"}},
	{"test kit", []string{"internal/testkit/..."}},
	{"tools", []string{"bench", "cmd/...", "examples/...", "quant/internal/...", "internal/layers"}},
}

// layerOf is the index in order of the package at rel (relative to the
// module root), or -1 if no layer lists it. The longest pattern wins, so
// devices/hexagon/internal/htp is device support although devices/hexagon
// is a device.
func layerOf(rel string) int {
	best, bestLen := -1, -1
	for i, l := range order {
		for _, p := range l.pkgs {
			base, tree := strings.CutSuffix(p, "/...")
			if rel == base || tree && strings.HasPrefix(rel, base+"/") {
				if len(base) > bestLen {
					best, bestLen = i, len(base)
				}
			}
		}
	}
	return best
}

// contexts are the targets whose files are checked: build tags (an
// architecture's assembly, purego, windows-only files) can import
// differently.
var contexts = []struct {
	goos, goarch string
	tags         []string
}{
	{"linux", "amd64", nil},
	{"linux", "arm64", nil},
	{"linux", "riscv64", nil},
	{"linux", "amd64", []string{"purego"}},
	{"windows", "amd64", nil},
	{"darwin", "arm64", nil},
}

// moduleRoot is the directory holding go.mod, two levels above this file.
func moduleRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("runtime.Caller found no file for the layering test")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// packageDirs are the module's directories holding Go files, relative to
// root, skipping testdata and hidden folders as the go command does.
func packageDirs(t *testing.T, root string) []string {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module at %s: %v", root, err)
	}
	return dirs
}

// TestLayers fails on an import that points up the layer order, and on a
// package that no layer lists (a new package must be given its place).
func TestLayers(t *testing.T) {
	root := moduleRoot(t)
	dirs := packageDirs(t, root)
	if len(dirs) < 10 {
		t.Fatalf("found only %d package directories under %s: the walk is broken", len(dirs), root)
	}
	checked := 0
	reported := map[string]bool{} // one error per import, not per target
	for _, c := range contexts {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH, ctx.BuildTags, ctx.CgoEnabled = c.goos, c.goarch, c.tags, false
		for _, rel := range dirs {
			pkg, err := ctx.ImportDir(filepath.Join(root, filepath.FromSlash(rel)), 0)
			if _, ok := err.(*build.NoGoError); ok {
				continue // only test files, or none for this target
			}
			if err != nil {
				t.Fatalf("%s/%s on %s/%s: %v", module, rel, c.goos, c.goarch, err)
			}
			from := layerOf(rel)
			if from < 0 {
				if reported[rel] {
					continue
				}
				reported[rel] = true
				t.Errorf("package %s is in no layer: add it to order in internal/layers/layers_test.go (and to docs/architecture.md)", rel)
				continue
			}
			for _, imp := range pkg.Imports {
				dep, ok := strings.CutPrefix(imp, module+"/")
				if !ok {
					continue
				}
				checked++
				if to := layerOf(dep); to > from && !reported[rel+" "+dep] {
					reported[rel+" "+dep] = true
					t.Errorf("%s (layer %q) imports %s (layer %q, above it) on %s/%s", rel, order[from].name, dep, order[to].name, c.goos, c.goarch)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no module-internal import was checked: the test checks nothing")
	}
	t.Logf("%d module-internal imports checked over %d directories and %d targets", checked, len(dirs), len(contexts))
}
