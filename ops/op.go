// Package ops defines ggml's operations: the Op, UnaryOp and GluOp
// enumerations with ggml 0.25.1's numeric values and names, and the layout
// of each operation's parameters in a tensor's [16]int32 op_params, with
// typed accessors so no caller indexes them by hand.
package ops

import (
	"errors"
	"fmt"
	"strings"
)

// Op is a tensor operation, numbered as ggml's enum ggml_op.
type Op int32

// UnaryOp is the element-wise function of a UNARY tensor, numbered as
// ggml's enum ggml_unary_op.
type UnaryOp int32

// GluOp is the gated linear unit of a GLU tensor, numbered as ggml's enum
// ggml_glu_op.
type GluOp int32

// ErrUnknown reports an operation name or number ggml does not define.
var ErrUnknown = errors.New("ops: unknown operation")

// Valid reports whether o is one of ggml's operations.
func (o Op) Valid() bool { return o >= 0 && o < OpCount }

// String returns ggml's name ("ADD", "MUL_MAT"), or "Op(N)" if o is not valid.
func (o Op) String() string {
	if !o.Valid() {
		return fmt.Sprintf("Op(%d)", int32(o))
	}
	return opNames[o]
}

// Symbol returns ggml's short description of o ("x+y", "X*Y"), as ggml_op_symbol.
func (o Op) Symbol() string {
	if !o.Valid() {
		return o.String()
	}
	return opSymbols[o]
}

// Valid reports whether u is one of ggml's unary operations.
func (u UnaryOp) Valid() bool { return u >= 0 && u < UnaryOpCount }

// String returns ggml's name ("GELU"), or "UnaryOp(N)" if u is not valid.
func (u UnaryOp) String() string {
	if !u.Valid() {
		return fmt.Sprintf("UnaryOp(%d)", int32(u))
	}
	return unaryNames[u]
}

// Valid reports whether g is one of ggml's gated linear units.
func (g GluOp) Valid() bool { return g >= 0 && g < GluOpCount }

// String returns ggml's name ("SWIGLU"), or "GluOp(N)" if g is not valid.
func (g GluOp) String() string {
	if !g.Valid() {
		return fmt.Sprintf("GluOp(%d)", int32(g))
	}
	return gluNames[g]
}

// ParseOp returns the operation named name (ggml's name, any case).
func ParseOp(name string) (Op, error) {
	for i, n := range opNames {
		if strings.EqualFold(n, name) {
			return Op(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknown, name)
}

// ParseUnaryOp returns the unary operation named name (any case).
func ParseUnaryOp(name string) (UnaryOp, error) {
	for i, n := range unaryNames {
		if strings.EqualFold(n, name) {
			return UnaryOp(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unary %q", ErrUnknown, name)
}

// ParseGluOp returns the gated linear unit named name (any case).
func ParseGluOp(name string) (GluOp, error) {
	for i, n := range gluNames {
		if strings.EqualFold(n, name) {
			return GluOp(i), nil
		}
	}
	return 0, fmt.Errorf("%w: glu %q", ErrUnknown, name)
}

// IsView reports whether o's result is a view of its source's memory
// (VIEW, RESHAPE, PERMUTE, TRANSPOSE): nothing is computed, and a backend
// skips such nodes, as ggml's do (ggml_op_is_empty without NONE).
func (o Op) IsView() bool {
	switch o {
	case View, Reshape, Permute, Transpose:
		return true
	}
	return false
}
