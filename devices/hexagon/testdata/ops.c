/*
 * The emulated DSP's own reference math: ggml semantics of each htp opcode, computed in float/double from the
 * wire descriptors (ne/nb strides, ggml op_params), with quantized MUL_MAT weights read in the tiled layout of
 * docs/reference/hexagon.md section 10. Written for clarity, not speed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "htpdouble.h"

static const char *const op_names[HTP_OP_INVALID + 1] = {
    "MUL", "ADD", "SUB", "DIV", "MUL_MAT", "MUL_MAT_ID", "MUL_MAT_QKV", "MUL_MAT_FFN", "MUL_MAT_ADD", "RMS_NORM",
    "RMS_NORM_MUL", "UNARY_SILU", "UNARY_GELU", "UNARY_SIGMOID", "UNARY_EXP", "UNARY_NEG", "UNARY_SOFTPLUS",
    "UNARY_TANH", "GLU_SWIGLU", "GLU_SWIGLU_OAI", "GLU_GEGLU", "SOFTMAX", "ADD_ID", "ROPE", "FLASH_ATTN_EXT",
    "SET_ROWS", "GET_ROWS", "SCALE", "CPY", "ARGSORT", "SQR", "SQRT", "SUM_ROWS", "SSM_CONV", "REPEAT", "CUMSUM",
    "FILL", "DIAG", "SOLVE_TRI", "L2_NORM", "GATED_DELTA_NET", "TRI", "PAD", "NORM", "CONCAT", "CLAMP", "IM2COL",
    "INVALID",
};

const char *hd_op_name(uint32_t opcode) { return op_names[opcode < HTP_OP_INVALID ? opcode : HTP_OP_INVALID]; }

uint32_t hd_type_size(uint32_t type) {
    switch (type) {
    case HTP_TYPE_F32: case HTP_TYPE_I32: return 4;
    case HTP_TYPE_F16: return 2;
    case HTP_TYPE_I64: return 8;
    case HTP_TYPE_Q4_0: case HTP_TYPE_IQ4_NL: case HTP_TYPE_Q4_0_TILED: return 18;
    case HTP_TYPE_Q4_1: case HTP_TYPE_Q4_1_TILED: return 20;
    case HTP_TYPE_Q8_0: case HTP_TYPE_Q8_0_TILED: return 34;
    case HTP_TYPE_MXFP4: case HTP_TYPE_MXFP4_TILED: return 17;
    default: return 0;
    }
}

uint32_t hd_type_blck(uint32_t type) {
    switch (type) {
    case HTP_TYPE_F32: case HTP_TYPE_I32: case HTP_TYPE_F16: case HTP_TYPE_I64: return 1;
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

static float param_f(const struct htp_op_desc *op, int i) { float f; memcpy(&f, &op->params[i], 4); return f; }

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
    case HTP_OP_UNARY_GELU: return gelu(x);
    case HTP_OP_UNARY_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case HTP_OP_UNARY_EXP: return expf(x);
    case HTP_OP_UNARY_NEG: return -x;
    case HTP_OP_UNARY_SOFTPLUS: return x > 20.0f ? x : log1pf(expf(x));
    case HTP_OP_UNARY_TANH: return tanhf(x);
    case HTP_OP_SQR: return x * x;
    case HTP_OP_SQRT: return sqrtf(x);
    case HTP_OP_SCALE: return x * s + b;
    default: return NAN;
    }
}

static int op_unary(const struct htp_op_desc *op, struct hd_tensor *a, struct hd_tensor *d) {
    if (!a) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d)) return HTP_STATUS_NO_SUPPORT;
    if (!same_shape(a, d)) return HTP_STATUS_INVAL_PARAMS;
    float s = param_f(op, 0), b = param_f(op, 1);
    FOR_ROWS(d) for (int64_t i0 = 0; i0 < NE(d, 0); i0++)
        st(d, i0, i1, i2, i3, unary(op->opcode, ld(a, i0, i1, i2, i3), s, b));
    return HTP_STATUS_OK;
}

static int op_rms_norm(const struct htp_op_desc *op, struct hd_tensor *a, struct hd_tensor *w, struct hd_tensor *d) {
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

static int op_glu(const struct htp_op_desc *op, struct hd_tensor *a, struct hd_tensor *b, struct hd_tensor *d) {
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

static int op_softmax(const struct htp_op_desc *op, struct hd_tensor *a, struct hd_tensor *mask, struct hd_tensor *sinks,
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

static int op_rope(const struct htp_op_desc *op, struct hd_tensor *a, struct hd_tensor *pos, struct hd_tensor *ff,
                   struct hd_tensor *d) {
    if (!a || !pos) return HTP_STATUS_INVAL_PARAMS;
    if (!is_float(a) || !is_float(d) || TY(pos) != HTP_TYPE_I32 || (ff && TY(ff) != HTP_TYPE_F32)) return HTP_STATUS_NO_SUPPORT;
    int n_dims = op->params[1], mode = op->params[2], n_ctx_orig = op->params[4], n_offs = op->params[15];
    if (mode != 0 && mode != 2) return HTP_STATUS_NO_SUPPORT; /* MROPE / VISION / IMROPE not emulated */
    if (!same_shape(a, d) || n_dims <= 0 || n_dims % 2 || n_offs < 0 || n_offs % 2 || n_offs + n_dims > NE(a, 0) ||
        NE(pos, 0) < NE(a, 2) || (ff && NE(ff, 0) < n_dims / 2))
        return HTP_STATUS_INVAL_PARAMS;
    float freq_base = param_f(op, 5), freq_scale = param_f(op, 6), ext_factor = param_f(op, 7),
          attn_factor = param_f(op, 8), beta_fast = param_f(op, 9), beta_slow = param_f(op, 10);
    float theta_scale = powf(freq_base, -2.0f / (float) n_dims);
    float corr[2];
    corr[0] = fmaxf(0.0f, floorf(yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base)));
    corr[1] = fminf((float) (n_dims - 1), ceilf(yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base)));
    float *cs = malloc(sizeof *cs * (size_t) n_dims);
    if (!cs) return HTP_STATUS_INTERNAL_ERR;
    for (int64_t i3 = 0; i3 < NE(a, 3); i3++)
        for (int64_t i2 = 0; i2 < NE(a, 2); i2++) {
            float p = ld(pos, i2, 0, 0, 0), theta = p;
            for (int i0 = 0; i0 < n_dims; i0 += 2) {
                float f = ff ? ld(ff, i0 / 2, 0, 0, 0) : 1.0f;
                float extrap = theta / f, interp = freq_scale * extrap, th = interp, mscale = attn_factor;
                if (ext_factor != 0.0f) {
                    float mix = yarn_ramp(corr[0], corr[1], i0) * ext_factor;
                    th = interp * (1 - mix) + extrap * mix;
                    mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
                }
                cs[i0] = cosf(th) * mscale;
                cs[i0 + 1] = sinf(th) * mscale;
                theta *= theta_scale;
            }
            for (int64_t i1 = 0; i1 < NE(a, 1); i1++) {
                for (int64_t i0 = 0; i0 < NE(a, 0); i0++) st(d, i0, i1, i2, i3, ld(a, i0, i1, i2, i3));
                for (int i0 = 0; i0 < n_dims; i0 += 2) {
                    int64_t j0 = mode == 0 ? n_offs + i0 : n_offs + i0 / 2;
                    int64_t j1 = mode == 0 ? j0 + 1 : j0 + n_dims / 2;
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

static int op_flash_attn(const struct htp_op_desc *op, struct hd_tensor *q, struct hd_tensor *k, struct hd_tensor *v,
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
        for (int k = 0; k < 32 && kt * 32 + k < K; k++) {
            float v;
            if (qt == HTP_TYPE_Q8_0) {
                int8_t q = (int8_t) tile[(k / 2) * 64 + 2 * row + (k % 2)];
                v = (float) q * f16_at(tile + 1024 + 2 * row);
            } else {
                uint8_t byte = tile[(k / 2) * 32 + row];
                int q = k % 2 ? byte >> 4 : byte & 0xf;
                switch (qt) {
                case HTP_TYPE_Q4_0: v = (float) (q - 8) * f16_at(tile + 512 + 2 * row); break;
                case HTP_TYPE_IQ4_NL: v = (float) kvalues_iq4nl[q] * f16_at(tile + 512 + 2 * row); break;
                case HTP_TYPE_Q4_1: v = (float) q * f16_at(tile + 512 + 4 * row) + f16_at(tile + 512 + 4 * row + 2); break;
                default: v = (float) kvalues_mxfp4[q] * ldexpf(1.0f, (int) tile[512 + row] - 128); break;
                }
            }
            out[kt * 32 + k] = v;
        }
    }
}

static int op_mul_mat(struct hd_tensor *w, struct hd_tensor *x, struct hd_tensor *add, struct hd_tensor *d) {
    if (!w || !x) return HTP_STATUS_INVAL_PARAMS;
    uint32_t qt = base_quant(TY(w));
    int tiled = tile_bytes(qt) != 0;
    if ((!tiled && !is_float(w)) || !is_float(x) || !is_float(d) || (add && !is_float(add))) return HTP_STATUS_NO_SUPPORT;
    int64_t K = NE(x, 0), N = NE(d, 0), M = NE(x, 1);
    if (NE(d, 1) != M || NE(d, 2) != NE(x, 2) || NE(d, 3) != NE(x, 3) || NE(x, 2) % NE(w, 2) || NE(x, 3) % NE(w, 3))
        return HTP_STATUS_INVAL_PARAMS;
    if (tiled ? (NE(w, 0) % 32 || NE(w, 1) % 32 || K > NE(w, 0) || N > NE(w, 1) ||
                 (int64_t) tile_bytes(qt) * (NE(w, 0) / 32) * (NE(w, 1) / 32) > NB(w, 2))
              : (NE(w, 0) != K || NE(w, 1) != N))
        return HTP_STATUS_INVAL_PARAMS;
    if (add && !repeats(add, d)) return HTP_STATUS_INVAL_PARAMS;
    int64_t r2 = NE(x, 2) / NE(w, 2), r3 = NE(x, 3) / NE(w, 3);
    float *row = malloc(sizeof *row * (size_t) K);
    double *xs = malloc(sizeof *xs * (size_t) (K * M));
    if (!row || !xs) { free(row); free(xs); return HTP_STATUS_INTERNAL_ERR; }
    for (int64_t i3 = 0; i3 < NE(d, 3); i3++)
        for (int64_t i2 = 0; i2 < NE(d, 2); i2++) {
            int64_t w2 = i2 / r2, w3 = i3 / r3;
            for (int64_t m = 0; m < M; m++)
                for (int64_t k = 0; k < K; k++) xs[m * K + k] = ld(x, k, m, i2, i3);
            for (int64_t n = 0; n < N; n++) {
                if (tiled) dequant_tiled_row(qt, at(w, 0, 0, w2, w3), NE(w, 0) / 32, n, K, row);
                else for (int64_t k = 0; k < K; k++) row[k] = ld(w, k, n, w2, w3);
                for (int64_t m = 0; m < M; m++) {
                    double acc = 0;
                    const double *xm = xs + m * K;
                    for (int64_t k = 0; k < K; k++) acc += (double) row[k] * xm[k];
                    if (add) acc += ld(add, n % NE(add, 0), m % NE(add, 1), i2 % NE(add, 2), i3 % NE(add, 3));
                    st(d, n, m, i2, i3, (float) acc);
                }
            }
        }
    free(row);
    free(xs);
    return HTP_STATUS_OK;
}

/* ---------------------------------------------------------------- dispatch */

int hd_exec_op(const struct htp_op_desc *op, struct hd_tensor *const src[HTP_OP_MAX_INPUTS],
               struct hd_tensor *const dst[HTP_OP_MAX_OUTPUTS]) {
    struct hd_tensor *d = dst[0];
    switch (op->opcode) {
    case HTP_OP_ADD: case HTP_OP_SUB: case HTP_OP_MUL: case HTP_OP_DIV: return op_binary(op->opcode, src[0], src[1], d);
    case HTP_OP_RMS_NORM: return op_rms_norm(op, src[0], NULL, d);
    case HTP_OP_RMS_NORM_MUL: return src[1] ? op_rms_norm(op, src[0], src[1], d) : HTP_STATUS_INVAL_PARAMS;
    case HTP_OP_SCALE: case HTP_OP_UNARY_SILU: case HTP_OP_UNARY_GELU: case HTP_OP_UNARY_SIGMOID: case HTP_OP_UNARY_EXP:
    case HTP_OP_UNARY_NEG: case HTP_OP_UNARY_SOFTPLUS: case HTP_OP_UNARY_TANH: case HTP_OP_SQR: case HTP_OP_SQRT:
        return op_unary(op, src[0], d);
    case HTP_OP_GLU_SWIGLU: case HTP_OP_GLU_GEGLU: case HTP_OP_GLU_SWIGLU_OAI: return op_glu(op, src[0], src[1], d);
    case HTP_OP_SOFTMAX: return op_softmax(op, src[0], src[1], src[2], d);
    case HTP_OP_ROPE: return op_rope(op, src[0], src[1], src[2], d);
    case HTP_OP_GET_ROWS: return op_get_rows(src[0], src[1], d);
    case HTP_OP_SET_ROWS: return op_set_rows(src[0], src[1], d);
    case HTP_OP_CPY: return op_cpy(src[0], d);
    case HTP_OP_FLASH_ATTN_EXT: return op_flash_attn(op, src[0], src[1], src[2], src[3], src[4], d);
    case HTP_OP_MUL_MAT: return op_mul_mat(src[0], src[1], NULL, d);
    case HTP_OP_MUL_MAT_ADD: return src[2] ? op_mul_mat(src[0], src[1], src[2], d) : HTP_STATUS_INVAL_PARAMS;
    default: return HTP_STATUS_NO_SUPPORT;
    }
}
