package openvino

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// mk is a contiguous tensor of type ty and extents ne (missing ones 1).
func mk(op ops.Op, ty quant.Type, ne ...int64) *graph.Tensor {
	t := &graph.Tensor{Op: op, Type: ty, Ne: [4]int64{1, 1, 1, 1}}
	copy(t.Ne[:], ne)
	t.Nb[0] = uint64(ty.TypeSize())
	t.Nb[1] = uint64(ty.RowSize(t.Ne[0]))
	t.Nb[2] = t.Nb[1] * uint64(t.Ne[1])
	t.Nb[3] = t.Nb[2] * uint64(t.Ne[2])
	return t
}

func with(t *graph.Tensor, f func(t *graph.Tensor)) *graph.Tensor { f(t); return t }

func srcs(t *graph.Tensor, s ...*graph.Tensor) *graph.Tensor {
	copy(t.Src[:], s)
	return t
}

func f32(ne ...int64) *graph.Tensor { return mk(ops.None, quant.F32, ne...) }

// viewOf makes v a view of base at offset.
func viewOf(v, base *graph.Tensor, offs uint64) *graph.Tensor {
	v.Op, v.ViewSrc, v.ViewOffs = ops.View, base, offs
	v.Src[0] = base
	return v
}

func permuteOf(src *graph.Tensor) *graph.Tensor {
	p := srcs(mk(ops.Permute, src.Type, src.Ne[0], src.Ne[2], src.Ne[1], src.Ne[3]), src)
	p.Nb = [4]uint64{src.Nb[0], src.Nb[2], src.Nb[1], src.Nb[3]}
	p.ViewSrc = src.ViewSrc
	if p.ViewSrc == nil {
		p.ViewSrc = src
	}
	return p
}

// flashQKV is the llama pattern: Q = PERMUTE(RESHAPE(base)), K, V =
// PERMUTE(VIEW(cache)).
func flashAttn(qBase, kBase, vBase *graph.Tensor, scale float32) *graph.Tensor {
	q := permuteOf(srcs(mk(ops.Reshape, quant.F32, 8, 2, 3), qBase))
	k := permuteOf(viewOf(mk(ops.View, quant.F16, 8, 2, 4), kBase, 0))
	v := permuteOf(viewOf(mk(ops.View, quant.F16, 8, 2, 4), vBase, 0))
	fa := srcs(mk(ops.FlashAttnExt, quant.F32, 8, 2, 3), q, k, v, mk(ops.None, quant.F16, 4, 3))
	fa.Params = ops.FlashAttnParams{Scale: scale}.Params()
	return fa
}

func ropeNode(nDims, mode, nOffs int32, headDim int64, ty quant.Type) *graph.Tensor {
	r := srcs(mk(ops.Rope, ty, headDim, 2, 3), mk(ops.None, ty, headDim, 2, 3), mk(ops.None, quant.I32, 3))
	p := ops.DefaultRopeParams(nDims, ops.RopeMode(mode))
	p.NOffs = nOffs
	r.Params = p.Params()
	return r
}

func moeSum(experts int64) *graph.Tensor {
	base := mk(ops.MulMat, quant.F32, 16, experts, 3)
	plane := func(i int64) *graph.Tensor {
		v := viewOf(mk(ops.View, quant.F32, 16, 3), base, uint64(i)*base.Nb[1])
		v.Nb[1] = base.Nb[2]
		return v
	}
	cur := plane(0)
	for i := int64(1); i < experts; i++ {
		cur = srcs(mk(ops.Add, quant.F32, 16, 3), cur, plane(i))
	}
	return cur
}

func cpyNode(src, dst *graph.Tensor) *graph.Tensor {
	c := srcs(mk(ops.Cpy, dst.Type, dst.Ne[0], dst.Ne[1], dst.Ne[2], dst.Ne[3]), src, dst)
	c.Nb = dst.Nb
	return c
}

type supportCase struct {
	name   string
	kind   Kind
	op     *graph.Tensor
	reason string // "" = the rule lets it through
}

