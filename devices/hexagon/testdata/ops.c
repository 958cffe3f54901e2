/*
 * The emulated DSP's own reference math: ggml semantics of each htp opcode, computed in float/double from the
 * wire descriptors (ne/nb strides, ggml op_params), with quantized MUL_MAT weights read in the tiled layout of
 * facts/hexagon.md section 10. Written for clarity, not speed.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "htpdouble.h"

static const char *const op_names[HD_OP_COUNT] = {
    "MUL", "ADD", "SUB", "DIV", "MUL_MAT", "MUL_MAT_ID", "MUL_MAT_QKV", "MUL_MAT_FFN", "MUL_MAT_ADD", "RMS_NORM",
    "RMS_NORM_MUL", "UNARY_SILU", "UNARY_GELU", "UNARY_SIGMOID", "UNARY_EXP", "UNARY_NEG", "UNARY_SOFTPLUS",
    "UNARY_TANH", "GLU_SWIGLU", "GLU_SWIGLU_OAI", "GLU_GEGLU", "SOFTMAX", "ADD_ID", "ROPE", "FLASH_ATTN_EXT",
    "SET_ROWS", "GET_ROWS", "SCALE", "CPY", "ARGSORT", "SQR", "SQRT", "SUM_ROWS", "SSM_CONV", "REPEAT", "CUMSUM",
    "FILL", "DIAG", "SOLVE_TRI", "L2_NORM", "GATED_DELTA_NET", "TRI", "PAD", "NORM", "CONCAT", "CLAMP", "IM2COL",
    "INVALID", "ABS", "LOG", "RELU", "LEAKY_RELU", "FENCE", "CPY_FENCE", "MDEV_GROUP", "ALLREDUCE", "ALLREDUCE_ADD",
    "FENCE_OTHER",
};

const char *hd_op_name(uint32_t opcode) { return opcode < HD_OP_COUNT ? op_names[opcode] : "INVALID"; }

/* The fence-protocol opcode table (hexagon.md 3, third-party Rust port; NOT verified). Opcodes it lists that the double
 * does not know map to FENCE_OTHER (answered NO_SUPPORT). */
#define SO HD_OP_FENCE_OTHER
static const uint32_t fence_opcodes[] = {
    HTP_OP_MUL, HTP_OP_ADD, HTP_OP_SUB, HTP_OP_DIV, HTP_OP_MUL_MAT, HTP_OP_MUL_MAT_ID, SO /* MUL_MAT_NX */,
    SO /* MUL_MAT_ID_NX */, HTP_OP_MUL_MAT_ADD, HTP_OP_RMS_NORM, HTP_OP_RMS_NORM_MUL, HTP_OP_UNARY_SILU,
    HTP_OP_UNARY_GELU, HTP_OP_UNARY_SIGMOID, HTP_OP_UNARY_EXP, HTP_OP_UNARY_NEG, HTP_OP_UNARY_SOFTPLUS,
    HTP_OP_UNARY_TANH, HD_OP_ABS, HD_OP_LOG, HD_OP_RELU, HTP_OP_GLU_SWIGLU, HTP_OP_GLU_SWIGLU_OAI, HTP_OP_GLU_GEGLU,
    SO /* GEGLU_QUICK */, HTP_OP_SOFTMAX, HTP_OP_ADD_ID, HTP_OP_ROPE, HTP_OP_FLASH_ATTN_EXT, HTP_OP_SET_ROWS,
    HTP_OP_GET_ROWS, HTP_OP_SCALE, HTP_OP_CPY, HD_OP_CPY_FENCE, HTP_OP_ARGSORT, SO /* TOP_K */, HTP_OP_SQR,
    HTP_OP_SQRT, HTP_OP_SUM_ROWS, HTP_OP_SSM_CONV, HTP_OP_REPEAT, HTP_OP_CUMSUM, HTP_OP_FILL, HTP_OP_DIAG,
    HTP_OP_SOLVE_TRI, HTP_OP_L2_NORM, HTP_OP_GATED_DELTA_NET, HTP_OP_TRI, HTP_OP_PAD, HTP_OP_NORM, HTP_OP_CONCAT,
    HTP_OP_CLAMP, HD_OP_LEAKY_RELU, HTP_OP_IM2COL, HD_OP_FENCE, HD_OP_ALLREDUCE, HD_OP_ALLREDUCE_ADD,
    SO /* GLU_SWIGLU_CLAMP */, HD_OP_MDEV_GROUP, SO /* ROLL */,
};
#undef SO
_Static_assert(sizeof fence_opcodes / sizeof *fence_opcodes == 60, "fence opcode table: 0..59");

uint32_t hd_map_opcode(uint32_t wire) {
    switch (hd.cfg.protocol) {
    case HD_PROTO_FENCE: return wire < sizeof fence_opcodes / sizeof *fence_opcodes ? fence_opcodes[wire] : HD_OP_COUNT;
    case HD_PROTO_QDEV: return wire < HTP_OP_INVALID ? wire : wire == HTP_OP_INVALID ? HD_OP_FENCE : HD_OP_COUNT;
    default: return wire < HTP_OP_INVALID ? wire : HD_OP_COUNT;
    }
}

uint32_t hd_type_size(uint32_t type) {
    switch (type) {
    case HTP_TYPE_F32: case HTP_TYPE_I32: return 4;
    case HTP_TYPE_F16: return 2;
    case HTP_TYPE_I64: return 8;
    case HD_TYPE_I8: return 1;
    case HTP_TYPE_Q4_0: case HTP_TYPE_IQ4_NL: case HTP_TYPE_Q4_0_TILED: return 18;
    case HTP_TYPE_Q4_1: case HTP_TYPE_Q4_1_TILED: return 20;
    case HTP_TYPE_Q8_0: case HTP_TYPE_Q8_0_TILED: return 34;
    case HTP_TYPE_MXFP4: case HTP_TYPE_MXFP4_TILED: return 17;
    default: return 0;
    }
}

uint32_t hd_type_blck(uint32_t type) {
    switch (type) {
    case HTP_TYPE_F32: case HTP_TYPE_I32: case HTP_TYPE_F16: case HTP_TYPE_I64: case HD_TYPE_I8: return 1;
    default: return hd_type_size(type) ? 32 : 0;
    }
}

/* ---------------------------------------------------------------- element access */

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t) (h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else {
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | ((uint32_t) (127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) bits = sign | 0x7f800000u | (man << 13);
    else bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* round to nearest even, as ggml's F32->F16 conversion */
static uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t) (sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) return (uint16_t) (sign | 0x7c00); /* overflow after rounding */
    if (ax < 0x38800000u) { /* subnormal half */
        if (ax < 0x33000000u) return (uint16_t) sign;
        uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e; /* 14 + (113 - e) */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t) (sign | r);
    }
    uint32_t r = ((ax >> 13) - (112u << 10));
    uint32_t rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t) (sign | r);
}

#define NE(t, i) ((int64_t) (t)->d->ne[i])
#define NB(t, i) ((int64_t) (t)->d->nb[i])
#define TY(t) ((t)->d->type)

static inline uint8_t *at(const struct hd_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return t->p + i0 * NB(t, 0) + i1 * NB(t, 1) + i2 * NB(t, 2) + i3 * NB(t, 3);
}

static inline float ld(const struct hd_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const uint8_t *p = at(t, i0, i1, i2, i3);
    switch (TY(t)) {
    case HTP_TYPE_F32: { float v; memcpy(&v, p, 4); return v; }
    case HTP_TYPE_F16: { uint16_t v; memcpy(&v, p, 2); return half_to_float(v); }
    case HTP_TYPE_I32: { int32_t v; memcpy(&v, p, 4); return (float) v; }
    default: return NAN;
    }
}

static inline void st(const struct hd_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    uint8_t *p = at(t, i0, i1, i2, i3);
    if (TY(t) == HTP_TYPE_F32) memcpy(p, &v, 4);
    else { uint16_t h = float_to_half(v); memcpy(p, &h, 2); }
}

static int64_t ld_index(const struct hd_tensor *t, int64_t i0, int64_t i1, int64_t i2) {
    const uint8_t *p = at(t, i0, i1, i2, 0);
    if (TY(t) == HTP_TYPE_I64) { int64_t v; memcpy(&v, p, 8); return v; }
    int32_t v; memcpy(&v, p, 4); return v;
}

