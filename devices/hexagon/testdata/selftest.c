/*
 * Self-test of the double: loads the built variants with dlopen like a host would, brings a session up, runs one
 * op batch (ADD, MUL_MAT over a tiled Q4_0 weight, RMS_NORM) checked against a direct computation, shows three
 * bad batches rejected (tensor offset past its buffer, unmapped fd, stale sequence numbers), exercises a few fault
 * points and the "no DSP" answers, releases everything and checks that nothing leaked; a tiled weight with its real
 * ne1 and cropping/circular PAD; then, with protocol=fence on
 * a two-core group, a FENCE wait on one core released by a CPY_FENCE on the other. Usage: selftest OUTDIR.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_nodsp(const char *out) {
    char path[512];
    struct api a;
    snprintf(path, sizeof path, "%s/nosysreq/libcdsprpc.so", out);
    if (hx_load(&a, path)) { failures++; return; }
    CHECK(a.system_request == NULL, "nosysreq variant exports remote_system_request");
    CHECK(a.alloc2 != NULL, "nosysreq variant lacks rpcmem_alloc2");
    a.reset();
    a.configure("kparams=0"); /* these batches carry no kernel parameters */
    CHECK(a.configure("nodsp=1") == 0, "configure nodsp");
    CHECK(a.alloc(RPCMEM_HEAP_ID_SYSTEM, 1, 1 << 20) == NULL, "rpcmem_alloc without a DSP");
    CHECK(a.to_fd(NULL) == -1, "rpcmem_to_fd(NULL)");
    struct remote_dsp_capability cap = { CDSP_DOMAIN_ID, ARCH_VER, 0 };
    cap.capability = 7;
    CHECK(a.handle_control(DSPRPC_GET_DSP_INFO, &cap, sizeof cap) == AEE_ECONNREFUSED && cap.capability == 0,
          "GET_DSP_INFO without a DSP");
    CHECK(a.handle_control(DSPRPC_GET_DSP_INFO, &cap, 8) == AEE_ECONNREFUSED, "GET_DSP_INFO len 8 without a DSP");
    struct remote_dsp_capability dom = { CDSP_DOMAIN_ID, DOMAIN_SUPPORT, 7 };
    CHECK(a.handle_control(DSPRPC_GET_DSP_INFO, &dom, sizeof dom) == 0 && dom.capability == 0, "DOMAIN_SUPPORT");
    struct remote_rpc_control_latency hl = { 1, 0 };
    CHECK(a.handle_control(DSPRPC_CONTROL_LATENCY, &hl, sizeof hl) == 0, "handle-less LATENCY without a DSP");
    CHECK(a.mmap(3, 5, NULL, 0, 4096, 0) == AEE_ENOTINITIALIZED, "fastrpc_mmap without a DSP");
    CHECK(a.mmap(3, 5, NULL, 0, 4096, 17) == AEE_EBADPARM, "fastrpc_mmap flags 17 without a DSP");
    CHECK(a.munmap(3, 5, NULL, 4096) == AEE_ENOTINITIALIZED, "fastrpc_munmap without a DSP");
    struct remote_rpc_effective_domain_id e = { "cdsp", 4, 0, 0 };
    CHECK(a.session_control(FASTRPC_GET_EFFECTIVE_DOMAIN_ID, &e, sizeof e) == 0 && e.effective_domain_id == 3, "effective id");
    struct remote_rpc_reserve_new_session r = { .domain_name = "cdsp", .domain_name_len = 4 };
    CHECK(a.session_control(FASTRPC_RESERVE_NEW_SESSION, &r, sizeof r) == 0 && r.effective_domain_id == 11 &&
          r.session_id == 1, "reserve: eff %u session %u", r.effective_domain_id, r.session_id);
    struct remote_rpc_control_unsigned_module u = { 3, 1 };
    CHECK(a.session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, &u, sizeof u) == 0, "unsigned module");
    char uri[256];
    CHECK(hx_get_uri(&a, "cdsp", 0, uri, sizeof uri) == 0 && strstr(uri, "&_dom=cdsp&_session=0"), "GET_URI: %s", uri);
    remote_handle64 h = 0xdeadbeef;
    errno = 0;
    CHECK(a.open(uri, &h) == AEE_ECONNREFUSED && h == 0xdeadbeef && errno == ENOENT, "open without a DSP");
    struct remote_rpc_control_latency l = { 1, 0 };
    CHECK(a.h64_control(0, DSPRPC_CONTROL_LATENCY, &l, sizeof l) == AEE_EINVHANDLE, "latency on handle 0");
    CHECK(a.invoke(0, 0x08000100, NULL) == 0, "invoke on handle 0 (the real library's quirk)");
    uint8_t hw[24] = { 0xa5 };
    remote_arg ra = { .buf = { hw, sizeof hw } };
    CHECK(a.invoke(0x1234, 0x08000100, &ra) == 0 && hw[0] == 0xa5, "invoke on an unknown handle leaves its output");
    dspqueue_t q = (dspqueue_t) &q;
    CHECK(a.q_create(3, 0, 4096, 4096, NULL, NULL, NULL, &q) == AEE_EUNSUPPORTED && q == NULL,
          "dspqueue_create without a DSP");
    CHECK(a.stat("violations") == 0, "nodsp answers raised violations");
    dlclose(a.lib);

    snprintf(path, sizeof path, "%s/noalloc2/libcdsprpc.so", out);
    if (hx_load(&a, path)) { failures++; return; }
    CHECK(a.alloc2 == NULL && a.system_request == NULL, "noalloc2 variant exports rpcmem_alloc2/remote_system_request");
    dlclose(a.lib);
}

/* ---------------------------------------------------------------- batches */

