package optest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ggml-go/ggml/quant"
)

// Desc is a case description parsed from test-backend-ops' "k=v,k=[a,b]"
// form, as the op_params column of cpu_support.csv holds it.
type Desc map[string]string

// ParseDesc splits "type=f16,ne_a=[128,2,2,2],v=0" into keys and values;
// brackets may hold commas, and a bare word k reads as k=1.
func ParseDesc(s string) (Desc, error) {
	d := Desc{}
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '[', '(', '{':
				depth++
				continue
			case ']', ')', '}':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		part := s[start:i]
		start = i + 1
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			// A bare word is a flag that is set (test_glu_split ends
			// its description with ",split").
			v = "1"
		}
		if k == "" {
			return nil, fmt.Errorf("optest: %q: %q has no key", s, part)
		}
		d[k] = v
	}
	if depth != 0 {
		return nil, fmt.Errorf("optest: %q: unbalanced brackets", s)
	}
	return d, nil
}

func (d Desc) get(k string) (string, error) {
	v, ok := d[k]
	if !ok {
		return "", fmt.Errorf("optest: description has no %q", k)
	}
	return v, nil
}

// Type parses a type name ("f32", "q4_0").
func (d Desc) Type(k string) (quant.Type, error) {
	v, err := d.get(k)
	if err != nil {
		return 0, err
	}
	return quant.ParseType(v)
}

// Int parses an integer.
func (d Desc) Int(k string) (int64, error) {
	v, err := d.get(k)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// Float parses a float.
func (d Desc) Float(k string) (float64, error) {
	v, err := d.get(k)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(v, 64)
}

// Bool parses 0/1 or true/false.
func (d Desc) Bool(k string) (bool, error) {
	v, err := d.get(k)
	if err != nil {
		return false, err
	}
	switch v {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, fmt.Errorf("optest: %s=%q is not a boolean", k, v)
}

// Ints parses a bracketed list "[a,b,c]" of integers.
func (d Desc) Ints(k string) ([]int64, error) {
	v, err := d.get(k)
	if err != nil {
		return nil, err
	}
	v = strings.TrimSpace(v)
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return nil, fmt.Errorf("optest: %s=%q is not a [list]", k, v)
	}
	var out []int64
	for _, f := range strings.Split(v[1:len(v)-1], ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("optest: %s: %v", k, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// Ne parses a shape "[a,b,c,d]" (missing dimensions are 1).
func (d Desc) Ne(k string) ([4]int64, error) {
	l, err := d.Ints(k)
	if err != nil {
		return [4]int64{}, err
	}
	if len(l) > 4 {
		return [4]int64{}, fmt.Errorf("optest: %s has %d dimensions", k, len(l))
	}
	out := [4]int64{1, 1, 1, 1}
	copy(out[:], l)
	return out, nil
}

// described maps an operation name to the function that builds a case from
// its cpu_support.csv description.
var described = map[string]func(op string, d Desc) (Case, error){}

// RegisterDescribed registers how cases of the named operations (as
// test-backend-ops names them: "ADD", "GELU", "SWIGLU") are built from a
// cpu_support.csv description. The support test uses it to ask our CPU
// device's supports-op about every case ggml's tool lists.
func RegisterDescribed(names []string, fromDesc func(op string, d Desc) (Case, error)) {
	for _, n := range names {
		described[n] = fromDesc
	}
}

// FromDesc builds the case of operation op described by desc, or reports
// that no family describes op.
func FromDesc(op, desc string) (Case, error) {
	f, ok := described[op]
	if !ok {
		return Case{}, fmt.Errorf("optest: no family builds %s cases from descriptions", op)
	}
	d, err := ParseDesc(desc)
	if err != nil {
		return Case{}, err
	}
	return f(op, d)
}

// descReader reads a description's fields, keeping the first error.
type descReader struct {
	d   Desc
	err error
}

func (r *descReader) keep(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *descReader) dtype(k string) quant.Type {
	t, err := r.d.Type(k)
	r.keep(err)
	return t
}

func (r *descReader) num(k string) int {
	v, err := r.d.Int(k)
	r.keep(err)
	return int(v)
}

func (r *descReader) num64(k string) int64 {
	v, err := r.d.Int(k)
	r.keep(err)
	return v
}

func (r *descReader) float(k string) float32 {
	v, err := r.d.Float(k)
	r.keep(err)
	return float32(v)
}

func (r *descReader) flag(k string) bool {
	v, err := r.d.Bool(k)
	r.keep(err)
	return v
}

func (r *descReader) has(k string) bool { _, ok := r.d[k]; return ok }

// ints reads a list of exactly n integers.
func (r *descReader) ints(k string, n int) []int64 {
	v, err := r.d.Ints(k)
	if err == nil && len(v) != n {
		err = fmt.Errorf("optest: %s has %d values, want %d", k, len(v), n)
	}
	r.keep(err)
	if err != nil {
		return make([]int64, n)
	}
	return v
}

func (r *descReader) ne(k string) [4]int64 { return [4]int64(r.ints(k, 4)) }

func (r *descReader) perm(k string) [4]int {
	v := r.ints(k, 4)
	return [4]int{int(v[0]), int(v[1]), int(v[2]), int(v[3])}
}