// caseRules: one rejected and one accepted case per rule of
// is_op_supported_case; removing a rule fails the first, inverting it the
// second.
func caseRules() []supportCase {
	weights := mk(ops.None, quant.Q4_0, 256, 4)
	return []supportCase{
		{"msa name", KindCPU, with(srcs(mk(ops.Add, quant.F32, 4), f32(4), f32(4)), func(t *graph.Tensor) { t.Name = "msa_x" }), "MSA block mask expansion is not supported"},
		{"msa chain", KindCPU, srcs(mk(ops.Repeat, quant.F32, 8), srcs(mk(ops.Reshape, quant.F32, 4), with(f32(4), func(t *graph.Tensor) { t.Name = "msa_block_mask" }))), "MSA block mask expansion is not supported"},
		{"msa other name", KindCPU, srcs(mk(ops.Repeat, quant.F32, 8), with(f32(4), func(t *graph.Tensor) { t.Name = "block_mask" })), ""},

		{"concat i64", KindCPU, srcs(mk(ops.Concat, quant.I64, 8), mk(ops.None, quant.I64, 4), mk(ops.None, quant.I64, 4)), "CONCAT with I64 type is not supported"},
		{"concat i32", KindCPU, srcs(mk(ops.Concat, quant.I32, 8), mk(ops.None, quant.I32, 4), mk(ops.None, quant.I32, 4)), ""},
		{"concat bf16 view gpu", KindGPU, srcs(mk(ops.Concat, quant.BF16, 8), viewOf(mk(ops.View, quant.BF16, 4), mk(ops.None, quant.BF16, 8), 0), mk(ops.None, quant.BF16, 4)), "CONCAT with BF16 type and VIEW input is not supported on GPU"},
		{"concat bf16 view cpu", KindCPU, srcs(mk(ops.Concat, quant.BF16, 8), viewOf(mk(ops.View, quant.BF16, 4), mk(ops.None, quant.BF16, 8), 0), mk(ops.None, quant.BF16, 4)), ""},

		{"set strides", KindCPU, with(srcs(mk(ops.Set, quant.F32, 4, 4), f32(4, 4), f32(2, 2)), func(t *graph.Tensor) {
			t.Params = ops.SetParams{Nb1: 8, Nb2: 32, Nb3: 64}.Params()
		}), "SET op with dst nb1=8, nb2=32, nb3=64 that does not match src0 strides nb[1]=16, nb[2]=64, nb[3]=64"},
		{"set matching", KindCPU, with(srcs(mk(ops.Set, quant.F32, 4, 4), f32(4, 4), f32(2, 2)), func(t *graph.Tensor) {
			t.Params = ops.SetParams{Nb1: 16, Nb2: 64, Nb3: 64}.Params()
		}), ""},

		{"get_rows ne3", KindCPU, srcs(mk(ops.GetRows, quant.F32, 4, 2, 1, 2), f32(4, 8, 1, 2), mk(ops.None, quant.I32, 2, 1, 2)), "GET_ROWS/SET_ROWS with ne[3] != 1 (ne[3]=2) is not supported"},
		{"get_rows quant view", KindCPU, srcs(mk(ops.GetRows, quant.F32, 32, 2), viewOf(mk(ops.View, quant.Q8_0, 32, 4), mk(ops.None, quant.Q8_0, 32, 8), 34), mk(ops.None, quant.I32, 2)), "GET_ROWS with a nonzero quantized src0 view offset is not supported"},
		{"get_rows quant view 0", KindCPU, srcs(mk(ops.GetRows, quant.F32, 32, 2), viewOf(mk(ops.View, quant.Q8_0, 32, 4), mk(ops.None, quant.Q8_0, 32, 8), 0), mk(ops.None, quant.I32, 2)), ""},
		{"get_rows bf16 gpu", KindGPU, srcs(mk(ops.GetRows, quant.F32, 4, 2), mk(ops.None, quant.BF16, 4, 8), mk(ops.None, quant.I32, 2)), "GET_ROWS with BF16 src0 is not supported on GPU"},
		{"get_rows bf16 cpu", KindCPU, srcs(mk(ops.GetRows, quant.F32, 4, 2), mk(ops.None, quant.BF16, 4, 8), mk(ops.None, quant.I32, 2)), ""},
		{"get_rows q4_k 256", KindCPU, srcs(mk(ops.GetRows, quant.F32, 256, 2), mk(ops.None, quant.Q4_K, 256, 8), mk(ops.None, quant.I32, 2)), "GET_ROWS/SET_ROWS with ne[0] == 256 and type q4_K rejected due to f16-arithmetic dequant rounding errors that intermittently exceed 1e-7 NMSE threshold"},
		{"get_rows q4_k 512", KindCPU, srcs(mk(ops.GetRows, quant.F32, 512, 2), mk(ops.None, quant.Q4_K, 512, 8), mk(ops.None, quant.I32, 2)), ""},
		{"get_rows q8_0 256", KindCPU, srcs(mk(ops.GetRows, quant.F32, 256, 2), mk(ops.None, quant.Q8_0, 256, 8), mk(ops.None, quant.I32, 2)), ""},

		{"reshape ffn_norm_exps", KindCPU, with(srcs(mk(ops.Reshape, quant.F32, 4), f32(4)), func(t *graph.Tensor) { t.Name = "ffn_norm_exps-3" }), "RESHAPE for ffn_norm_exps is not supported"},
		{"reshape other", KindCPU, with(srcs(mk(ops.Reshape, quant.F32, 4), f32(4)), func(t *graph.Tensor) { t.Name = "ffn_norm-3" }), ""},

		{"add permute src1", KindCPU, srcs(mk(ops.Add, quant.F32, 4, 2, 3), f32(4, 2, 3), permuteOf(f32(4, 3, 2))), "ADD/MUL/SUB with PERMUTE src1 is not supported"},
		{"mul permute src0", KindCPU, srcs(mk(ops.Mul, quant.F32, 4, 2, 3), permuteOf(f32(4, 3, 2)), f32(4, 2, 3)), ""},
		{"moe sum 9", KindCPU, moeSum(9), "MoE expert-plane sum with more than 8 experts is not supported"},
		{"moe sum 8", KindCPU, moeSum(8), ""},
		{"sub broadcast", KindCPU, srcs(mk(ops.Sub, quant.F32, 4, 6), f32(4, 6), f32(4, 3)), "ADD/MUL/SUB with incompatible broadcast shapes: src0->ne[1]=6, src1->ne[1]=3"},
		{"sub broadcast 1", KindCPU, srcs(mk(ops.Sub, quant.F32, 4, 6), f32(4, 6), f32(4, 1)), ""},

		{"add_id types", KindCPU, srcs(mk(ops.AddID, quant.F32, 4, 2), f32(4, 2), mk(ops.None, quant.F16, 4, 3), mk(ops.None, quant.I32, 2)), "ADD_ID only supports F32 inputs/output and I32 ids"},
		{"add_id f32", KindCPU, srcs(mk(ops.AddID, quant.F32, 4, 2), f32(4, 2), f32(4, 3), mk(ops.None, quant.I32, 2)), ""},

		{"div channel gpu", KindGPU, srcs(mk(ops.Div, quant.F32, 4, 5), f32(4, 5), f32(4)), "DIV per-channel scale broadcast is not supported on GPU"},
		{"div channel cpu", KindCPU, srcs(mk(ops.Div, quant.F32, 4, 5), f32(4, 5), f32(4)), ""},
		{"div rows gpu", KindGPU, srcs(mk(ops.Div, quant.F32, 4, 5), f32(4, 5), f32(4, 5)), ""},

		{"pool pad small gpu", KindGPU, with(srcs(mk(ops.Pool2D, quant.F32, 4, 4), f32(8, 8)), func(t *graph.Tensor) {
			t.Params.SetI32(1, 2)
			t.Params.SetI32(2, 2)
			t.Params.SetI32(5, 1)
		}), "POOL_2D with padding and kernel size < 3 is not supported on GPU"},
		{"pool pad small cpu", KindCPU, with(srcs(mk(ops.Pool2D, quant.F32, 4, 4), f32(8, 8)), func(t *graph.Tensor) {
			t.Params.SetI32(1, 2)
			t.Params.SetI32(2, 2)
			t.Params.SetI32(5, 1)
		}), ""},
		{"pool pad 3 gpu", KindGPU, with(srcs(mk(ops.Pool2D, quant.F32, 4, 4), f32(8, 8)), func(t *graph.Tensor) {
			t.Params.SetI32(1, 3)
			t.Params.SetI32(2, 3)
			t.Params.SetI32(5, 1)
		}), ""},

		{"sum_rows permute", KindCPU, srcs(mk(ops.SumRows, quant.F32, 1, 3, 2), permuteOf(f32(4, 2, 3))), "SUM_ROWS with PERMUTE input is not supported"},
		{"sum_rows plain", KindCPU, srcs(mk(ops.SumRows, quant.F32, 1, 3, 2), f32(4, 3, 2)), ""},

		{"fa gemma3n", KindCPU, flashAttn(mk(ops.Rope, quant.F32, 16, 3), mk(ops.Rope, quant.F16, 32), mk(ops.RMSNorm, quant.F16, 32), 1), "FLASH_ATTN_EXT gemma3n pattern on GPU is not supported"},
		{"fa gemma3n scale", KindCPU, flashAttn(mk(ops.Rope, quant.F32, 16, 3), mk(ops.Rope, quant.F16, 32), mk(ops.RMSNorm, quant.F16, 32), 0.125), ""},
		{"fa sinks", KindCPU, with(flashAttn(f32(16, 3), mk(ops.None, quant.F16, 32), mk(ops.None, quant.F16, 32), 0.125), func(t *graph.Tensor) { t.Src[4] = f32(2) }), "FLASH_ATTN_EXT with sinks is not supported"},
		{"fa pattern", KindCPU, with(flashAttn(f32(16, 3), mk(ops.None, quant.F16, 32), mk(ops.None, quant.F16, 32), 0.125), func(t *graph.Tensor) { t.Src[0] = f32(8, 3, 2) }), "FLASH_ATTN_EXT unsupported attention pattern"},
		{"fa max_bias", KindCPU, with(flashAttn(f32(16, 3), mk(ops.None, quant.F16, 32), mk(ops.None, quant.F16, 32), 0.125), func(t *graph.Tensor) {
			t.Params = ops.FlashAttnParams{Scale: 0.125, MaxBias: 8}.Params()
		}), "FLASH_ATTN_EXT with max_bias > 0 (max_bias=8.000000) is not supported"},
		{"fa softcap", KindCPU, with(flashAttn(f32(16, 3), mk(ops.None, quant.F16, 32), mk(ops.None, quant.F16, 32), 0.125), func(t *graph.Tensor) {
			t.Params = ops.FlashAttnParams{Scale: 0.125, LogitSoftcap: 30}.Params()
		}), "FLASH_ATTN_EXT with logit_softcap != 0 (logit_softcap=30.000000) is not supported"},
		{"fa llama", KindCPU, flashAttn(f32(16, 3), mk(ops.None, quant.F16, 32), mk(ops.None, quant.F16, 32), 0.125), ""},

		{"permute bf16 gpu", KindGPU, permuteOf(mk(ops.None, quant.BF16, 4, 2, 3)), "PERMUTE with BF16 type is not supported on GPU"},
		{"permute bf16 npu", KindNPU, permuteOf(mk(ops.None, quant.BF16, 4, 2, 3)), ""},

		{"cpy to bf16", KindCPU, cpyNode(f32(4, 2), mk(ops.None, quant.BF16, 4, 2)), "CPY with BF16 src[1] type is not supported"},
		{"cpy bf16 npu", KindNPU, cpyNode(mk(ops.None, quant.BF16, 4, 2), mk(ops.None, quant.BF16, 4, 2)), "CPY with BF16 is not supported is not supported on NPU"},
		{"cpy bf16 cpu", KindCPU, cpyNode(mk(ops.None, quant.BF16, 4, 2), mk(ops.None, quant.BF16, 4, 2)), ""},
		{"cpy quantized", KindCPU, cpyNode(f32(32, 2), mk(ops.None, quant.Q4_0, 32, 2)), "CPY to quantized destination (e.g. f32 -> q4_0) is numerically unstable"},
		{"cpy count", KindCPU, cpyNode(f32(4, 3), f32(4, 2)), "CPY with mismatched element counts is not supported: src0=12 != src1=8"},
		{"cpy test shape", KindCPU, cpyNode(f32(3, 4, 3, 2), f32(3, 4, 3, 2)), "CPY with non-contiguous shape [3, 4, 3, 2] is not supported"},
		{"cpy shape 4", KindCPU, cpyNode(f32(4, 4, 3, 2), f32(4, 4, 3, 2)), ""},
		{"cpy strided out view", KindCPU, func() *graph.Tensor {
			base := mk(ops.None, quant.F16, 8, 8)
			dst := viewOf(mk(ops.View, quant.F16, 4, 8), base, 0)
			dst.Nb[1] = base.Nb[1]
			c := cpyNode(f32(4, 8), dst)
			c.ViewSrc = base
			return c
		}(), "CPY with non-contiguous output view is not supported"},
		{"cpy contiguous out view", KindCPU, func() *graph.Tensor {
			base := mk(ops.None, quant.F16, 8, 8)
			dst := viewOf(mk(ops.View, quant.F16, 8, 2), base, 16)
			c := cpyNode(f32(8, 2), dst)
			c.ViewSrc, c.ViewOffs = base, 16
			return c
		}(), ""},

		{"mul_mat bench gpu", KindGPU, srcs(mk(ops.MulMat, quant.F32, 1, 64), with(mk(ops.None, quant.Q4_0, 256, 1), func(t *graph.Tensor) { t.Name = "a" }), with(f32(256, 64), func(t *graph.Tensor) { t.Name = "b" })), "MUL_MAT quantized benchmark test case on GPU is not supported"},
		{"mul_mat bench cpu", KindCPU, srcs(mk(ops.MulMat, quant.F32, 1, 64), with(mk(ops.None, quant.Q4_0, 256, 1), func(t *graph.Tensor) { t.Name = "a" }), with(f32(256, 64), func(t *graph.Tensor) { t.Name = "b" })), ""},
		{"mul_mat dot gpu", KindGPU, srcs(mk(ops.MulMat, quant.F32, 1, 1), f32(8), f32(8)), "MUL_MAT scalar dot product with non-weight src[0] on GPU is not supported"},
		{"mul_mat ne3", KindCPU, srcs(mk(ops.MulMat, quant.F32, 2, 3, 1, 6), f32(8, 2, 1, 2), f32(8, 3, 1, 3)), "MUL_MAT with incompatible broadcast on ne[3]: src0->ne[3]=2, src1->ne[3]=3"},
		{"mul_mat ne3 1", KindCPU, srcs(mk(ops.MulMat, quant.F32, 2, 3, 1, 3), f32(8, 2, 1, 1), f32(8, 3, 1, 3)), ""},
		{"mul_mat views", KindCPU, srcs(mk(ops.MulMat, quant.F32, 2, 3), viewOf(mk(ops.View, quant.F32, 8, 2), f32(8, 4), 0), viewOf(mk(ops.View, quant.F32, 8, 3), f32(8, 4), 0)), "MUL_MAT with both inputs as VIEW is not supported"},
		{"mul_mat one view", KindCPU, srcs(mk(ops.MulMat, quant.F32, 2, 3), viewOf(mk(ops.View, quant.F32, 8, 2), f32(8, 4), 0), f32(8, 3)), ""},

		{"mul_mat_id one expert", KindCPU, srcs(mk(ops.MulMatID, quant.F32, 4, 2, 3), mk(ops.None, quant.Q4_0, 32, 4, 1), f32(32, 2, 3), mk(ops.None, quant.I32, 2, 3)), "MUL_MAT_ID with single-expert or empty ne[2] <= 1 (ne[2]=1) is not supported"},
		{"mul_mat_id f32 gpu", KindGPU, srcs(mk(ops.MulMatID, quant.F32, 4, 2, 3), f32(32, 4, 4), f32(32, 2, 3), mk(ops.None, quant.I32, 2, 3)), "MUL_MAT_ID with non-quantized weights on GPU is not supported"},
		{"mul_mat_id unbound gpu", KindGPU, srcs(mk(ops.MulMatID, quant.F32, 4, 2, 3), mk(ops.None, quant.Q4_0, 32, 4, 4), f32(32, 2, 3), mk(ops.None, quant.I32, 2, 3)), "MUL_MAT_ID with unbound expert tensors on GPU is not supported"},
		{"mul_mat_id mxfp4 large gpu", KindGPU, srcs(mk(ops.MulMatID, quant.F32, 4096, 8, 512), with(mk(ops.None, quant.MXFP4, 4096, 4096, 4), func(t *graph.Tensor) { t.Buffer = fakeBuf{} }), f32(4096, 8, 512), mk(ops.None, quant.I32, 8, 512)), "MUL_MAT_ID with MXFP4 weights requires large temporary on GPU"},
		{"mul_mat_id mxfp4 small gpu", KindGPU, srcs(mk(ops.MulMatID, quant.F32, 64, 2, 4), with(mk(ops.None, quant.MXFP4, 64, 64, 4), func(t *graph.Tensor) { t.Buffer = fakeBuf{} }), f32(64, 2, 4), mk(ops.None, quant.I32, 2, 4)), ""},
		{"mul_mat_id f32 cpu", KindCPU, srcs(mk(ops.MulMatID, quant.F32, 4, 2, 3), f32(32, 4, 4), f32(32, 2, 3), mk(ops.None, quant.I32, 2, 3)), ""},

		{"rope mode", KindCPU, ropeNode(8, 8, 0, 8, quant.F32), "ROPE with mode 8 is not supported"},
		{"rope offs odd", KindCPU, ropeNode(4, 0, 1, 8, quant.F32), "ROPE with invalid n_offs=1"},
		{"rope dims", KindCPU, ropeNode(8, 2, 2, 8, quant.F32), "ROPE with n_dims=8, n_offs=2, head_dim=8 is not supported"},
		{"rope type", KindCPU, ropeNode(8, 0, 0, 8, quant.BF16), "ROPE with type bf16 is not supported"},
		{"rope view", KindCPU, with(ropeNode(8, 0, 0, 8, quant.F32), func(t *graph.Tensor) {
			t.ViewSrc = f32(64)
			t.Src[0] = permuteOf(f32(8, 3, 2))
		}), "ROPE on VIEW / non-contiguous input is not supported"},
		{"rope seqs", KindCPU, with(ropeNode(8, 0, 0, 8, quant.F32), func(t *graph.Tensor) { t.Src[0].Ne[3] = 2 }), "ROPE with multiple sequences (ne[3]=2) is not supported"},
		{"imrope scale", KindCPU, with(ropeNode(8, 40, 0, 8, quant.F32), func(t *graph.Tensor) { t.Params.SetF32(6, 0.5) }), "IMROPE with freq_factors, freq_scale, ext_factor, or attn_factor is not supported"},
		{"imrope plain", KindCPU, ropeNode(8, 40, 0, 8, quant.F32), ""},
		{"rope neox offs", KindCPU, ropeNode(4, 2, 2, 8, quant.F16), ""},

		{"transpose bf16", KindCPU, srcs(mk(ops.Transpose, quant.BF16, 2, 4), mk(ops.None, quant.BF16, 4, 2)), "TRANSPOSE with BF16 type is not supported"},
		{"transpose f16", KindCPU, srcs(mk(ops.Transpose, quant.F16, 2, 4), mk(ops.None, quant.F16, 4, 2)), ""},
		{"repeat bf16 gpu", KindGPU, srcs(mk(ops.Repeat, quant.BF16, 8), mk(ops.None, quant.BF16, 4)), "REPEAT with BF16 type is not supported on GPU"},
		{"repeat bf16 cpu", KindCPU, srcs(mk(ops.Repeat, quant.BF16, 8), mk(ops.None, quant.BF16, 4)), ""},

		{"gdn permute", KindCPU, srcs(mk(ops.GatedDeltaNet, quant.F32, 4), f32(4), f32(4), permuteOf(f32(4, 2, 2)), f32(1)), "GATED_DELTA_NET with PERMUTE src2 is not supported"},
		{"gdn kda", KindCPU, srcs(mk(ops.GatedDeltaNet, quant.F32, 4), f32(4), f32(4), f32(4), f32(4)), "GATED_DELTA_NET with kda (per-key-dimension gating) is not supported"},
		{"gdn k", KindCPU, with(srcs(mk(ops.GatedDeltaNet, quant.F32, 4), f32(4), f32(4), f32(4), f32(1)), func(t *graph.Tensor) { t.Params.SetI32(0, 2) }), "GATED_DELTA_NET with K > 1 (multiple state snapshots) is not supported"},
		{"gdn ok", KindCPU, srcs(mk(ops.GatedDeltaNet, quant.F32, 4), f32(4), f32(4), f32(4), f32(1)), ""},

		{"view selected_experts", KindCPU, with(viewOf(mk(ops.View, quant.I32, 2), mk(ops.Argsort, quant.I32, 4), 0), func(t *graph.Tensor) { t.Name = "selected_experts" }), "VIEW for selected_experts (argsort_top_k) is not supported"},
		{"view other", KindCPU, with(viewOf(mk(ops.View, quant.I32, 2), mk(ops.Argsort, quant.I32, 4), 0), func(t *graph.Tensor) { t.Name = "experts" }), ""},
		{"weights ok", KindCPU, srcs(mk(ops.MulMat, quant.F32, 4, 2), weights, f32(256, 2)), ""},
	}
}

