package ops

import "fmt"

// NormParams are the parameters of NORM, RMS_NORM, RMS_NORM_BACK and
// L2_NORM: the epsilon added to the variance (or mean square) before the
// square root, or, for L2_NORM, the floor of the norm. ggml stores it as a
// float in slot 0.
type NormParams struct {
	Eps float32
}

// Params returns the op_params layout.
func (n NormParams) Params() Params {
	var p Params
	p.SetF32(0, n.Eps)
	return p
}

// NormParamsOf reads the parameters of a NORM, RMS_NORM or L2_NORM tensor.
func NormParamsOf(p Params) NormParams { return NormParams{Eps: p.F32(0)} }

// GroupNormParams are GROUP_NORM's parameters: the number of groups the
// channels (dimension 2) are split into, in slot 0, and epsilon as a float
// in slot 1.
type GroupNormParams struct {
	Groups int32
	Eps    float32
}

// Params returns the op_params layout.
func (g GroupNormParams) Params() Params {
	var p Params
	p.SetI32(0, g.Groups)
	p.SetF32(1, g.Eps)
	return p
}

// GroupNormParamsOf reads the parameters of a GROUP_NORM tensor.
func GroupNormParamsOf(p Params) GroupNormParams {
	return GroupNormParams{Groups: p.I32(0), Eps: p.F32(1)}
}

// SoftMaxParams are SOFT_MAX's (and SOFT_MAX_BACK's) parameters: the
// factor the logits are multiplied by, in slot 0, and the ALiBi maximum
// bias, in slot 1 (0 disables ALiBi), both floats.
type SoftMaxParams struct {
	Scale   float32
	MaxBias float32
}

// Params returns the op_params layout.
func (s SoftMaxParams) Params() Params {
	var p Params
	p.SetF32(0, s.Scale)
	p.SetF32(1, s.MaxBias)
	return p
}

// SoftMaxParamsOf reads the parameters of a SOFT_MAX tensor.
func SoftMaxParamsOf(p Params) SoftMaxParams {
	return SoftMaxParams{Scale: p.F32(0), MaxBias: p.F32(1)}
}

// SortOrder is the direction of ARGSORT, numbered as ggml's enum
// ggml_sort_order.
type SortOrder int32

// Sort orders.
const (
	SortAsc  SortOrder = 0
	SortDesc SortOrder = 1
)

// Valid reports whether o is one of ggml's sort orders.
func (o SortOrder) Valid() bool { return o == SortAsc || o == SortDesc }

// String returns "ASC" or "DESC".
func (o SortOrder) String() string {
	switch o {
	case SortAsc:
		return "ASC"
	case SortDesc:
		return "DESC"
	}
	return fmt.Sprintf("SortOrder(%d)", int32(o))
}

// ArgsortParams are ARGSORT's parameters: the sort order in slot 0.
type ArgsortParams struct {
	Order SortOrder
}

// Params returns the op_params layout.
func (a ArgsortParams) Params() Params {
	var p Params
	p.SetI32(0, int32(a.Order))
	return p
}

// ArgsortParamsOf reads the parameters of an ARGSORT tensor.
func ArgsortParamsOf(p Params) ArgsortParams { return ArgsortParams{Order: SortOrder(p.I32(0))} }
