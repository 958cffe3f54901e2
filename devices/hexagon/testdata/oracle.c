/*
 * Checks the double's own op math against the real ggml (the project's oracle, 0.25.1 from npm, as fetched by
 * scripts/fetch-ref): each case builds one ggml node on random inputs, computes it with ggml's CPU backend, sends
 * the same op (ggml's own op_params and src order) through the double as an op batch - quantized MUL_MAT weights
 * repacked into the tiled layout of hexagon.md 10 - and compares with ggml's result by normalized mean squared
 * error, the measure of ggml's test-backend-ops. Usage: oracle OUTDIR REFDIR (REFDIR holds libggml-base.so and
 * libggml-cpu-<variant>.so).
 *
 * ggml is declared in ggml_api.h from its documented API; the program checks at start that struct ggml_tensor has
 * the 0.25.1 layout declared there, against values it sets through the API.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "ggml_api.h"

typedef gg_T T;
typedef gg_C C;

enum { G_F32 = 0, G_F16 = 1, G_Q4_0 = 2, G_Q4_1 = 3, G_Q8_0 = 8, G_IQ4_NL = 20, G_I32 = 26, G_I64 = 27, G_MXFP4 = 39 };

static struct gg_api g;

/* the fields of struct ggml_tensor (ggml_api.h) the cases read */
static int64_t *t_ne(T *t) { return t->ne; }
static size_t *t_nb(T *t) { return t->nb; }
static int32_t *t_params(T *t) { return t->op_params; }
static T **t_src(T *t) { return t->src; }
static int t_type(T *t) { return t->type; }

static const char *variant; /* the CPU library load_ggml found */

static int load_ggml(const char *dir) {
    char p[1024];
    snprintf(p, sizeof p, "%s/libggml-base.so", dir);
    void *base = dlopen(p, RTLD_NOW | RTLD_GLOBAL);
    if (!base) { printf("oracle: %s\n", dlerror()); return -1; }
    static const char *const variants[] = { "haswell", "sandybridge", "sse42", "x64" };
    void *cpu = NULL;
    for (size_t i = 0; i < sizeof variants / sizeof *variants && !cpu; i++) {
        snprintf(p, sizeof p, "%s/libggml-cpu-%s.so", dir, variants[i]);
        cpu = dlopen(p, RTLD_NOW | RTLD_GLOBAL);
        variant = variants[i];
    }
    if (!cpu) { printf("oracle: no usable libggml-cpu-*.so in %s\n", dir); return -1; }
    char err[256];
    if (gg_api_load(&g, base, cpu, err, sizeof err)) { printf("oracle: %s\n", err); return -1; }
    g.cpu_init();
    return 0;
}

/* The offsets above, checked through the API. */
static int check_layout(void) {
    C *ctx = g.init((struct gg_init_params) { 1 << 20, NULL, false });
    T *a = g.new4(ctx, G_F32, 3, 5, 7, 11), *b = g.new4(ctx, G_F32, 3, 5, 7, 11);
    T *s = g.scale_bias(ctx, a, 2.5f, -1.0f), *sum = g.add(ctx, a, b);
    float sv, bv;
    memcpy(&sv, &t_params(s)[0], 4);
    memcpy(&bv, &t_params(s)[1], 4);
    int ok = t_type(a) == G_F32 && t_ne(a)[0] == 3 && t_ne(a)[3] == 11 && t_nb(a)[0] == 4 && t_nb(a)[1] == 12 &&
             t_nb(a)[3] == 3 * 5 * 7 * 4 && sv == 2.5f && bv == -1.0f && t_src(sum)[0] == a && t_src(sum)[1] == b &&
             g.data(a) != NULL;
    g.free(ctx);
    if (!ok) printf("oracle: struct ggml_tensor does not have the 0.25.1 layout this program reads\n");
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- inputs */

static uint64_t rng = 1;

static void fill(T *t, float lo, float hi) {
    int64_t n = t_ne(t)[0] * t_ne(t)[1] * t_ne(t)[2] * t_ne(t)[3];
    void *d = g.data(t);
    for (int64_t i = 0; i < n; i++) {
        float v = (float) (lo + (hi - lo) * hx_urand(&rng));
        if (t_type(t) == G_F32) ((float *) d)[i] = v;
        else ((uint16_t *) d)[i] = hx_fp16(v);
    }
}

static void fill_idx(T *t, int64_t bound) {
    int64_t n = t_ne(t)[0] * t_ne(t)[1] * t_ne(t)[2];
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (int64_t) (hx_urand(&rng) * (double) bound);
        if (t_type(t) == G_I64) ((int64_t *) g.data(t))[i] = v;
        else ((int32_t *) g.data(t))[i] = (int32_t) v;
    }
}

