package ops

import "math"

// RopeMode selects how ROPE pairs and rotates a row's dimensions, with
// ggml's GGML_ROPE_TYPE_* values.
type RopeMode int32

// The RoPE modes.
const (
	// RopeNormal rotates adjacent pairs (x[2i], x[2i+1]).
	RopeNormal RopeMode = 0
	// RopeNeox rotates pairs half the rotated width apart (GPT-NeoX).
	RopeNeox RopeMode = 2
	// RopeMRope is multi-section RoPE (Qwen2-VL): NeoX pairing, each
	// section of the frequencies driven by its own position stream.
	RopeMRope RopeMode = 8
	// RopeVision is RopeMRope for vision encoders: the whole row is
	// rotated and every section restarts the frequency progression.
	RopeVision RopeMode = 24
	// RopeIMRope is interleaved multi-section RoPE (Qwen3-VL).
	RopeIMRope RopeMode = 40
)

// UsesSections reports whether m takes four positions per token and the
// sections of RopeParams (ggml's mode & GGML_ROPE_TYPE_MROPE).
func (m RopeMode) UsesSections() bool { return m&RopeMRope != 0 }

// RopeSections is GGML_MROPE_SECTIONS.
const RopeSections = 4

// RopeParams are the op_params of ROPE and ROPE_BACK, in ggml's layout:
// slot 1 n_dims, 2 mode, 4 n_ctx_orig, 5-10 the float parameters, 11-14 the
// sections and 15 n_offs (slots 0 and 3, n_past and n_ctx, are always 0).
type RopeParams struct {
	// NDims is the number of rotated dimensions of each row.
	NDims int32
	Mode  RopeMode
	// NCtxOrig is the training context length YaRN corrects for.
	NCtxOrig int32
	// FreqBase is the base of the frequency progression (10000 in ggml_rope).
	FreqBase float32
	// FreqScale multiplies every angle (1 disables scaling).
	FreqScale float32
	// ExtFactor mixes in YaRN's extrapolation (0 disables YaRN).
	ExtFactor float32
	// AttnFactor multiplies the cosines and sines.
	AttnFactor float32
	// BetaFast and BetaSlow bound YaRN's correction range.
	BetaFast, BetaSlow float32
	// Sections are the frequency-pair counts of each position stream for
	// the multi-section modes; zero otherwise.
	Sections [RopeSections]int32
	// NOffs is the first rotated dimension (ggml_rope_set_offset).
	NOffs int32
}

// DefaultRopeParams are ggml_rope's fixed parameters for nDims and mode:
// base 10000, no scaling, no YaRN, no offset.
func DefaultRopeParams(nDims int32, mode RopeMode) RopeParams {
	return RopeParams{NDims: nDims, Mode: mode, FreqBase: 10000, FreqScale: 1, AttnFactor: 1}
}

// Params returns the op_params ggml's ROPE builders write for p.
func (p RopeParams) Params() Params {
	var q Params
	q.SetI32(1, p.NDims)
	q.SetI32(2, int32(p.Mode))
	q.SetI32(4, p.NCtxOrig)
	q.SetF32(5, p.FreqBase)
	q.SetF32(6, p.FreqScale)
	q.SetF32(7, p.ExtFactor)
	q.SetF32(8, p.AttnFactor)
	q.SetF32(9, p.BetaFast)
	q.SetF32(10, p.BetaSlow)
	for i, s := range p.Sections {
		q.SetI32(11+i, s)
	}
	q.SetI32(15, p.NOffs)
	return q
}

// RopeParamsOf reads the ROPE parameters from op_params.
func RopeParamsOf(q Params) RopeParams {
	p := RopeParams{
		NDims:      q.I32(1),
		Mode:       RopeMode(q.I32(2)),
		NCtxOrig:   q.I32(4),
		FreqBase:   q.F32(5),
		FreqScale:  q.F32(6),
		ExtFactor:  q.F32(7),
		AttnFactor: q.F32(8),
		BetaFast:   q.F32(9),
		BetaSlow:   q.F32(10),
		NOffs:      q.I32(15),
	}
	for i := range p.Sections {
		p.Sections[i] = q.I32(11 + i)
	}
	return p
}

