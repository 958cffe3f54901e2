/*
 * math=ggml: the emulated DSP computes each op it receives with the real ggml CPU library (dlopen'ed from ggml_dir,
 * the CPU variant ggml_cpu), one thread, on the DSP thread. Each op becomes a tiny ggml graph over the wire tensors
 * (their type, ne, nb and data pointers into rpcmem); fused opcodes are built as the separate ggml ops they fuse, and
 * tiled weights are unpacked back to ggml's block layout (lossless) and, with ggml_extra=1, placed in the CPU
 * device's extra buffer type where that device takes the product with it, as llama.cpp places weights. So the
 * double's answers are ggml's own arithmetic: what it checks is the host side (splits, copies, repacking, op mapping,
 * parameters), bit for bit. It says nothing about the DSP's numerics.
 *
 * ggml is declared here from its public headers (ggml.h / ggml-backend.h), in our own words; struct ggml_tensor is
 * the 0.25.1 layout the repository pins (internal/testkit/ggmlref/graph.go, checked by its layout_test.go).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htpdouble.h"

#include "ggml_api.h"

typedef gg_T T;
typedef gg_C C;
typedef gg_B B;

static struct gg_api g;

/* Everything below runs under gg_mu: one DSP thread at a time computes with the CPU backend. */
static pthread_mutex_t gg_mu = PTHREAD_MUTEX_INITIALIZER;
static char loaded_cpu[1280];
static int loaded;
static B backend, cpu_dev;
static B *extra_bufts; /* NULL-terminated, from ggml_backend_dev_get_extra_bufts */
static C *op_ctx;       /* the graph of one op, reset per op */
static size_t op_ctx_size;

static void on_ggml_abort(const char *msg) {
    /* ggml aborts the process after this: the double says why on stderr and in its log file */
    fprintf(stderr, "htpdouble (math=ggml): ggml aborted: %s\n", msg ? msg : "?");
}

/* ---------------------------------------------------------------- loading */

int hd_ggml_load(const char *dir, const char *cpu, char *err, size_t errn) {
    char base_path[1280], cpu_path[1280];
    if (!*dir || !*cpu) { snprintf(err, errn, "math=ggml needs ggml_dir and ggml_cpu"); return -1; }
    snprintf(base_path, sizeof base_path, "%s/libggml-base.so", dir);
    if (strstr(cpu, ".so")) snprintf(cpu_path, sizeof cpu_path, "%s/%s", dir, cpu);
    else snprintf(cpu_path, sizeof cpu_path, "%s/libggml-cpu-%s.so", dir, cpu);
    pthread_mutex_lock(&gg_mu);
    int rc = 0;
    if (loaded && !strcmp(loaded_cpu, cpu_path)) goto out;
    if (loaded) { snprintf(err, errn, "ggml already loaded from %s; one CPU library a process", loaded_cpu); rc = -1; goto out; }
    /* the same paths libllama's loader opens: dlopen returns those instances */
    void *base = dlopen(base_path, RTLD_NOW | RTLD_LOCAL), *lcpu = base ? dlopen(cpu_path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!lcpu) { snprintf(err, errn, "%s", dlerror()); rc = -1; goto out; }
    if (gg_api_load(&g, base, lcpu, err, errn)) { rc = -1; goto out; }
    if (g.tensor_overhead() != GG_TENSOR_OVERHEAD) {
        snprintf(err, errn, "ggml_tensor_overhead() = %zu, want %u: not the ggml 0.25.1 tensor layout",
                 g.tensor_overhead(), GG_TENSOR_OVERHEAD);
        rc = -1;
        goto out;
    }
    g.set_abort(on_ggml_abort);
    snprintf(loaded_cpu, sizeof loaded_cpu, "%s", cpu_path);
    loaded = 1;
out:
    pthread_mutex_unlock(&gg_mu);
    return rc;
}

/* The CPU backend, made on the first op's DSP thread (ggml's AMX code keeps tile state per thread; every ggml call
 * that computes or converts runs on a DSP thread). */
static int backend_ready(void) {
    if (backend) return 1;
    g.cpu_init();
    backend = g.backend_cpu_init();
    if (!backend) return 0;
    g.cpu_threads(backend, 1);
    cpu_dev = g.get_device(backend);
    B (*get_extra)(B) = (B (*)(B)) g.proc_address(g.dev_reg(cpu_dev), "ggml_backend_dev_get_extra_bufts");
    extra_bufts = get_extra ? (B *) get_extra(cpu_dev) : NULL;
    return 1;
}