/* distinct rows for SET_ROWS, so the result does not depend on write order */
static void fill_perm(T *t, int64_t bound) {
    int64_t n = t_ne(t)[0];
    int64_t *perm = malloc(sizeof *perm * (size_t) bound);
    for (int64_t r = 0; r < t_ne(t)[1] * t_ne(t)[2]; r++) {
        for (int64_t i = 0; i < bound; i++) perm[i] = i;
        for (int64_t i = 0; i < n; i++) {
            int64_t j = i + (int64_t) (hx_urand(&rng) * (double) (bound - i));
            int64_t x = perm[i]; perm[i] = perm[j]; perm[j] = x;
            if (t_type(t) == G_I64) ((int64_t *) g.data(t))[r * n + i] = perm[i];
            else ((int32_t *) g.data(t))[r * n + i] = (int32_t) perm[i];
        }
    }
    free(perm);
}

static T *quant_weight(C *ctx, int type, int64_t K, int64_t N) {
    T *w = g.new4(ctx, type, K, N, 1, 1);
    float *f = malloc(sizeof *f * (size_t) (K * N));
    for (int64_t i = 0; i < K * N; i++) f[i] = (float) (hx_urand(&rng) * 2 - 1);
    g.quantize(type, f, g.data(w), 0, N, K, NULL);
    free(f);
    return w;
}

/* ---------------------------------------------------------------- tiled repack (hexagon.md 10) */

static uint32_t block_bytes(int type) {
    switch (type) { case G_Q4_0: case G_IQ4_NL: return 18; case G_Q4_1: return 20; case G_Q8_0: return 34; case G_MXFP4: return 17; default: return 0; }
}
static uint32_t tile_size(int type) {
    switch (type) { case G_Q4_0: case G_IQ4_NL: return 576; case G_Q4_1: return 640; case G_Q8_0: return 1088; case G_MXFP4: return 544; default: return 0; }
}

/* Writes weight w (flat ggml blocks, ne0 % 32 == 0; each of its ne2 * ne3 matrices) tiled into dst; returns the
 * padded ne1. */
static int64_t repack(T *w, uint8_t *dst) {
    int type = t_type(w);
    int64_t K = t_ne(w)[0], N = t_ne(w)[1], nkt = K / 32, Np = (N + 31) / 32 * 32;
    uint32_t bb = block_bytes(type), ts = tile_size(type);
    for (int64_t mat = 0; mat < t_ne(w)[2] * t_ne(w)[3]; mat++) {
        const uint8_t *src = (const uint8_t *) g.data(w) + (size_t) (mat * N * nkt) * bb;
        uint8_t *mdst = dst + (size_t) (mat * (Np / 32) * nkt) * ts;
        for (int64_t ct = 0; ct < Np / 32; ct++)
            for (int64_t kt = 0; kt < nkt; kt++) {
                uint8_t *tile = mdst + (size_t) (ct * nkt + kt) * ts;
                memset(tile, 0, ts);
                for (int row = 0; row < 32; row++) {
                    int64_t n = ct * 32 + row;
                    const uint8_t *blk = n < N ? src + (size_t) (n * nkt + kt) * bb : NULL;
                    if (type == G_Q8_0) {
                        for (int k = 0; k < 32; k++) tile[(k / 2) * 64 + 2 * row + (k % 2)] = blk ? blk[2 + k] : 0;
                        if (blk) memcpy(tile + 1024 + 2 * row, blk, 2);
                        continue;
                    }
                    const uint8_t *qs = blk ? blk + (type == G_Q4_1 ? 4 : type == G_MXFP4 ? 1 : 2) : NULL;
                    uint8_t q[32];
                    for (int k = 0; k < 32; k++)
                        q[k] = qs ? (uint8_t) (k < 16 ? qs[k] & 0xf : qs[k - 16] >> 4)
                                  : (type == G_Q4_0 || type == G_IQ4_NL ? 8 : 0);
                    for (int cp = 0; cp < 16; cp++) tile[cp * 32 + row] = (uint8_t) (q[2 * cp] | (q[2 * cp + 1] << 4));
                    if (!blk) continue;
                    if (type == G_Q4_1) memcpy(tile + 512 + 4 * row, blk, 4);
                    else if (type == G_MXFP4) tile[512 + row] = blk[0];
                    else memcpy(tile + 512 + 2 * row, blk, 2);
                }
            }
    }
    return Np;
}

/* ---------------------------------------------------------------- one case */

static struct api D; /* the double */
static struct session S;
static int cases, case_failures;
static int exact; /* the second pass, math=ggml: the double's answers must be ggml's bit for bit */

static uint32_t elem_size(int type) { return type == G_F16 ? 2 : type == G_I64 ? 8 : type == G_F32 || type == G_I32 ? 4 : 0; }

static float elem(const uint8_t *p, int type) {
    if (type == G_F32) { float f; memcpy(&f, p, 4); return f; }
    if (type == G_I32) { int32_t v; memcpy(&v, p, 4); return (float) v; }
    uint16_t h; memcpy(&h, p, 2); return hx_fp16_to_f(h);
}

/* Runs node through ggml and through the double. out_base: the tensor whose memory the node writes (the node
 * itself, or the destination of a SET_ROWS/CPY view). */
