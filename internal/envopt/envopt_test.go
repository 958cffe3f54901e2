package envopt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type opts struct {
	S    string
	N, A int
	B, C bool
}

var table = &Table[opts]{Device: "dev", Prefix: "GGML_DEV_", Vars: []Var[opts]{
	{Name: "S", Set: String(func(o *opts) *string { return &o.S })},
	{Name: "N", Set: Int(func(o *opts) *int { return &o.N }, 1, 8)},
	{Name: "A", Set: AtoiInt(func(o *opts) *int { return &o.A })},
	{Name: "B", Set: Bool(func(o *opts) *bool { return &o.B })},
	{Name: "C", Set: AtoiBool(func(o *opts) *bool { return &o.C })},
	{Name: "W", Set: func(o *opts, v string) error { return Warnf("W %q is ignored", v) }},
}}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRead(t *testing.T) {
	var o opts
	w, err := table.Read(&o, env(map[string]string{"GGML_DEV_S": "x", "GGML_DEV_N": " 0x4 ", "GGML_DEV_A": " 12ab",
		"GGML_DEV_B": "1", "GGML_DEV_C": "yes", "GGML_DEV_W": "v"}))
	require.NoError(t, err)
	require.Equal(t, opts{S: "x", N: 4, A: 12, B: true, C: false}, o, `atoi("yes") is 0, as in C`)
	require.Equal(t, []string{`W "v" is ignored`}, w)

	o = opts{}
	_, err = table.Read(&o, env(map[string]string{"GGML_DEV_S": ""}))
	require.NoError(t, err)
	require.Empty(t, o.S, "an empty value is unset")
}

func TestReadErrors(t *testing.T) {
	var o opts
	_, err := table.Read(&o, env(map[string]string{"GGML_DEV_N": "9", "GGML_DEV_B": "on"}))
	require.EqualError(t, err, `dev: GGML_DEV_N="9": want a whole number from 1 to 8 (and 1 more: dev: GGML_DEV_B="on": want 0 (off) or 1 (on))`)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, Error{Device: "dev", Var: "GGML_DEV_N", Value: "9", Accepted: "want a whole number from 1 to 8"}, *e)
}

func TestApply(t *testing.T) {
	var o opts
	_, err := table.Apply(&o, map[string]string{"n": "3", "GGML_DEV_s": "y"})
	require.NoError(t, err)
	require.Equal(t, opts{S: "y", N: 3}, o)
	_, err = table.Apply(&o, map[string]string{"typo": "1"})
	require.EqualError(t, err, `dev: unknown device parameter "typo" (given typo="1"; the parameters are the GGML_DEV_* variables without the prefix: s, n, a, b, c, w)`)
	_, err = table.Apply(&o, map[string]string{"n": "x"})
	require.EqualError(t, err, `dev: GGML_DEV_N="x": want a whole number from 1 to 8`)
	require.Equal(t, []string{"GGML_DEV_S", "GGML_DEV_N", "GGML_DEV_A", "GGML_DEV_B", "GGML_DEV_C", "GGML_DEV_W"}, table.Names())
}

func TestAtoi(t *testing.T) {
	for s, want := range map[string]int{"": 0, "1": 1, " 12abc": 12, "-3": -3, "+4": 4, "x1": 0, "true": 0, "0x10": 0} {
		require.Equal(t, want, Atoi(s), s)
	}
}

func FuzzRead(f *testing.F) {
	f.Add("N", "0x7")
	f.Add("B", "-0")
	f.Add("A", "+99999999999999")
	f.Fuzz(func(t *testing.T, name, val string) {
		var o opts
		_, err := table.Read(&o, env(map[string]string{"GGML_DEV_" + name: val}))
		if err == nil && name == "N" && val != "" {
			require.True(t, o.N >= 1 && o.N <= 8)
		}
		_, _ = table.Apply(&o, map[string]string{name: val})
	})
}