static float param_f(const struct hd_op *op, int i) { float f; memcpy(&f, &op->params[i], 4); return f; }

static int is_float(const struct hd_tensor *t) { return t && (TY(t) == HTP_TYPE_F32 || TY(t) == HTP_TYPE_F16); }
static int is_index(const struct hd_tensor *t) { return t && (TY(t) == HTP_TYPE_I32 || TY(t) == HTP_TYPE_I64); }
static int same_shape(const struct hd_tensor *a, const struct hd_tensor *b) {
    for (int i = 0; i < 4; i++) if (NE(a, i) != NE(b, i)) return 0;
    return 1;
}
static int repeats(const struct hd_tensor *small, const struct hd_tensor *big) {
    for (int i = 0; i < 4; i++) if (NE(big, i) % NE(small, i)) return 0;
    return 1;
}
static int64_t nelements(const struct hd_tensor *t) { return NE(t, 0) * NE(t, 1) * NE(t, 2) * NE(t, 3); }

#define FOR_ROWS(t) \
    for (int64_t i3 = 0; i3 < NE(t, 3); i3++) \
        for (int64_t i2 = 0; i2 < NE(t, 2); i2++) \
            for (int64_t i1 = 0; i1 < NE(t, 1); i1++)

/* ---------------------------------------------------------------- element-wise */

static int op_binary(uint32_t opc, struct hd_tensor *a, struct hd_tensor *b, struct hd_tensor *d) {
    if (!a || !b) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(b) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    if (!same_shape(a, d) || !repeats(b, a)) return HTP_STATUS_INVAL_PARAMS;
    FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++) {
        float x = ld(a, i0, i1, i2, i3);
        float y = ld(b, i0 % NE(b, 0), i1 % NE(b, 1), i2 % NE(b, 2), i3 % NE(b, 3));
        float r = opc == HTP_OP_ADD ? x + y : opc == HTP_OP_SUB ? x - y : opc == HTP_OP_MUL ? x * y : x / y;
        st(d, i0, i1, i2, i3, r);
    }
    return HTP_STATUS_OK;
}

static float gelu(float x) {
    const double c = 0.79788456080286535587989211986876; /* sqrt(2/pi) */
    return (float) (0.5 * x * (1.0 + tanh(c * x * (1.0 + 0.044715 * (double) x * x))));
}

static float unary(uint32_t opc, float x, float s, float b) {
    switch (opc) {
    case HTP_OP_UNARY_SILU: return x / (1.0f + expf(-x));
    /* d99724f's DSP computes UNARY_GELU (for GELU and GELU_QUICK alike) as x * sigmoid(1.702 x) */
    case HTP_OP_UNARY_GELU: return hd.cfg.gelu_tanh ? gelu(x) : x / (1.0f + expf(-1.702f * x));
    case HTP_OP_UNARY_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case HTP_OP_UNARY_EXP: return expf(x);
    case HTP_OP_UNARY_NEG: return -x;
    case HTP_OP_UNARY_SOFTPLUS: return x > 20.0f ? x : log1pf(expf(x));
    case HTP_OP_UNARY_TANH: return tanhf(x);
    case HTP_OP_SQR: return x * x;
    case HTP_OP_SQRT: return sqrtf(x);
    case HTP_OP_SCALE: return x * s + b;
    case HD_OP_ABS: return fabsf(x);
    case HD_OP_LOG: return logf(x);
    case HD_OP_RELU: return x > 0 ? x : 0.0f;
    case HD_OP_LEAKY_RELU: return x > 0 ? x : x * s;
    default: return NAN;
    }
}

static int op_unary(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    if (!same_shape(a, d)) return HTP_STATUS_INVAL_PARAMS;
    float s = param_f(op, 0), b = param_f(op, 1);
    FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++)
        st(d, i0, i1, i2, i3, unary(op->opcode, ld(a, i0, i1, i2, i3), s, b));
    return HTP_STATUS_OK;
}

static int op_rms_norm(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *w, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d) || (w && !is_float(w))) return HTP_STATUS_NO_SUPPORT;
    if (!same_shape(a, d) || (w && !repeats(w, a))) return HTP_STATUS_INVAL_PARAMS;
    float eps = param_f(op, 0);
    FOR_ROWS(d) {
        double ss = 0;
        for (int64_t i0 = 0; i0 < NE(a, 0); i0++) { double x = ld(a, i0, i1, i2, i3); ss += x * x; }
        float scale = (float) (1.0 / sqrt(ss / (double) NE(a, 0) + eps));
        for (int64_t i0 = 0; i0 < NE(d, 0); i0++) {
            float v = ld(a, i0, i1, i2, i3) * scale;
            if (w) v *= ld(w, i0 % NE(w, 0), i1 % NE(w, 1), i2 % NE(w, 2), i3 % NE(w, 3));
            st(d, i0, i1, i2, i3, v);
        }
    }
    return HTP_STATUS_OK;
}

static int op_glu(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *b, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d) || (b && !is_float(b))) return HTP_STATUS_NO_SUPPORT;
    int swapped = op->params[1] != 0;
    int64_t nc = b ? NE(a, 0) : NE(a, 0) / 2;
    if (NE(d, 0) != nc || NE(d, 1) != NE(a, 1) || NE(d, 2) != NE(a, 2) || NE(d, 3) != NE(a, 3)) return HTP_STATUS_INVAL_PARAMS;
    if (b && !same_shape(a, b)) return HTP_STATUS_INVAL_PARAMS;
    float alpha = param_f(op, 2), limit = param_f(op, 3);
    FOR_ROWS(d) for (int64_t k = 0; k < nc; k++) {
        float x, y;
        if (b) { x = ld(a, k, i1, i2, i3); y = ld(b, k, i1, i2, i3); }
        else {
            x = ld(a, k + (swapped ? nc : 0), i1, i2, i3);
            y = ld(a, k + (swapped ? 0 : nc), i1, i2, i3);
        }
        float r;
        if (op->opcode == HTP_OP_GLU_SWIGLU) r = x / (1.0f + expf(-x)) * y;
        else if (op->opcode == HTP_OP_GLU_GEGLU) r = gelu(x) * y;
        else {
            x = fminf(x, limit);
            y = fmaxf(fminf(y, limit), -limit);
            r = x / (1.0f + expf(alpha * (-x))) * (y + 1.0f);
        }
        st(d, k, i1, i2, i3, r);
    }
    return HTP_STATUS_OK;
}

/* ALiBi slope of head h, as ggml's soft_max / flash_attn_ext */
static float alibi_slope(float max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0.0f) return 1.0f;
    uint32_t n_head_log2 = 1u << (uint32_t) floor(log2((double) n_head));
    float m0 = powf(2.0f, -max_bias / (float) n_head_log2);
    float m1 = powf(2.0f, -(max_bias / 2.0f) / (float) n_head_log2);
    return h < n_head_log2 ? powf(m0, (float) (h + 1)) : powf(m1, (float) (2 * (h - n_head_log2) + 1));
}

static int op_softmax(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *mask, struct hd_tensor *sinks,
                      struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d) || (mask && !is_float(mask)) || (sinks && TY(sinks) != HTP_TYPE_F32))
        return HTP_STATUS_NO_SUPPORT;
    if (!same_shape(a, d)) return HTP_STATUS_INVAL_PARAMS;
    if (mask && (NE(mask, 0) != NE(a, 0) || NE(mask, 1) < NE(a, 1) || NE(a, 2) % NE(mask, 2) || NE(a, 3) % NE(mask, 3)))
        return HTP_STATUS_INVAL_PARAMS;
    if (sinks && NE(sinks, 0) < NE(a, 2)) return HTP_STATUS_INVAL_PARAMS;
    float scale = param_f(op, 0), max_bias = param_f(op, 1);
    int64_t n = NE(a, 0);
    double *row = malloc(sizeof *row * (size_t) n);
    if (!row) return HTP_STATUS_INTERNAL_ERR;
    FOR_ROWS(d) {
        float slope = alibi_slope(max_bias, NE(a, 2), i2);
        double mx = -INFINITY;
        for (int64_t i0 = 0; i0 < n; i0++) {
            double v = (double) ld(a, i0, i1, i2, i3) * scale;
            if (mask) v += (double) slope * ld(mask, i0, i1, i2 % NE(mask, 2), i3 % NE(mask, 3));
            row[i0] = v;
            if (v > mx) mx = v;
        }
        double sink = sinks ? ld(sinks, i2, 0, 0, 0) : -INFINITY;
        if (sink > mx) mx = sink;
        double sum = sinks ? exp(sink - mx) : 0.0;
        for (int64_t i0 = 0; i0 < n; i0++) { row[i0] = mx == -INFINITY ? 0.0 : exp(row[i0] - mx); sum += row[i0]; }
        for (int64_t i0 = 0; i0 < n; i0++) st(d, i0, i1, i2, i3, sum > 0 ? (float) (row[i0] / sum) : 0.0f);
    }
    free(row);
    return HTP_STATUS_OK;
}