static void run(C *ctx, const char *name, uint32_t opcode, T *node, T *out_base, double max_nmse) {
    cases++;
    struct batch b = { .nb = 1 };
    b.bufs[0] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) S.data, DATA_SIZE, 0, (uint32_t) S.data_fd };
    uint32_t off = 0;
    uint16_t srcs[HTP_OP_MAX_INPUTS];
    /* inputs, copied before ggml computes (SET_ROWS / CPY write in place) */
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        T *s = t_src(node)[i];
        srcs[i] = HTP_NO_TENSOR;
        if (!s) continue;
        uint32_t ne[4] = { (uint32_t) t_ne(s)[0], (uint32_t) t_ne(s)[1], (uint32_t) t_ne(s)[2], (uint32_t) t_ne(s)[3] };
        if (block_bytes(t_type(s)) && i == 0 && (opcode == HTP_OP_MUL_MAT || opcode == HTP_OP_MUL_MAT_ID)) {
            ne[1] = (uint32_t) repack(s, S.data + off);
            srcs[i] = hx_add_tensor(&b, 0, off, (uint32_t) t_type(s), ne, block_bytes(t_type(s)),
                                    ne[0] / 32 * block_bytes(t_type(s)));
        } else {
            memcpy(S.data + off, g.data(s), g.nbytes(s));
            srcs[i] = hx_add_tensor(&b, 0, off, (uint32_t) t_type(s), ne, (uint32_t) t_nb(s)[0], (uint32_t) t_nb(s)[1]);
            for (int k = 2; k < 4; k++) b.tens[srcs[i]].nb[k] = (uint32_t) t_nb(s)[k];
        }
        off += (b.tens[srcs[i]].size + 127) & ~127u;
    }
    uint32_t doff = off;
    if (out_base != node) {
        /* the view's destination keeps its prior contents: locate it as one of the inputs */
        for (int i = 0; i < HTP_OP_MAX_INPUTS; i++)
            if (t_src(node)[i] == out_base) doff = b.tens[srcs[i]].data;
    }
    uint32_t ne[4] = { (uint32_t) t_ne(node)[0], (uint32_t) t_ne(node)[1], (uint32_t) t_ne(node)[2], (uint32_t) t_ne(node)[3] };
    uint16_t td = hx_add_tensor(&b, 0, doff, (uint32_t) t_type(node), ne, (uint32_t) t_nb(node)[0], (uint32_t) t_nb(node)[1]);
    for (int k = 2; k < 4; k++) b.tens[td].nb[k] = (uint32_t) t_nb(node)[k];
    /* a fresh output starts as NaNs, so an op that writes nothing cannot pass on leftovers of an earlier case */
    if (out_base == node) memset(S.data + doff, 0xff, g.nbytes(node));
    struct htp_op_desc *o = hx_add_op(&b, opcode, srcs[0], srcs[1], td);
    for (int i = 2; i < HTP_OP_MAX_INPUTS; i++) o->src[i] = srcs[i];
    memcpy(o->params, t_params(node), sizeof o->params);

    void *gf = g.new_graph(ctx);
    g.expand(gf, node);
    int gs = g.compute(ctx, gf, 1);

    uint32_t st = 1000;
    if (hx_send_batch(&S, &b, 0, 0, 0) == 0) st = hx_read_rsp(&S, NULL);
    double num = 0, den = 0;
    const uint8_t *ref = g.data(node), *got = S.data + doff;
    int type = t_type(node);
    uint32_t es = elem_size(type);
    for (int64_t i3 = 0; i3 < t_ne(node)[3]; i3++)
        for (int64_t i2 = 0; i2 < t_ne(node)[2]; i2++)
            for (int64_t i1 = 0; i1 < t_ne(node)[1]; i1++)
                for (int64_t i0 = 0; i0 < t_ne(node)[0]; i0++) {
                    size_t at = (size_t) (i0 * (int64_t) es + i1 * (int64_t) t_nb(node)[1] + i2 * (int64_t) t_nb(node)[2] +
                                          i3 * (int64_t) t_nb(node)[3]);
                    double r = elem(ref + at, type), x = elem(got + at, type);
                    num += (r - x) * (r - x);
                    den += r * r;
                }
    double nmse = den > 0 ? num / den : num;
    if (exact) max_nmse = 0;
    int ok = gs == 0 && st == HTP_STATUS_OK && nmse <= max_nmse && !isnan(nmse);
    if (!ok) case_failures++;
    printf("%-4s %-44s status %u nmse %.3g (max %.0e)\n", ok ? "ok" : "FAIL", name, st, nmse, max_nmse);
}

static C *ctx_new(void) { return g.init((struct gg_init_params) { 64u << 20, NULL, false }); }

/* math=ggml never falls back to the double's own math: an op it does not implement (SSM_CONV) and one it cannot
 * give ggml (GET_ROWS with I64 rows, which the emulation computes) answer an error and are violations. Returns the
 * violations it caused. */
