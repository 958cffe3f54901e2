package ops

import "math"

// Params is a tensor's op_params: 64 bytes that ggml reads as int32 or
// float32 slots depending on the operation. The typed accessors of each
// operation (RopeParams, SoftMaxParams, ...) are the only code that should
// index it.
type Params [16]int32

// I32 returns slot i as an int32.
func (p *Params) I32(i int) int32 { return p[i] }

// SetI32 stores v in slot i.
func (p *Params) SetI32(i int, v int32) { p[i] = v }

// F32 returns slot i read as the bits of a float32.
func (p *Params) F32(i int) float32 { return math.Float32frombits(uint32(p[i])) }

// SetF32 stores the bits of v in slot i.
func (p *Params) SetF32(i int, v float32) { p[i] = int32(math.Float32bits(v)) }

// Bool returns slot i as ggml's int32 flags (non-zero is true).
func (p *Params) Bool(i int) bool { return p[i] != 0 }

// SetBool stores v in slot i as 0 or 1.
func (p *Params) SetBool(i int, v bool) {
	p[i] = 0
	if v {
		p[i] = 1
	}
}

// Unary returns the unary operation of a UNARY tensor (slot 0).
func (p *Params) Unary() UnaryOp { return UnaryOp(p[0]) }

// SetUnary stores the unary operation of a UNARY tensor.
func (p *Params) SetUnary(u UnaryOp) { p[0] = int32(u) }