static void test_batches(struct api *a) {
    struct session s;
    int rc = hx_bring_up(a, &s, "cdsp", 0);
    CHECK(rc == 0, "bring-up failed at step %d", rc);
    if (rc) return;
    uint64_t viol0 = a->stat("violations");

    /* data layout: A f32 [64,4] @0, B f32 [64,1] @1024, C [64,4] @2048, W q4_0 tiled [64,64] @4096 (N = 48 real
     * rows), D f32 [48,4] @8192, E [48,4] @9216 */
    enum { K = 64, N = 48, M = 4 };
    uint64_t rs = 42;
    float A[M][K], B[K], Wf[N][K];
    float *fa = (float *) s.data, *fb = (float *) (s.data + 1024);
    for (int m = 0; m < M; m++) for (int k = 0; k < K; k++) fa[m * K + k] = A[m][k] = (float) (hx_urand(&rs) * 2 - 1);
    for (int k = 0; k < K; k++) fb[k] = B[k] = (float) (hx_urand(&rs) * 2 - 1);
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
                    d = hx_fp16((float) (0.01 + hx_urand(&rs) * 0.05));
                    for (int k = 0; k < 32; k++) {
                        q[k] = (uint8_t) (hx_urand(&rs) * 16);
                        Wf[n][kt * 32 + k] = (float) (q[k] - 8) * hx_fp16_to_f(d);
                    }
                } else memset(q, 8, sizeof q);
                for (int cp = 0; cp < 16; cp++) tile[cp * 32 + row] = (uint8_t) (q[2 * cp] | (q[2 * cp + 1] << 4));
                memcpy(tile + 512 + 2 * row, &d, 2);
            }
        }
    struct batch b = { .nb = 1 };
    b.bufs[0] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) s.data, DATA_SIZE, 0, (uint32_t) s.data_fd };
    uint16_t tA = hx_add_tensor(&b, 0, 0, HTP_TYPE_F32, (uint32_t[4]) { K, M, 1, 1 }, 4, K * 4);
    uint16_t tB = hx_add_tensor(&b, 0, 1024, HTP_TYPE_F32, (uint32_t[4]) { K, 1, 1, 1 }, 4, K * 4);
    uint16_t tC = hx_add_tensor(&b, 0, 2048, HTP_TYPE_F32, (uint32_t[4]) { K, M, 1, 1 }, 4, K * 4);
    uint16_t tW = hx_add_tensor(&b, 0, 4096, HTP_TYPE_Q4_0, (uint32_t[4]) { 64, 64, 1, 1 }, 18, 2 * 18);
    uint16_t tD = hx_add_tensor(&b, 0, 8192, HTP_TYPE_F32, (uint32_t[4]) { N, M, 1, 1 }, 4, N * 4);
    uint16_t tE = hx_add_tensor(&b, 0, 9216, HTP_TYPE_F32, (uint32_t[4]) { N, M, 1, 1 }, 4, N * 4);
    /* C and D are read by a later op of the batch: without HTP_TENSOR_COMPUTE the DSP reads them stale */
    b.tens[tA].flags = b.tens[tB].flags = b.tens[tC].flags = b.tens[tD].flags = HTP_TENSOR_COMPUTE;
    hx_add_op(&b, HTP_OP_ADD, tA, tB, tC);
    hx_add_op(&b, HTP_OP_MUL_MAT, tW, tC, tD);
    float eps = 1e-6f;
    memcpy(&hx_add_op(&b, HTP_OP_RMS_NORM, tD, HTP_NO_TENSOR, tE)->params[0], &eps, 4);

    CHECK(hx_send_batch(&s, &b, 0, 0, 0) == 0, "write batch");
    uint32_t id = 99;
    uint32_t st = hx_read_rsp(&s, &id);
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

    /* fused QKV over the same weight three times equals three MUL_MATs */
    {
        struct batch q3 = b;
        q3.no = 0;
        uint16_t o1 = hx_add_tensor(&q3, 0, 16384, HTP_TYPE_F32, (uint32_t[4]) { N, M, 1, 1 }, 4, N * 4);
        uint16_t o2 = hx_add_tensor(&q3, 0, 20480, HTP_TYPE_F32, (uint32_t[4]) { N, M, 1, 1 }, 4, N * 4);
        uint16_t o3 = hx_add_tensor(&q3, 0, 24576, HTP_TYPE_F32, (uint32_t[4]) { N, M, 1, 1 }, 4, N * 4);
        struct htp_op_desc *f = hx_add_op(&q3, HTP_OP_MUL_MAT_QKV, tW, tC, o1);
        f->src[2] = tW; f->src[3] = tW; f->dst[1] = o2; f->dst[2] = o3;
        CHECK(hx_send_batch(&s, &q3, 0, 0, 0) == 0 && hx_read_rsp(&s, NULL) == HTP_STATUS_OK, "QKV batch");
        const float *D = (const float *) (s.data + 8192);
        int same = 1;
        for (int i = 0; i < N * M; i++)
            for (int k = 0; k < 3; k++) same &= ((const float *) (s.data + 16384 + 4096 * k))[i] == D[i];
        CHECK(same, "MUL_MAT_QKV outputs equal MUL_MAT's");
    }

    /* 1: tensor offset past its buffer (the DSP VA rewrite changed bufs[0].base: rebuild it) */
    struct batch bad = b;
    bad.tens[tE].data = DATA_SIZE - 64;
    CHECK(hx_send_batch(&s, &bad, 0, 0, 0) == 0, "write bad batch 1");
    st = hx_read_rsp(&s, NULL);
    a->violations(vbuf, sizeof vbuf);
    CHECK(st == HTP_STATUS_INVAL_PARAMS && strstr(vbuf, "past its buffer"), "offset past buffer: status %u", st);

    /* 2: an fd that is an rpcmem block but not mapped into the domain */
    void *extra = a->alloc2(RPCMEM_HEAP_ID_SYSTEM, 1, 4096);
    bad = b;
    bad.nb = 2;
    bad.bufs[1] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) extra, 4096, 0, (uint32_t) a->to_fd(extra) };
    bad.tens[tB].bi = 1;
    bad.tens[tB].data = 0;
    CHECK(hx_send_batch(&s, &bad, 0, 1, 0) == 0, "write bad batch 2");
    st = hx_read_rsp(&s, NULL);
    a->violations(vbuf, sizeof vbuf);
    CHECK(st == HTP_STATUS_INVAL_PARAMS && strstr(vbuf, "is not mapped in domain"), "unmapped fd: status %u", st);
    a->free(extra);

    /* 3a: batch id reused while the first is in flight (24-byte form: the id is the sequence) */
    uint64_t rej0 = a->stat("batches_rejected");
    CHECK(hx_send_batch(&s, &b, 0, 5, 0) == 0, "write id 5");
    CHECK(hx_send_batch(&s, &b, 1, 5, 0) == 0, "write id 5 again");
    uint32_t st1 = hx_read_rsp(&s, NULL), st2 = hx_read_rsp(&s, NULL);
    a->violations(vbuf, sizeof vbuf);
    CHECK(st1 == HTP_STATUS_OK && st2 == HTP_STATUS_INVAL_PARAMS && strstr(vbuf, "stale sequence"),
          "reused id: %u %u", st1, st2);
    /* 3b: 32-byte form, seq 7 then 7 again */
    CHECK(hx_send_batch(&s, &b, 0, 0, 7) == 0, "write seq 7");
    st1 = hx_read_rsp(&s, NULL);
    CHECK(hx_send_batch(&s, &b, 0, 0, 7) == 0, "write seq 7 again");
    st2 = hx_read_rsp(&s, NULL);
    a->violations(vbuf, sizeof vbuf);
    CHECK(st1 == HTP_STATUS_OK && st2 == HTP_STATUS_INVAL_PARAMS && strstr(vbuf, "stale sequence number 7"),
          "stale seq: %u %u", st1, st2);
    CHECK(a->stat("batches_rejected") == rej0 + 2, "rejected count");

    /* injected op status and read faults */
    CHECK(a->configure("fail.op=1:3@o4; fail.queue_read=1:0x204") == 0, "configure faults");
    CHECK(hx_send_batch(&s, &b, 0, 2, 0) == 0, "write batch for faults");
    struct hd_opbatch_rsp_seq rsp;
    struct dspqueue_buffer db;
    uint32_t fl, n, len;
    CHECK(a->q_read(s.q, &fl, 1, &n, &db, sizeof rsp, &len, (uint8_t *) &rsp, 1000000) == AEE_EWOULDBLOCK, "read fault");
    st = hx_read_rsp(&s, NULL);
    CHECK(st == HTP_STATUS_NO_SUPPORT, "injected MUL_MAT status: %u", st);
    /* a timed read with nothing pending expires */
    CHECK(a->q_read(s.q, &fl, 1, &n, &db, sizeof rsp, &len, (uint8_t *) &rsp, 2000) == AEE_EEXPIRED, "read timeout");

    /* length checks of control structs */
    struct remote_dsp_capability cap = { 3, ARCH_VER, 0 };
    /* the real library does not check this length: the double answers and counts a violation */
    CHECK(a->handle_control(DSPRPC_GET_DSP_INFO, &cap, 11) == 0, "GET_DSP_INFO len 11");
    CHECK(a->handle_control(DSPRPC_GET_DSP_INFO, &cap, sizeof cap) == 0 && cap.capability == 0x73, "arch 0x%x", cap.capability);
    struct remote_rpc_control_unsigned_module u = { 3, 1 };
    CHECK(a->session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, &u, 12) == AEE_EBADPARM, "UNSIGNED_MODULE len 12");

    /* a second session on cdsp: its queue writes fail with 0xe */
    struct session s2;
    a->configure("fail.queue_write=1x0:0xe@q2");
    rc = hx_bring_up(a, &s2, "cdsp", 1);
    CHECK(rc == 0 && s2.domain == 11, "second session: step %d domain %d", rc, s2.domain);
    if (!rc) {
        struct batch b2 = { .nb = 1 };
        b2.bufs[0] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) s2.data, DATA_SIZE, 0, (uint32_t) s2.data_fd };
        uint16_t x = hx_add_tensor(&b2, 0, 0, HTP_TYPE_F32, (uint32_t[4]) { 8, 1, 1, 1 }, 4, 32);
        hx_add_op(&b2, HTP_OP_UNARY_SILU, x, HTP_NO_TENSOR, x);
        CHECK(hx_send_batch(&s2, &b2, 0, 0, 0) == AEE_EBADPARM, "second session write: injected 0xe");
        a->configure("fail.queue_write=off");
        CHECK(hx_send_batch(&s2, &b2, 0, 0, 0) == 0 && hx_read_rsp(&s2, NULL) == HTP_STATUS_OK, "second session batch");
        hx_release(&s2);
    }
    hx_release(&s);
    CHECK(a->stat("rpcmem_live") == 0 && a->stat("maps_live") == 0 && a->stat("iface_maps_live") == 0 &&
          a->stat("handles_live") == 0 && a->stat("queues_live") == 0 && a->stat("dsp_threads_live") == 0,
          "leaks: rpcmem %" PRIu64 " maps %" PRIu64 " handles %" PRIu64 " queues %" PRIu64, a->stat("rpcmem_live"),
          a->stat("maps_live"), a->stat("handles_live"), a->stat("queues_live"));
    CHECK(a->stat("violations") == viol0 + 5, "violations: %" PRIu64 " (expected the 5 deliberate ones)",
          a->stat("violations") - viol0);
    printf("batches %" PRIu64 ", ops %" PRIu64 ", exec %" PRIu64 " us, validate %" PRIu64 " us\n", a->stat("batches"),
           a->stat("ops"), a->stat("exec_ns") / 1000, a->stat("validate_ns") / 1000);
}