/* ---------------------------------------------------------------- rope */

static float yarn_ramp(float low, float high, int i0) {
    float y = ((float) i0 / 2 - low) / fmaxf(0.001f, high - low);
    return 1.0f - fminf(1.0f, fmaxf(0.0f, y));
}

static float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return (float) n_dims * logf((float) n_ctx_orig / (n_rot * 2.0f * 3.14159265358979323846f)) / (2.0f * logf(base));
}

/* ggml_rope_type: NEOX 2, MROPE 8, VISION 24 (MROPE | 16), IMROPE 40 (MROPE | 32) */
enum { ROPE_NEOX = 2, ROPE_MROPE = 8, ROPE_VISION = 24, ROPE_IMROPE = 40 };

/* Which of the four positions (t, h, w, e) pair `sector` of a multi-section rope turns by: consecutive sections,
 * or for IMROPE the t/h/w sections interleaved with period 3 (ggml CPU's mrope cache). */
static int mrope_axis(const int32_t s[4], int imrope, int sector) {
    if (imrope) {
        if (sector % 3 == 1 && sector < 3 * s[1]) return 1;
        if (sector % 3 == 2 && sector < 3 * s[2]) return 2;
        if (sector % 3 == 0 && sector < 3 * s[0]) return 0;
        return 3;
    }
    if (sector < s[0]) return 0;
    if (sector < s[0] + s[1]) return 1;
    if (sector < s[0] + s[1] + s[2]) return 2;
    return 3;
}

static int op_rope(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *pos, struct hd_tensor *ff,
                   struct hd_tensor *d) {
    if (!a || !pos) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d) || TY(pos) != HTP_TYPE_I32 || (ff && TY(ff) != HTP_TYPE_F32)) return HTP_STATUS_NO_SUPPORT;
    int n_dims = op->params[1], mode = op->params[2], n_ctx_orig = op->params[4], n_offs = op->params[15];
    if (mode != 0 && mode != ROPE_NEOX && mode != ROPE_MROPE && mode != ROPE_VISION && mode != ROPE_IMROPE)
        return HTP_STATUS_NO_SUPPORT;
    int mrope = (mode & ROPE_MROPE) != 0, vision = mode == ROPE_VISION;
    const int32_t *sec = &op->params[11];
    int sect_dims = sec[0] + sec[1] + sec[2] + sec[3];
    /* VISION turns pairs (i, i + n_dims) over the whole row, so it rotates 2 * n_dims values */
    int n_rot = vision ? 2 * n_dims : n_dims;
    if (!same_shape(a, d) || n_dims <= 0 || n_dims % 2 || n_offs < 0 || n_offs % 2 || n_offs + n_rot > NE(a, 0) ||
        (vision && n_offs + n_rot != NE(a, 0)) || NE(pos, 0) < (mrope ? 4 : 1) * NE(a, 2) ||
        (ff && NE(ff, 0) < n_rot / 2) ||
        (mrope && (sec[0] < 0 || sec[1] < 0 || sec[2] < 0 || sec[3] < 0 || sect_dims <= 0 || sect_dims > NE(a, 0))))
        return HTP_STATUS_INVAL_PARAMS;
    float freq_base = param_f(op, 5), freq_scale = param_f(op, 6), ext_factor = param_f(op, 7),
          attn_factor = param_f(op, 8), beta_fast = param_f(op, 9), beta_slow = param_f(op, 10);
    float theta_scale = powf(freq_base, -2.0f / (float) n_dims);
    float corr[2];
    corr[0] = fmaxf(0.0f, floorf(yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base)));
    corr[1] = fminf((float) (n_dims - 1), ceilf(yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base)));
    float *cs = malloc(sizeof *cs * (size_t) n_rot);
    if (!cs) return HTP_STATUS_INTERNAL_ERR;
    for (int64_t i3 = 0; i3 < NE(a, 3); i3++)
        for (int64_t i2 = 0; i2 < NE(a, 2); i2++) {
            /* ggml keeps one running theta per position and multiplies each by theta_scale every pair (float) */
            float base[4], theta[4];
            for (int k = 0; k < 4; k++) base[k] = theta[k] = ld(pos, i2 + (mrope ? k * NE(a, 2) : 0), 0, 0, 0);
            for (int i0 = 0; i0 < n_rot; i0 += 2) {
                int axis = 0;
                if (mrope) {
                    int sector = (i0 / 2) % sect_dims;
                    /* VISION restarts each section's theta at its first pair */
                    if (vision) {
                        if (sector == 0) theta[0] = base[0];
                        else if (sector == sec[0]) theta[1] = base[1];
                        else if (sector == sec[0] + sec[1]) theta[2] = base[2];
                        else if (sector == sec[0] + sec[1] + sec[2]) theta[3] = base[3];
                    }
                    axis = mrope_axis(sec, mode == ROPE_IMROPE, sector);
                }
                float f = ff ? ld(ff, i0 / 2, 0, 0, 0) : 1.0f;
                float extrap = theta[axis] / f, interp = freq_scale * extrap, th = interp, mscale = attn_factor;
                if (ext_factor != 0.0f) {
                    float mix = yarn_ramp(corr[0], corr[1], i0) * ext_factor;
                    th = interp * (1 - mix) + extrap * mix;
                    mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
                }
                cs[i0] = cosf(th) * mscale;
                cs[i0 + 1] = sinf(th) * mscale;
                for (int k = 0; k < 4; k++) theta[k] *= theta_scale;
            }
            /* NORMAL turns adjacent pairs; NEOX / MROPE / IMROPE pair i with i + n_dims/2, VISION i with i + n_dims */
            int64_t half = vision ? n_dims : n_dims / 2;
            for (int64_t i1 = 0; i1 < NE(a, 1); i1++) {
                for (int64_t i0 = 0; i0 < NE(a, 0); i0++) st(d, i0, i1, i2, i3, ld(a, i0, i1, i2, i3));
                for (int i0 = 0; i0 < n_rot; i0 += 2) {
                    int64_t j0 = mode == 0 ? n_offs + i0 : n_offs + i0 / 2;
                    int64_t j1 = mode == 0 ? j0 + 1 : j0 + half;
                    float x0 = ld(a, j0, i1, i2, i3), x1 = ld(a, j1, i1, i2, i3);
                    st(d, j0, i1, i2, i3, x0 * cs[i0] - x1 * cs[i0 + 1]);
                    st(d, j1, i1, i2, i3, x0 * cs[i0 + 1] + x1 * cs[i0]);
                }
            }
        }
    free(cs);
    return HTP_STATUS_OK;
}

/* ---------------------------------------------------------------- rows and copies */

static int op_get_rows(struct hd_tensor *a, struct hd_tensor *idx, struct hd_tensor *d) {
    if (!a || !idx) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_index(idx) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    if (NE(d, 0) != NE(a, 0) || NE(d, 1) != NE(idx, 0) || NE(d, 2) != NE(idx, 1) || NE(d, 3) != NE(idx, 2))
        return HTP_STATUS_INVAL_PARAMS;
    for (int64_t i12 = 0; i12 < NE(idx, 2); i12++)
        for (int64_t i11 = 0; i11 < NE(idx, 1); i11++)
            for (int64_t i10 = 0; i10 < NE(idx, 0); i10++) {
                int64_t r = ld_index(idx, i10, i11, i12);
                if (r < 0 || r >= NE(a, 1) || i11 >= NE(a, 2) || i12 >= NE(a, 3)) return HTP_STATUS_INVAL_PARAMS;
                for (int64_t i0 = 0; i0 < NE(a, 0); i0++) st(d, i0, i10, i11, i12, ld(a, i0, r, i11, i12));
            }
    return HTP_STATUS_OK;
}