static uint64_t ggml_refuses(void) {
    static const struct { const char *name; uint32_t op, idx_type; } c[] = {
        { "math=ggml refuses SSM_CONV", HTP_OP_SSM_CONV, G_I32 }, { "math=ggml refuses GET_ROWS i64", HTP_OP_GET_ROWS, G_I64 } };
    uint64_t v0 = D.stat("violations");
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        cases++;
        struct batch b = { .nb = 1 };
        b.bufs[0] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) S.data, DATA_SIZE, 0, (uint32_t) S.data_fd };
        memset(S.data, 0, 4096);
        uint32_t ne_a[4] = { 8, 4, 1, 1 }, ne_i[4] = { 2, 1, 1, 1 }, ne_d[4] = { 8, 2, 1, 1 };
        uint32_t es = c[i].idx_type == G_I64 ? 8 : 4;
        uint16_t a = hx_add_tensor(&b, 0, 0, G_F32, ne_a, 4, 32);
        uint16_t x = hx_add_tensor(&b, 0, 1024, c[i].idx_type, ne_i, es, 2 * es);
        uint16_t d = hx_add_tensor(&b, 0, 2048, G_F32, ne_d, 4, 32);
        hx_add_op(&b, c[i].op, a, x, d);
        uint64_t v = D.stat("violations");
        uint32_t st = 1000;
        if (hx_send_batch(&S, &b, 0, 0, 0) == 0) st = hx_read_rsp(&S, NULL);
        int ok = st == HTP_STATUS_NO_SUPPORT && D.stat("violations") == v + 1;
        if (!ok) case_failures++;
        printf("%-4s %-44s status %u\n", ok ? "ok" : "FAIL", c[i].name, st);
    }
    return D.stat("violations") - v0;
}

/* ---------------------------------------------------------------- cases */

static void cases_elementwise(void) {
    static const struct { const char *name; uint32_t op; } bin[] = {
        { "ADD f32 bcast", HTP_OP_ADD }, { "SUB f32 bcast", HTP_OP_SUB }, { "MUL f32 bcast", HTP_OP_MUL }, { "DIV f32 bcast", HTP_OP_DIV } };
    for (size_t i = 0; i < 4; i++) {
        C *ctx = ctx_new();
        T *a = g.new4(ctx, G_F32, 67, 5, 3, 2), *b = g.new4(ctx, G_F32, 67, 1, 3, 1);
        fill(a, -2, 2); fill(b, 0.5f, 2);
        T *(*f)(C *, T *, T *) = bin[i].op == HTP_OP_ADD ? g.add : bin[i].op == HTP_OP_SUB ? g.sub : bin[i].op == HTP_OP_MUL ? g.mul : g.div;
        T *n = f(ctx, a, b);
        run(ctx, bin[i].name, bin[i].op, n, n, 1e-7);
        g.free(ctx);
    }
    C *ctx = ctx_new();
    T *a = g.new4(ctx, G_F16, 64, 9, 1, 1), *b = g.new4(ctx, G_F16, 64, 9, 1, 1);
    fill(a, -2, 2); fill(b, -2, 2);
    T *n = g.add(ctx, a, b);
    run(ctx, "ADD f16", HTP_OP_ADD, n, n, 1e-6);
    g.free(ctx);

    static const struct { const char *name; uint32_t op; float lo; double tol; } un[] = {
        { "UNARY_SILU", HTP_OP_UNARY_SILU, -6, 1e-7 }, { "UNARY_GELU gelu=tanh", HTP_OP_UNARY_GELU, -6, 1e-5 },
        { "UNARY_SIGMOID", HTP_OP_UNARY_SIGMOID, -6, 1e-7 }, { "UNARY_EXP", HTP_OP_UNARY_EXP, -6, 1e-7 },
        { "UNARY_NEG", HTP_OP_UNARY_NEG, -6, 1e-7 }, { "UNARY_SOFTPLUS", HTP_OP_UNARY_SOFTPLUS, -6, 1e-7 },
        { "UNARY_TANH", HTP_OP_UNARY_TANH, -6, 1e-7 }, { "SQR", HTP_OP_SQR, -6, 1e-7 }, { "SQRT", HTP_OP_SQRT, 0.01f, 1e-7 },
    };
    for (size_t i = 0; i < sizeof un / sizeof *un; i++) {
        ctx = ctx_new();
        a = g.new4(ctx, G_F32, 129, 7, 2, 1);
        fill(a, un[i].lo, 6);
        T *(*f)(C *, T *) = un[i].op == HTP_OP_UNARY_SILU ? g.silu : un[i].op == HTP_OP_UNARY_GELU ? g.gelu :
                            un[i].op == HTP_OP_UNARY_SIGMOID ? g.sigmoid : un[i].op == HTP_OP_UNARY_EXP ? g.exp :
                            un[i].op == HTP_OP_UNARY_NEG ? g.neg : un[i].op == HTP_OP_UNARY_SOFTPLUS ? g.softplus :
                            un[i].op == HTP_OP_UNARY_TANH ? g.tanh : un[i].op == HTP_OP_SQR ? g.sqr : g.sqrt;
        n = f(ctx, a);
        if (un[i].op == HTP_OP_UNARY_GELU) D.configure("gelu=tanh");
        run(ctx, un[i].name, un[i].op, n, n, un[i].tol);
        D.configure("gelu=quick");
        g.free(ctx);
    }
    ctx = ctx_new();
    a = g.new4(ctx, G_F32, 129, 7, 2, 1);
    fill(a, -6, 6);
    n = g.gelu_quick(ctx, a);
    run(ctx, "UNARY_GELU gelu=quick (the DSP's) vs GELU_QUICK", HTP_OP_UNARY_GELU, n, n, 1e-5);
    g.free(ctx);
    ctx = ctx_new();
    a = g.new4(ctx, G_F32, 96, 5, 3, 1);
    fill(a, -3, 3);
    n = g.scale_bias(ctx, a, 0.37f, -1.25f);
    run(ctx, "SCALE s=0.37 b=-1.25", HTP_OP_SCALE, n, n, 1e-7);
    n = g.rms_norm(ctx, a, 1e-5f);
    run(ctx, "RMS_NORM eps=1e-5", HTP_OP_RMS_NORM, n, n, 1e-7);
    g.free(ctx);
}