/* A tiled Q4_0 weight sent with its own ne (N = 40 rows, not a multiple of 32) and the strides/size of the padded
 * layout (hexagon.md 10: nb2 = nb1 * ne1_pad), two matrices; then the same tensor with the size of an unpadded
 * layout, which is rejected. PAD with negative (cropping) pads, zero and circular, against ggml CPU's rule. */
static void test_real_ne(struct api *a) {
    struct session s;
    int rc = hx_bring_up(a, &s, "cdsp", 0);
    CHECK(rc == 0, "bring-up failed at step %d", rc);
    if (rc) return;
    enum { K = 32, N = 40, NP = 64, M = 3, NM = 2 };
    uint64_t rs = 7;
    static float Wf[NM][N][K], X[NM][M][K];
    uint8_t *w = s.data; /* 2 matrices x 2 column tiles x 1 K-tile x 576 */
    for (int i2 = 0; i2 < NM; i2++)
        for (int ct = 0; ct < 2; ct++) {
            uint8_t *tile = w + (size_t) (i2 * 2 + ct) * 576;
            for (int row = 0; row < 32; row++) {
                int n = ct * 32 + row;
                uint8_t q[32];
                uint16_t d = 0;
                if (n < N) {
                    d = hx_fp16((float) (0.01 + hx_urand(&rs) * 0.05));
                    for (int k = 0; k < K; k++) {
                        q[k] = (uint8_t) (hx_urand(&rs) * 16);
                        Wf[i2][n][k] = (float) (q[k] - 8) * hx_fp16_to_f(d);
                    }
                } else memset(q, 8, sizeof q);
                for (int cp = 0; cp < 16; cp++) tile[cp * 32 + row] = (uint8_t) (q[2 * cp] | (q[2 * cp + 1] << 4));
                memcpy(tile + 512 + 2 * row, &d, 2);
            }
        }
    float *x = (float *) (s.data + 8192);
    for (int i2 = 0; i2 < NM; i2++)
        for (int m = 0; m < M; m++)
            for (int k = 0; k < K; k++) x[(i2 * M + m) * K + k] = X[i2][m][k] = (float) (hx_urand(&rs) * 2 - 1);
    struct batch b = { .nb = 1 };
    b.bufs[0] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) s.data, DATA_SIZE, 0, (uint32_t) s.data_fd };
    uint16_t tW = hx_add_tensor(&b, 0, 0, HTP_TYPE_Q4_0, (uint32_t[4]) { K, N, NM, 1 }, 18, 18);
    b.tens[tW].nb[2] = 18 * NP;
    b.tens[tW].nb[3] = b.tens[tW].size = 18 * NP * NM;
    uint16_t tX = hx_add_tensor(&b, 0, 8192, HTP_TYPE_F32, (uint32_t[4]) { K, M, NM, 1 }, 4, K * 4);
    uint16_t tD = hx_add_tensor(&b, 0, 16384, HTP_TYPE_F32, (uint32_t[4]) { N, M, NM, 1 }, 4, N * 4);
    hx_add_op(&b, HTP_OP_MUL_MAT, tW, tX, tD);
    CHECK(hx_send_batch(&s, &b, 0, 0, 0) == 0, "write ne1=40 batch");
    uint32_t st = hx_read_rsp(&s, NULL);
    CHECK(st == HTP_STATUS_OK, "MUL_MAT over a tiled weight with ne1 = 40: status %u", st);
    const float *D = (const float *) (s.data + 16384);
    double maxerr = 0;
    for (int i2 = 0; i2 < NM; i2++)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double acc = 0;
                for (int k = 0; k < K; k++) acc += (double) Wf[i2][n][k] * X[i2][m][k];
                double err = fabs(D[(i2 * M + m) * N + n] - acc);
                if (err > maxerr) maxerr = err;
            }
    CHECK(st == HTP_STATUS_OK && maxerr < 1e-4, "MUL_MAT(q4_0 tiled, ne1 = 40, 2 matrices) max error %g", maxerr);
    struct batch small = b;
    small.tens[tW].nb[2] = 18 * N;
    small.tens[tW].nb[3] = small.tens[tW].size = 18 * N * NM;
    CHECK(hx_send_batch(&s, &small, 0, 0, 0) == 0, "write unpadded-size batch");
    st = hx_read_rsp(&s, NULL);
    CHECK(st == HTP_STATUS_INVAL_PARAMS, "tiled weight smaller than its padded layout: status %u", st);

    /* PAD: a [5,4,3,2] -> lp/rp per dim below; negative pads crop */
    static const int32_t pads[2][9] = { { -1, -2, 2, -1, 0, 1, -1, 0, 0 }, { 2, -1, -1, 3, -2, 1, 1, 1, 1 } };
    const int64_t ne[4] = { 5, 4, 3, 2 };
    float *pa = (float *) (s.data + 32768);
    for (int i = 0; i < 5 * 4 * 3 * 2; i++) pa[i] = (float) i + 0.5f;
    for (int c = 0; c < 2; c++) {
        const int32_t *p = pads[c];
        uint32_t dn[4];
        for (int i = 0; i < 4; i++) dn[i] = (uint32_t) (ne[i] + p[2 * i] + p[2 * i + 1]);
        struct batch pb = { .nb = 1 };
        pb.bufs[0] = b.bufs[0];
        uint16_t ta = hx_add_tensor(&pb, 0, 32768, HTP_TYPE_F32, (uint32_t[4]) { 5, 4, 3, 2 }, 4, 20);
        uint16_t td = hx_add_tensor(&pb, 0, 40960, HTP_TYPE_F32, dn, 4, dn[0] * 4);
        memcpy(hx_add_op(&pb, HTP_OP_PAD, ta, HTP_NO_TENSOR, td)->params, p, sizeof pads[c]);
        CHECK(hx_send_batch(&s, &pb, 0, 0, 0) == 0, "write PAD batch");
        st = hx_read_rsp(&s, NULL);
        CHECK(st == HTP_STATUS_OK, "PAD %s with negative pads: status %u", c ? "circular" : "zero", st);
        const float *pd = (const float *) (s.data + 40960);
        int bad = 0;
        for (int64_t i3 = 0; i3 < dn[3]; i3++)
            for (int64_t i2 = 0; i2 < dn[2]; i2++)
                for (int64_t i1 = 0; i1 < dn[1]; i1++)
                    for (int64_t i0 = 0; i0 < dn[0]; i0++) {
                        const int64_t ii[4] = { i0, i1, i2, i3 };
                        int64_t src = 0, stride = 1, inside = 1;
                        for (int k = 0; k < 4; k++) {
                            /* ggml CPU: inside when lp <= i < ne - rp; circular wraps i - lp into [0, ne_src) */
                            int64_t j = ii[k] - p[2 * k];
                            if (c) j = (j % ne[k] + ne[k]) % ne[k];
                            else inside &= ii[k] >= p[2 * k] && ii[k] < (int64_t) dn[k] - p[2 * k + 1];
                            src += j * stride;
                            stride *= ne[k];
                        }
                        float want = inside ? pa[src] : 0.0f;
                        bad += pd[((i3 * dn[2] + i2) * dn[1] + i1) * dn[0] + i0] != want;
                    }
        CHECK(st == HTP_STATUS_OK && bad == 0, "PAD %s: %d wrong elements", c ? "circular" : "zero", bad);
    }
    hx_release(&s);
}

