package ops

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/dynlib"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
)

// libNames are ggml's name functions, called through purego, and their
// addresses for raw calls.
type libNames struct {
	opName, opSymbol, unaryName, gluName func(int32) string
	syms                                 map[string]uintptr
}

func loadNames(t *testing.T) libNames {
	t.Helper()
	lib, err := dynlib.Open(filepath.Join(reftest.Lib(t).Dir(), "libggml-base.so"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = lib.Close() })
	n := libNames{syms: map[string]uintptr{}}
	for _, f := range []struct {
		sym string
		fn  *func(int32) string
	}{
		{"ggml_op_name", &n.opName},
		{"ggml_op_symbol", &n.opSymbol},
		{"ggml_unary_op_name", &n.unaryName},
		{"ggml_glu_op_name", &n.gluName},
	} {
		p, err := lib.Sym(f.sym)
		require.NoError(t, err)
		purego.RegisterFunc(f.fn, p)
		n.syms[f.sym] = p
	}
	return n
}

// TestNamesMatchLibrary: every operation's number, name and symbol, and
// every unary and GLU operation's name, is the library's.
func TestNamesMatchLibrary(t *testing.T) {
	lib := loadNames(t)
	for o := Op(0); o < OpCount; o++ {
		require.Equal(t, lib.opName(int32(o)), o.String(), "name of op %d", o)
		require.Equal(t, lib.opSymbol(int32(o)), o.Symbol(), "symbol of op %d (%s)", o, o)
	}
	for u := UnaryOp(0); u < UnaryOpCount; u++ {
		require.Equal(t, lib.unaryName(int32(u)), u.String(), "unary op %d", u)
	}
	for g := GluOp(0); g < GluOpCount; g++ {
		require.Equal(t, lib.gluName(int32(g)), g.String(), "GLU op %d", g)
	}
	// The counts. The functions index their tables unchecked; in this
	// build the pointer just past each table is alignment padding, zero,
	// where a name would be if ggml had one more operation. (Read as a raw
	// pointer, never dereferenced.)
	for sym, count := range map[string]int32{
		"ggml_op_name": int32(OpCount), "ggml_op_symbol": int32(OpCount),
		"ggml_unary_op_name": int32(UnaryOpCount), "ggml_glu_op_name": int32(GluOpCount),
	} {
		r, _, _ := purego.SyscallN(lib.syms[sym], uintptr(count))
		require.Zero(t, r, "%s(%d) is a name: the count is too small", sym, count)
	}
}

func TestParseRoundTrip(t *testing.T) {
	for o := Op(0); o < OpCount; o++ {
		for _, s := range []string{o.String(), strings.ToLower(o.String()), strings.ToUpper(o.String())} {
			got, err := ParseOp(s)
			require.NoError(t, err)
			require.Equal(t, o, got)
		}
	}
	for u := UnaryOp(0); u < UnaryOpCount; u++ {
		got, err := ParseUnaryOp(strings.ToLower(u.String()))
		require.NoError(t, err)
		require.Equal(t, u, got)
	}
	for g := GluOp(0); g < GluOpCount; g++ {
		got, err := ParseGluOp(strings.ToLower(g.String()))
		require.NoError(t, err)
		require.Equal(t, g, got)
	}
}

// TestNamesUnique: parsing could not round-trip otherwise.
func TestNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for o := Op(0); o < OpCount; o++ {
		k := strings.ToUpper(o.String())
		require.False(t, seen[k], "%s twice", k)
		seen[k] = true
	}
	seen = map[string]bool{}
	for u := UnaryOp(0); u < UnaryOpCount; u++ {
		require.False(t, seen[u.String()])
		seen[u.String()] = true
	}
	seen = map[string]bool{}
	for g := GluOp(0); g < GluOpCount; g++ {
		require.False(t, seen[g.String()])
		seen[g.String()] = true
	}
}

func TestInvalid(t *testing.T) {
	for _, o := range []Op{-1, OpCount, OpCount + 1, 1 << 30} {
		require.False(t, o.Valid())
		require.True(t, strings.HasPrefix(o.String(), "Op("), o.String())
		require.Equal(t, o.String(), o.Symbol())
	}
	for _, u := range []UnaryOp{-1, UnaryOpCount} {
		require.False(t, u.Valid())
		require.True(t, strings.HasPrefix(u.String(), "UnaryOp("))
	}
	for _, g := range []GluOp{-1, GluOpCount} {
		require.False(t, g.Valid())
		require.True(t, strings.HasPrefix(g.String(), "GluOp("))
	}
	for _, s := range []string{"", "ADDX", "Op(2)", " ADD", "GELU", "add,"} {
		_, err := ParseOp(s)
		require.ErrorIs(t, err, ErrUnknown, "%q", s)
	}
	for _, s := range []string{"", "ADD", "SWIGLU"} {
		_, err := ParseUnaryOp(s)
		require.ErrorIs(t, err, ErrUnknown, "%q", s)
	}
	for _, s := range []string{"", "GELU", "SWIGLU_"} {
		_, err := ParseGluOp(s)
		require.True(t, errors.Is(err, ErrUnknown), "%q", s)
	}
}

func TestParams(t *testing.T) {
	var p Params
	p.SetF32(3, -1.5)
	require.Equal(t, float32(-1.5), p.F32(3))
	p.SetI32(4, -7)
	require.Equal(t, int32(-7), p.I32(4))
	p.SetBool(5, true)
	require.True(t, p.Bool(5))
	p.SetBool(5, false)
	require.False(t, p.Bool(5))
	require.Zero(t, p[5])
	p.SetUnary(UnaryGELU)
	require.Equal(t, UnaryGELU, p.Unary())
	require.EqualValues(t, 8, p[0])
}

// FuzzParseOp: parsing never panics, and what parses prints back to the
// same name, ignoring case.
func FuzzParseOp(f *testing.F) {
	for _, s := range []string{"ADD", "mul_mat", "Im2Col", "", "\xff", "NONE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if o, err := ParseOp(s); err == nil {
			if !o.Valid() || !strings.EqualFold(o.String(), s) {
				t.Fatalf("ParseOp(%q) = %v", s, o)
			}
		} else if !errors.Is(err, ErrUnknown) {
			t.Fatalf("ParseOp(%q): %v", s, err)
		}
		if u, err := ParseUnaryOp(s); err == nil && (!u.Valid() || !strings.EqualFold(u.String(), s)) {
			t.Fatalf("ParseUnaryOp(%q) = %v", s, u)
		}
		if g, err := ParseGluOp(s); err == nil && (!g.Valid() || !strings.EqualFold(g.String(), s)) {
			t.Fatalf("ParseGluOp(%q) = %v", s, g)
		}
	})
}

func TestIsView(t *testing.T) {
	var views []Op
	for o := range OpCount {
		if o.IsView() {
			views = append(views, o)
		}
	}
	require.Equal(t, []Op{Reshape, View, Permute, Transpose}, views)
	require.False(t, Op(-1).IsView())
}
