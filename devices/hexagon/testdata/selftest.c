/*
 * Self-test of the double: loads the built variants with dlopen like a host would, brings a session up, runs one
 * op batch (ADD, MUL_MAT over a tiled Q4_0 weight, RMS_NORM) checked against a direct computation, shows three
 * bad batches rejected (tensor offset past its buffer, unmapped fd, stale sequence numbers), exercises a few fault
 * points and the "no DSP" answers, releases everything and checks that nothing leaked. Usage: selftest OUTDIR.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htpdouble.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

struct api {
    void *lib;
    int (*open)(const char *, remote_handle64 *);
    int (*close)(remote_handle64);
    int (*invoke)(remote_handle64, uint32_t, remote_arg *);
    int (*h64_control)(remote_handle64, uint32_t, void *, uint32_t);
    int (*handle_control)(uint32_t, void *, uint32_t);
    int (*session_control)(uint32_t, void *, uint32_t);
    int (*system_request)(void *);
    void *(*alloc)(int, uint32_t, int);
    void *(*alloc2)(int, uint32_t, size_t);
    void (*free)(void *);
    int (*to_fd)(void *);
    int (*mmap)(int, int, void *, int, size_t, int);
    int (*munmap)(int, int, void *, size_t);
    int (*q_create)(int, uint32_t, uint32_t, uint32_t, dspqueue_callback_t, dspqueue_callback_t, void *, dspqueue_t *);
    int (*q_close)(dspqueue_t);
    int (*q_export)(dspqueue_t, uint64_t *);
    int (*q_write)(dspqueue_t, uint32_t, uint32_t, struct dspqueue_buffer *, uint32_t, const uint8_t *, uint32_t);
    int (*q_read)(dspqueue_t, uint32_t *, uint32_t, uint32_t *, struct dspqueue_buffer *, uint32_t, uint32_t *,
                  uint8_t *, uint32_t);
    int (*configure)(const char *);
    void (*reset)(void);
    uint64_t (*stat)(const char *);
    size_t (*violations)(char *, size_t);
};

#define SYM(f, name) *(void **) (&a->f) = dlsym(a->lib, name)

static int load(struct api *a, const char *path) {
    memset(a, 0, sizeof *a);
    a->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) { printf("dlopen %s: %s\n", path, dlerror()); return -1; }
    SYM(open, "remote_handle64_open"); SYM(close, "remote_handle64_close"); SYM(invoke, "remote_handle64_invoke");
    SYM(h64_control, "remote_handle64_control"); SYM(handle_control, "remote_handle_control");
    SYM(session_control, "remote_session_control"); SYM(system_request, "remote_system_request");
    SYM(alloc, "rpcmem_alloc"); SYM(alloc2, "rpcmem_alloc2"); SYM(free, "rpcmem_free"); SYM(to_fd, "rpcmem_to_fd");
    SYM(mmap, "fastrpc_mmap"); SYM(munmap, "fastrpc_munmap"); SYM(q_create, "dspqueue_create");
    SYM(q_close, "dspqueue_close"); SYM(q_export, "dspqueue_export"); SYM(q_write, "dspqueue_write");
    SYM(q_read, "dspqueue_read"); SYM(configure, "htpdouble_configure"); SYM(reset, "htpdouble_reset");
    SYM(stat, "htpdouble_stat"); SYM(violations, "htpdouble_violations");
    return 0;
}

static const char module_uri[] = "file:///libggml-htp-v73.so?htp_iface_skel_handle_invoke&_modver=1.0";

static int get_uri(struct api *a, const char *dom, uint32_t session, char *uri, uint32_t len) {
    struct remote_rpc_get_uri g = { .domain_name = (char *) dom, .domain_name_len = (uint32_t) strlen(dom),
                                    .session_id = session, .module_uri = (char *) module_uri,
                                    .module_uri_len = (uint32_t) strlen(module_uri), .uri = uri, .uri_len = len };
    return a->session_control(FASTRPC_GET_URI, &g, sizeof g);
}

/* ---------------------------------------------------------------- no-DSP answers and variants */