/* protocol=fence (or qdev) on a two-core group: a FENCE wait on cdsp1's queue is released by a CPY_FENCE (qdev: CPY
 * then FENCE signal) on cdsp's queue, through a fence buffer and a data buffer mapped into both domains; then a wait
 * that times out. */
static void test_fences(struct api *a, int qdev) {
    a->reset();
    a->configure("kparams=0"); /* these batches carry no kernel parameters */
    CHECK(a->configure(qdev ? "protocol=qdev; cores=2; fence_timeout_us=300000" : "protocol=fence; cores=2; fence_timeout_us=300000") == 0,
          "configure protocol");
    struct session A, B;
    int ra = hx_bring_up(a, &A, "cdsp", 0), rb = ra ? -1 : hx_bring_up(a, &B, "cdsp1", 0);
    CHECK(ra == 0 && rb == 0 && A.domain == 3 && B.domain == 4, "two-core bring-up: %d %d", ra, rb);
    if (ra || rb) return;
    uint8_t *fence = a->alloc2(RPCMEM_HEAP_ID_SYSTEM, 1, 65536);
    int ffd = a->to_fd(fence);
    CHECK(a->mmap(3, ffd, fence, 0, 65536, FASTRPC_MAP_FD_DELAYED) == 0 && a->mmap(4, ffd, fence, 0, 65536, FASTRPC_MAP_FD_DELAYED) == 0 &&
          a->mmap(4, A.data_fd, A.data, 0, DATA_SIZE, FASTRPC_MAP_FD_DELAYED) == 0, "clone mappings");
    float *x = (float *) A.data, *z = (float *) (A.data + 512);
    for (int i = 0; i < 16; i++) x[i] = (float) i - 3.5f;
    /* opcodes: the fence-protocol table (hexagon.md 3) or qualcomm dev's (d99724f's + FENCE 47) */
    const uint32_t op_scale = qdev ? HTP_OP_SCALE : 31, op_fence = qdev ? 47 : 54, op_cpy_fence = 33;
    struct batch bb = { .nb = 2, .fence = !qdev }, ba = { .nb = 2, .fence = !qdev };
    struct htp_buf_desc bufs[2] = { { (uint64_t) (uintptr_t) A.data, DATA_SIZE, 0, (uint32_t) A.data_fd },
                                    { (uint64_t) (uintptr_t) fence, 65536, 0, (uint32_t) ffd } };
    memcpy(bb.bufs, bufs, sizeof bufs);
    memcpy(ba.bufs, bufs, sizeof bufs);
    const uint32_t v16[4] = { 16, 1, 1, 1 }, fne[4] = { 64, 4, 1, 1 };
    /* cdsp1: wait for seq 5 in slot 1, then z = 2 * y */
    uint16_t by = hx_add_tensor(&bb, 0, 256, HTP_TYPE_F32, v16, 4, 64), bz = hx_add_tensor(&bb, 0, 512, HTP_TYPE_F32, v16, 4, 64);
    uint16_t bf = hx_add_tensor(&bb, 1, 0, HD_TYPE_I8, fne, 1, 64);
    bb.tens[bf].flags = HD_FENCE_TENSOR_FENCE;
    struct htp_op_desc *w = hx_add_op(&bb, op_fence, bf, HTP_NO_TENSOR, bf);
    w->params[0] = 5; w->params[1] = 0; w->params[2] = 1;
    float two = 2.0f;
    memcpy(&hx_add_op(&bb, op_scale, by, HTP_NO_TENSOR, bz)->params[0], &two, 4);
    /* cdsp: y = x, then signal seq 5 in slot 1 */
    uint16_t ax = hx_add_tensor(&ba, 0, 0, HTP_TYPE_F32, v16, 4, 64), ay = hx_add_tensor(&ba, 0, 256, HTP_TYPE_F32, v16, 4, 64);
    uint16_t af = hx_add_tensor(&ba, 1, 0, HD_TYPE_I8, fne, 1, 64);
    ba.tens[af].flags = HD_FENCE_TENSOR_FENCE;
    if (qdev) {
        hx_add_op(&ba, HTP_OP_CPY, ax, HTP_NO_TENSOR, ay);
        struct htp_op_desc *sg = hx_add_op(&ba, op_fence, af, HTP_NO_TENSOR, af);
        sg->params[0] = 5; sg->params[1] = 1; sg->params[2] = 1;
    } else {
        struct htp_op_desc *c = hx_add_op(&ba, op_cpy_fence, ax, af, ay);
        c->params[0] = 5; c->params[2] = 1;
    }

    CHECK(hx_send_batch(&B, &bb, 0, 0, 1) == 0, "send waiting batch");
    struct hd_opbatch_rsp_seq rsp;
    struct dspqueue_buffer db;
    uint32_t fl, n, len;
    CHECK(a->q_read(B.q, &fl, 1, &n, &db, sizeof rsp, &len, (uint8_t *) &rsp, 20000) == AEE_EEXPIRED, "the wait holds its batch");
    CHECK(hx_send_batch(&A, &ba, 0, 0, 1) == 0, "send signalling batch");
    uint32_t sa = hx_read_rsp(&A, NULL), sb = hx_read_rsp(&B, NULL);
    CHECK(sa == HTP_STATUS_OK && sb == HTP_STATUS_OK, "fenced batches: %u %u", sa, sb);
    uint32_t slot[2];
    memcpy(slot, fence + 64, 8);
    CHECK(slot[0] == 5 && slot[1] == HTP_STATUS_OK, "fence slot 1: seq %u status %u", slot[0], slot[1]);
    int good = 1;
    for (int i = 0; i < 16; i++) good &= z[i] == 2.0f * x[i];
    CHECK(good, "z = 2 * x across the fence");
    CHECK(qdev ? a->stat("op.FENCE") == 2 && a->stat("op.CPY") == 1 : a->stat("op.FENCE") == 1 && a->stat("op.CPY_FENCE") == 1,
          "fence op counters");
    /* a wait nobody signals ends with INTERNAL_ERR after fence_timeout_us */
    a->configure("fence_timeout_us=20000");
    bb.ops[0].params[0] = 99;
    CHECK(hx_send_batch(&B, &bb, 0, 1, 2) == 0, "send unsatisfiable wait");
    sb = hx_read_rsp(&B, NULL);
    CHECK(sb == HTP_STATUS_INTERNAL_ERR, "fence timeout status %u", sb);

    CHECK(a->munmap(4, A.data_fd, A.data, DATA_SIZE) == 0 && a->munmap(3, ffd, fence, 65536) == 0 &&
          a->munmap(4, ffd, fence, 65536) == 0, "unmap clones");
    a->free(fence);
    hx_release(&B);
    hx_release(&A);
    CHECK(a->stat("violations") == 0, "violations in the fence test");
    CHECK(a->stat("rpcmem_live") == 0 && a->stat("maps_live") == 0 && a->stat("handles_live") == 0 &&
          a->stat("queues_live") == 0 && a->stat("dsp_threads_live") == 0, "leaks after the fence test");
}

