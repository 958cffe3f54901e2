package ops

import "fmt"

// Op parameters of the copy, layout and indexing operations. REPEAT, CPY,
// DUP, CONT, GET_ROWS, SET_ROWS and DIAG have none.

// ConcatParams are CONCAT's parameters: the dimension the two sources are
// joined along (slot 0).
type ConcatParams struct {
	Dim int32
}

// Params lays p out as ggml_concat does.
func (p ConcatParams) Params() Params {
	var q Params
	q.SetI32(0, p.Dim)
	return q
}

// ConcatParamsOf reads CONCAT's parameters.
func ConcatParamsOf(q Params) ConcatParams { return ConcatParams{Dim: q.I32(0)} }

// SetParams are SET's parameters: the strides (in bytes) and byte offset
// with which the destination is viewed while the source is written into
// it, and whether the result is the destination itself. ggml stores the
// size_t arguments truncated to int32 (slots 0-3) and the flag in slot 4.
type SetParams struct {
	Nb1, Nb2, Nb3 int32
	Offset        int32
	Inplace       bool
}

// Params lays p out as ggml_set_impl does.
func (p SetParams) Params() Params {
	var q Params
	q.SetI32(0, p.Nb1)
	q.SetI32(1, p.Nb2)
	q.SetI32(2, p.Nb3)
	q.SetI32(3, p.Offset)
	q.SetBool(4, p.Inplace)
	return q
}

// SetParamsOf reads SET's parameters.
func SetParamsOf(q Params) SetParams {
	return SetParams{Nb1: q.I32(0), Nb2: q.I32(1), Nb3: q.I32(2), Offset: q.I32(3), Inplace: q.Bool(4)}
}

// PadParams are PAD's parameters: the padding before (LP) and after (RP)
// each dimension (slots 0-7, interleaved lp0, rp0, lp1, ...) and whether
// the padding wraps around the source instead of being zeros (slot 8).
type PadParams struct {
	LP, RP   [4]int32
	Circular bool
}

// Params lays p out as ggml_pad_ext does.
func (p PadParams) Params() Params {
	var q Params
	for i := range 4 {
		q.SetI32(2*i, p.LP[i])
		q.SetI32(2*i+1, p.RP[i])
	}
	q.SetBool(8, p.Circular)
	return q
}

// PadParamsOf reads PAD's parameters.
func PadParamsOf(q Params) PadParams {
	var p PadParams
	for i := range 4 {
		p.LP[i], p.RP[i] = q.I32(2*i), q.I32(2*i+1)
	}
	p.Circular = q.Bool(8)
	return p
}

// Im2ColParams are IM2COL's parameters: stride, padding and dilation along
// the width (0) and height (1), and whether the operation is 2-D (slots
// 0-6: s0, s1, p0, p1, d0, d1, is_2D).
type Im2ColParams struct {
	S0, S1 int32
	P0, P1 int32
	D0, D1 int32
	Is2D   bool
}

// Params lays p out as ggml_im2col does.
func (p Im2ColParams) Params() Params {
	var q Params
	for i, v := range [...]int32{p.S0, p.S1, p.P0, p.P1, p.D0, p.D1} {
		q.SetI32(i, v)
	}
	q.SetBool(6, p.Is2D)
	return q
}

// Im2ColParamsOf reads IM2COL's parameters.
func Im2ColParamsOf(q Params) Im2ColParams {
	return Im2ColParams{
		S0: q.I32(0), S1: q.I32(1), P0: q.I32(2), P1: q.I32(3), D0: q.I32(4), D1: q.I32(5),
		Is2D: q.I32(6) == 1,
	}
}

// PoolOp is the reduction of a pooling operation, numbered as ggml's enum
// ggml_op_pool.
type PoolOp int32

// The pooling reductions.
const (
	PoolMax   PoolOp = 0
	PoolAvg   PoolOp = 1
	PoolCount PoolOp = 2 // GGML_OP_POOL_COUNT: the number of reductions, not one itself
)

// String returns the name test-backend-ops prints ("max", "avg").
func (o PoolOp) String() string {
	switch o {
	case PoolMax:
		return "max"
	case PoolAvg:
		return "avg"
	}
	return fmt.Sprintf("PoolOp(%d)", int32(o))
}

// ParsePoolOp returns the pooling reduction named name ("max", "avg").
func ParsePoolOp(name string) (PoolOp, error) {
	for _, o := range [...]PoolOp{PoolMax, PoolAvg} {
		if o.String() == name {
			return o, nil
		}
	}
	return 0, fmt.Errorf("%w: pool %q", ErrUnknown, name)
}

// Pool2DParams are POOL_2D's parameters: the reduction, kernel size,
// stride and padding along the width (0) and height (1) (slots 0-6). ggml
// takes the padding as floats and stores it truncated to int32.
type Pool2DParams struct {
	Op     PoolOp
	K0, K1 int32
	S0, S1 int32
	P0, P1 int32
}

// Params lays p out as ggml_pool_2d does.
func (p Pool2DParams) Params() Params {
	var q Params
	for i, v := range [...]int32{int32(p.Op), p.K0, p.K1, p.S0, p.S1, p.P0, p.P1} {
		q.SetI32(i, v)
	}
	return q
}

// Pool2DParamsOf reads POOL_2D's parameters.
func Pool2DParamsOf(q Params) Pool2DParams {
	return Pool2DParams{
		Op: PoolOp(q.I32(0)), K0: q.I32(1), K1: q.I32(2), S0: q.I32(3), S1: q.I32(4), P0: q.I32(5), P1: q.I32(6),
	}
}