// YarnCorrDims is RopeYarnCorrDims for p's parameters.
func (p RopeParams) YarnCorrDims() [2]float32 {
	return RopeYarnCorrDims(int(p.NDims), int(p.NCtxOrig), p.FreqBase, p.BetaFast, p.BetaSlow)
}

// RopeYarnCorrDims is ggml_rope_yarn_corr_dims: the first and last
// dimension YaRN's ramp blends over, computed in float32 as ggml does (so
// n_ctx_orig = 0 gives the same infinities and clamps).
func RopeYarnCorrDims(nDims, nCtxOrig int, freqBase, betaFast, betaSlow float32) [2]float32 {
	corrDim := func(nRot float32) float32 {
		num := logf(float32(nCtxOrig) / (nRot * 2 * float32(math.Pi)))
		return float32(nDims) * num / (2 * logf(freqBase))
	}
	start := float32(math.Floor(float64(corrDim(betaFast))))
	end := float32(math.Ceil(float64(corrDim(betaSlow))))
	// C's MAX/MIN macros: the second operand wins unless the first
	// compares greater (smaller), which decides NaN cases.
	var dims [2]float32
	if dims[0] = start; 0 > start {
		dims[0] = 0
	}
	if dims[1] = end; float32(nDims-1) < end {
		dims[1] = float32(nDims - 1)
	}
	return dims
}

// logf is C's logf: the float64 logarithm rounded to float32.
func logf(x float32) float32 { return float32(math.Log(float64(x))) }

// FlashAttnParams are the op_params of FLASH_ATTN_EXT: slots 0-2 scale,
// max_bias and logit_softcap as floats, 3 the precision (ggml_prec) and 4
// n_kv_max (set by ggml 0.25.1's ggml_flash_attn_ext_set_n_kv_max).
type FlashAttnParams struct {
	// Scale multiplies Q·K before the softcap and mask.
	Scale float32
	// MaxBias enables ALiBi slopes when positive (requires a mask).
	MaxBias float32
	// LogitSoftcap, when non-zero, applies softcap·tanh(s/softcap).
	LogitSoftcap float32
	// Prec is the requested accumulator precision.
	Prec Prec
	// NKVMax is ggml 0.25.1's n_kv_max hint (0 unless set).
	NKVMax int32
}

// Params returns p as op_params.
func (p FlashAttnParams) Params() Params {
	var q Params
	q.SetF32(0, p.Scale)
	q.SetF32(1, p.MaxBias)
	q.SetF32(2, p.LogitSoftcap)
	q.SetI32(3, int32(p.Prec))
	q.SetI32(4, p.NKVMax)
	return q
}

// FlashAttnParamsOf reads the FLASH_ATTN_EXT parameters from op_params.
func FlashAttnParamsOf(q Params) FlashAttnParams {
	return FlashAttnParams{
		Scale:        q.F32(0),
		MaxBias:      q.F32(1),
		LogitSoftcap: q.F32(2),
		Prec:         Prec(q.I32(3)),
		NKVMax:       q.I32(4),
	}
}

// GatedDeltaNetParams are the op_params of GATED_DELTA_NET: slot 0 holds K,
// the number of state snapshots the result keeps.
type GatedDeltaNetParams struct {
	K int32
}

// Params returns p as op_params.
func (p GatedDeltaNetParams) Params() Params {
	var q Params
	q.SetI32(0, p.K)
	return q
}

// GatedDeltaNetParamsOf reads the GATED_DELTA_NET parameters from op_params.
func GatedDeltaNetParamsOf(q Params) GatedDeltaNetParams {
	return GatedDeltaNetParams{K: q.I32(0)}
}

// RopeYarnRamp is ggml's rope_yarn_ramp: how much of YaRN's extrapolated
// angle dimension pair i0/2 takes, between the corr dims low and high.
// It keeps C's MIN/MAX operand order so NaN and infinite corrections
// (n_ctx_orig = 0) come out as in ggml.
func RopeYarnRamp(low, high float32, i0 int) float32 {
	d := high - low
	if 0.001 > d {
		d = 0.001
	}
	y := (float32(i0/2) - low) / d
	if 0 > y {
		y = 0
	}
	if 1 < y {
		y = 1
	}
	return 1 - y
}