static void test_nodsp(const char *out) {
    char path[512];
    struct api a;
    snprintf(path, sizeof path, "%s/nosysreq/libcdsprpc.so", out);
    if (load(&a, path)) { failures++; return; }
    CHECK(a.system_request == NULL, "nosysreq variant exports remote_system_request");
    CHECK(a.alloc2 != NULL, "nosysreq variant lacks rpcmem_alloc2");
    a.reset();
    CHECK(a.configure("nodsp=1") == 0, "configure nodsp");
    CHECK(a.alloc(RPCMEM_HEAP_ID_SYSTEM, 1, 1 << 20) == NULL, "rpcmem_alloc without a DSP");
    CHECK(a.to_fd(NULL) == -1, "rpcmem_to_fd(NULL)");
    struct remote_dsp_capability cap = { CDSP_DOMAIN_ID, ARCH_VER, 0 };
    CHECK(a.handle_control(DSPRPC_GET_DSP_INFO, &cap, sizeof cap) == AEE_ECONNREFUSED, "GET_DSP_INFO without a DSP");
    struct remote_rpc_effective_domain_id e = { "cdsp", 4, 0, 0 };
    CHECK(a.session_control(FASTRPC_GET_EFFECTIVE_DOMAIN_ID, &e, sizeof e) == 0 && e.effective_domain_id == 3, "effective id");
    struct remote_rpc_reserve_new_session r = { .domain_name = "cdsp", .domain_name_len = 4 };
    CHECK(a.session_control(FASTRPC_RESERVE_NEW_SESSION, &r, sizeof r) == 0 && r.effective_domain_id == 11 &&
          r.session_id == 1, "reserve: eff %u session %u", r.effective_domain_id, r.session_id);
    struct remote_rpc_control_unsigned_module u = { 3, 1 };
    CHECK(a.session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, &u, sizeof u) == 0, "unsigned module");
    char uri[256];
    CHECK(get_uri(&a, "cdsp", 0, uri, sizeof uri) == 0 && strstr(uri, "&_dom=cdsp&_session=0"), "GET_URI: %s", uri);
    remote_handle64 h = 0xdeadbeef;
    CHECK(a.open(uri, &h) == AEE_ECONNREFUSED && h == 0xdeadbeef, "open without a DSP");
    struct remote_rpc_control_latency l = { 1, 0 };
    CHECK(a.h64_control(0, DSPRPC_CONTROL_LATENCY, &l, sizeof l) == AEE_EINVHANDLE, "latency on handle 0");
    CHECK(a.invoke(0, 0x08000100, NULL) == 0, "invoke on handle 0 (the real library's quirk)");
    dspqueue_t q = NULL;
    CHECK(a.q_create(3, 0, 4096, 4096, NULL, NULL, NULL, &q) == AEE_EUNSUPPORTED, "dspqueue_create without a DSP");
    CHECK(a.stat("violations") == 0, "nodsp answers raised violations");
    dlclose(a.lib);

    snprintf(path, sizeof path, "%s/noalloc2/libcdsprpc.so", out);
    if (load(&a, path)) { failures++; return; }
    CHECK(a.alloc2 == NULL && a.system_request == NULL, "noalloc2 variant exports rpcmem_alloc2/remote_system_request");
    dlclose(a.lib);
}

/* ---------------------------------------------------------------- batches */

struct session {
    struct api *a;
    remote_handle64 h;
    dspqueue_t q;
    int domain;
    uint8_t *shm; int shm_fd;
    uint8_t *data; int data_fd;
    uint32_t next_id;
};

#define SHM_SIZE (64u << 10)
#define DATA_SIZE (1u << 20)

static int invoke_in(struct session *s, uint32_t mid, const void *in, size_t len) {
    remote_arg arg = { .buf = { (void *) in, len } };
    return s->a->invoke(s->h, (uint32_t) ((mid << 24) | (1u << 16)), &arg);
}