/* Session-open failure codes, queue back-pressure, response delay, reject=hang, profiling, discovery. */
static void test_faults(struct api *a) {
    a->reset();
    a->configure("kparams=0"); /* these batches carry no kernel parameters */
    char uri[256];
    struct remote_rpc_control_unsigned_module u = { 3, 1 };
    CHECK(hx_get_uri(a, "cdsp", 0, uri, sizeof uri) == 0, "GET_URI");
    remote_handle64 h = 0;
    CHECK(a->open(uri, &h) == (int) 0x80000414u, "open before UNSIGNED_MODULE");
    a->session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, &u, sizeof u);
    static const uint32_t codes[] = { 0x72, 0x14, 0x80000406u, 0x80000414u };
    for (size_t i = 0; i < 4; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "fail.open=1:0x%x", codes[i]);
        a->configure(spec);
        h = 0x1234;
        CHECK(a->open(uri, &h) == (int) codes[i] && h == 0x1234, "injected open code 0x%x", codes[i]);
    }
    a->configure("arch=79");
    CHECK(a->open(uri, &h) == (int) 0x80000406u, "open of a v73 skel on a v79 DSP");
    a->configure("arch=73");
    struct remote_rpc_get_uri g = { "cdsp", 4, 0, (char *) "file:///x", 9, uri, 9 };
    CHECK(a->session_control(FASTRPC_GET_URI, &g, sizeof g) == AEE_EBADSIZE, "GET_URI buffer too small");

    /* an unstarted queue fills: noblock writes see EWOULDBLOCK, timed writes EEXPIRED */
    dspqueue_t q;
    CHECK(a->q_create(3, 0, 256, 256, NULL, NULL, NULL, &q) == 0, "small queue");
    uint8_t *blk = a->alloc2(RPCMEM_HEAP_ID_SYSTEM, 1, 4096);
    int fd = a->to_fd(blk);
    struct dspqueue_buffer db = { .fd = (uint32_t) fd, .size = 64, .offset = 0, .ptr = blk };
    uint8_t msg[24] = { 0 };
    CHECK(a->q_write_noblock(q, 0, 1, &db, 24, msg) == AEE_ENOSUCHMAP, "write of an unmapped buffer");
    a->mmap(3, fd, blk, 0, 4096, FASTRPC_MAP_FD);
    int n = 0, rc;
    while ((rc = a->q_write_noblock(q, 0, 0, NULL, 24, msg)) == 0 && n < 100) n++;
    CHECK(rc == AEE_EWOULDBLOCK && n > 0 && n < 100, "queue full after %d writes: 0x%x", n, rc);
    CHECK(a->q_write(q, 0, 0, NULL, 24, msg, 2000) == AEE_EEXPIRED, "timed write on a full queue");
    uint32_t fl, nb, len;
    CHECK(a->q_read_noblock(q, &fl, 1, &nb, &db, 88, &len, msg) == AEE_EWOULDBLOCK, "read of an empty response queue");
    CHECK(a->q_close(q) == 0, "close the small queue");
    a->munmap(3, fd, blk, 4096);
    a->free(blk);

    /* delay, reject=hang, profiling */
    struct session s;
    CHECK(hx_bring_up(a, &s, "cdsp", 0) == 0, "bring-up");
    uint8_t prof[36] = { 1 };
    CHECK(hx_invoke_in(&s, HTP_IFACE_PROFILER, prof, sizeof prof) == 0, "profiler basic");
    struct batch b = { .nb = 1 };
    b.bufs[0] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) s.data, DATA_SIZE, 0, (uint32_t) s.data_fd };
    uint16_t t = hx_add_tensor(&b, 0, 0, HTP_TYPE_F32, (uint32_t[4]) { 8, 1, 1, 1 }, 4, 32);
    hx_add_op(&b, HTP_OP_UNARY_TANH, t, HTP_NO_TENSOR, t);
    a->configure("delay_us=30000");
    CHECK(hx_send_batch(&s, &b, 0, 0, 0) == 0, "send delayed");
    struct hd_opbatch_rsp_seq rsp;
    CHECK(a->q_read(s.q, &fl, 1, &nb, &db, sizeof rsp, &len, (uint8_t *) &rsp, 1000) == AEE_EEXPIRED, "read before the delayed answer");
    CHECK(hx_read_rsp(&s, NULL) == HTP_STATUS_OK, "delayed answer");
    const struct htp_prof_desc *pd = (const struct htp_prof_desc *) (s.shm + sizeof(struct htp_buf_desc) + sizeof(struct htp_tensor) +
                                                                      sizeof(struct htp_op_desc));
    CHECK(pd->opcode == HTP_OP_UNARY_TANH, "profile descriptor opcode %u", pd->opcode);
    a->configure("delay_us=0; reject=hang");
    b.tens[t].bi = 3;
    CHECK(hx_send_batch(&s, &b, 0, 1, 0) == 0, "send invalid");
    CHECK(a->q_read(s.q, &fl, 1, &nb, &db, sizeof rsp, &len, (uint8_t *) &rsp, 20000) == AEE_EEXPIRED, "invalid batch never answered");
    a->configure("reject=answer");
    hx_release(&s);

    if (a->system_request) {
        struct hd_fastrpc_domain doms[4];
        struct hd_system_req_payload p = { .id = FASTRPC_GET_DOMAINS, .sys = { doms, 4, 0, 0 } };
        a->configure("cores=2");
        CHECK(a->system_request(&p) == 0 && p.sys.num_domains == 2 && doms[1].id == 4 && !strcmp(doms[1].name, "cdsp1") &&
              doms[1].type == HD_FASTRPC_NSP && doms[1].status == 1, "GET_DOMAINS");
        a->configure("sysreq=unsupported");
        CHECK(a->system_request(&p) == AEE_EUNSUPPORTEDAPI, "GET_DOMAINS unsupported");
    }
    /* the DSP process dies on a batch: the host's read ends with EBADSTATE instead of hanging, the error callback
     * hears ENOSUCH, invokes fail with ECONNRESET, and everything can still be released */
    CHECK(hx_bring_up(a, &s, "cdsp", 0) == 0, "bring-up for the crash");
    a->configure("fail.crash=1");
    CHECK(hx_send_batch(&s, &b, 0, 0, 0) == 0, "send the fatal batch");
    CHECK(a->q_read(s.q, &fl, 1, &nb, &db, sizeof rsp, &len, (uint8_t *) &rsp, 1000000) == AEE_EBADSTATE, "read after the crash");
    CHECK(hx_send_batch(&s, &b, 0, 1, 0) == AEE_EBADSTATE, "write after the crash");
    uint8_t hw[24];
    remote_arg out = { .buf = { hw, sizeof hw } };
    CHECK(a->invoke(s.h, 0x08000100, &out) == AEE_ECONNRESET, "invoke after the crash");
    uint32_t dfd = (uint32_t) s.data_fd;
    hx_invoke_in(&s, HTP_IFACE_MUNMAP, &dfd, 4);
    CHECK(a->invoke(s.h, 0x03000000, NULL) == AEE_ECONNRESET, "stop after the crash");
    a->munmap(s.domain, s.data_fd, s.data, DATA_SIZE);
    a->munmap(s.domain, s.shm_fd, s.shm, SHM_SIZE);
    a->free(s.data);
    a->free(s.shm);
    CHECK(a->q_close(s.q) == 0 && a->close(s.h) == 0, "release after the crash");
    CHECK(a->stat("rpcmem_live") == 0 && a->stat("maps_live") == 0 && a->stat("handles_live") == 0 &&
          a->stat("queues_live") == 0, "leaks after the fault tests");
}