/* ---------------------------------------------------------------- failures */

static int fail(int status, const struct hd_op *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(int status, const struct hd_op *op, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&hd.mu);
    hd_violation("math=ggml: %s: %s", hd_op_name(op->opcode), msg);
    pthread_mutex_unlock(&hd.mu);
    return status;
}

/* ---------------------------------------------------------------- tensors */

static uint32_t ggml_type_of(uint32_t wire) {
    switch (wire) {
    case HTP_TYPE_Q4_0_TILED: return HTP_TYPE_Q4_0;
    case HTP_TYPE_Q4_1_TILED: return HTP_TYPE_Q4_1;
    case HTP_TYPE_Q8_0_TILED: return HTP_TYPE_Q8_0;
    case HTP_TYPE_MXFP4_TILED: return HTP_TYPE_MXFP4;
    default: return wire;
    }
}

/* A ggml tensor viewing a wire tensor: its type, ne, nb, and its memory. */
static T *view(const struct hd_tensor *t) {
    if (!t) return NULL;
    const struct htp_tensor *d = t->d;
    T *x = g.new4(op_ctx, (int) ggml_type_of(d->type), d->ne[0], d->ne[1], d->ne[2], d->ne[3]);
    for (int i = 0; i < 4; i++) x->nb[i] = d->nb[i];
    x->data = t->p;
    return x;
}

/* Scratch for the intermediate nodes of a fused op (at most two a batch op), kept between ops. */
static void *scratch[2];
static size_t scratch_n[2];

static void *scratch_get(int i, size_t n) {
    if (scratch_n[i] < n) {
        free(scratch[i]);
        scratch[i] = aligned_alloc(64, (n + 63) & ~(size_t) 63);
        scratch_n[i] = scratch[i] ? n : 0;
    }
    return scratch[i];
}

static size_t nbytes_contig(const T *x) {
    size_t n = x->nb[1] * (size_t) x->ne[1];
    for (int i = 2; i < 4; i++) n *= (size_t) x->ne[i];
    return n;
}

static int intermediate(T *x, int i) {
    x->data = scratch_get(i, nbytes_contig(x));
    return x->data != NULL;
}

/* The node's result goes to the wire tensor d: same type and shape (else the host asked ggml for something it does
 * not compute), d's strides and memory. */
static int bind_out(const struct hd_op *op, T *x, const struct hd_tensor *d) {
    if (!x) return fail(HTP_STATUS_INTERNAL_ERR, op, "no node");
    if (!d) return fail(HTP_STATUS_INVAL_PARAMS, op, "no dst");
    if ((uint32_t) x->type != ggml_type_of(d->d->type))
        return fail(HTP_STATUS_NO_SUPPORT, op, "ggml computes type %d, the dst is type %u", x->type, d->d->type);
    for (int i = 0; i < 4; i++)
        if (x->ne[i] != (int64_t) d->d->ne[i])
            return fail(HTP_STATUS_INVAL_PARAMS, op, "ggml's result has ne %lld %lld %lld %lld, the dst %u %u %u %u",
                        (long long) x->ne[0], (long long) x->ne[1], (long long) x->ne[2], (long long) x->ne[3],
                        d->d->ne[0], d->d->ne[1], d->d->ne[2], d->d->ne[3]);
    for (int i = 0; i < 4; i++) x->nb[i] = d->d->nb[i];
    x->data = d->p;
    return HTP_STATUS_OK;
}

/* ---------------------------------------------------------------- weights
 * A quantized weight arrives tiled (hexagon.md 10): unpacked to ggml's blocks once per (rpcmem allocation, offset,
 * shape) and, with ggml_extra, placed in the first extra buffer type the CPU device takes the product with - the
 * check llama.cpp makes, with a 512-column F32 activation (an expert product: n_used x 512). A float weight is read in
 * place. */

struct wentry {
    uint64_t gen; const uint8_t *p; uint32_t type; uint32_t ne[4], nb[4]; int64_t N, n_used;
    C *ctx; T *t; B buf; void *mem; const char *where;
};
static struct wentry *wcache;
static size_t wcache_n, wcache_cap;
static pthread_mutex_t gone_mu = PTHREAD_MUTEX_INITIALIZER; /* leaf lock: blocks released while ops run */
static uint64_t *gone;
static size_t gone_n, gone_cap;