static void cases_glu(void) {
    C *ctx = ctx_new();
    T *a = g.new4(ctx, G_F32, 128, 6, 2, 1), *b = g.new4(ctx, G_F32, 128, 6, 2, 1);
    fill(a, -4, 4); fill(b, -4, 4);
    T *n = g.swiglu(ctx, a);
    run(ctx, "GLU_SWIGLU fused halves", HTP_OP_GLU_SWIGLU, n, n, 1e-7);
    n = g.swiglu_split(ctx, a, b);
    run(ctx, "GLU_SWIGLU split", HTP_OP_GLU_SWIGLU, n, n, 1e-7);
    n = g.geglu_split(ctx, a, b);
    run(ctx, "GLU_GEGLU split", HTP_OP_GLU_GEGLU, n, n, 1e-5);
    n = g.swiglu_oai(ctx, a, b, 1.702f, 3.0f);
    run(ctx, "GLU_SWIGLU_OAI alpha=1.702 limit=3", HTP_OP_GLU_SWIGLU_OAI, n, n, 1e-7);
    g.free(ctx);
}

static void cases_softmax(void) {
    for (int v = 0; v < 4; v++) {
        C *ctx = ctx_new();
        T *a = g.new4(ctx, G_F32, 70, 9, 4, 1);
        T *m = v == 0 ? NULL : g.new4(ctx, v == 1 ? G_F32 : G_F16, 70, 12, 1, 1);
        fill(a, -5, 5);
        if (m) fill(m, -3, 0);
        T *n = g.soft_max_ext(ctx, a, m, 0.125f, v == 2 ? 8.0f : 0.0f);
        if (v == 3) {
            T *sk = g.new4(ctx, G_F32, 4, 1, 1, 1);
            fill(sk, -1, 1);
            g.soft_max_add_sinks(n, sk);
        }
        static const char *const names[] = { "SOFTMAX scale", "SOFTMAX mask f32", "SOFTMAX mask f16 alibi",
                                              "SOFTMAX mask f16 sinks" };
        run(ctx, names[v], HTP_OP_SOFTMAX, n, n, 1e-7);
        g.free(ctx);
    }
}

static void cases_rope(void) {
    for (int v = 0; v < 4; v++) {
        C *ctx = ctx_new();
        int mode = v & 1 ? 2 : 0;
        T *a = g.new4(ctx, G_F32, 64, 4, 5, 1), *pos = g.new4(ctx, G_I32, 5, 1, 1, 1);
        T *ff = v >= 2 ? g.new4(ctx, G_F32, 24, 1, 1, 1) : NULL;
        fill(a, -1, 1);
        for (int i = 0; i < 5; i++) ((int32_t *) g.data(pos))[i] = 3 + 17 * i;
        if (ff) fill(ff, 1, 4);
        T *n = g.rope_ext(ctx, a, pos, ff, 48, mode, 4096, 10000.0f, v >= 2 ? 0.25f : 1.0f, v >= 2 ? 1.0f : 0.0f, 1.0f,
                          32.0f, 1.0f);
        static const char *const names[] = { "ROPE normal n_dims=48", "ROPE neox n_dims=48",
                                             "ROPE normal yarn freq_factors", "ROPE neox yarn freq_factors" };
        run(ctx, names[v], HTP_OP_ROPE, n, n, 1e-7);
        g.free(ctx);
    }
}

/* MROPE / VISION / IMROPE: four positions per token, sections in params[11..14]; yarn and freq factors on the
 * odd variants */