static int bring_up(struct api *a, struct session *s, const char *dom, int session) {
    memset(s, 0, sizeof *s);
    s->a = a;
    if (session) {
        struct remote_rpc_reserve_new_session r = { .domain_name = (char *) dom, .domain_name_len = (uint32_t) strlen(dom) };
        if (a->session_control(FASTRPC_RESERVE_NEW_SESSION, &r, sizeof r)) return -1;
        s->domain = (int) r.effective_domain_id;
        session = (int) r.session_id;
    } else {
        struct remote_rpc_effective_domain_id e = { (char *) dom, (uint32_t) strlen(dom), 0, 0 };
        if (a->session_control(FASTRPC_GET_EFFECTIVE_DOMAIN_ID, &e, sizeof e)) return -1;
        s->domain = (int) e.effective_domain_id;
    }
    struct remote_rpc_control_unsigned_module u = { s->domain, 1 };
    if (a->session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, &u, sizeof u)) return -2;
    char uri[256];
    if (get_uri(a, dom, (uint32_t) session, uri, sizeof uri)) return -3;
    if (a->open(uri, &s->h)) return -4;
    uint8_t hw[24];
    remote_arg out = { .buf = { hw, sizeof hw } };
    if (a->invoke(s->h, 0x08000100, &out)) return -5;
    uint32_t nthreads;
    memcpy(&nthreads, hw, 4);
    CHECK(nthreads == 6, "hwinfo n_threads %u", nthreads);
    struct remote_rpc_control_latency l = { 1, 0 };
    if (a->h64_control(s->h, DSPRPC_CONTROL_LATENCY, &l, sizeof l)) return -6;
    if (a->q_create(s->domain, 0, 4096, 4096, NULL, NULL, NULL, &s->q)) return -7;
    uint64_t qid;
    if (a->q_export(s->q, &qid)) return -8;
    s->shm = a->alloc2(RPCMEM_HEAP_ID_SYSTEM, 1, SHM_SIZE);
    s->data = a->alloc2(RPCMEM_HEAP_ID_SYSTEM, 1, DATA_SIZE);
    if (!s->shm || !s->data) return -9;
    s->shm_fd = a->to_fd(s->shm);
    s->data_fd = a->to_fd(s->data);
    if (a->mmap(s->domain, s->shm_fd, s->shm, 0, SHM_SIZE, FASTRPC_MAP_FD)) return -10;
    if (a->mmap(s->domain, s->data_fd, s->data, 0, DATA_SIZE, FASTRPC_MAP_FD_DELAYED)) return -11;
    uint8_t start[32] = { 0 };
    memcpy(start + 8, &qid, 8);
    uint32_t nhvx = 4, nhmx = 1;
    memcpy(start + 16, &nhvx, 4);
    memcpy(start + 20, &nhmx, 4);
    if (invoke_in(s, HTP_IFACE_START, start, sizeof start)) return -12;
    uint32_t mm[2] = { (uint32_t) s->data_fd, DATA_SIZE };
    if (invoke_in(s, HTP_IFACE_MMAP, mm, sizeof mm)) return -13;
    s->next_id = 0;
    return 0;
}

static void release(struct session *s) {
    struct api *a = s->a;
    uint32_t fd = (uint32_t) s->data_fd;
    CHECK(invoke_in(s, HTP_IFACE_MUNMAP, &fd, 4) == 0, "htp_iface_munmap");
    CHECK(a->invoke(s->h, 0x03000000, NULL) == 0, "htp_iface_stop");
    CHECK(a->munmap(s->domain, s->data_fd, s->data, DATA_SIZE) == 0, "fastrpc_munmap data");
    CHECK(a->munmap(s->domain, s->shm_fd, s->shm, SHM_SIZE) == 0, "fastrpc_munmap shm");
    a->free(s->data);
    a->free(s->shm);
    CHECK(a->q_close(s->q) == 0, "dspqueue_close");
    CHECK(a->close(s->h) == 0, "remote_handle64_close");
}

/* A batch under construction in slot 0 of the session's shared block. */
struct batch {
    struct htp_buf_desc bufs[4]; uint32_t nb;
    struct htp_tensor tens[16]; uint32_t nt;
    struct htp_op_desc ops[8]; uint32_t no;
};