void hd_ggml_block_gone(uint64_t gen) {
    pthread_mutex_lock(&gone_mu);
    if (gone_n == gone_cap) {
        size_t cap = gone_cap ? 2 * gone_cap : 64;
        uint64_t *p = realloc(gone, cap * sizeof *p);
        if (p) { gone = p; gone_cap = cap; }
    }
    if (gone_n < gone_cap) gone[gone_n++] = gen;
    pthread_mutex_unlock(&gone_mu);
}

static void wentry_free(struct wentry *e) {
    if (e->buf) g.buffer_free(e->buf);
    free(e->mem);
    if (e->ctx) g.free(e->ctx);
}

/* Drops the weights of released rpcmem blocks. */
static void wcache_purge(void) {
    pthread_mutex_lock(&gone_mu);
    for (size_t k = 0; k < gone_n; k++)
        for (size_t i = 0; i < wcache_n;) {
            if (wcache[i].gen != gone[k]) { i++; continue; }
            wentry_free(&wcache[i]);
            wcache[i] = wcache[--wcache_n];
        }
    gone_n = 0;
    pthread_mutex_unlock(&gone_mu);
}

/* ggml's blocks of tiled row n, K-block kt (hexagon.md 10: tile (ct, kt) of 32 rows x 32 K). */
static void untile_block(uint32_t qt, const uint8_t *tile, int row, uint8_t *blk) {
    if (qt == HTP_TYPE_Q8_0) {
        memcpy(blk, tile + 1024 + 2 * row, 2);
        for (int k = 0; k < 32; k++) blk[2 + k] = tile[(k / 2) * 64 + 2 * row + (k % 2)];
        return;
    }
    uint8_t *qs;
    switch (qt) {
    case HTP_TYPE_Q4_1: memcpy(blk, tile + 512 + 4 * row, 4); qs = blk + 4; break;
    case HTP_TYPE_MXFP4: blk[0] = tile[512 + row]; qs = blk + 1; break;
    default: memcpy(blk, tile + 512 + 2 * row, 2); qs = blk + 2; break; /* Q4_0, IQ4_NL */
    }
    uint8_t q[32];
    for (int k = 0; k < 32; k++) q[k] = (uint8_t) ((tile[(k / 2) * 32 + row] >> (4 * (k % 2))) & 0xf);
    for (int j = 0; j < 16; j++) qs[j] = (uint8_t) (q[j] | (q[j + 16] << 4));
}

/* Places weight e->t (no memory yet) in the first extra buffer type the device takes `use` with; returns its name,
 * or NULL when none does (the tensor is left without memory). */
static const char *place_extra(struct wentry *e, const void *data, size_t n, T *use) {
    for (B *bt = extra_bufts; bt && *bt; bt++) {
        B buf = g.buft_alloc(*bt, g.buft_alloc_size(*bt, e->t));
        if (!buf) continue;
        if (g.tensor_alloc(buf, e->t, g.buffer_base(buf)) == 0 && g.supports_op(cpu_dev, use)) {
            g.tensor_set(e->t, data, 0, n);
            e->buf = buf;
            return g.buft_name(*bt);
        }
        e->t->data = NULL; e->t->buffer = NULL; e->t->extra = NULL;
        g.buffer_free(buf);
    }
    return NULL;
}

/* The ggml weight for wire tensor w of a product with K inputs and N outputs (MUL_MAT family) or N outputs and
 * n_used experts a token (MUL_MAT_ID, n_used > 0). */