static int op_set_rows(struct hd_tensor *a, struct hd_tensor *idx, struct hd_tensor *d) {
    if (!a || !idx) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_index(idx) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    if (NE(a, 0) != NE(d, 0) || NE(a, 2) != NE(d, 2) || NE(a, 3) != NE(d, 3) || NE(idx, 0) != NE(a, 1) ||
        NE(a, 2) % NE(idx, 1) || NE(a, 3) % NE(idx, 2))
        return HTP_STATUS_INVAL_PARAMS;
    FOR_ROWS(a) {
        int64_t r = ld_index(idx, i1, i2 % NE(idx, 1), i3 % NE(idx, 2));
        if (r < 0 || r >= NE(d, 1)) return HTP_STATUS_INVAL_PARAMS;
        for (int64_t i0 = 0; i0 < NE(a, 0); i0++) st(d, i0, r, i2, i3, ld(a, i0, i1, i2, i3));
    }
    return HTP_STATUS_OK;
}

static int op_cpy(struct hd_tensor *a, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    if (nelements(a) != nelements(d)) return HTP_STATUS_INVAL_PARAMS;
    int64_t j[4] = { 0, 0, 0, 0 };
    FOR_ROWS(a) for (int64_t i0 = 0; i0 < NE(a, 0); i0++) {
        st(d, j[0], j[1], j[2], j[3], ld(a, i0, i1, i2, i3));
        for (int k = 0; k < 4 && ++j[k] == NE(d, k); k++) j[k] = 0;
    }
    return HTP_STATUS_OK;
}

/* ---------------------------------------------------------------- flash attention */

static int op_flash_attn(const struct hd_op *op, struct hd_tensor *q, struct hd_tensor *k, struct hd_tensor *v,
                         struct hd_tensor *mask, struct hd_tensor *sinks, struct hd_tensor *d) {
    if (!q || !k || !v) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(q) || !is_float(k) || !is_float(v) || !is_float(d) || (mask && !is_float(mask)) ||
        (sinks && TY(sinks) != HTP_TYPE_F32))
        return HTP_STATUS_NO_SUPPORT;
    int64_t D = NE(q, 0), DV = NE(v, 0), nq = NE(q, 1), H = NE(q, 2), B = NE(q, 3), nkv = NE(k, 1);
    if (NE(k, 0) != D || NE(v, 1) != nkv || NE(k, 2) != NE(v, 2) || H % NE(k, 2) || B % NE(k, 3) ||
        NE(d, 0) != DV || NE(d, 1) != H || NE(d, 2) != nq || NE(d, 3) != B)
        return HTP_STATUS_INVAL_PARAMS;
    if (mask && (NE(mask, 0) < nkv || NE(mask, 1) < nq || H % NE(mask, 2) || B % NE(mask, 3))) return HTP_STATUS_INVAL_PARAMS;
    if (sinks && NE(sinks, 0) < H) return HTP_STATUS_INVAL_PARAMS;
    float scale = param_f(op, 0), max_bias = param_f(op, 1), softcap = param_f(op, 2);
    if (softcap != 0.0f) scale /= softcap;
    double *s = malloc(sizeof *s * (size_t) nkv), *acc = malloc(sizeof *acc * (size_t) DV);
    if (!s || !acc) { free(s); free(acc); return HTP_STATUS_INTERNAL_ERR; }
    int64_t rk2 = H / NE(k, 2), rk3 = B / NE(k, 3);
    for (int64_t i3 = 0; i3 < B; i3++)
        for (int64_t h = 0; h < H; h++) {
            float slope = alibi_slope(max_bias, H, h);
            int64_t kh = h / rk2, kb = i3 / rk3;
            for (int64_t iq = 0; iq < nq; iq++) {
                double mx = -INFINITY;
                for (int64_t c = 0; c < nkv; c++) {
                    double mv = mask ? ld(mask, c, iq, h % NE(mask, 2), i3 % NE(mask, 3)) : 0.0;
                    if (mv == -INFINITY) { s[c] = -INFINITY; continue; }
                    double dot = 0;
                    for (int64_t e = 0; e < D; e++) dot += (double) ld(q, e, iq, h, i3) * ld(k, e, c, kh, kb);
                    double sc = dot * scale;
                    if (softcap != 0.0f) sc = softcap * tanh(sc);
                    sc += slope * mv;
                    s[c] = sc;
                    if (sc > mx) mx = sc;
                }
                double sink = sinks ? ld(sinks, h, 0, 0, 0) : -INFINITY;
                if (sink > mx) mx = sink;
                double sum = sinks && mx != -INFINITY ? exp(sink - mx) : 0.0;
                for (int64_t e = 0; e < DV; e++) acc[e] = 0;
                for (int64_t c = 0; c < nkv; c++) {
                    if (s[c] == -INFINITY) continue;
                    double w = exp(s[c] - mx);
                    sum += w;
                    for (int64_t e = 0; e < DV; e++) acc[e] += w * ld(v, e, c, kh, kb);
                }
                for (int64_t e = 0; e < DV; e++) st(d, e, h, iq, i3, sum > 0 ? (float) (acc[e] / sum) : 0.0f);
            }
        }
    free(s);
    free(acc);
    return HTP_STATUS_OK;
}

/* ---------------------------------------------------------------- matmul */