type fakeBuf struct{}

func (fakeBuf) Name() string { return "fake" }
func (fakeBuf) IsHost() bool { return true }

func TestOpSupportedCaseRules(t *testing.T) {
	for _, c := range caseRules() {
		t.Run(c.name, func(t *testing.T) {
			ok, reason := opSupportedCase(c.kind, c.op)
			require.Equal(t, c.reason, reason)
			require.Equal(t, c.reason == "", ok)
		})
	}
}

// The rules of supports_op_impl before is_op_supported_case.
func TestSupportsOpRules(t *testing.T) {
	unary := func(u ops.UnaryOp, ty quant.Type) *graph.Tensor {
		n := srcs(mk(ops.Unary, ty, 4), mk(ops.None, ty, 4))
		n.Params.SetUnary(u)
		return n
	}
	glu := func(g ops.GluOp, ne0 int64, split bool) *graph.Tensor {
		n := srcs(mk(ops.GLU, quant.F32, ne0/2), f32(ne0))
		if split {
			n = srcs(mk(ops.GLU, quant.F32, ne0), f32(ne0), f32(ne0))
		}
		n.Params = ops.GLUParams{Op: g}.Params()
		return n
	}
	pool := func(k, p int) *graph.Tensor {
		n := srcs(mk(ops.Pool2D, quant.F32, 4, 4), f32(8, 8))
		n.Params = ops.Pool2DParams{Op: ops.PoolAvg, K0: int32(k), K1: int32(k), S0: 2, S1: 2, P0: int32(p), P1: int32(p)}.Params()
		return n
	}
	cases := []supportCase{
		{"op without translator", KindCPU, srcs(mk(ops.Conv2D, quant.F32, 4), f32(4), f32(4)), "op CONV_2D has no op translator"},
		{"none", KindCPU, f32(4), ""},
		{"unary without translator", KindCPU, unary(ops.UnaryAbs, quant.F32), "unary op ABS has no op translator"},
		{"unary exp f32", KindCPU, unary(ops.UnaryExp, quant.F32), "UNARY_EXP with F32 type is not supported"},
		{"unary exp f16", KindCPU, unary(ops.UnaryExp, quant.F16), ""},
		{"unary silu", KindCPU, unary(ops.UnarySiLU, quant.F32), ""},
		{"glu without translator", KindCPU, glu(ops.GLUReGLU, 8, false), "GLU op REGLU has no op translator"},
		{"glu odd", KindCPU, glu(ops.GLUSwiGLU, 7, false), "GLU op with odd src0 ne[0] and null src1 is not supported"},
		{"glu odd split", KindCPU, glu(ops.GLUSwiGLU, 7, true), ""},
		{"glu even", KindCPU, glu(ops.GLUSwiGLU, 8, false), ""},
		{"type", KindCPU, srcs(mk(ops.Add, quant.F64, 4), mk(ops.None, quant.F64, 4), mk(ops.None, quant.F64, 4)), "tensor type f64 is not supported"},
		{"src type", KindCPU, srcs(mk(ops.GetRows, quant.F32, 32, 2), mk(ops.None, quant.Q5_0, 32, 4), mk(ops.None, quant.I32, 2)), "src[0] type q5_0 is not supported"},
		{"3d quantized", KindCPU, srcs(mk(ops.MulMat, quant.F32, 4, 2, 2), mk(ops.None, quant.Q4_0, 32, 4, 2), f32(32, 2, 2)), "3D quantized tensor for src[0] is not supported"},
		{"2d quantized", KindCPU, srcs(mk(ops.MulMat, quant.F32, 4, 2, 2), mk(ops.None, quant.Q4_0, 32, 4, 1), f32(32, 2, 2)), ""},
		// POOL_2D has a translator, so its GPU rule is reached.
		{"pool_2d gpu", KindGPU, pool(2, 1), "POOL_2D with padding and kernel size < 3 is not supported on GPU"},
		{"pool_2d gpu k3", KindGPU, pool(3, 1), ""},
		{"pool_2d cpu", KindCPU, pool(2, 1), ""},
		{"empty", KindCPU, srcs(mk(ops.Cont, quant.F32, 0, 5), f32(0, 5)), emptyReason},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, reason := supportsOp(c.kind, c.op)
			require.Equal(t, c.reason, reason)
			require.Equal(t, c.reason == "", ok)
		})
	}
	// The 3-D MoE exception: MUL_MAT_ID's experts pass the 3-D rule (and
	// meet MUL_MAT_ID's own, or the missing translator).
	moe := srcs(mk(ops.MulMatID, quant.F32, 4, 2, 3), mk(ops.None, quant.Q4_0, 32, 4, 4), f32(32, 2, 3), mk(ops.None, quant.I32, 2, 3))
	_, reason := supportsOp(KindCPU, moe)
	require.NotContains(t, reason, "3D quantized")
}

