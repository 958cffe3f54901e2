// Package envopt reads a device's environment variables (GGML_OPENVINO_*,
// GGML_HEXAGON_*) into the Options struct Go callers can also fill
// directly. Each device lists its variables once, in a Table: the table
// reads the environment, applies device parameters ("OPENVINO0:device=GPU")
// with the same meaning, and names every variable the device reads, so a
// test can check each one. A value that cannot mean anything is an Error
// naming the variable, the value and what is accepted.
package envopt

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A Var is one variable, named without the table's prefix. Set applies a
// value that is set and not empty (the C backends treat an empty value as
// unset). It returns nil, a Warning when the value is tolerated the way
// the C backend tolerates it, or an error whose text says what is
// accepted ("want a whole number from 1 to 256"); the table adds the
// variable and the value.
type Var[O any] struct {
	Name string
	Set  func(o *O, v string) error
}

// A Table is the variables of one device, applied in order (a later
// variable may override what an earlier one set).
type Table[O any] struct {
	// Device starts every message ("openvino").
	Device string
	// Prefix starts every variable name ("GGML_OPENVINO_").
	Prefix string
	Vars   []Var[O]
}

// Error is a value a variable does not accept.
type Error struct {
	Device, Var, Value string
	// Accepted says what the variable accepts.
	Accepted string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s=%q: %s", e.Device, e.Var, e.Value, e.Accepted)
}

// Warning is what Set returns for a value it tolerated (each string one
// message); Table.Read hands the messages back instead of failing.
type Warning []string

func (w Warning) Error() string { return strings.Join(w, "; ") }

// Warnf is a Warning of one formatted message.
func Warnf(format string, a ...any) Warning { return Warning{fmt.Sprintf(format, a...)} }

// Names lists every variable of the table, with the prefix, in order.
func (t *Table[O]) Names() []string {
	names := make([]string, len(t.Vars))
	for i, v := range t.Vars {
		names[i] = t.Prefix + v.Name
	}
	return names
}

// Read applies every variable getenv reports set and not empty, in table
// order, and returns the warnings of tolerated values. Every rejected
// value is reported: the error is the first *Error, with the others
// named after it.
func (t *Table[O]) Read(o *O, getenv func(string) string) (warnings []string, err error) {
	var errs []error
	for _, v := range t.Vars {
		val := getenv(t.Prefix + v.Name)
		if val == "" {
			continue
		}
		w, e := t.set(o, v, val)
		warnings = append(warnings, w...)
		if e != nil {
			errs = append(errs, e)
		}
	}
	return warnings, joined(errs)
}

// Apply sets options from device parameters: the variable names without
// the prefix (the prefix is allowed too), in any case, with the
// variables' meaning, in sorted key order. An unknown key or a rejected
// value is an error; warnings are returned.
func (t *Table[O]) Apply(o *O, params map[string]string) (warnings []string, err error) {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(k)), t.Prefix)
		i := t.index(name)
		if i < 0 {
			return warnings, fmt.Errorf("%s: unknown device parameter %q (given %s=%q; the parameters are the %s* variables without the prefix: %s)",
				t.Device, k, k, params[k], t.Prefix, strings.Join(t.shortNames(), ", "))
		}
		w, e := t.set(o, t.Vars[i], params[k])
		warnings = append(warnings, w...)
		if e != nil {
			return warnings, e
		}
	}
	return warnings, nil
}

func (t *Table[O]) set(o *O, v Var[O], val string) (warnings []string, err error) {
	e := v.Set(o, val)
	var w Warning
	switch {
	case e == nil:
		return nil, nil
	case errors.As(e, &w):
		return w, nil
	}
	var ee *Error
	if errors.As(e, &ee) {
		return nil, e
	}
	return nil, &Error{Device: t.Device, Var: t.Prefix + v.Name, Value: val, Accepted: e.Error()}
}

func (t *Table[O]) index(name string) int {
	for i, v := range t.Vars {
		if v.Name == name {
			return i
		}
	}
	return -1
}

func (t *Table[O]) shortNames() []string {
	names := make([]string, len(t.Vars))
	for i, v := range t.Vars {
		names[i] = strings.ToLower(v.Name)
	}
	return names
}

func joined(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs)-1)
	for i, e := range errs[1:] {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%w (and %d more: %s)", errs[0], len(errs)-1, strings.Join(msgs, "; "))
}

// String stores the value as it is.
func String[O any](f func(*O) *string) func(*O, string) error {
	return func(o *O, v string) error { *f(o) = v; return nil }
}

// Int reads a whole number (decimal, or 0x hex as strtol base 0, blanks
// around it allowed) within [lo, hi]; blanks alone are unset.
func Int[O any](f func(*O) *int, lo, hi int) func(*O, string) error {
	return func(o *O, v string) error {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
		if err != nil || n < int64(lo) || n > int64(hi) {
			return fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		*f(o) = int(n)
		return nil
	}
}

// Bool reads a number: 0 is off, any other number on (the C backends'
// atoi != 0), anything else an error; blanks alone are unset.
func Bool[O any](f func(*O) *bool) func(*O, string) error {
	return func(o *O, v string) error {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
		if err != nil {
			return errors.New("want 0 (off) or 1 (on)")
		}
		*f(o) = n != 0
		return nil
	}
}

// AtoiBool is C's atoi(v) != 0, never an error: "1", " 2x", "+3" are on;
// "yes", "true" are off, as the C backend reads them.
func AtoiBool[O any](f func(*O) *bool) func(*O, string) error {
	return func(o *O, v string) error { *f(o) = Atoi(v) != 0; return nil }
}

// AtoiInt is C's atoi(v), never an error.
func AtoiInt[O any](f func(*O) *int) func(*O, string) error {
	return func(o *O, v string) error { *f(o) = Atoi(v); return nil }
}

// Atoi reads a leading decimal integer as C's atoi does: leading blanks,
// an optional sign, digits up to the first non-digit; 0 when there are
// none.
func Atoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' || s[i] == '\f') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n < 1<<30 {
			n = n*10 + int(s[i]-'0')
		}
	}
	if neg {
		return -n
	}
	return n
}
