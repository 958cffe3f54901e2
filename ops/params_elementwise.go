package ops

// Parameter layouts of the element-wise operations, as ggml.c writes them.

// ScaleParams are SCALE's parameters: the result is x*Scale + Bias.
type ScaleParams struct {
	Scale, Bias float32
}

// Params lays out p as ggml_scale_impl does: float slots 0 and 1.
func (p ScaleParams) Params() Params {
	var q Params
	q.SetF32(0, p.Scale)
	q.SetF32(1, p.Bias)
	return q
}

// ScaleParamsOf reads SCALE's parameters.
func ScaleParamsOf(p Params) ScaleParams { return ScaleParams{Scale: p.F32(0), Bias: p.F32(1)} }

// ClampParams are CLAMP's bounds.
type ClampParams struct {
	Min, Max float32
}

// Params lays out p as ggml_clamp does: float slots 0 and 1.
func (p ClampParams) Params() Params {
	var q Params
	q.SetF32(0, p.Min)
	q.SetF32(1, p.Max)
	return q
}

// ClampParamsOf reads CLAMP's bounds.
func ClampParamsOf(p Params) ClampParams { return ClampParams{Min: p.F32(0), Max: p.F32(1)} }

// LeakyReLUParams are LEAKY_RELU's parameters.
type LeakyReLUParams struct {
	NegativeSlope float32
}

// Params lays out p as ggml_leaky_relu does: float slot 0.
func (p LeakyReLUParams) Params() Params {
	var q Params
	q.SetF32(0, p.NegativeSlope)
	return q
}

// LeakyReLUParamsOf reads LEAKY_RELU's parameters.
func LeakyReLUParamsOf(p Params) LeakyReLUParams { return LeakyReLUParams{NegativeSlope: p.F32(0)} }

// FillParams are FILL's parameters: every element becomes C.
type FillParams struct {
	C float32
}

// Params lays out p as ggml_fill does: float slot 0.
func (p FillParams) Params() Params {
	var q Params
	q.SetF32(0, p.C)
	return q
}

// FillParamsOf reads FILL's parameters.
func FillParamsOf(p Params) FillParams { return FillParams{C: p.F32(0)} }

// TriType selects the triangle TRI keeps, numbered as ggml's enum
// ggml_tri_type. Element (i0, i1) is kept when i0 compares to the row
// index i1 as the name says (UPPER: i0 > i1), and zeroed otherwise.
type TriType int32

// The triangles of TRI.
const (
	TriUpperDiag TriType = 0
	TriUpper     TriType = 1
	TriLowerDiag TriType = 2
	TriLower     TriType = 3
)

// Valid reports whether t is one of ggml's triangle types.
func (t TriType) Valid() bool { return t >= TriUpperDiag && t <= TriLower }

// Keep reports whether TRI of type t keeps the element in column i0 of row i1.
func (t TriType) Keep(i0, i1 int64) bool {
	switch t {
	case TriUpperDiag:
		return i0 >= i1
	case TriUpper:
		return i0 > i1
	case TriLowerDiag:
		return i0 <= i1
	case TriLower:
		return i0 < i1
	}
	return false
}

// TriParams are TRI's parameters.
type TriParams struct {
	Type TriType
}

// Params lays out p as ggml_tri does: int slot 0.
func (p TriParams) Params() Params {
	var q Params
	q.SetI32(0, int32(p.Type))
	return q
}

// TriParamsOf reads TRI's parameters.
func TriParamsOf(p Params) TriParams { return TriParams{Type: TriType(p.I32(0))} }

// XIELUParams are the parameters of UNARY XIELU as the kernel reads them.
// ggml_xielu stores derived values, not its arguments: AlphaN is
// beta + softplus(alpha_n) and AlphaP is softplus(alpha_p).
type XIELUParams struct {
	AlphaN, AlphaP, Beta, Eps float32
}

// Params lays out p as ggml_xielu does: the unary op in slot 0, then float
// slots 1 to 4.
func (p XIELUParams) Params() Params {
	var q Params
	q.SetUnary(UnaryXIELU)
	q.SetF32(1, p.AlphaN)
	q.SetF32(2, p.AlphaP)
	q.SetF32(3, p.Beta)
	q.SetF32(4, p.Eps)
	return q
}

// XIELUParamsOf reads XIELU's parameters.
func XIELUParamsOf(p Params) XIELUParams {
	return XIELUParams{AlphaN: p.F32(1), AlphaP: p.F32(2), Beta: p.F32(3), Eps: p.F32(4)}
}

// UnaryParams are the parameters of a UNARY tensor (all unary ops but
// XIELU, which has XIELUParams).
type UnaryParams struct {
	Op UnaryOp
}

// Params lays out p as ggml_unary_impl does: the unary op in slot 0.
func (p UnaryParams) Params() Params {
	var q Params
	q.SetUnary(p.Op)
	return q
}

// UnaryParamsOf reads a UNARY tensor's unary op.
func UnaryParamsOf(p Params) UnaryParams { return UnaryParams{Op: p.Unary()} }

// GLUParams are GLU's parameters. Swapped exchanges the halves of a fused
// input (the gate is the second half instead of the first). Alpha is read
// by SWIGLU_OAI only; Limit by SWIGLU_OAI and SWIGLU_CLAMP.
type GLUParams struct {
	Op      GluOp
	Swapped bool
	Alpha   float32
	Limit   float32
}

// Params lays out p as ggml_glu_impl, ggml_swiglu_oai and 0.25.1's
// ggml_swiglu_clamp do: the GLU op in slot 0, swapped in slot 1, alpha and
// limit in float slots 2 and 3.
func (p GLUParams) Params() Params {
	var q Params
	q.SetI32(0, int32(p.Op))
	q.SetBool(1, p.Swapped)
	q.SetF32(2, p.Alpha)
	q.SetF32(3, p.Limit)
	return q
}

// GLUParamsOf reads GLU's parameters.
func GLUParamsOf(p Params) GLUParams {
	return GLUParams{Op: GluOp(p.I32(0)), Swapped: p.Bool(1), Alpha: p.F32(2), Limit: p.F32(3)}
}