static T *weight(const struct hd_op *op, const struct hd_tensor *w, int64_t K, int64_t N, int64_t n_used, int *status) {
    uint32_t qt;
    int tiled;
    if ((*status = hd_weight_layout(w, K, N, &qt, &tiled)) != HTP_STATUS_OK) {
        fail(*status, op, "weight layout rejected");
        return NULL;
    }
    if (!tiled && (w->d->type == HTP_TYPE_F32 || w->d->type == HTP_TYPE_F16)) {
        /* float weights are read in place, like any other operand */
        T *x = view(w);
        return x;
    }
    for (size_t i = 0; i < wcache_n; i++) {
        struct wentry *e = &wcache[i];
        if (e->gen == w->gen && e->p == w->p && e->type == w->d->type && e->N == N && e->n_used == n_used &&
            !memcmp(e->ne, w->d->ne, sizeof e->ne) && !memcmp(e->nb, w->d->nb, sizeof e->nb))
            return e->t;
    }
    if (wcache_n == wcache_cap) {
        size_t cap = wcache_cap ? 2 * wcache_cap : 64;
        struct wentry *p = realloc(wcache, cap * sizeof *p);
        if (!p) { *status = HTP_STATUS_INTERNAL_ERR; return NULL; }
        wcache = p; wcache_cap = cap;
    }
    struct wentry e = { .gen = w->gen, .p = w->p, .type = w->d->type, .N = N, .n_used = n_used };
    memcpy(e.ne, w->d->ne, sizeof e.ne);
    memcpy(e.nb, w->d->nb, sizeof e.nb);
    int64_t ne2 = w->d->ne[2], ne3 = w->d->ne[3], nkb = K / 32, nkt = (w->d->ne[0] + 31) / 32;
    size_t bb = hd_type_size(qt), row = (size_t) nkb * bb, n = row * (size_t) (N * ne2 * ne3);
    e.ctx = g.init((struct gg_init_params) { 8 * GG_TENSOR_OVERHEAD + g.graph_overhead(8, false), NULL, true });
    e.mem = malloc(n ? n : 1);
    if (!e.ctx || !e.mem) { wentry_free(&e); *status = HTP_STATUS_INTERNAL_ERR; return NULL; }
    uint8_t *dst = e.mem;
    for (int64_t i3 = 0; i3 < ne3; i3++)
        for (int64_t i2 = 0; i2 < ne2; i2++) {
            const uint8_t *mat = w->p + (size_t) i2 * w->d->nb[2] + (size_t) i3 * w->d->nb[3];
            for (int64_t r = 0; r < N; r++, dst += row)
                for (int64_t kb = 0; kb < nkb; kb++) {
                    if (tiled) untile_block(qt, mat + (size_t) ((r / 32) * nkt + kb) * hd_tile_bytes(qt), (int) (r % 32),
                                            dst + (size_t) kb * bb);
                    else memcpy(dst + (size_t) kb * bb, mat + (size_t) r * w->d->nb[1] + (size_t) kb * bb, bb);
                }
        }
    e.t = g.new4(e.ctx, (int) qt, K, N, ne2, ne3);
    e.where = "CPU";
    if (hd.cfg.ggml_extra) {
        T *use;
        if (n_used > 0) {
            T *b = g.new4(e.ctx, GG_F32, K, n_used, 512, 1), *ids = g.new4(e.ctx, GG_I32, n_used, 512, 1, 1);
            use = g.mul_mat_id(e.ctx, e.t, b, ids);
        } else use = g.mul_mat(e.ctx, e.t, g.new4(e.ctx, GG_F32, K, 512, ne2, ne3));
        const char *name = place_extra(&e, e.mem, n, use);
        if (name) { e.where = name; free(e.mem); e.mem = NULL; }
    }
    if (!e.buf) e.t->data = e.mem;
    pthread_mutex_lock(&hd.mu);
    hd.st.ggml_weights++;
    hd.st.ggml_weights_extra += e.buf != NULL;
    hd_log("math=ggml: weight %s %u x %lld (x %lld) of %s in %s", hd_op_name(op->opcode), (unsigned) K, (long long) N,
           (long long) (ne2 * ne3), tiled ? "tiles" : "blocks", e.where);
    pthread_mutex_unlock(&hd.mu);
    wcache[wcache_n++] = e;
    return wcache[wcache_n - 1].t;
}

/* ---------------------------------------------------------------- ops */

static float pf(const struct hd_op *op, int i) { float f; memcpy(&f, &op->params[i], 4); return f; }

static int same_ne(const struct hd_tensor *a, const struct hd_tensor *b) {
    return !memcmp(a->d->ne, b->d->ne, sizeof a->d->ne);
}
static int can_repeat(const struct hd_tensor *s, const struct hd_tensor *b) {
    for (int i = 0; i < 4; i++) if (!s->d->ne[i] || b->d->ne[i] % s->d->ne[i]) return 0;
    return 1;
}