// The translator table is upstream's op table (openvino.md 5.2): every op,
// unary and GLU op it lists has a translator, and no other, so supports-op
// derives upstream's sets.
func TestTranslatorsAreUpstreamTable(t *testing.T) {
	upstream := map[ops.Op]bool{}
	for _, o := range []ops.Op{ops.Add, ops.AddID, ops.Concat, ops.Cont, ops.Div, ops.Fill, ops.GetRows, ops.Im2Col,
		ops.MulMat, ops.MulMatID, ops.Permute, ops.Reshape, ops.RMSNorm, ops.Norm, ops.L2Norm, ops.SumRows, ops.Rope,
		ops.Scale, ops.Sqr, ops.Sqrt, ops.SoftMax, ops.Argsort, ops.Transpose, ops.View, ops.SetRows, ops.Cpy,
		ops.FlashAttnExt, ops.Clamp, ops.Pad, ops.SSMConv, ops.GatedDeltaNet, ops.Repeat, ops.Cumsum, ops.Diag, ops.Tri,
		ops.Set, ops.Add1, ops.Mul, ops.Sub, ops.Unary, ops.GLU, ops.Pool2D, ops.Roll} {
		upstream[o] = true
	}
	for o := range opTranslators {
		require.True(t, upstream[o], "%s is not in upstream's op table", o)
	}
	for o := range upstream {
		require.Contains(t, opTranslators, o, "upstream's op table has %s", o)
	}
	unary := []ops.UnaryOp{ops.UnaryGELU, ops.UnarySigmoid, ops.UnarySiLU, ops.UnarySoftplus, ops.UnaryTanh, ops.UnaryExp, ops.UnaryNeg, ops.UnaryReLU}
	require.Len(t, unaryTranslators, len(unary))
	for _, u := range unary {
		require.Contains(t, unaryTranslators, u)
	}
	glu := []ops.GluOp{ops.GLUSwiGLU, ops.GLUSwiGLUOAI, ops.GLUGeGLU, ops.GLUGeGLUQuick, ops.GLUSwiGLUClamp}
	require.Len(t, gluTranslators, len(glu))
	for _, g := range glu {
		require.Contains(t, gluTranslators, g)
	}
}