static const int8_t kvalues_iq4nl[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };
static const int8_t kvalues_mxfp4[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

static uint32_t base_quant(uint32_t type) {
    switch (type) {
    case HTP_TYPE_Q4_0_TILED: return HTP_TYPE_Q4_0;
    case HTP_TYPE_Q4_1_TILED: return HTP_TYPE_Q4_1;
    case HTP_TYPE_Q8_0_TILED: return HTP_TYPE_Q8_0;
    case HTP_TYPE_MXFP4_TILED: return HTP_TYPE_MXFP4;
    default: return type;
    }
}

static size_t tile_bytes(uint32_t qt) {
    switch (qt) {
    case HTP_TYPE_Q4_0: case HTP_TYPE_IQ4_NL: return 576;
    case HTP_TYPE_Q4_1: return 640;
    case HTP_TYPE_Q8_0: return 1088;
    case HTP_TYPE_MXFP4: return 544;
    default: return 0;
    }
}

static float f16_at(const uint8_t *p) { uint16_t h; memcpy(&h, p, 2); return half_to_float(h); }

/* Row n (an output row) of a tiled weight matrix, K elements. Tiles are 32 rows x 32 K; tile (ct, kt) is at
 * (ct * n_ktiles + kt) * tile_bytes. */
static void dequant_tiled_row(uint32_t qt, const uint8_t *mat, int64_t n_ktiles, int64_t n, int64_t K, float *out) {
    size_t tb = tile_bytes(qt);
    int64_t ct = n / 32, row = n % 32;
    for (int64_t kt = 0; kt * 32 < K; kt++) {
        const uint8_t *tile = mat + (size_t) (ct * n_ktiles + kt) * tb;
        /* a row's scale (and Q4_1's minimum) is one per tile: converted once, not per element (the real
         * models' test spent a third of its time converting the same halves) */
        float d = 0, m = 0;
        switch (qt) {
        case HTP_TYPE_Q8_0: d = f16_at(tile + 1024 + 2 * row); break;
        case HTP_TYPE_Q4_0: case HTP_TYPE_IQ4_NL: d = f16_at(tile + 512 + 2 * row); break;
        case HTP_TYPE_Q4_1: d = f16_at(tile + 512 + 4 * row); m = f16_at(tile + 512 + 4 * row + 2); break;
        default: d = ldexpf(1.0f, (int) tile[512 + row] - 128); break;
        }
        for (int k = 0; k < 32 && kt * 32 + k < K; k++) {
            float v;
            if (qt == HTP_TYPE_Q8_0) {
                int8_t q = (int8_t) tile[(k / 2) * 64 + 2 * row + (k % 2)];
                v = (float) q * d;
            } else {
                uint8_t byte = tile[(k / 2) * 32 + row];
                int q = k % 2 ? byte >> 4 : byte & 0xf;
                switch (qt) {
                case HTP_TYPE_Q4_0: v = (float) (q - 8) * d; break;
                case HTP_TYPE_IQ4_NL: v = (float) kvalues_iq4nl[q] * d; break;
                case HTP_TYPE_Q4_1: v = (float) q * d + m; break;
                default: v = (float) kvalues_mxfp4[q] * d; break;
                }
            }
            out[kt * 32 + k] = v;
        }
    }
}

/* Row n of a weight in ggml's flat block layout (fence protocol without the TILED flag). */
static void dequant_flat_row(uint32_t qt, const uint8_t *rowp, int64_t K, float *out) {
    uint32_t bs = hd_type_size(qt);
    for (int64_t kb = 0; kb * 32 < K; kb++) {
        const uint8_t *blk = rowp + (size_t) kb * bs;
        /* one scale (and Q4_1's minimum) a block, converted once as in dequant_tiled_row */
        float d = qt == HTP_TYPE_MXFP4 ? ldexpf(1.0f, (int) blk[0] - 128) : f16_at(blk);
        float m = qt == HTP_TYPE_Q4_1 ? f16_at(blk + 2) : 0;
        for (int k = 0; k < 32 && kb * 32 + k < K; k++) {
            float v;
            if (qt == HTP_TYPE_Q8_0) v = (float) (int8_t) blk[2 + k] * d;
            else {
                const uint8_t *qs = blk + (qt == HTP_TYPE_Q4_1 ? 4 : qt == HTP_TYPE_MXFP4 ? 1 : 2);
                int q = k < 16 ? qs[k] & 0xf : qs[k - 16] >> 4;
                switch (qt) {
                case HTP_TYPE_Q4_0: v = (float) (q - 8) * d; break;
                case HTP_TYPE_IQ4_NL: v = (float) kvalues_iq4nl[q] * d; break;
                case HTP_TYPE_Q4_1: v = (float) q * d + m; break;
                default: v = (float) kvalues_mxfp4[q] * d; break;
                }
            }
            out[kb * 32 + k] = v;
        }
    }
}

/* The weight operand of MUL_MAT / MUL_MAT_ID: a float matrix, a tiled quantized one or, with protocol=fence and no
 * TILED flag, quantized in ggml's flat layout. A tiled weight's ne may be its own (ne1 not a multiple of 32) or
 * already padded; either way its bytes are the padded layout of hexagon.md 10 (nb2 = nb1 * ne1_pad), which is
 * what the extent is checked against, and only the real rows are read. */
struct weight { struct hd_tensor *t; uint32_t qt; int quant, tiled; };

static int64_t ktiles(const struct hd_tensor *t) { return (NE(t, 0) + 31) / 32; }

static int weight_init(struct weight *w, struct hd_tensor *t, int64_t K, int64_t N) {
    w->t = t;
    w->qt = base_quant(TY(t));
    w->quant = tile_bytes(w->qt) != 0;
    /* d99724f repacks every quantized weight; the later protocols say so with TILED (qdev: REPACK), both 1 << 1 */
    w->tiled = w->quant && (hd.cfg.protocol == HD_PROTO_PUBLIC || w->qt != TY(t) || (t->d->flags & HD_FENCE_TENSOR_TILED));
    if (!w->quant && !is_float(t)) return HTP_STATUS_NO_SUPPORT;
    if (!w->tiled) return NE(t, 0) != K || NE(t, 1) < N ? HTP_STATUS_INVAL_PARAMS : HTP_STATUS_OK;
    uint64_t mat = (uint64_t) tile_bytes(w->qt) * (uint64_t) ktiles(t) * (uint64_t) ((NE(t, 1) + 31) / 32);
    if (NE(t, 0) % 32 || K > NE(t, 0) || N > NE(t, 1) || (NE(t, 2) > 1 && mat > (uint64_t) NB(t, 2)) ||
        (NE(t, 3) > 1 && mat * (uint64_t) NE(t, 2) > (uint64_t) NB(t, 3)) ||
        (uint64_t) (NE(t, 2) - 1) * NB(t, 2) + (uint64_t) (NE(t, 3) - 1) * NB(t, 3) + mat > t->d->size)
        return HTP_STATUS_INVAL_PARAMS;
    return HTP_STATUS_OK;
}

int hd_weight_layout(const struct hd_tensor *t, int64_t K, int64_t N, uint32_t *qt, int *tiled) {
    struct weight w;
    int rc = weight_init(&w, (struct hd_tensor *) t, K, N);
    *qt = w.qt;
    *tiled = w.tiled;
    return rc;
}

size_t hd_tile_bytes(uint32_t qt) { return tile_bytes(qt); }

static void weight_row(const struct weight *w, int64_t n, int64_t i2, int64_t i3, int64_t K, float *row) {
    if (w->tiled) dequant_tiled_row(w->qt, at(w->t, 0, 0, i2, i3), ktiles(w->t), n, K, row);
    else if (w->quant) dequant_flat_row(w->qt, at(w->t, 0, n, i2, i3), K, row);
    else for (int64_t k = 0; k < K; k++) row[k] = ld(w->t, k, n, i2, i3);
}

static double dot(const float *row, const float *x, int64_t K) {
    double acc = 0;
    for (int64_t k = 0; k < K; k++) acc += (double) row[k] * x[k];
    return acc;
}

static int op_mul_mat(struct hd_tensor *w, struct hd_tensor *x, struct hd_tensor *add, struct hd_tensor *d) {
    if (!w || !x) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(x) || !is_float(d) || (add && !is_float(add))) return HTP_STATUS_NO_SUPPORT;
    int64_t K = NE(x, 0), N = NE(d, 0), M = NE(x, 1);
    struct weight wt;
    int rc = weight_init(&wt, w, K, N);
    if (rc != HTP_STATUS_OK) return rc;
    if ((!wt.tiled && NE(w, 1) != N) || NE(d, 1) != M || NE(d, 2) != NE(x, 2) || NE(d, 3) != NE(x, 3) ||
        NE(x, 2) % NE(w, 2) || NE(x, 3) % NE(w, 3) || (add && !repeats(add, d)))
        return HTP_STATUS_INVAL_PARAMS;
    int64_t r2 = NE(x, 2) / NE(w, 2), r3 = NE(x, 3) / NE(w, 3);
    float *row = malloc(sizeof *row * (size_t) K), *xs = malloc(sizeof *xs * (size_t) (K * M));
    if (!row || !xs) { free(row); free(xs); return HTP_STATUS_INTERNAL_ERR; }
    for (int64_t i3 = 0; i3 < NE(d, 3); i3++)
        for (int64_t i2 = 0; i2 < NE(d, 2); i2++) {
            /* the activations of this matrix, converted once */
            for (int64_t m = 0; m < M; m++)
                for (int64_t k = 0; k < K; k++) xs[m * K + k] = ld(x, k, m, i2, i3);
            for (int64_t n = 0; n < N; n++) {
                weight_row(&wt, n, i2 / r2, i3 / r3, K, row);
                for (int64_t m = 0; m < M; m++) {
                    double acc = dot(row, xs + m * K, K);
                    if (add) acc += ld(add, n % NE(add, 0), m % NE(add, 1), i2 % NE(add, 2), i3 % NE(add, 3));
                    st(d, n, m, i2, i3, (float) acc);
                }
            }
        }
    free(row);
    free(xs);
    return HTP_STATUS_OK;
}