/* Perturbs every element of d by one unit in the last place (ggml_ulp knob): the checks must see it. */
static void perturb(const struct hd_tensor *d) {
    uint32_t es = d->d->type == HTP_TYPE_F32 ? 4 : d->d->type == HTP_TYPE_F16 ? 2 : 0;
    if (!es) return;
    for (uint32_t i3 = 0; i3 < d->d->ne[3]; i3++)
        for (uint32_t i2 = 0; i2 < d->d->ne[2]; i2++)
            for (uint32_t i1 = 0; i1 < d->d->ne[1]; i1++)
                for (uint32_t i0 = 0; i0 < d->d->ne[0]; i0++) {
                    uint8_t *p = d->p + (size_t) i0 * d->d->nb[0] + (size_t) i1 * d->d->nb[1] +
                                 (size_t) i2 * d->d->nb[2] + (size_t) i3 * d->d->nb[3];
                    if (es == 4) { uint32_t v; memcpy(&v, p, 4); v ^= 1; memcpy(p, &v, 4); }
                    else { uint16_t v; memcpy(&v, p, 2); v ^= 1; memcpy(p, &v, 2); }
                }
}

#define NEED(cond, st, ...) do { if (!(cond)) return fail(st, op, __VA_ARGS__); } while (0)

/* Builds op's nodes into out[] (one per dst, bound to it); returns an htp status. */
static int build(const struct hd_op *op, struct hd_tensor *const src[], struct hd_tensor *const dst[], T **out, int *n_out) {
    C *c = op_ctx;
    struct hd_tensor *a = src[0], *b = src[1], *d = dst[0];
    T *x = NULL;
    int st;
    *n_out = 1;
    NEED(d, HTP_STATUS_INVAL_PARAMS, "no dst[0]");
    switch (op->opcode) {
    case HTP_OP_ADD: case HTP_OP_SUB: case HTP_OP_MUL: case HTP_OP_DIV:
        NEED(a && b && can_repeat(b, a), HTP_STATUS_INVAL_PARAMS, "src1 does not repeat into src0");
        x = (op->opcode == HTP_OP_ADD ? g.add : op->opcode == HTP_OP_SUB ? g.sub : op->opcode == HTP_OP_MUL ? g.mul : g.div)(c, view(a), view(b));
        break;
    case HTP_OP_RMS_NORM: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.rms_norm(c, view(a), pf(op, 0)); break;
    case HTP_OP_RMS_NORM_MUL: {
        NEED(a && b && can_repeat(b, a), HTP_STATUS_INVAL_PARAMS, "src1 does not repeat into src0");
        T *n = g.rms_norm(c, view(a), pf(op, 0));
        NEED(intermediate(n, 0), HTP_STATUS_INTERNAL_ERR, "out of memory");
        x = g.mul(c, n, view(b));
        break;
    }
    case HTP_OP_NORM: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.norm(c, view(a), pf(op, 0)); break;
    case HTP_OP_L2_NORM: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.l2_norm(c, view(a), pf(op, 0)); break;
    case HTP_OP_SCALE: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.scale_bias(c, view(a), pf(op, 0), pf(op, 1)); break;
    case HTP_OP_CLAMP: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.clamp(c, view(a), pf(op, 0), pf(op, 1)); break;
    case HTP_OP_FILL: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.fill(c, view(a), pf(op, 0)); break;
    case HD_OP_LEAKY_RELU: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.leaky_relu(c, view(a), pf(op, 0), false); break;
    case HTP_OP_UNARY_SILU: case HTP_OP_UNARY_GELU: case HTP_OP_UNARY_SIGMOID: case HTP_OP_UNARY_EXP:
    case HTP_OP_UNARY_NEG: case HTP_OP_UNARY_SOFTPLUS: case HTP_OP_UNARY_TANH: case HTP_OP_SQR: case HTP_OP_SQRT:
    case HD_OP_ABS: case HD_OP_LOG: case HD_OP_RELU: {
        NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0");
        T *(*f)(C *, T *);
        switch (op->opcode) {
        case HTP_OP_UNARY_SILU: f = g.silu; break;
        /* the wire's one GELU opcode, as the gelu knob says the DSP computes it */
        case HTP_OP_UNARY_GELU: f = hd.cfg.gelu_tanh ? g.gelu : g.gelu_quick; break;
        case HTP_OP_UNARY_SIGMOID: f = g.sigmoid; break;
        case HTP_OP_UNARY_EXP: f = g.exp; break;
        case HTP_OP_UNARY_NEG: f = g.neg; break;
        case HTP_OP_UNARY_SOFTPLUS: f = g.softplus; break;
        case HTP_OP_UNARY_TANH: f = g.tanh; break;
        case HTP_OP_SQR: f = g.sqr; break;
        case HTP_OP_SQRT: f = g.sqrt; break;
        case HD_OP_ABS: f = g.abs; break;
        case HD_OP_LOG: f = g.log; break;
        default: f = g.relu; break;
        }
        x = f(c, view(a));
        break;
    }
    case HTP_OP_GLU_SWIGLU: case HTP_OP_GLU_GEGLU: case HTP_OP_GLU_SWIGLU_OAI: {
        NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0");
        int swapped = op->params[1] != 0;
        NEED(!b || same_ne(a, b), HTP_STATUS_INVAL_PARAMS, "src1's shape is not src0's");
        NEED(b || a->d->ne[0] % 2 == 0, HTP_STATUS_INVAL_PARAMS, "odd row without src1");
        if (op->opcode == HTP_OP_GLU_SWIGLU_OAI) {
            NEED(!swapped, HTP_STATUS_NO_SUPPORT, "swapped SWIGLU_OAI has no ggml builder");
            x = g.swiglu_oai(c, view(a), view(b), pf(op, 2), pf(op, 3));
        } else if (b) {
            NEED(!swapped, HTP_STATUS_NO_SUPPORT, "swapped split GLU has no ggml builder");
            x = (op->opcode == HTP_OP_GLU_SWIGLU ? g.swiglu_split : g.geglu_split)(c, view(a), view(b));
        } else if (op->opcode == HTP_OP_GLU_SWIGLU) x = (swapped ? g.swiglu_swapped : g.swiglu)(c, view(a));
        else x = (swapped ? g.geglu_swapped : g.geglu)(c, view(a));
        break;
    }
    case HTP_OP_SOFTMAX:
        NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0");
        NEED(!b || (b->d->ne[0] == a->d->ne[0] && b->d->ne[1] >= a->d->ne[1] && a->d->ne[2] % b->d->ne[2] == 0 &&
                    a->d->ne[3] % b->d->ne[3] == 0), HTP_STATUS_INVAL_PARAMS, "mask shape");
        x = g.soft_max_ext(c, view(a), view(b), pf(op, 0), pf(op, 1));
        if (src[2]) g.soft_max_add_sinks(x, view(src[2]));
        break;
    case HTP_OP_ROPE: {
        NEED(a && b && b->d->type == HTP_TYPE_I32, HTP_STATUS_NO_SUPPORT, "rope needs I32 positions");
        NEED(op->params[15] == 0, HTP_STATUS_NO_SUPPORT, "rope offset %d: ggml 0.25.1's builders have none", op->params[15]);
        int mode = op->params[2];
        if (mode & 8) { /* MROPE, VISION, IMROPE */
            int sections[4] = { op->params[11], op->params[12], op->params[13], op->params[14] };
            x = g.rope_multi(c, view(a), view(b), view(src[2]), op->params[1], sections, mode, op->params[4], pf(op, 5),
                             pf(op, 6), pf(op, 7), pf(op, 8), pf(op, 9), pf(op, 10));
        } else
            x = g.rope_ext(c, view(a), view(b), view(src[2]), op->params[1], mode, op->params[4], pf(op, 5), pf(op, 6),
                           pf(op, 7), pf(op, 8), pf(op, 9), pf(op, 10));
        break;
    }
    case HTP_OP_GET_ROWS:
        NEED(a && b && b->d->type == HTP_TYPE_I32, HTP_STATUS_NO_SUPPORT, "ggml's GET_ROWS takes I32 rows");
        NEED(a->d->ne[2] == b->d->ne[1] && b->d->ne[3] == 1, HTP_STATUS_INVAL_PARAMS, "index shape");
        x = g.get_rows(c, view(a), view(b));
        break;
    case HTP_OP_SET_ROWS:
        NEED(a && b && (b->d->type == HTP_TYPE_I32 || b->d->type == HTP_TYPE_I64), HTP_STATUS_NO_SUPPORT, "index type");
        NEED(a->d->ne[0] == d->d->ne[0] && a->d->ne[1] == b->d->ne[0] && a->d->ne[2] % b->d->ne[1] == 0 &&
             a->d->ne[3] % b->d->ne[2] == 0, HTP_STATUS_INVAL_PARAMS, "SET_ROWS shapes");
        x = g.set_rows(c, view(d), view(a), view(b));
        break;
    case HTP_OP_CPY: {
        NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0");
        uint64_t na = (uint64_t) a->d->ne[0] * a->d->ne[1] * a->d->ne[2] * a->d->ne[3];
        uint64_t nd = (uint64_t) d->d->ne[0] * d->d->ne[1] * d->d->ne[2] * d->d->ne[3];
        NEED(na == nd, HTP_STATUS_INVAL_PARAMS, "element counts differ");
        x = g.cpy(c, view(a), view(d));
        break;
    }
    case HTP_OP_FLASH_ATTN_EXT: {
        struct hd_tensor *v = src[2], *mask = src[3];
        NEED(a && b && v, HTP_STATUS_INVAL_PARAMS, "needs Q, K, V");
        NEED(b->d->ne[0] == a->d->ne[0] && v->d->ne[1] == b->d->ne[1] && a->d->ne[2] % b->d->ne[2] == 0 &&
             a->d->ne[3] % b->d->ne[3] == 0, HTP_STATUS_INVAL_PARAMS, "Q/K/V shapes");
        NEED(!mask || (mask->d->ne[0] >= b->d->ne[1] && mask->d->ne[1] >= a->d->ne[1] && a->d->ne[2] % mask->d->ne[2] == 0 &&
                       a->d->ne[3] % mask->d->ne[3] == 0), HTP_STATUS_INVAL_PARAMS, "mask shape");
        x = g.flash_attn_ext(c, view(a), view(b), view(v), view(mask), pf(op, 0), pf(op, 1), pf(op, 2));
        if (src[4]) g.fa_add_sinks(x, view(src[4]));
        break;
    }
    case HTP_OP_MUL_MAT: case HTP_OP_MUL_MAT_ADD: case HTP_OP_MUL_MAT_QKV: case HTP_OP_MUL_MAT_FFN: {
        NEED(a && b, HTP_STATUS_INVAL_PARAMS, "needs weight and activation");
        /* d99724f's fusions: inputs {W0, x, W1[, W2]}, outputs dst[k] = W_k x */
        int n = op->opcode == HTP_OP_MUL_MAT_QKV ? 3 : op->opcode == HTP_OP_MUL_MAT_FFN ? 2 : 1;
        T *xa = view(b);
        for (int k = 0; k < n; k++) {
            struct hd_tensor *w = src[k ? k + 1 : 0], *dk = dst[k];
            NEED(w && dk, HTP_STATUS_INVAL_PARAMS, "missing weight or dst %d", k);
            NEED(dk->d->ne[1] == b->d->ne[1] && dk->d->ne[2] == b->d->ne[2] && dk->d->ne[3] == b->d->ne[3] &&
                 b->d->ne[2] % w->d->ne[2] == 0 && b->d->ne[3] % w->d->ne[3] == 0, HTP_STATUS_INVAL_PARAMS, "product shapes");
            T *wt = weight(op, w, b->d->ne[0], dk->d->ne[0], 0, &st);
            if (!wt) return st;
            NEED(wt->ne[0] == (int64_t) b->d->ne[0], HTP_STATUS_INVAL_PARAMS, "K differs");
            T *p = g.mul_mat(c, wt, xa);
            if (op->opcode == HTP_OP_MUL_MAT_ADD) {
                NEED(src[2] && can_repeat(src[2], dk), HTP_STATUS_INVAL_PARAMS, "addend does not repeat into dst");
                NEED(intermediate(p, 0), HTP_STATUS_INTERNAL_ERR, "out of memory");
                p = g.add(c, p, view(src[2]));
            }
            if ((st = bind_out(op, p, dk)) != HTP_STATUS_OK) return st;
            out[k] = p;
        }
        *n_out = n;
        return HTP_STATUS_OK;
    }
    case HTP_OP_MUL_MAT_ID: {
        struct hd_tensor *ids = src[2];
        NEED(a && b && ids && ids->d->type == HTP_TYPE_I32, HTP_STATUS_NO_SUPPORT, "needs I32 ids");
        NEED(a->d->ne[3] == 1 && b->d->ne[2] == ids->d->ne[1], HTP_STATUS_INVAL_PARAMS, "MUL_MAT_ID shapes");
        T *wt = weight(op, a, b->d->ne[0], d->d->ne[0], ids->d->ne[0], &st);
        if (!wt) return st;
        x = g.mul_mat_id(c, wt, view(b), view(ids));
        break;
    }
    case HTP_OP_ADD_ID:
        NEED(a && b && src[2] && src[2]->d->type == HTP_TYPE_I32, HTP_STATUS_NO_SUPPORT, "needs I32 ids");
        x = g.add_id(c, view(a), view(b), view(src[2]));
        break;
    case HTP_OP_SUM_ROWS: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.sum_rows(c, view(a)); break;
    case HTP_OP_CUMSUM: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.cumsum(c, view(a)); break;
    case HTP_OP_DIAG: NEED(a && a->d->ne[1] == 1, HTP_STATUS_INVAL_PARAMS, "DIAG of a row"); x = g.diag(c, view(a)); break;
    case HTP_OP_TRI: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.tri(c, view(a), op->params[0]); break;
    case HTP_OP_SOLVE_TRI:
        NEED(a && b && a->d->ne[0] == a->d->ne[1] && b->d->ne[1] == a->d->ne[0], HTP_STATUS_INVAL_PARAMS, "SOLVE_TRI shapes");
        x = g.solve_tri(c, view(a), view(b), true, true, false);
        break;
    case HTP_OP_REPEAT: NEED(a && can_repeat(a, d), HTP_STATUS_INVAL_PARAMS, "src0 does not repeat into dst"); x = g.repeat(c, view(a), view(d)); break;
    case HTP_OP_CONCAT: {
        int dim = op->params[0];
        NEED(a && b && dim >= 0 && dim < 4 && a->d->type == b->d->type, HTP_STATUS_INVAL_PARAMS, "CONCAT operands");
        for (int i = 0; i < 4; i++) NEED(i == dim || a->d->ne[i] == b->d->ne[i], HTP_STATUS_INVAL_PARAMS, "CONCAT shapes");
        x = g.concat(c, view(a), view(b), dim);
        break;
    }
    case HTP_OP_PAD: {
        NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0");
        const int32_t *p = op->params;
        x = (p[8] ? g.pad_ext_circular : g.pad_ext)(c, view(a), p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
        break;
    }
    case HTP_OP_ARGSORT: NEED(a, HTP_STATUS_INVAL_PARAMS, "no src0"); x = g.argsort(c, view(a), op->params[0]); break;
    default:
        return fail(HTP_STATUS_NO_SUPPORT, op, "not implemented in math=ggml");
    }
    if ((st = bind_out(op, x, d)) != HTP_STATUS_OK) return st;
    out[0] = x;
    return HTP_STATUS_OK;
}

int hd_ggml_exec_op(const struct hd_op *op, struct hd_tensor *const src[HD_FENCE_MAX_INPUTS],
                    struct hd_tensor *const dst[HTP_OP_MAX_OUTPUTS]) {
    pthread_mutex_lock(&gg_mu);
    int st;
    if (!loaded) { st = fail(HTP_STATUS_INTERNAL_ERR, op, "the ggml libraries are not loaded (ggml_dir, ggml_cpu)"); goto out; }
    if (!backend_ready()) { st = fail(HTP_STATUS_INTERNAL_ERR, op, "ggml_backend_cpu_init failed"); goto out; }
    wcache_purge();
    size_t need = 64 * GG_TENSOR_OVERHEAD + g.graph_overhead(16, false);
    if (!op_ctx || op_ctx_size < need) {
        if (op_ctx) g.free(op_ctx);
        op_ctx = g.init((struct gg_init_params) { need, NULL, true });
        op_ctx_size = op_ctx ? need : 0;
        if (!op_ctx) { st = fail(HTP_STATUS_INTERNAL_ERR, op, "ggml_init failed"); goto out; }
    }
    g.reset(op_ctx);
    T *out[HTP_OP_MAX_OUTPUTS];
    int n_out = 0;
    if ((st = build(op, src, dst, out, &n_out)) != HTP_STATUS_OK) goto out;
    void *gf = g.new_graph_custom(op_ctx, 16, false);
    for (int k = 0; k < n_out; k++) g.expand(gf, out[k]);
    if (g.graph_compute(backend, gf) != 0) { st = fail(HTP_STATUS_INTERNAL_ERR, op, "ggml_backend_graph_compute failed"); goto out; }
    if (hd.cfg.ggml_ulp == op->opcode)
        for (int k = 0; k < n_out; k++) perturb(dst[k]);
out:
    pthread_mutex_unlock(&gg_mu);
    return st;
}