static uint16_t add_tensor(struct batch *b, uint16_t bi, uint32_t off, uint32_t type, const uint32_t ne[4], uint32_t ts,
                           uint32_t row_bytes) {
    struct htp_tensor *t = &b->tens[b->nt];
    memset(t, 0, sizeof *t);
    t->data = off; t->type = type; t->bi = bi; t->ti = (uint16_t) b->nt;
    memcpy(t->ne, ne, sizeof t->ne);
    t->nb[0] = ts;
    t->nb[1] = row_bytes;
    t->nb[2] = t->nb[1] * ne[1];
    t->nb[3] = t->nb[2] * ne[2];
    t->size = t->nb[3] * ne[3];
    return (uint16_t) b->nt++;
}

static struct htp_op_desc *add_op(struct batch *b, uint32_t opcode, uint16_t s0, uint16_t s1, uint16_t d) {
    struct htp_op_desc *o = &b->ops[b->no++];
    memset(o, 0, sizeof *o);
    o->opcode = opcode;
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) o->src[i] = HTP_NO_TENSOR;
    for (int i = 0; i < HTP_OP_MAX_OUTPUTS; i++) o->dst[i] = HTP_NO_TENSOR;
    o->src[0] = s0; o->src[1] = s1; o->dst[0] = d;
    return o;
}

/* Writes the batch into slot `slot` (8 KiB each) and sends it; with seq != 0 uses the 32-byte request form. */
static int send_batch(struct session *s, const struct batch *b, uint32_t slot, uint32_t id, uint64_t seq) {
    uint8_t *m = s->shm + slot * 8192u;
    size_t o = 0;
    memcpy(m + o, b->bufs, sizeof b->bufs[0] * b->nb); o += sizeof b->bufs[0] * b->nb;
    memcpy(m + o, b->tens, sizeof b->tens[0] * b->nt); o += sizeof b->tens[0] * b->nt;
    memcpy(m + o, b->ops, sizeof b->ops[0] * b->no); o += sizeof b->ops[0] * b->no;
    o += sizeof(struct htp_prof_desc) * b->no;
    struct hd_opbatch_req_seq req = { { id, b->nb, b->nt, b->no, 0, 0 }, seq };
    struct dspqueue_buffer db = { .fd = (uint32_t) s->shm_fd, .size = (uint32_t) o, .offset = slot * 8192u,
                                  .flags = DSPQUEUE_BUFFER_FLAG_FLUSH_SENDER | DSPQUEUE_BUFFER_FLAG_INVALIDATE_RECIPIENT,
                                  .ptr = m };
    return s->a->q_write(s->q, 0, 1, &db, seq ? 32 : 24, (const uint8_t *) &req, 1000000);
}

/* Reads one response; returns its status (or 1000 + error). */
static uint32_t read_rsp(struct session *s, uint32_t *id) {
    struct hd_opbatch_rsp_seq rsp;
    struct dspqueue_buffer db;
    uint32_t flags, n = 0, len = 0;
    int rc = s->a->q_read(s->q, &flags, 1, &n, &db, sizeof rsp, &len, (uint8_t *) &rsp, 1000000);
    if (rc) return 1000u + (uint32_t) rc;
    CHECK(n == 1 && (len == 88 || len == 96), "response: %u buffers, %u bytes", n, len);
    if (id) *id = rsp.base.id;
    return rsp.base.status;
}

static uint16_t fp16(float f) {
    /* the selftest's own conversion, exact for the small values used here */
    uint32_t x; memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
    if (e == 0) return (uint16_t) sign;
    return (uint16_t) (sign | ((e - 112) << 10) | (m >> 13));
}
static float fp16_to_f(uint16_t h) {
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff, bits = ((uint32_t) (h & 0x8000) << 16);
    if (e) bits |= ((e + 112) << 23) | (m << 13);
    float f; memcpy(&f, &bits, 4); return f;
}

static double urand(uint64_t *st) { *st = *st * 6364136223846793005ull + 1442695040888963407ull; return (double) (*st >> 11) / 9007199254740992.0; }