static void cases_rope_multi(void) {
    static const struct { const char *name; int mode, ne0, n_dims, sec[4]; } mv[] = {
        { "ROPE mrope n_dims=48 sections 8,8,4,4", 8, 64, 48, { 8, 8, 4, 4 } },
        { "ROPE mrope yarn freq_factors", 8, 64, 48, { 12, 6, 6, 0 } },
        { "ROPE imrope n_dims=48 sections 11,7,6,0", 40, 64, 48, { 11, 7, 6, 0 } },
        { "ROPE imrope yarn freq_factors", 40, 64, 48, { 4, 8, 8, 4 } },
        { "ROPE vision n_dims=32 sections 8,8,0,0", 24, 64, 32, { 8, 8, 0, 0 } },
        { "ROPE vision yarn freq_factors", 24, 64, 32, { 10, 6, 8, 8 } },
    };
    for (size_t v = 0; v < sizeof mv / sizeof *mv; v++) {
        C *ctx = ctx_new();
        int yarn = v & 1, n_rot = mv[v].mode == 24 ? 2 * mv[v].n_dims : mv[v].n_dims;
        T *a = g.new4(ctx, G_F32, mv[v].ne0, 4, 5, 1), *pos = g.new4(ctx, G_I32, 20, 1, 1, 1);
        T *ff = yarn ? g.new4(ctx, G_F32, n_rot / 2, 1, 1, 1) : NULL;
        fill(a, -1, 1);
        for (int i = 0; i < 20; i++) ((int32_t *) g.data(pos))[i] = 3 + 17 * i - 5 * (i / 5) * (i % 3);
        if (ff) fill(ff, 1, 4);
        int sec[4] = { mv[v].sec[0], mv[v].sec[1], mv[v].sec[2], mv[v].sec[3] };
        T *n = g.rope_multi(ctx, a, pos, ff, mv[v].n_dims, sec, mv[v].mode, 4096, 10000.0f, yarn ? 0.25f : 1.0f,
                            yarn ? 1.0f : 0.0f, 1.0f, 32.0f, 1.0f);
        run(ctx, mv[v].name, HTP_OP_ROPE, n, n, 1e-7);
        g.free(ctx);
    }
}

static void cases_rows_cpy(void) {
    C *ctx = ctx_new();
    T *a = g.new4(ctx, G_F32, 33, 10, 3, 1), *idx = g.new4(ctx, G_I32, 6, 3, 1, 1);
    fill(a, -1, 1);
    fill_idx(idx, 10);
    T *n = g.get_rows(ctx, a, idx);
    run(ctx, "GET_ROWS f32 i32", HTP_OP_GET_ROWS, n, n, 0);
    g.free(ctx);

    for (int v = 0; v < 2; v++) {
        ctx = ctx_new();
        T *dst = g.new4(ctx, v ? G_F32 : G_F16, 40, 16, 2, 1), *val = g.new4(ctx, G_F32, 40, 5, 2, 1);
        T *ix = g.new4(ctx, v ? G_I32 : G_I64, 5, 2, 1, 1);
        fill(dst, -1, 1); fill(val, -3, 3);
        fill_perm(ix, 16);
        n = g.set_rows(ctx, dst, val, ix);
        run(ctx, v ? "SET_ROWS f32 i32 -> f32" : "SET_ROWS f32 i64 -> f16", HTP_OP_SET_ROWS, n, dst, 0);
        g.free(ctx);
    }
    static const struct { const char *name; int from, to; int64_t s0, s1; } cp[] = {
        { "CPY f32 -> f16", G_F32, G_F16, 0, 0 }, { "CPY f16 -> f32", G_F16, G_F32, 0, 0 },
        { "CPY f32 -> f32 reshaped", G_F32, G_F32, 1, 0 } };
    for (size_t i = 0; i < 3; i++) {
        ctx = ctx_new();
        T *src = g.new4(ctx, cp[i].from, 48, 6, 2, 1);
        T *dst = cp[i].s0 ? g.new4(ctx, cp[i].to, 24, 12, 2, 1) : g.new4(ctx, cp[i].to, 48, 6, 2, 1);
        fill(src, -2, 2);
        fill(dst, 0, 0);
        n = g.cpy(ctx, src, dst);
        run(ctx, cp[i].name, HTP_OP_CPY, n, dst, cp[i].to == G_F16 ? 1e-6 : 0);
        g.free(ctx);
    }
}