/* dst[:, e, t] = as[ids[e, t]] . b[:, e % ne11, t] */
static int op_mul_mat_id(struct hd_tensor *as, struct hd_tensor *b, struct hd_tensor *ids, struct hd_tensor *d) {
    if (!as || !b || !ids) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(b) || !is_float(d) || TY(ids) != HTP_TYPE_I32) return HTP_STATUS_NO_SUPPORT;
    int64_t K = NE(b, 0), N = NE(d, 0), n_used = NE(ids, 0), T = NE(ids, 1);
    struct weight wt;
    int rc = weight_init(&wt, as, K, N);
    if (rc != HTP_STATUS_OK) return rc;
    if (NE(d, 1) != n_used || NE(d, 2) != T || NE(b, 2) != T || n_used % NE(b, 1) || NE(as, 3) != 1)
        return HTP_STATUS_INVAL_PARAMS;
    float *row = malloc(sizeof *row * (size_t) K), *xs = malloc(sizeof *xs * (size_t) K);
    if (!row || !xs) { free(row); free(xs); return HTP_STATUS_INTERNAL_ERR; }
    for (int64_t t = 0; t < T; t++)
        for (int64_t e = 0; e < n_used; e++) {
            int64_t ex = ld_index(ids, e, t, 0);
            if (ex < 0 || ex >= NE(as, 2)) { free(row); free(xs); return HTP_STATUS_INVAL_PARAMS; }
            for (int64_t k = 0; k < K; k++) xs[k] = ld(b, k, e % NE(b, 1), t, 0);
            for (int64_t n = 0; n < N; n++) {
                weight_row(&wt, n, ex, 0, K, row);
                st(d, n, e, t, 0, (float) dot(row, xs, K));
            }
        }
    free(row);
    free(xs);
    return HTP_STATUS_OK;
}

/* ---------------------------------------------------------------- more row ops and shape ops */

static int op_reduce_norm(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    int sum_rows = op->opcode == HTP_OP_SUM_ROWS;
    if (sum_rows ? (NE(d, 0) != 1 || NE(d, 1) != NE(a, 1) || NE(d, 2) != NE(a, 2) || NE(d, 3) != NE(a, 3)) : !same_shape(a, d))
        return HTP_STATUS_INVAL_PARAMS;
    float eps = param_f(op, 0);
    int64_t n = NE(a, 0);
    FOR_ROWS(a) {
        double sum = 0, sq = 0;
        for (int64_t i0 = 0; i0 < n; i0++) { double x = ld(a, i0, i1, i2, i3); sum += x; sq += x * x; }
        if (sum_rows) { st(d, 0, i1, i2, i3, (float) sum); continue; }
        if (op->opcode == HTP_OP_CUMSUM) {
            double c = 0;
            for (int64_t i0 = 0; i0 < n; i0++) { c += ld(a, i0, i1, i2, i3); st(d, i0, i1, i2, i3, (float) c); }
            continue;
        }
        if (op->opcode == HTP_OP_NORM) {
            /* ggml CPU's rounding: the sums run in double, but the mean, x - mean, the variance and the scale are
             * floats; with a large offset the float mean is what the result is centred on */
            float mean = (float) sum / (float) n;
            double var = 0;
            for (int64_t i0 = 0; i0 < n; i0++) { float x = ld(a, i0, i1, i2, i3) - mean; var += (double) (x * x); }
            float scale = 1.0f / sqrtf((float) var / (float) n + eps);
            for (int64_t i0 = 0; i0 < n; i0++) st(d, i0, i1, i2, i3, (ld(a, i0, i1, i2, i3) - mean) * scale);
            continue;
        }
        double scale = 1.0 / fmax(sqrt(sq), (double) eps); /* L2_NORM */
        for (int64_t i0 = 0; i0 < n; i0++) st(d, i0, i1, i2, i3, (float) (ld(a, i0, i1, i2, i3) * scale));
    }
    return HTP_STATUS_OK;
}

/* SOLVE_TRI: X with A X = B, A (n x n, ne0 = ne1 = n) lower triangular, B and X n rows of k values (ne0 = k);
 * forward substitution with a float sum, row by row as ggml CPU; A broadcasts over the batch dims. */
static int op_solve_tri(struct hd_tensor *A, struct hd_tensor *B, struct hd_tensor *d) {
    if (!A || !B) return HTP_STATUS_INVAL_PARAMS;
    if (TY(A) != HTP_TYPE_F32 || TY(B) != HTP_TYPE_F32 || TY(d) != HTP_TYPE_F32) return HTP_STATUS_NO_SUPPORT;
    int64_t n = NE(A, 0), k = NE(B, 0);
    if (NE(A, 1) != n || NE(B, 1) != n || !same_shape(B, d) || NE(A, 2) == 0 || NE(A, 3) == 0 ||
        NE(B, 2) % NE(A, 2) || NE(B, 3) % NE(A, 3))
        return HTP_STATUS_INVAL_PARAMS;
    for (int64_t i3 = 0; i3 < NE(d, 3); i3++)
        for (int64_t i2 = 0; i2 < NE(d, 2); i2++) {
            int64_t a2 = i2 % NE(A, 2), a3 = i3 % NE(A, 3);
            for (int64_t r = 0; r < n; r++)
                for (int64_t c = 0; c < k; c++) {
                    float sum = 0.0f;
                    for (int64_t t = 0; t < r; t++) sum += ld(A, t, r, a2, a3) * ld(d, c, t, i2, i3);
                    st(d, c, r, i2, i3, (ld(B, c, r, i2, i3) - sum) / ld(A, r, r, a2, a3));
                }
        }
    return HTP_STATUS_OK;
}

static int op_clamp_fill_tri(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *d) {
    if (!is_float(d) || (a && !is_float(a))) return HTP_STATUS_NO_SUPPORT;
    if (op->opcode != HTP_OP_FILL && (!a || !same_shape(a, d))) return HTP_STATUS_INVAL_PARAMS;
    float lo = param_f(op, 0), hi = param_f(op, 1);
    int tri = op->params[0];
    if (op->opcode == HTP_OP_TRI && (tri < 0 || tri > 3)) return HTP_STATUS_INVAL_PARAMS;
    FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++) {
        float v;
        if (op->opcode == HTP_OP_FILL) v = lo;
        else if (op->opcode == HTP_OP_CLAMP) v = fminf(fmaxf(ld(a, i0, i1, i2, i3), lo), hi);
        else {
            /* ggml_tri_type: UPPER_DIAG 0, UPPER 1, LOWER_DIAG 2, LOWER 3 (column i0 against row i1) */
            int keep = tri == 0 ? i0 >= i1 : tri == 1 ? i0 > i1 : tri == 2 ? i0 <= i1 : i0 < i1;
            v = keep ? ld(a, i0, i1, i2, i3) : 0.0f;
        }
        st(d, i0, i1, i2, i3, v);
    }
    return HTP_STATUS_OK;
}

/* element copy of any type the wire knows by its size (REPEAT, CONCAT, DIAG move elements, never convert) */
static void copy_elem(const struct hd_tensor *d, int64_t j0, int64_t j1, int64_t j2, int64_t j3,
                      const struct hd_tensor *s, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    memcpy(at(d, j0, j1, j2, j3), at(s, i0, i1, i2, i3), hd_type_size(TY(d)));
}

static int plain(const struct hd_tensor *t) { return hd_type_blck(TY(t)) == 1; }

static int op_repeat(struct hd_tensor *a, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!plain(a) || TY(a) != TY(d)) return HTP_STATUS_NO_SUPPORT;
    if (!repeats(a, d)) return HTP_STATUS_INVAL_PARAMS;
    FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++)
        copy_elem(d, i0, i1, i2, i3, a, i0 % NE(a, 0), i1 % NE(a, 1), i2 % NE(a, 2), i3 % NE(a, 3));
    return HTP_STATUS_OK;
}

static int op_concat(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *b, struct hd_tensor *d) {
    if (!a || !b) return HTP_STATUS_INVAL_PARAMS;
    int dim = op->params[0];
    if (!plain(a) || TY(a) != TY(b) || TY(a) != TY(d)) return HTP_STATUS_NO_SUPPORT;
    if (dim < 0 || dim > 3) return HTP_STATUS_INVAL_PARAMS;
    for (int i = 0; i < 4; i++)
        if (NE(d, i) != (i == dim ? NE(a, i) + NE(b, i) : NE(a, i)) || (i != dim && NE(b, i) != NE(a, i)))
            return HTP_STATUS_INVAL_PARAMS;
    FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++) {
        int64_t j[4] = { i0, i1, i2, i3 };
        if (j[dim] < NE(a, dim)) copy_elem(d, i0, i1, i2, i3, a, i0, i1, i2, i3);
        else {
            j[dim] -= NE(a, dim);
            copy_elem(d, i0, i1, i2, i3, b, j[0], j[1], j[2], j[3]);
        }
    }
    return HTP_STATUS_OK;
}

static int64_t wrap_index(int64_t i, int64_t n) { return ((i % n) + n) % n; }

