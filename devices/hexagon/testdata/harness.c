/*
 * Test harness shared by selftest.c and oracle.c: loads a built variant of the double with dlopen (as a host
 * would), brings an HTP session up, builds op batches in the shared block and reads the responses.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int failures;

#define SYM(f, name) *(void **) (&a->f) = dlsym(a->lib, name)

int hx_load(struct api *a, const char *path) {
    memset(a, 0, sizeof *a);
    a->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) { printf("dlopen %s: %s\n", path, dlerror()); return -1; }
    SYM(open, "remote_handle64_open"); SYM(close, "remote_handle64_close"); SYM(invoke, "remote_handle64_invoke");
    SYM(h64_control, "remote_handle64_control"); SYM(handle_control, "remote_handle_control");
    SYM(session_control, "remote_session_control"); SYM(system_request, "remote_system_request");
    SYM(alloc, "rpcmem_alloc"); SYM(alloc2, "rpcmem_alloc2"); SYM(free, "rpcmem_free"); SYM(to_fd, "rpcmem_to_fd");
    SYM(mmap, "fastrpc_mmap"); SYM(munmap, "fastrpc_munmap"); SYM(q_create, "dspqueue_create");
    SYM(q_close, "dspqueue_close"); SYM(q_export, "dspqueue_export"); SYM(q_write, "dspqueue_write");
    SYM(q_write_noblock, "dspqueue_write_noblock"); SYM(q_read_noblock, "dspqueue_read_noblock");
    SYM(q_read, "dspqueue_read"); SYM(configure, "htpdouble_configure"); SYM(reset, "htpdouble_reset");
    SYM(stat, "htpdouble_stat"); SYM(violations, "htpdouble_violations");
    return 0;
}

static const char module_uri[] = "file:///libggml-htp-v73.so?htp_iface_skel_handle_invoke&_modver=1.0";

int hx_get_uri(struct api *a, const char *dom, uint32_t session, char *uri, uint32_t len) {
    struct remote_rpc_get_uri g = { .domain_name = (char *) dom, .domain_name_len = (uint32_t) strlen(dom),
                                    .session_id = session, .module_uri = (char *) module_uri,
                                    .module_uri_len = (uint32_t) strlen(module_uri), .uri = uri, .uri_len = len };
    return a->session_control(FASTRPC_GET_URI, &g, sizeof g);
}

/* ---------------------------------------------------------------- no-DSP answers and variants */



int hx_invoke_in(struct session *s, uint32_t mid, const void *in, size_t len) {
    remote_arg arg = { .buf = { (void *) in, len } };
    return s->a->invoke(s->h, (uint32_t) ((mid << 24) | (1u << 16)), &arg);
}

int hx_bring_up(struct api *a, struct session *s, const char *dom, int session) {
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
    if (hx_get_uri(a, dom, (uint32_t) session, uri, sizeof uri)) return -3;
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
    uint8_t start[48] = { 0 }; /* zero vtcm, max_vmem and power: the DSP's own, in both forms */
    memcpy(start + 8, &qid, 8);
    uint32_t nhvx = 4, nhmx = 1;
    memcpy(start + 16, &nhvx, 4);
    memcpy(start + 20, &nhmx, 4);
    if (hx_invoke_in(s, HTP_IFACE_START, start, sizeof start)) return -12;
    uint32_t mm[2] = { (uint32_t) s->data_fd, DATA_SIZE };
    if (hx_invoke_in(s, HTP_IFACE_MMAP, mm, sizeof mm)) return -13;
    s->next_id = 0;
    return 0;
}

void hx_release(struct session *s) {
    struct api *a = s->a;
    uint32_t fd = (uint32_t) s->data_fd;
    CHECK(hx_invoke_in(s, HTP_IFACE_MUNMAP, &fd, 4) == 0, "htp_iface_munmap");
    CHECK(a->invoke(s->h, 0x03000000, NULL) == 0, "htp_iface_stop");
    CHECK(a->munmap(s->domain, s->data_fd, s->data, DATA_SIZE) == 0, "fastrpc_munmap data");
    CHECK(a->munmap(s->domain, s->shm_fd, s->shm, SHM_SIZE) == 0, "fastrpc_munmap shm");
    a->free(s->data);
    a->free(s->shm);
    CHECK(a->q_close(s->q) == 0, "dspqueue_close");
    CHECK(a->close(s->h) == 0, "remote_handle64_close");
}

/* A batch under construction in slot 0 of the session's shared block. */