/* protocol=fence ALLREDUCE over n ranks on distinct cores (cdsp, cdsp1, ...), each summing all ranks' data into its
 * own, in place. */
static void test_allreduce(struct api *a, int n) {
    a->reset();
    a->configure("kparams=0"); /* these batches carry no kernel parameters */
    char spec[96];
    snprintf(spec, sizeof spec, "protocol=fence; cores=%d; fence_timeout_us=300000", n);
    a->configure(spec);
    static const char *const doms[4] = { "cdsp", "cdsp1", "cdsp2", "cdsp3" };
    struct session ses[4];
    int up = 0;
    for (; up < n; up++)
        if (hx_bring_up(a, &ses[up], doms[up], 0)) break;
    CHECK(up == n, "allreduce bring-up of %d ranks: %d up", n, up);
    uint8_t *fence = a->alloc2(RPCMEM_HEAP_ID_SYSTEM, 1, 65536);
    int ffd = a->to_fd(fence), mapped = 1;
    /* every rank's data and the fence block, mapped into every rank's domain */
    for (int r = 0; r < up; r++) {
        mapped &= a->mmap(ses[r].domain, ffd, fence, 0, 65536, FASTRPC_MAP_FD_DELAYED) == 0;
        for (int o = 0; o < up; o++)
            if (o != r) mapped &= a->mmap(ses[r].domain, ses[o].data_fd, ses[o].data, 0, DATA_SIZE, FASTRPC_MAP_FD_DELAYED) == 0;
    }
    CHECK(mapped, "allreduce clone mappings");
    float want[16];
    for (int i = 0; i < 16; i++) {
        want[i] = 0;
        for (int r = 0; r < up; r++) { ((float *) ses[r].data)[i] = (float) (i * (r + 1)) - 0.75f * (float) r; want[i] += ((float *) ses[r].data)[i]; }
    }
    for (int r = 0; r < up && up == n; r++) {
        struct batch b = { .nb = (uint32_t) n + 1, .fence = 1 };
        uint16_t data[4], fen[4];
        const uint32_t v16[4] = { 16, 1, 1, 1 }, fne[4] = { 64, 1, 1, 1 };
        for (int k = 0; k < n; k++) {
            b.bufs[k] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) ses[k].data, DATA_SIZE, 0, (uint32_t) ses[k].data_fd };
            data[k] = hx_add_tensor(&b, (uint16_t) k, 0, HTP_TYPE_F32, v16, 4, 64);
        }
        b.bufs[n] = (struct htp_buf_desc) { (uint64_t) (uintptr_t) fence, 65536, 0, (uint32_t) ffd };
        for (int k = 0; k < n; k++) {
            fen[k] = hx_add_tensor(&b, (uint16_t) n, (uint32_t) (64 * k), HD_TYPE_I8, fne, 1, 64);
            b.tens[fen[k]].flags = HD_FENCE_TENSOR_FENCE;
        }
        struct htp_op_desc *o = hx_add_op(&b, 55 /* fence-protocol ALLREDUCE */, data[0], data[1], data[r]);
        for (int k = 2; k < 2 * n; k++) {
            uint16_t t = k < n ? data[k] : fen[k - n];
            if (k < HTP_OP_MAX_INPUTS) o->src[k] = t;
            else b.fence_src[0][k - HTP_OP_MAX_INPUTS] = t;
        }
        o->kernel_params[0] = r; o->kernel_params[1] = n;
        o->params[0] = 1; o->params[1] = 2;
        CHECK(hx_send_batch(&ses[r], &b, 0, 0, 1) == 0, "send rank %d", r);
    }
    int good = up == n;
    for (int r = 0; r < up && up == n; r++) {
        uint32_t st = hx_read_rsp(&ses[r], NULL);
        CHECK(st == HTP_STATUS_OK, "rank %d status %u", r, st);
        for (int i = 0; i < 16; i++) good &= ((float *) ses[r].data)[i] == want[i];
    }
    CHECK(good, "all %d ranks hold the sum", n);
    CHECK(up < n || a->stat("op.ALLREDUCE") == (uint64_t) n, "allreduce counter");
    for (int r = 0; r < up; r++) {
        a->munmap(ses[r].domain, ffd, fence, 65536);
        for (int o = 0; o < up; o++)
            if (o != r) a->munmap(ses[r].domain, ses[o].data_fd, ses[o].data, DATA_SIZE);
    }
    a->free(fence);
    for (int r = up - 1; r >= 0; r--) hx_release(&ses[r]);
    CHECK(a->stat("violations") == 0 && a->stat("rpcmem_live") == 0 && a->stat("maps_live") == 0 &&
          a->stat("queues_live") == 0, "allreduce over %d ranks left violations or live objects", n);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s OUTDIR\n", argv[0]); return 2; }
    test_nodsp(argv[1]);
    char path[512];
    snprintf(path, sizeof path, "%s/libcdsprpc.so", argv[1]);
    struct api a;
    if (hx_load(&a, path)) return 1;
    a.reset();
    a.configure("kparams=0"); /* these batches carry no kernel parameters */
    test_batches(&a);
    test_real_ne(&a);
    test_fences(&a, 0);
    test_fences(&a, 1);
    test_allreduce(&a, 2);
    test_allreduce(&a, 4);
    test_faults(&a);
    if (failures) {
        char log[1 << 16];
        size_t (*lg)(char *, size_t);
        *(void **) (&lg) = dlsym(a.lib, "htpdouble_log");
        if (lg) { lg(log, sizeof log); fputs(log, stdout); }
        printf("selftest: %d failures\n", failures);
        return 1;
    }
    printf("selftest: ok\n");
    dlclose(a.lib);
    return 0;
}