/* ggml's PAD: params lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3 (negative ones crop) and, at [8], circular. Zero fill,
 * or with circular every element wraps around the source (ggml CPU's ggml_compute_forward_pad). */
static int op_pad(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    const int32_t *p = op->params;
    int circular = p[8] != 0;
    for (int i = 0; i < 4; i++)
        if (NE(d, i) != NE(a, i) + p[2 * i] + p[2 * i + 1] || (circular && NE(a, i) == 0 && NE(d, i) > 0))
            return HTP_STATUS_INVAL_PARAMS;
    FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++) {
        int64_t j0 = i0 - p[0], j1 = i1 - p[2], j2 = i2 - p[4], j3 = i3 - p[6];
        if (circular) {
            j0 = wrap_index(j0, NE(a, 0)); j1 = wrap_index(j1, NE(a, 1));
            j2 = wrap_index(j2, NE(a, 2)); j3 = wrap_index(j3, NE(a, 3));
        }
        int in = j0 >= 0 && j0 < NE(a, 0) && j1 >= 0 && j1 < NE(a, 1) && j2 >= 0 && j2 < NE(a, 2) && j3 >= 0 && j3 < NE(a, 3);
        st(d, i0, i1, i2, i3, in ? ld(a, j0, j1, j2, j3) : 0.0f);
    }
    return HTP_STATUS_OK;
}

static int op_diag(struct hd_tensor *a, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    if (NE(a, 1) != 1 || NE(d, 0) != NE(a, 0) || NE(d, 1) != NE(a, 0) || NE(d, 2) != NE(a, 2) || NE(d, 3) != NE(a, 3))
        return HTP_STATUS_INVAL_PARAMS;
    FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++) st(d, i0, i1, i2, i3, i0 == i1 ? ld(a, i0, 0, i2, i3) : 0.0f);
    return HTP_STATUS_OK;
}

static const struct hd_tensor *sort_t;
static int64_t sort_i1, sort_i2, sort_i3;
static int sort_desc;
static int cmp_idx(const void *x, const void *y) {
    float a = ld(sort_t, *(const int32_t *) x, sort_i1, sort_i2, sort_i3), b = ld(sort_t, *(const int32_t *) y, sort_i1, sort_i2, sort_i3);
    int c = a < b ? -1 : a > b ? 1 : *(const int32_t *) x - *(const int32_t *) y;
    return sort_desc ? -c : c;
}

static int op_argsort(const struct hd_op *op, struct hd_tensor *a, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || TY(d) != HTP_TYPE_I32) return HTP_STATUS_NO_SUPPORT;
    if (!same_shape(a, d) || op->params[0] < 0 || op->params[0] > 1) return HTP_STATUS_INVAL_PARAMS;
    int32_t *idx = malloc(sizeof *idx * (size_t) NE(a, 0));
    if (!idx) return HTP_STATUS_INTERNAL_ERR;
    FOR_ROWS(a) {
        for (int64_t i0 = 0; i0 < NE(a, 0); i0++) idx[i0] = (int32_t) i0;
        /* the DSP thread runs one op at a time; the comparator's context is per call */
        sort_t = a; sort_i1 = i1; sort_i2 = i2; sort_i3 = i3; sort_desc = op->params[0] == 1;
        qsort(idx, (size_t) NE(a, 0), sizeof *idx, cmp_idx);
        for (int64_t i0 = 0; i0 < NE(a, 0); i0++) memcpy(at(d, i0, i1, i2, i3), &idx[i0], 4);
    }
    free(idx);
    return HTP_STATUS_OK;
}

static int op_add_id(struct hd_tensor *a, struct hd_tensor *b, struct hd_tensor *ids, struct hd_tensor *d) {
    if (!a || !b || !ids) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(b) || !is_float(d) || TY(ids) != HTP_TYPE_I32) return HTP_STATUS_NO_SUPPORT;
    if (!same_shape(a, d) || NE(b, 0) != NE(a, 0) || NE(ids, 0) != NE(a, 1) || NE(ids, 1) != NE(a, 2)) return HTP_STATUS_INVAL_PARAMS;
    FOR_ROWS(a) {
        int64_t e = ld_index(ids, i1, i2, 0);
        if (e < 0 || e >= NE(b, 1)) return HTP_STATUS_INVAL_PARAMS;
        for (int64_t i0 = 0; i0 < NE(a, 0); i0++) st(d, i0, i1, i2, i3, ld(a, i0, i1, i2, i3) + ld(b, i0, e, 0, 0));
    }
    return HTP_STATUS_OK;
}

/* ---------------------------------------------------------------- fences (fence protocol; NOT verified) */

/* The slot of a fence tensor (I8, flag FENCE, ne = {slot size >= 8, n_slots, 1, 1}) chosen by params[2]:
 * u32 seq @0, u32 status @4 (hexagon.md 2.4). */
static uint32_t *fence_slot(const struct hd_op *op, struct hd_tensor *f) {
    if (!f || TY(f) != HD_TYPE_I8 || !(f->d->flags & HD_FENCE_TENSOR_FENCE) || NE(f, 0) < 8) return NULL;
    int32_t slot = op->params[2];
    if (slot < 0 || slot >= NE(f, 1)) return NULL;
    return (uint32_t *) at(f, 0, slot, 0, 0);
}

/* A DSP-side protocol violation found while executing (hd.mu is not held there). */
static void exec_violation(const char *what, uint32_t a, uint32_t b) {
    pthread_mutex_lock(&hd.mu);
    hd_violation("%s (%u, %u)", what, a, b);
    pthread_mutex_unlock(&hd.mu);
}

/* Signals seq: status 1 then seq (release). A seq of 0 (hexagon.md 2.4: never 0) or one not newer than what the slot
 * holds (a stale or reused fence value: it would release a waiter early) is a violation and fails the op. A slot
 * holding 0 is fresh: the host zeroes a slot when it hands it out. */
static int fence_signal(const struct hd_op *op, struct hd_tensor *f, uint32_t seq) {
    uint32_t *slot = fence_slot(op, f);
    if (!slot) return HTP_STATUS_INVAL_PARAMS;
    uint32_t cur = __atomic_load_n(&slot[0], __ATOMIC_ACQUIRE);
    if (seq == 0) { exec_violation("fence signal with seq 0 (slot holds, seq)", cur, seq); return HTP_STATUS_INVAL_PARAMS; }
    if (cur != 0 && (int32_t) (seq - cur) <= 0) {
        exec_violation("stale fence: signal not newer than the slot's value (slot holds, seq)", cur, seq);
        return HTP_STATUS_INVAL_PARAMS;
    }
    __atomic_store_n(&slot[1], (uint32_t) HTP_STATUS_OK, __ATOMIC_RELAXED);
    __atomic_store_n(&slot[0], seq, __ATOMIC_RELEASE);
    return HTP_STATUS_OK;
}

/* Waits until (int32)(slot.seq - seq) >= 0; INTERNAL_ERR after fence_timeout_us, a slot status > OK passed on. */
static int fence_wait(const uint32_t *slot, uint32_t seq) {
    uint64_t deadline = hd_now_ns() + (uint64_t) hd.cfg.fence_timeout_us * 1000ull;
    while ((int32_t) (__atomic_load_n(&slot[0], __ATOMIC_ACQUIRE) - seq) < 0) {
        if (hd_now_ns() > deadline) return HTP_STATUS_INTERNAL_ERR;
        sched_yield();
    }
    uint32_t st = __atomic_load_n(&slot[1], __ATOMIC_RELAXED);
    return st > HTP_STATUS_OK ? (int) st : HTP_STATUS_OK;
}

/* FENCE: params[0] seq, params[1] 1 = signal / 0 = wait. */
static int op_fence(const struct hd_op *op, struct hd_tensor *f) {
    uint32_t seq = (uint32_t) op->params[0];
    if (op->params[1] == 1) return fence_signal(op, f, seq);
    if (op->params[1] != 0) return HTP_STATUS_INVAL_PARAMS;
    if (seq == 0) { exec_violation("fence wait for seq 0 (mode, seq)", 0, seq); return HTP_STATUS_INVAL_PARAMS; }
    uint32_t *slot = fence_slot(op, f);
    return slot ? fence_wait(slot, seq) : HTP_STATUS_INVAL_PARAMS;
}