static void cases_flash_attn(void) {
    for (int v = 0; v < 3; v++) {
        C *ctx = ctx_new();
        int64_t D = 64, nq = 7, H = 4, Hkv = 2, nkv = 40;
        T *q = g.new4(ctx, G_F32, D, nq, H, 1), *k = g.new4(ctx, G_F16, D, nkv, Hkv, 1),
          *vv = g.new4(ctx, G_F16, D, nkv, Hkv, 1), *m = g.new4(ctx, G_F16, nkv, 64, 1, 1);
        fill(q, -1, 1); fill(k, -1, 1); fill(vv, -1, 1); fill(m, -2, 0);
        T *n = g.flash_attn_ext(ctx, q, k, vv, m, 0.125f, v == 1 ? 4.0f : 0.0f, v == 1 ? 20.0f : 0.0f);
        if (v == 2) {
            T *sk = g.new4(ctx, G_F32, H, 1, 1, 1);
            fill(sk, -1, 1);
            g.fa_add_sinks(n, sk);
        }
        static const char *const names[] = { "FLASH_ATTN_EXT gqa mask", "FLASH_ATTN_EXT alibi softcap",
                                             "FLASH_ATTN_EXT sinks" };
        run(ctx, names[v], HTP_OP_FLASH_ATTN_EXT, n, n, 5e-4);
        g.free(ctx);
    }
}

static void cases_mul_mat(void) {
    C *ctx = ctx_new();
    T *w = g.new4(ctx, G_F32, 96, 20, 2, 1), *x = g.new4(ctx, G_F32, 96, 3, 4, 1);
    fill(w, -1, 1); fill(x, -1, 1);
    T *n = g.mul_mat(ctx, w, x);
    run(ctx, "MUL_MAT f32 x f32 bcast", HTP_OP_MUL_MAT, n, n, 5e-4);
    g.free(ctx);
    ctx = ctx_new();
    w = g.new4(ctx, G_F16, 96, 20, 1, 1);
    x = g.new4(ctx, G_F32, 96, 5, 1, 1);
    fill(w, -1, 1); fill(x, -1, 1);
    n = g.mul_mat(ctx, w, x);
    run(ctx, "MUL_MAT f16 x f32", HTP_OP_MUL_MAT, n, n, 5e-4);
    g.free(ctx);
    static const struct { const char *name; int type; } qt[] = {
        { "MUL_MAT q4_0 tiled x f32", G_Q4_0 }, { "MUL_MAT q4_1 tiled x f32", G_Q4_1 },
        { "MUL_MAT q8_0 tiled x f32", G_Q8_0 }, { "MUL_MAT iq4_nl tiled x f32", G_IQ4_NL },
        { "MUL_MAT mxfp4 tiled x f32", G_MXFP4 } };
    for (size_t i = 0; i < sizeof qt / sizeof *qt; i++) {
        ctx = ctx_new();
        w = quant_weight(ctx, qt[i].type, 128, 40);
        x = g.new4(ctx, G_F32, 128, 3, 1, 1);
        fill(x, -1, 1);
        n = g.mul_mat(ctx, w, x);
        run(ctx, qt[i].name, HTP_OP_MUL_MAT, n, n, 5e-4);
        g.free(ctx);
    }
}