static void test_batches(struct api *a) {
    struct session s;
    int rc = bring_up(a, &s, "cdsp", 0);
    CHECK(rc == 0, "bring-up failed at step %d", rc);
    if (rc) return;
    uint64_t viol0 = a->stat("violations");

    /* data layout: A f32 [64,4] @0, B f32 [64,1] @1024, C [64,4] @2048, W q4_0 tiled [64,64] @4096 (N = 48 real
     * rows), D f32 [48,4] @8192, E [48,4] @9216 */
    enum { K = 64, N = 48, M = 4 };
    uint64_t rs = 42;
    float A[M][K], B[K], Wf[N][K];
    float *fa = (float *) s.data, *fb = (float *) (s.data + 1024);
    for (int m = 0; m < M; m++) for (int k = 0; k < K; k++) fa[m * K + k] = A[m][k] = (float) (urand(&rs) * 2 - 1);
    for (int k = 0; k < K; k++) fb[k] = B[k] = (float) (urand(&rs) * 2 - 1);
    /* Q4_0 blocks (d, 16 bytes of nibbles) -> tiled layout of hexagon.md 10: tile (ct, kt), 32 rows x 32 K */
    uint8_t *w = s.data + 4096;
    memset(w, 0, 2 * 2 * 576);
    for (int ct = 0; ct < 2; ct++)
        for (int kt = 0; kt < 2; kt++) {
            uint8_t *tile = w + (size_t) (ct * 2 + kt) * 576;
            for (int row = 0; row < 32; row++) {
                int n = ct * 32 + row;
                uint8_t q[32];
                uint16_t d = 0;
                if (n < N) {
                    d = fp16((float) (0.01 + urand(&rs) * 0.05));
                    for (int k = 0; k < 32; k++) {
                        q[k] = (uint8_t) (urand(&rs) * 16);
                        Wf[n][kt * 32 + k] = (float) (q[k] - 8) * fp16_to_f(d);
                    }
                } else memset(q, 8, sizeof q);
                for (int cp = 0; cp < 16; cp++) tile[cp * 32 + row] = (uint8_t) (q[2 * cp] | (q[2 * cp + 1] << 4));
                memcpy(tile + 512 + 2 * row, &d, 2);
            }
        }
    struct batch b = { .nb = 1 };
    b.bufs[0] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) s.data, DATA_SIZE, 0, (uint32_t) s.data_fd };
    uint16_t tA = add_tensor(&b, 0, 0, HTP_TYPE_F32, (uint32_t[4]) { K, M, 1, 1 }, 4, K * 4);
    uint16_t tB = add_tensor(&b, 0, 1024, HTP_TYPE_F32, (uint32_t[4]) { K, 1, 1, 1 }, 4, K * 4);
    uint16_t tC = add_tensor(&b, 0, 2048, HTP_TYPE_F32, (uint32_t[4]) { K, M, 1, 1 }, 4, K * 4);
    uint16_t tW = add_tensor(&b, 0, 4096, HTP_TYPE_Q4_0, (uint32_t[4]) { 64, 64, 1, 1 }, 18, 2 * 18);
    uint16_t tD = add_tensor(&b, 0, 8192, HTP_TYPE_F32, (uint32_t[4]) { N, M, 1, 1 }, 4, N * 4);
    uint16_t tE = add_tensor(&b, 0, 9216, HTP_TYPE_F32, (uint32_t[4]) { N, M, 1, 1 }, 4, N * 4);
    add_op(&b, HTP_OP_ADD, tA, tB, tC);
    add_op(&b, HTP_OP_MUL_MAT, tW, tC, tD);
    float eps = 1e-6f;
    memcpy(&add_op(&b, HTP_OP_RMS_NORM, tD, HTP_NO_TENSOR, tE)->params[0], &eps, 4);

    CHECK(send_batch(&s, &b, 0, 0, 0) == 0, "write batch");
    uint32_t id = 99;
    uint32_t st = read_rsp(&s, &id);
    CHECK(st == HTP_STATUS_OK && id == 0, "good batch: status %u id %u", st, id);
    double maxerr = 0;
    const float *E = (const float *) (s.data + 9216);
    for (int m = 0; m < M; m++) {
        double Dm[N], ss = 0;
        for (int n = 0; n < N; n++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += (double) Wf[n][k] * (A[m][k] + B[k]);
            Dm[n] = acc;
            ss += acc * acc;
        }
        double sc = 1.0 / sqrt(ss / N + eps);
        for (int n = 0; n < N; n++) {
            double err = fabs(E[m * N + n] - Dm[n] * sc);
            if (err > maxerr) maxerr = err;
        }
    }
    CHECK(maxerr < 1e-4, "ADD+MUL_MAT(q4_0 tiled)+RMS_NORM max error %g", maxerr);
    CHECK(a->stat("op.MUL_MAT") == 1 && a->stat("op.ADD") == 1 && a->stat("op.RMS_NORM") == 1, "op counters");
    CHECK(a->stat("violations") == viol0, "good batch raised violations");
    char vbuf[8192];

    /* 1: tensor offset past its buffer (the DSP VA rewrite changed bufs[0].base: rebuild it) */
    struct batch bad = b;
    bad.tens[tE].data = DATA_SIZE - 64;
    CHECK(send_batch(&s, &bad, 0, 0, 0) == 0, "write bad batch 1");
    st = read_rsp(&s, NULL);
    a->violations(vbuf, sizeof vbuf);
    CHECK(st == HTP_STATUS_INVAL_PARAMS && strstr(vbuf, "past its buffer"), "offset past buffer: status %u", st);

    /* 2: an fd that is an rpcmem block but not mapped into the domain */
    void *extra = a->alloc2(RPCMEM_HEAP_ID_SYSTEM, 1, 4096);
    bad = b;
    bad.nb = 2;
    bad.bufs[1] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) extra, 4096, 0, (uint32_t) a->to_fd(extra) };
    bad.tens[tB].bi = 1;
    bad.tens[tB].data = 0;
    CHECK(send_batch(&s, &bad, 0, 1, 0) == 0, "write bad batch 2");
    st = read_rsp(&s, NULL);
    a->violations(vbuf, sizeof vbuf);
    CHECK(st == HTP_STATUS_INVAL_PARAMS && strstr(vbuf, "is not mapped in domain"), "unmapped fd: status %u", st);
    a->free(extra);

    /* 3a: batch id reused while the first is in flight (24-byte form: the id is the sequence) */
    uint64_t rej0 = a->stat("batches_rejected");
    CHECK(send_batch(&s, &b, 0, 5, 0) == 0, "write id 5");
    CHECK(send_batch(&s, &b, 1, 5, 0) == 0, "write id 5 again");
    uint32_t st1 = read_rsp(&s, NULL), st2 = read_rsp(&s, NULL);
    a->violations(vbuf, sizeof vbuf);
    CHECK(st1 == HTP_STATUS_OK && st2 == HTP_STATUS_INVAL_PARAMS && strstr(vbuf, "stale sequence"),
          "reused id: %u %u", st1, st2);
    /* 3b: 32-byte form, seq 7 then 7 again */
    CHECK(send_batch(&s, &b, 0, 0, 7) == 0, "write seq 7");
    st1 = read_rsp(&s, NULL);
    CHECK(send_batch(&s, &b, 0, 0, 7) == 0, "write seq 7 again");
    st2 = read_rsp(&s, NULL);
    a->violations(vbuf, sizeof vbuf);
    CHECK(st1 == HTP_STATUS_OK && st2 == HTP_STATUS_INVAL_PARAMS && strstr(vbuf, "stale sequence number 7"),
          "stale seq: %u %u", st1, st2);
    CHECK(a->stat("batches_rejected") == rej0 + 2, "rejected count");

    /* injected op status and read faults */
    CHECK(a->configure("fail.op=1:3@o4; fail.queue_read=1:0x204") == 0, "configure faults");
    CHECK(send_batch(&s, &b, 0, 2, 0) == 0, "write batch for faults");
    struct hd_opbatch_rsp_seq rsp;
    struct dspqueue_buffer db;
    uint32_t fl, n, len;
    CHECK(a->q_read(s.q, &fl, 1, &n, &db, sizeof rsp, &len, (uint8_t *) &rsp, 1000000) == AEE_EWOULDBLOCK, "read fault");
    st = read_rsp(&s, NULL);
    CHECK(st == HTP_STATUS_NO_SUPPORT, "injected MUL_MAT status: %u", st);
    /* a timed read with nothing pending expires */
    CHECK(a->q_read(s.q, &fl, 1, &n, &db, sizeof rsp, &len, (uint8_t *) &rsp, 2000) == AEE_EEXPIRED, "read timeout");

    /* length checks of control structs */
    struct remote_dsp_capability cap = { 3, ARCH_VER, 0 };
    CHECK(a->handle_control(DSPRPC_GET_DSP_INFO, &cap, 11) == AEE_EBADPARM, "GET_DSP_INFO len 11");
    CHECK(a->handle_control(DSPRPC_GET_DSP_INFO, &cap, sizeof cap) == 0 && cap.capability == 0x73, "arch 0x%x", cap.capability);
    struct remote_rpc_control_unsigned_module u = { 3, 1 };
    CHECK(a->session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, &u, 12) == AEE_EBADPARM, "UNSIGNED_MODULE len 12");

    /* a second session on cdsp: its queue writes fail with 0xe */
    struct session s2;
    a->configure("fail.queue_write=1x0:0xe@q2");
    rc = bring_up(a, &s2, "cdsp", 1);
    CHECK(rc == 0 && s2.domain == 11, "second session: step %d domain %d", rc, s2.domain);
    if (!rc) {
        struct batch b2 = { .nb = 1 };
        b2.bufs[0] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) s2.data, DATA_SIZE, 0, (uint32_t) s2.data_fd };
        uint16_t x = add_tensor(&b2, 0, 0, HTP_TYPE_F32, (uint32_t[4]) { 8, 1, 1, 1 }, 4, 32);
        add_op(&b2, HTP_OP_UNARY_SILU, x, HTP_NO_TENSOR, x);
        CHECK(send_batch(&s2, &b2, 0, 0, 0) == AEE_EBADPARM, "second session write: injected 0xe");
        a->configure("fail.queue_write=off");
        CHECK(send_batch(&s2, &b2, 0, 0, 0) == 0 && read_rsp(&s2, NULL) == HTP_STATUS_OK, "second session batch");
        release(&s2);
    }
    release(&s);
    CHECK(a->stat("rpcmem_live") == 0 && a->stat("maps_live") == 0 && a->stat("iface_maps_live") == 0 &&
          a->stat("handles_live") == 0 && a->stat("queues_live") == 0 && a->stat("dsp_threads_live") == 0,
          "leaks: rpcmem %" PRIu64 " maps %" PRIu64 " handles %" PRIu64 " queues %" PRIu64, a->stat("rpcmem_live"),
          a->stat("maps_live"), a->stat("handles_live"), a->stat("queues_live"));
    CHECK(a->stat("violations") == viol0 + 4, "violations: %" PRIu64 " (expected the 4 deliberate ones)",
          a->stat("violations") - viol0);
    printf("batches %" PRIu64 ", ops %" PRIu64 ", exec %" PRIu64 " us, validate %" PRIu64 " us\n", a->stat("batches"),
           a->stat("ops"), a->stat("exec_ns") / 1000, a->stat("validate_ns") / 1000);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s OUTDIR\n", argv[0]); return 2; }
    test_nodsp(argv[1]);
    char path[512];
    snprintf(path, sizeof path, "%s/libcdsprpc.so", argv[1]);
    struct api a;
    if (load(&a, path)) return 1;
    a.reset();
    test_batches(&a);
    if (failures) {
        char log[1 << 16];
        size_t (*lg)(char *, size_t) = (size_t (*)(char *, size_t)) dlsym(a.lib, "htpdouble_log");
        if (lg) { lg(log, sizeof log); fputs(log, stdout); }
        printf("selftest: %d failures\n", failures);
        return 1;
    }
    printf("selftest: ok\n");
    dlclose(a.lib);
    return 0;
}