#define HD_ALLREDUCE_MAX_RANKS 4

/* ALLREDUCE (fence-protocol, FULL mode; the double's convention, see README): kernel_params[0] rank, [1] n_ranks, [2] mode
 * (0 FULL; SHARDED_FANOUT answers NO_SUPPORT), [3] is_row_bcast (must be 0); src[0..n) every rank's data,
 * src[n..2n) every rank's fence tensor; params[0] entry seq, params[1] exit seq. Outputs as upstream wires them,
 * dst[0..n) = every rank's data, rank r writing its sum to dst[r]; with dst[0] alone, dst[0]. Each rank signals
 * entry, waits for all, sums into a private buffer, signals exit (done reading), waits for all, and only then writes
 * its output, which may be its own input. */
static int op_allreduce(const struct hd_op *op, struct hd_tensor *const src[HD_FENCE_MAX_INPUTS],
                        struct hd_tensor *const dst[HTP_OP_MAX_OUTPUTS]) {
    int32_t rank = op->kernel_params[0], n = op->kernel_params[1];
    if (n < 2 || n > HD_ALLREDUCE_MAX_RANKS || rank < 0 || rank >= n) return HTP_STATUS_INVAL_PARAMS;
    if (op->kernel_params[2] != 0 || op->kernel_params[3] != 0) return HTP_STATUS_NO_SUPPORT;
    struct hd_tensor *d = dst[1] ? dst[rank] : dst[0];
    if (!d) return HTP_STATUS_INVAL_PARAMS;
    uint32_t *slots[HD_ALLREDUCE_MAX_RANKS];
    for (int32_t k = 0; k < n; k++) {
        struct hd_tensor *x = src[k];
        if (!x || !is_float(x) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
        if (!same_shape(x, d)) return HTP_STATUS_INVAL_PARAMS;
        if (!(slots[k] = fence_slot(op, src[n + k]))) return HTP_STATUS_INVAL_PARAMS;
    }
    uint32_t entry = (uint32_t) op->params[0], exit_seq = (uint32_t) op->params[1];
    float *sum = malloc(sizeof *sum * (size_t) nelements(d));
    if (!sum) return HTP_STATUS_INTERNAL_ERR;
    int rc = fence_signal(op, src[n + rank], entry);
    for (int32_t k = 0; k < n && rc == HTP_STATUS_OK; k++) rc = fence_wait(slots[k], entry);
    if (rc == HTP_STATUS_OK) {
        int64_t j = 0;
        FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++, j++) {
            double acc = 0;
            for (int32_t k = 0; k < n; k++) acc += ld(src[k], i0, i1, i2, i3);
            sum[j] = (float) acc;
        }
        rc = fence_signal(op, src[n + rank], exit_seq);
        for (int32_t k = 0; k < n && rc == HTP_STATUS_OK; k++) rc = fence_wait(slots[k], exit_seq);
    }
    if (rc == HTP_STATUS_OK) {
        int64_t j = 0;
        FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++, j++) st(d, i0, i1, i2, i3, sum[j]);
    }
    free(sum);
    return rc;
}

/* ---------------------------------------------------------------- dispatch */

int hd_exec_op(const struct hd_op *op, struct hd_tensor *const src[HD_FENCE_MAX_INPUTS],
               struct hd_tensor *const dst[HTP_OP_MAX_OUTPUTS]) {
    struct hd_tensor *d = dst[0];
    if (hd.cfg.math == HD_MATH_GGML) {
        /* the fences are protocol, not arithmetic: they stay the double's own; their copy is ggml's */
        if (op->opcode == HD_OP_FENCE) return op_fence(op, src[0]);
        if (op->opcode != HD_OP_CPY_FENCE) return hd_ggml_exec_op(op, src, dst);
        struct hd_op cpy = *op;
        cpy.opcode = HTP_OP_CPY;
        int st = hd_ggml_exec_op(&cpy, src, dst);
        return st == HTP_STATUS_OK ? fence_signal(op, src[1], (uint32_t) op->params[0]) : st;
    }
    switch (op->opcode) {
    case HTP_OP_ADD: case HTP_OP_SUB: case HTP_OP_MUL: case HTP_OP_DIV: return op_binary(op->opcode, src[0], src[1], d);
    case HTP_OP_RMS_NORM: return op_rms_norm(op, src[0], NULL, d);
    case HTP_OP_RMS_NORM_MUL: return src[1] ? op_rms_norm(op, src[0], src[1], d) : HTP_STATUS_INVAL_PARAMS;
    case HTP_OP_SCALE: case HTP_OP_UNARY_SILU: case HTP_OP_UNARY_GELU: case HTP_OP_UNARY_SIGMOID: case HTP_OP_UNARY_EXP:
    case HTP_OP_UNARY_NEG: case HTP_OP_UNARY_SOFTPLUS: case HTP_OP_UNARY_TANH: case HTP_OP_SQR: case HTP_OP_SQRT:
    case HD_OP_ABS: case HD_OP_LOG: case HD_OP_RELU: case HD_OP_LEAKY_RELU:
        return op_unary(op, src[0], d);
    case HD_OP_FENCE: return op_fence(op, src[0]);
    case HD_OP_ALLREDUCE: return op_allreduce(op, src, dst);
    case HD_OP_CPY_FENCE: {
        int st = op_cpy(src[0], d);
        return st == HTP_STATUS_OK ? fence_signal(op, src[1], (uint32_t) op->params[0]) : st;
    }
    case HTP_OP_GLU_SWIGLU: case HTP_OP_GLU_GEGLU: case HTP_OP_GLU_SWIGLU_OAI: return op_glu(op, src[0], src[1], d);
    case HTP_OP_SOFTMAX: return op_softmax(op, src[0], src[1], src[2], d);
    case HTP_OP_ROPE: return op_rope(op, src[0], src[1], src[2], d);
    case HTP_OP_GET_ROWS: return op_get_rows(src[0], src[1], d);
    case HTP_OP_SET_ROWS: return op_set_rows(src[0], src[1], d);
    case HTP_OP_CPY: return op_cpy(src[0], d);
    case HTP_OP_FLASH_ATTN_EXT: return op_flash_attn(op, src[0], src[1], src[2], src[3], src[4], d);
    case HTP_OP_MUL_MAT: return op_mul_mat(src[0], src[1], NULL, d);
    case HTP_OP_MUL_MAT_ADD: return src[2] ? op_mul_mat(src[0], src[1], src[2], d) : HTP_STATUS_INVAL_PARAMS;
    case HTP_OP_MUL_MAT_QKV: case HTP_OP_MUL_MAT_FFN: {
        /* d99724f's fusion of 3 (K, V, Q) / 2 matmuls sharing src1: inputs {W0, x, W1[, W2]}, outputs dst[0..] */
        int n = op->opcode == HTP_OP_MUL_MAT_QKV ? 3 : 2;
        for (int k = 0; k < n; k++) {
            if (!dst[k]) return HTP_STATUS_INVAL_PARAMS;
            int st = op_mul_mat(src[k ? k + 1 : 0], src[1], NULL, dst[k]);
            if (st != HTP_STATUS_OK) return st;
        }
        return HTP_STATUS_OK;
    }
    case HTP_OP_MUL_MAT_ID: return op_mul_mat_id(src[0], src[1], src[2], d);
    case HTP_OP_ADD_ID: return op_add_id(src[0], src[1], src[2], d);
    case HTP_OP_SUM_ROWS: case HTP_OP_NORM: case HTP_OP_L2_NORM: case HTP_OP_CUMSUM: return op_reduce_norm(op, src[0], d);
    case HTP_OP_CLAMP: case HTP_OP_FILL: case HTP_OP_TRI: return op_clamp_fill_tri(op, src[0], d);
    case HTP_OP_SOLVE_TRI: return op_solve_tri(src[0], src[1], d);
    case HTP_OP_REPEAT: return op_repeat(src[0], d);
    case HTP_OP_CONCAT: return op_concat(op, src[0], src[1], d);
    case HTP_OP_PAD: return op_pad(op, src[0], d);
    case HTP_OP_DIAG: return op_diag(src[0], d);
    case HTP_OP_ARGSORT: return op_argsort(op, src[0], d);
    default: return HTP_STATUS_NO_SUPPORT;
    }
}
