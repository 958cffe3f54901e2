package ops

// Prec is the precision a backend should compute with, ggml's enum
// ggml_prec. The CPU backend always computes in float32 and ignores it;
// other backends may otherwise accumulate in half precision.
type Prec int32

// Precisions.
const (
	PrecDefault Prec = 0
	PrecF32     Prec = 10
)

// OpHint tells a backend something about an operation's inputs that lets
// it take a shortcut, ggml's enum ggml_op_hint.
type OpHint int32

// Hints.
const (
	HintNone OpHint = 0
	// HintSrc0IsHadamard promises that src0 of a MUL_MAT is the n x n
	// Sylvester-Hadamard matrix scaled by 1/sqrt(n); ggml's CPU backend
	// then computes a fast Walsh-Hadamard transform of src1 and never
	// reads src0.
	HintSrc0IsHadamard OpHint = 1
)

// MulMatParams are MUL_MAT's op_params: the precision in slot 0 (set by
// ggml_mul_mat_set_prec) and the hint in slot 1 (ggml_mul_mat_set_hint).
// MUL_MAT_ID and OUT_PROD have no parameters.
type MulMatParams struct {
	Prec Prec
	Hint OpHint
}

// Params lays p out as ggml does.
func (p MulMatParams) Params() Params {
	var out Params
	out.SetI32(0, int32(p.Prec))
	out.SetI32(1, int32(p.Hint))
	return out
}

// MulMatParamsOf reads a MUL_MAT tensor's parameters.
func MulMatParamsOf(p Params) MulMatParams {
	return MulMatParams{Prec: Prec(p.I32(0)), Hint: OpHint(p.I32(1))}
}