uint16_t hx_add_tensor(struct batch *b, uint16_t bi, uint32_t off, uint32_t type, const uint32_t ne[4], uint32_t ts,
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

struct htp_op_desc *hx_add_op(struct batch *b, uint32_t opcode, uint16_t s0, uint16_t s1, uint16_t d) {
    struct htp_op_desc *o = &b->ops[b->no++];
    memset(o, 0, sizeof *o);
    o->opcode = opcode;
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) o->src[i] = HTP_NO_TENSOR;
    for (int i = 0; i < HTP_OP_MAX_OUTPUTS; i++) o->dst[i] = HTP_NO_TENSOR;
    o->src[0] = s0; o->src[1] = s1; o->dst[0] = d;
    memset(b->fence_src[b->no - 1], 0xff, sizeof b->fence_src[0]);
    return o;
}

/* Writes the batch into slot `slot` (8 KiB each) and sends it; with seq != 0 uses the 32-byte request form. */
int hx_send_batch(struct session *s, const struct batch *b, uint32_t slot, uint32_t id, uint64_t seq) {
    uint8_t *m = s->shm + slot * 8192u;
    size_t o = 0;
    memcpy(m + o, b->bufs, sizeof b->bufs[0] * b->nb); o += sizeof b->bufs[0] * b->nb;
    memcpy(m + o, b->tens, sizeof b->tens[0] * b->nt); o += sizeof b->tens[0] * b->nt;
    for (uint32_t i = 0; i < b->no; i++) {
        const struct htp_op_desc *op = &b->ops[i];
        if (!b->fence) { memcpy(m + o, op, sizeof *op); o += sizeof *op; continue; }
        struct hd_fence_op_desc w;
        memset(&w, 0xff, sizeof w);
        w.opcode = op->opcode; w.flags = op->flags;
        memcpy(w.params, op->params, sizeof w.params);
        memcpy(w.kernel_params, op->kernel_params, sizeof w.kernel_params);
        memcpy(w.src, op->src, sizeof op->src);
        memcpy(w.src + HTP_OP_MAX_INPUTS, b->fence_src[i], sizeof b->fence_src[i]);
        memcpy(w.dst, op->dst, sizeof w.dst);
        w.pad[0] = w.pad[1] = 0;
        memcpy(m + o, &w, sizeof w);
        o += sizeof w;
    }
    o += sizeof(struct htp_prof_desc) * b->no;
    struct hd_opbatch_req_seq req = { { id, b->nb, b->nt, b->no, 0, 0 }, seq };
    struct dspqueue_buffer db = { .fd = (uint32_t) s->shm_fd, .size = (uint32_t) o, .offset = slot * 8192u,
                                  .flags = DSPQUEUE_BUFFER_FLAG_FLUSH_SENDER | DSPQUEUE_BUFFER_FLAG_INVALIDATE_RECIPIENT,
                                  .ptr = m };
    return s->a->q_write(s->q, 0, 1, &db, seq ? 32 : 24, (const uint8_t *) &req, 1000000);
}

/* Reads one response; returns its status (or 1000 + error). */
uint32_t hx_read_rsp(struct session *s, uint32_t *id) {
    struct hd_opbatch_rsp_seq rsp;
    struct dspqueue_buffer db;
    uint32_t flags, n = 0, len = 0;
    int rc = s->a->q_read(s->q, &flags, 1, &n, &db, sizeof rsp, &len, (uint8_t *) &rsp, 1000000);
    if (rc) return 1000u + (uint32_t) rc;
    CHECK(n == 1 && (len == 88 || len == 96), "response: %u buffers, %u bytes", n, len);
    if (id) *id = rsp.base.id;
    return rsp.base.status;
}

uint16_t hx_fp16(float f) {
    /* the harness's own conversion for test inputs: truncates the mantissa, flushes values below the normal
     * half range to zero and saturates above it (the double's exact conversion is in ops.c) */
    uint32_t x; memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
    if (e < 113) return (uint16_t) sign;
    if (e > 142) return (uint16_t) (sign | 0x7bff);
    return (uint16_t) (sign | ((e - 112) << 10) | (m >> 13));
}
float hx_fp16_to_f(uint16_t h) {
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff, bits = ((uint32_t) (h & 0x8000) << 16);
    if (e) bits |= ((e + 112) << 23) | (m << 13);
    float f; memcpy(&f, &bits, 4); return f;
}

double hx_urand(uint64_t *st) { *st = *st * 6364136223846793005ull + 1442695040888963407ull; return (double) (*st >> 11) / 9007199254740992.0; }