static void cases_more(void) {
    C *ctx = ctx_new();
    T *a = g.new4(ctx, G_F32, 37, 6, 3, 1);
    fill(a, -3, 3);
    T *n = g.sum_rows(ctx, a);
    run(ctx, "SUM_ROWS", HTP_OP_SUM_ROWS, n, n, 1e-7);
    n = g.cumsum(ctx, a);
    run(ctx, "CUMSUM", HTP_OP_CUMSUM, n, n, 1e-7);
    n = g.norm(ctx, a, 1e-5f);
    run(ctx, "NORM eps=1e-5", HTP_OP_NORM, n, n, 1e-7);
    T *off = g.new4(ctx, G_F32, 1024, 4, 1, 1);
    fill(off, 9999, 10001);
    n = g.norm(ctx, off, 1e-5f);
    run(ctx, "NORM offset 10000 (float mean)", HTP_OP_NORM, n, n, 1e-7);
    T *A = g.new4(ctx, G_F32, 12, 12, 2, 1), *B = g.new4(ctx, G_F32, 5, 12, 2, 1);
    fill(A, -1, 1); fill(B, -1, 1);
    for (int64_t k = 0; k < 2; k++)
        for (int64_t i = 0; i < 12; i++) ((float *) g.data(A))[k * 144 + i * 13] = 2.0f + (float) i * 0.25f;
    n = g.solve_tri(ctx, A, B, true, true, false);
    run(ctx, "SOLVE_TRI 12x12, 5 rhs", HTP_OP_SOLVE_TRI, n, n, 1e-7);
    n = g.l2_norm(ctx, a, 1e-6f);
    run(ctx, "L2_NORM eps=1e-6", HTP_OP_L2_NORM, n, n, 1e-7);
    n = g.fill(ctx, a, 0.75f);
    run(ctx, "FILL 0.75", HTP_OP_FILL, n, n, 0);
    n = g.argsort(ctx, a, 1);
    run(ctx, "ARGSORT desc", HTP_OP_ARGSORT, n, n, 0);
    n = g.argsort(ctx, a, 0);
    run(ctx, "ARGSORT asc", HTP_OP_ARGSORT, n, n, 0);
    T *big = g.new4(ctx, G_F32, 74, 12, 3, 2);
    n = g.repeat(ctx, a, big);
    run(ctx, "REPEAT", HTP_OP_REPEAT, n, n, 0);
    n = g.pad_ext(ctx, a, 2, 3, 0, 1, 1, 0, 0, 0);
    run(ctx, "PAD 2,3,0,1,1,0", HTP_OP_PAD, n, n, 0);
    T *b = g.new4(ctx, G_F32, 37, 4, 3, 1);
    fill(b, -1, 1);
    n = g.concat(ctx, a, b, 1);
    run(ctx, "CONCAT dim 1", HTP_OP_CONCAT, n, n, 0);
    T *sq = g.new4(ctx, G_F32, 9, 9, 2, 1);
    fill(sq, -1, 1);
    for (int t = 0; t < 4; t++) {
        static const char *const names[] = { "TRI upper_diag", "TRI upper", "TRI lower_diag", "TRI lower" };
        n = g.tri(ctx, sq, t);
        run(ctx, names[t], HTP_OP_TRI, n, n, 0);
    }
    T *v = g.new4(ctx, G_F32, 11, 1, 2, 1);
    fill(v, -1, 1);
    n = g.diag(ctx, v);
    run(ctx, "DIAG", HTP_OP_DIAG, n, n, 0);
    g.free(ctx);
    ctx = ctx_new();
    a = g.new4(ctx, G_F32, 37, 6, 3, 1);
    fill(a, -3, 3);
    n = g.clamp(ctx, a, -1.0f, 0.5f);
    run(ctx, "CLAMP -1..0.5 (in place)", HTP_OP_CLAMP, n, a, 0);
    g.free(ctx);

    ctx = ctx_new();
    T *x = g.new4(ctx, G_F32, 48, 4, 5, 1), *bias = g.new4(ctx, G_F32, 48, 6, 1, 1), *ids = g.new4(ctx, G_I32, 4, 5, 1, 1);
    fill(x, -1, 1); fill(bias, -1, 1);
    fill_idx(ids, 6);
    n = g.add_id(ctx, x, bias, ids);
    run(ctx, "ADD_ID", HTP_OP_ADD_ID, n, n, 1e-7);
    g.free(ctx);
    static const struct { const char *name; int type; } qt[] = {
        { "MUL_MAT_ID f32 experts", G_F32 }, { "MUL_MAT_ID q4_0 tiled experts", G_Q4_0 },
        { "MUL_MAT_ID mxfp4 tiled experts", G_MXFP4 } };
    for (size_t i = 0; i < sizeof qt / sizeof *qt; i++) {
        ctx = ctx_new();
        T *as = g.new4(ctx, qt[i].type, 64, 40, 4, 1);
        if (qt[i].type == G_F32) fill(as, -1, 1);
        else {
            float *f = malloc(sizeof *f * 64 * 40 * 4);
            for (int j = 0; j < 64 * 40 * 4; j++) f[j] = (float) (hx_urand(&rng) * 2 - 1);
            g.quantize(qt[i].type, f, g.data(as), 0, 40 * 4, 64, NULL);
            free(f);
        }
        T *bb = g.new4(ctx, G_F32, 64, 1, 3, 1), *ix = g.new4(ctx, G_I32, 2, 3, 1, 1);
        fill(bb, -1, 1);
        fill_perm(ix, 4);
        n = g.mul_mat_id(ctx, as, bb, ix);
        run(ctx, qt[i].name, HTP_OP_MUL_MAT_ID, n, n, 5e-4);
        g.free(ctx);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s OUTDIR REFDIR\n", argv[0]); return 2; }
    if (load_ggml(argv[2]) || check_layout()) return 1;
    char path[512];
    snprintf(path, sizeof path, "%s/libcdsprpc.so", argv[1]);
    if (hx_load(&D, path)) return 1;
    D.reset();
    D.configure("kparams=0"); /* these batches carry no kernel parameters */
    int rc = hx_bring_up(&D, &S, "cdsp", 0);
    if (rc) { printf("oracle: bring-up failed at step %d\n", rc); return 1; }
    /* first the double's own math against ggml; then math=ggml, where the same batches must give ggml's bits (the
     * op mapping, parameters and the untiling of the weights checked exactly) */
    for (exact = 0; exact < 2; exact++) {
        if (exact) {
            char spec[2048];
            snprintf(spec, sizeof spec, "math=ggml;ggml_extra=0;ggml_dir=%s;ggml_cpu=%s", argv[2], variant);
            CHECK(D.configure(spec) == 0, "math=ggml configure");
            printf("oracle: math=ggml (%s), exact\n", variant);
        }
        cases_elementwise();
        cases_glu();
        cases_softmax();
        cases_rope();
        cases_rope_multi();
        cases_rows_cpy();
        cases_flash_attn();
        cases_mul_mat();
        cases_more();
    }
    uint64_t expected = ggml_refuses();
    hx_release(&S);
    CHECK(D.stat("violations") == expected, "violations during the oracle cases");
    printf("oracle: %d cases, %d failed\n", cases, case_failures + failures);
    return case_failures + failures ? 1 : 0;
}
