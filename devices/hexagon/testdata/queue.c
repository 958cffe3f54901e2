/*
 * dspqueue and the emulated DSP thread: one thread per started queue reads op batches, validates them against the
 * double's tables (blocks, mappings, the queue's domain), executes the ops and answers like the public skel's
 * process_opbatch().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "htpdouble.h"

static int is_extended_map(int flags) {
    return flags == FASTRPC_MAP_FD_EXTENDED || flags == FASTRPC_MAP_FD_DELAYED_EXTENDED;
}

static struct dspqueue *queue_lookup(dspqueue_t q) {
    if (!q) return NULL;
    for (int i = 0; i < HD_MAX_QUEUES; i++)
        if (hd.queues[i] == q && q->live) return q;
    return NULL;
}

struct dspqueue *hd_queue_by_export(uint64_t id) {
    for (int i = 0; i < HD_MAX_QUEUES; i++)
        if (hd.queues[i] && hd.queues[i]->live && hd.queues[i]->exported && hd.queues[i]->export_id == id)
            return hd.queues[i];
    return NULL;
}

static size_t packet_cost(uint32_t nbuf, uint32_t len) { return 16 + (size_t) nbuf * 24 + ((len + 7u) & ~7u); }

static void packet_free(struct hd_packet *p) {
    if (!p) return;
    free(p->bufs);
    free(p->msg);
    free(p);
}

static struct hd_packet *packet_new(uint32_t flags, uint32_t nbuf, const struct dspqueue_buffer *bufs, uint32_t len,
                                    const uint8_t *msg) {
    struct hd_packet *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->flags = flags; p->nbuf = nbuf; p->len = len; p->cost = packet_cost(nbuf, len);
    if (nbuf) {
        p->bufs = malloc(sizeof *bufs * nbuf);
        if (!p->bufs) { free(p); return NULL; }
        memcpy(p->bufs, bufs, sizeof *bufs * nbuf);
    }
    if (len) {
        p->msg = malloc(len);
        if (!p->msg) { packet_free(p); return NULL; }
        memcpy(p->msg, msg, len);
    }
    return p;
}

/* ---------------------------------------------------------------- caches (README "Caches")
 * A dspqueue buffer's bytes travel host cache -> DDR -> DSP cache only through the flags dspqueue.h defines: the
 * sender's FLUSH_SENDER at write time copies the host's bytes to `ddr`, the recipient's INVALIDATE_RECIPIENT at read
 * time refetches `l2` from `ddr`, and the DSP works on `l2`. */
static int cache_mirrors(struct hd_block *blk) {
    if (blk->ddr) return 1;
    blk->ddr = calloc(1, blk->size);
    blk->l2 = calloc(1, blk->size);
    if (blk->ddr && blk->l2) return 1;
    free(blk->ddr); free(blk->l2);
    blk->ddr = blk->l2 = NULL;
    return 0;
}

/* The host's write of a request: FLUSH_SENDER publishes the bytes as they are now. */
static void cache_host_sends(const struct dspqueue_buffer *b) {
    struct hd_block *blk = hd_block_by_fd((int) b->fd);
    if (!hd.cfg.cache || !blk || !cache_mirrors(blk)) return;
    if (b->flags & DSPQUEUE_BUFFER_FLAG_FLUSH_SENDER) memcpy(blk->ddr + b->offset, (uint8_t *) blk->base + b->offset, b->size);
    else hd_log("dspqueue_write: buffer fd %u without FLUSH_SENDER: the DSP reads what DDR held before", b->fd);
}

/* The DSP's read of a request: INVALIDATE_RECIPIENT refetches from DDR, else the DSP keeps its cached bytes. The
 * DSP's view is then put where the double's DSP thread reads and writes the batch (the host's own bytes there are
 * not the host's to read until the answer). */
static void cache_dsp_receives(const struct dspqueue_buffer *b) {
    struct hd_block *blk = hd_block_by_fd((int) b->fd);
    if (!hd.cfg.cache || !blk || !blk->ddr) return;
    if (b->flags & DSPQUEUE_BUFFER_FLAG_INVALIDATE_RECIPIENT) memcpy(blk->l2 + b->offset, blk->ddr + b->offset, b->size);
    else hd_log("DSP read of buffer fd %u without INVALIDATE_RECIPIENT: it uses its cached bytes", b->fd);
    memcpy((uint8_t *) blk->base + b->offset, blk->l2 + b->offset, b->size);
}

/* The DSP's answer carries FLUSH_SENDER | INVALIDATE_RECIPIENT (process_opbatch): the host, DDR and the DSP's
 * cache agree on the buffer afterwards. */
static void cache_dsp_answers(const struct dspqueue_buffer *b) {
    struct hd_block *blk = hd_block_by_fd((int) b->fd);
    if (!hd.cfg.cache || !blk || !blk->ddr) return;
    memcpy(blk->ddr + b->offset, (uint8_t *) blk->base + b->offset, b->size);
    memcpy(blk->l2 + b->offset, (uint8_t *) blk->base + b->offset, b->size);
}

static void ring_push(struct hd_ring *r, struct hd_packet *p) {
    p->next = NULL;
    p->t_queued = hd_now_ns();
    if (r->tail) r->tail->next = p; else r->head = p;
    r->tail = p;
    r->used += p->cost;
    r->count++;
}

static struct hd_packet *ring_pop(struct hd_ring *r) {
    struct hd_packet *p = r->head;
    if (!p) return NULL;
    r->head = p->next;
    if (!r->head) r->tail = NULL;
    r->used -= p->cost;
    r->count--;
    return p;
}

static void ring_clear(struct hd_ring *r) {
    struct hd_packet *p;
    while ((p = ring_pop(r))) packet_free(p);
}

/* Waits on q->cv until *ready or the timeout; returns 0, AEE_EEXPIRED, AEE_EWOULDBLOCK (timeout 0) or
 * AEE_EINTERRUPTED (queue closed). */
static int wait_for(struct dspqueue *q, int (*ready)(struct dspqueue *, void *), void *arg, uint32_t timeout_us) {
    if (ready(q, arg)) return 0;
    if (timeout_us == 0) return AEE_EWOULDBLOCK;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t) dl.tv_nsec + (uint64_t) timeout_us * 1000ull;
    dl.tv_sec += (time_t) (ns / 1000000000ull);
    dl.tv_nsec = (long) (ns % 1000000000ull);
    while (!ready(q, arg)) {
        if (!q->live) return AEE_EINTERRUPTED;
        if (timeout_us == DSPQUEUE_TIMEOUT_NONE) pthread_cond_wait(&q->cv, &hd.mu);
        else if (pthread_cond_timedwait(&q->cv, &hd.mu, &dl) == ETIMEDOUT) return ready(q, arg) ? 0 : AEE_EEXPIRED;
    }
    return 0;
}

/* ---------------------------------------------------------------- host API */

HD_EXPORT int dspqueue_create(int domain, uint32_t flags, uint32_t req_queue_size, uint32_t resp_queue_size,
                              dspqueue_callback_t packet_callback, dspqueue_callback_t error_callback,
                              void *callback_context, dspqueue_t *queue) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    int ordinal = hd.n_queues_created + 1;
    if (hd.cfg.nodsp) rc = AEE_EUNSUPPORTED;
    else if (!queue || flags != 0) rc = AEE_EBADPARM;
    else if (hd_fault(HD_F_QUEUE_CREATE, ordinal, -1, domain, -1, &code)) { rc = (int) code; hd.n_queues_created++; }
    else if (!hd_domain_exists(domain)) { rc = AEE_EUNSUPPORTED; hd_violation("dspqueue_create: domain %d does not exist or its session is not reserved", domain); }
    else if (req_queue_size > HD_DSPQUEUE_MAX_QUEUE || resp_queue_size > HD_DSPQUEUE_MAX_QUEUE) rc = AEE_EBADPARM;
    else {
        int idx = -1;
        for (int i = 0; i < HD_MAX_QUEUES && idx < 0; i++)
            if (!hd.queues[i]) idx = i;
        struct dspqueue *q = idx < 0 ? NULL : calloc(1, sizeof *q);
        if (!q) rc = AEE_ENOMEMORY;
        else {
            hd.n_queues_created++;
            q->idx = idx; q->live = 1; q->ordinal = ordinal; q->domain = domain;
            q->packet_cb = packet_callback; q->error_cb = error_callback; q->cb_ctx = callback_context;
            q->req.cap = req_queue_size ? req_queue_size : 65536;
            q->rsp.cap = resp_queue_size ? resp_queue_size : 65536;
            pthread_cond_init(&q->cv, NULL);
            hd.queues[idx] = q;
            *queue = q;
        }
    }
    if (rc && queue) *queue = NULL; /* as the real library on every failure */
    hd_log("dspqueue_create(domain %d, flags %u, req %u, rsp %u, cb %s) -> 0x%x q%d", domain, flags, req_queue_size,
           resp_queue_size, packet_callback ? "set" : "NULL", (unsigned) rc, rc ? 0 : ordinal);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

HD_EXPORT int dspqueue_close(dspqueue_t queue) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    struct dspqueue *q = queue_lookup(queue);
    if (!q) { rc = AEE_EBADPARM; hd_violation("dspqueue_close(%p): unknown queue", (void *) queue); }
    else if (hd_fault(HD_F_QUEUE_CLOSE, q->ordinal, -1, q->domain, -1, &code)) rc = (int) code;
    else if (q->bound) { rc = AEE_ERPC; hd_violation("dspqueue_close(q%d): still open on the DSP (htp_iface_stop first)", q->ordinal); }
    else {
        if (q->rsp.count) hd_log("dspqueue_close(q%d): %u unread responses dropped", q->ordinal, q->rsp.count);
        if (q->req.count) hd_log("dspqueue_close(q%d): %u unprocessed requests dropped", q->ordinal, q->req.count);
        q->live = 0;
        pthread_cond_broadcast(&q->cv);
    }
    hd_log("dspqueue_close(q%d) -> 0x%x", q ? q->ordinal : 0, (unsigned) rc);
    if (q && !q->live) {
        /* blocked host calls on this queue see EINTERRUPTED; the struct is freed only once nobody waits */
        while (q->busy) pthread_cond_wait(&q->cv, &hd.mu);
        ring_clear(&q->req);
        ring_clear(&q->rsp);
        hd.queues[q->idx] = NULL;
        pthread_cond_destroy(&q->cv);
        free(q);
    }
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

HD_EXPORT int dspqueue_export(dspqueue_t queue, uint64_t *queue_id) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    struct dspqueue *q = queue_lookup(queue);
    if (!q || !queue_id) rc = AEE_EBADPARM;
    else if (hd_fault(HD_F_QUEUE_EXPORT, q->ordinal, -1, q->domain, -1, &code)) rc = (int) code;
    else {
        if (!q->exported) { q->export_id = hd.next_export_id++; q->exported = 1; }
        *queue_id = q->export_id;
    }
    hd_log("dspqueue_export(q%d) -> 0x%x id 0x%" PRIx64, q ? q->ordinal : 0, (unsigned) rc, q && !rc ? q->export_id : 0);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

/* Write-time checks of an op batch's sequencing: id not in flight, batch memory not overlapping a batch in
 * flight. Returns 1 if the batch is bad (violation logged). Records it as in flight otherwise. */
static int track_batch(struct dspqueue *q, const struct dspqueue_buffer *b, uint32_t len, const uint8_t *msg) {
    if (len < sizeof(struct htp_opbatch_req) || !b) return 0; /* the DSP thread rejects the shape */
    uint32_t id;
    memcpy(&id, msg, 4);
    for (int i = 0; i < q->n_inflight; i++) {
        struct hd_inflight *f = &q->inflight[i];
        if (f->id == id) {
            hd_violation("dspqueue_write(q%d): batch id %u reused while its previous batch is in flight (stale sequence)",
                         q->ordinal, id);
            return 1;
        }
        if (f->fd == b->fd && b->offset < f->off + f->size && f->off < (uint64_t) b->offset + b->size) {
            hd_violation("dspqueue_write(q%d): batch id %u memory [%u, +%u) overlaps batch %u still in flight",
                         q->ordinal, id, b->offset, b->size, f->id);
            return 1;
        }
    }
    if (q->n_inflight == HD_MAX_INFLIGHT) { hd_violation("dspqueue_write(q%d): more than %d batches in flight", q->ordinal, HD_MAX_INFLIGHT); return 1; }
    q->inflight[q->n_inflight++] = (struct hd_inflight) { .id = id, .fd = b->fd, .off = b->offset, .size = b->size };
    return 0;
}

static void retire_batch(struct dspqueue *q, uint32_t id) {
    for (int i = 0; i < q->n_inflight; i++)
        if (q->inflight[i].id == id) {
            q->inflight[i] = q->inflight[--q->n_inflight];
            return;
        }
}

struct space_arg { size_t cost; };
static int has_space(struct dspqueue *q, void *arg) {
    return !q->live || q->dead || q->req.used + ((struct space_arg *) arg)->cost <= q->req.cap;
}

static int write_common(const char *fn, dspqueue_t queue, uint32_t flags, uint32_t num_buffers,
                        struct dspqueue_buffer *buffers, uint32_t message_length, const uint8_t *message,
                        uint32_t timeout_us) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    struct dspqueue *q = queue_lookup(queue);
    if (!q) { rc = AEE_EBADPARM; hd_violation("%s(%p): unknown queue", fn, (void *) queue); goto out; }
    if (hd_fault(HD_F_QUEUE_WRITE, q->ordinal, -1, q->domain, -1, &code)) { rc = (int) code; goto out; }
    if (q->dead) { rc = AEE_EBADSTATE; goto out; }
    if (num_buffers > HD_DSPQUEUE_MAX_BUFFERS || (num_buffers && !buffers) || message_length > HD_DSPQUEUE_MAX_MESSAGE ||
        (message_length && !message)) { rc = AEE_EBADPARM; goto out; }
    for (uint32_t i = 0; i < num_buffers; i++) {
        struct dspqueue_buffer *b = &buffers[i];
        struct hd_block *blk = hd_block_by_fd((int) b->fd);
        if (!blk || !hd_map_find(q->domain, (int) b->fd)) {
            rc = AEE_ENOSUCHMAP;
            hd_violation("%s(q%d): buffer %u fd %u is not fastrpc_mmap'ed in domain %d", fn, q->ordinal, i, b->fd, q->domain);
            goto out;
        }
        if ((uint64_t) b->offset + b->size > blk->size || (b->ptr && (uint8_t *) b->ptr != (uint8_t *) blk->base + b->offset)) {
            rc = AEE_EBADPARM;
            hd_violation("%s(q%d): buffer %u fd %u ptr %p offset %u size %u outside block %p + %zu", fn, q->ordinal, i,
                         b->fd, b->ptr, b->offset, b->size, blk->base, blk->size);
            goto out;
        }
    }
    size_t cost = packet_cost(num_buffers, message_length);
    if (cost > q->req.cap) { rc = AEE_EBADPARM; goto out; }
    struct space_arg sa = { cost };
    q->busy++;
    rc = wait_for(q, has_space, &sa, timeout_us);
    q->busy--;
    if (!q->live) { pthread_cond_broadcast(&q->cv); rc = AEE_EINTERRUPTED; goto out; }
    if (q->dead) { rc = AEE_EBADSTATE; goto out; }
    if (rc) goto out;
    struct hd_packet *p = packet_new(flags, num_buffers, buffers, message_length, message);
    if (!p) { rc = AEE_ENOMEMORY; goto out; }
    for (uint32_t i = 0; i < num_buffers; i++) cache_host_sends(&buffers[i]);
    p->bad = track_batch(q, num_buffers ? buffers : NULL, message_length, message);
    p->tracked = !p->bad && message_length >= sizeof(struct htp_opbatch_req) && num_buffers;
    ring_push(&q->req, p);
    pthread_cond_broadcast(&q->cv);
out:
    hd_log("%s(q%d, flags 0x%x, %u bufs, %u B) -> 0x%x", fn, q ? q->ordinal : 0, flags, num_buffers, message_length,
           (unsigned) rc);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

HD_EXPORT int dspqueue_write(dspqueue_t queue, uint32_t flags, uint32_t num_buffers, struct dspqueue_buffer *buffers,
                             uint32_t message_length, const uint8_t *message, uint32_t timeout_us) {
    return write_common("dspqueue_write", queue, flags, num_buffers, buffers, message_length, message, timeout_us);
}

HD_EXPORT int dspqueue_write_noblock(dspqueue_t queue, uint32_t flags, uint32_t num_buffers,
                                     struct dspqueue_buffer *buffers, uint32_t message_length, const uint8_t *message) {
    return write_common("dspqueue_write_noblock", queue, flags, num_buffers, buffers, message_length, message, 0);
}

static int has_rsp(struct dspqueue *q, void *arg) { (void) arg; return !q->live || q->dead || q->rsp.count > 0; }

static int read_common(const char *fn, dspqueue_t queue, uint32_t *flags, uint32_t max_buffers, uint32_t *num_buffers,
                       struct dspqueue_buffer *buffers, uint32_t max_message_length, uint32_t *message_length,
                       uint8_t *message, uint32_t timeout_us, int consume) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    struct dspqueue *q = queue_lookup(queue);
    if (!q) { rc = AEE_EBADPARM; hd_violation("%s(%p): unknown queue", fn, (void *) queue); goto out; }
    if (hd_fault(HD_F_QUEUE_READ, q->ordinal, -1, q->domain, -1, &code)) { rc = (int) code; goto out; }
    if (q->dead && !q->rsp.count) { rc = AEE_EBADSTATE; goto out; }
    if (q->packet_cb && consume && timeout_us) {
        hd_violation("%s(q%d): blocking read on a queue with a packet callback", fn, q->ordinal);
    }
    q->busy++;
    q->readers++;
    rc = wait_for(q, has_rsp, NULL, timeout_us);
    q->readers--;
    q->busy--;
    if (!q->live) { pthread_cond_broadcast(&q->cv); rc = AEE_EINTERRUPTED; goto out; }
    if (rc) goto out;
    if (q->dead && !q->rsp.count) { rc = AEE_EBADSTATE; goto out; }
    struct hd_packet *p = q->rsp.head;
    if (flags) *flags = (p->len ? DSPQUEUE_PACKET_FLAG_MESSAGE : 0) | (p->nbuf ? DSPQUEUE_PACKET_FLAG_BUFFERS : 0);
    if (num_buffers) *num_buffers = p->nbuf;
    if (message_length) *message_length = p->len;
    if (!consume) goto out;
    if (p->nbuf > max_buffers || p->len > max_message_length || (p->nbuf && !buffers) || (p->len && !message)) {
        rc = AEE_EBADPARM;
        goto out;
    }
    if (p->nbuf) memcpy(buffers, p->bufs, sizeof *buffers * p->nbuf);
    if (p->len) memcpy(message, p->msg, p->len);
    ring_pop(&q->rsp);
    if (p->reader_waiting) hd.st.rsp_wakeup_ns += hd_now_ns() - p->t_queued;
    if (p->tracked) retire_batch(q, p->batch_id);
    packet_free(p);
    pthread_cond_broadcast(&q->cv);
out:
    hd_logv(2, "%s(q%d) -> 0x%x", fn, q ? q->ordinal : 0, (unsigned) rc);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

HD_EXPORT int dspqueue_read(dspqueue_t queue, uint32_t *flags, uint32_t max_buffers, uint32_t *num_buffers,
                            struct dspqueue_buffer *buffers, uint32_t max_message_length, uint32_t *message_length,
                            uint8_t *message, uint32_t timeout_us) {
    return read_common("dspqueue_read", queue, flags, max_buffers, num_buffers, buffers, max_message_length,
                       message_length, message, timeout_us, 1);
}

HD_EXPORT int dspqueue_read_noblock(dspqueue_t queue, uint32_t *flags, uint32_t max_buffers, uint32_t *num_buffers,
                                    struct dspqueue_buffer *buffers, uint32_t max_message_length,
                                    uint32_t *message_length, uint8_t *message) {
    return read_common("dspqueue_read_noblock", queue, flags, max_buffers, num_buffers, buffers, max_message_length,
                       message_length, message, 0, 1);
}

HD_EXPORT int dspqueue_peek(dspqueue_t queue, uint32_t *flags, uint32_t *num_buffers, uint32_t *message_length,
                            uint32_t timeout_us) {
    return read_common("dspqueue_peek", queue, flags, 0, num_buffers, NULL, 0, message_length, NULL, timeout_us, 0);
}

HD_EXPORT int dspqueue_peek_noblock(dspqueue_t queue, uint32_t *flags, uint32_t *num_buffers,
                                    uint32_t *message_length) {
    return read_common("dspqueue_peek_noblock", queue, flags, 0, num_buffers, NULL, 0, message_length, NULL, 0, 0);
}

/* ---------------------------------------------------------------- the DSP thread */

static struct hd_handle *bound_handle(const struct dspqueue *q) {
    for (int i = 0; i < HD_MAX_HANDLES; i++)
        if (hd.handles[i].live && hd.handles[i].started && hd.handles[i].queue == q->idx) return &hd.handles[i];
    return NULL;
}

/* Strided extent in bytes of a wire tensor, or UINT64_MAX if its type or row length is invalid. */
static uint64_t tensor_extent(const struct htp_tensor *t) {
    uint32_t ts = hd_type_size(t->type), bs = hd_type_blck(t->type);
    if (!ts) return UINT64_MAX;
    for (int i = 0; i < 4; i++)
        if (t->ne[i] == 0) return 0;
    if (t->ne[0] % bs) return UINT64_MAX;
    uint64_t ext = bs == 1 ? ts : (uint64_t) t->ne[0] / bs * ts;
    for (int i = bs == 1 ? 0 : 1; i < 4; i++) ext += (uint64_t) (t->ne[i] - 1) * t->nb[i];
    return ext;
}

struct batch {
    struct dspqueue *q;
    struct hd_handle *h;
    struct hd_packet *pkt;
    uint8_t *mem;                       /* host view of the batch buffer */
    struct htp_opbatch_req req;
    uint64_t seq; int has_seq;
    struct htp_buf_desc *bufs; struct htp_tensor *tens; struct htp_prof_desc *profs;
    struct hd_op *ops;                  /* decoded copy of the op descriptors (freed by process) */
    struct hd_block *blk[HTP_OP_MAX_BUFS];
    struct hd_block *dblk;
    struct hd_tensor *views;
};

#define REJECT(...) do { hd_violation(__VA_ARGS__); return 0; } while (0)

/* Validates the batch (called with hd.mu held); returns 1 if it may execute. */
static int validate(struct batch *b) {
    struct dspqueue *q = b->q;
    struct hd_packet *p = b->pkt;
    if (p->len >= sizeof b->req) memcpy(&b->req, p->msg, sizeof b->req);
    if (p->bad) return 0;
    if (p->len != sizeof(struct htp_opbatch_req) && p->len != sizeof(struct hd_opbatch_req_seq))
        REJECT("batch q%d: message of %u bytes (expected 24, or 32 with seq)", q->ordinal, p->len);
    if (p->nbuf != 1) REJECT("batch q%d: %u buffers (expected exactly 1)", q->ordinal, p->nbuf);
    if (p->len == sizeof(struct hd_opbatch_req_seq)) {
        memcpy(&b->seq, p->msg + 24, 8);
        b->has_seq = 1;
        if (b->seq == 0) REJECT("batch q%d id %u: seq 0", q->ordinal, b->req.id);
        if (q->have_seq && b->seq != q->last_seq + 1)
            REJECT("batch q%d id %u: stale sequence number %" PRIu64 " (expected %" PRIu64 ")", q->ordinal, b->req.id,
                   b->seq, q->last_seq + 1);
        q->have_seq = 1;
        q->last_seq = b->seq;
    }
    struct dspqueue_buffer *db = &p->bufs[0];
    b->dblk = hd_block_by_fd((int) db->fd);
    if (!b->dblk || !hd_map_find(q->domain, (int) db->fd))
        REJECT("batch q%d id %u: batch buffer fd %u not mapped", q->ordinal, b->req.id, db->fd);
    b->mem = (uint8_t *) b->dblk->base + db->offset;
    const struct htp_opbatch_req *r = &b->req;
    if (r->n_bufs > HTP_OP_MAX_BUFS) REJECT("batch q%d id %u: n_bufs %u > %d", q->ordinal, r->id, r->n_bufs, HTP_OP_MAX_BUFS);
    if (r->n_tensors > HTP_OP_MAX_TENSORS) REJECT("batch q%d id %u: n_tensors %u > %d", q->ordinal, r->id, r->n_tensors, HTP_OP_MAX_TENSORS);
    uint64_t bsz = sizeof(struct htp_buf_desc) * (uint64_t) r->n_bufs, tsz = sizeof(struct htp_tensor) * (uint64_t) r->n_tensors,
             osz = (hd.cfg.protocol == HD_PROTO_FENCE ? sizeof(struct hd_fence_op_desc) : sizeof(struct htp_op_desc)) * (uint64_t) r->n_ops, psz = sizeof(struct htp_prof_desc) * (uint64_t) r->n_ops,
             trsz = (uint64_t) (HTP_MAX_NTHREADS + 1) * r->n_traces * sizeof(struct htp_trace_desc);
    if (db->size < bsz + tsz + osz + psz + trsz)
        REJECT("batch q%d id %u: buffer of %u bytes < %" PRIu64 " needed (bufs %u, tensors %u, ops %u, traces %u)",
               q->ordinal, r->id, db->size, bsz + tsz + osz + psz + trsz, r->n_bufs, r->n_tensors, r->n_ops, r->n_traces);
    b->bufs = (struct htp_buf_desc *) b->mem;
    b->tens = (struct htp_tensor *) (b->mem + bsz);
    b->profs = (struct htp_prof_desc *) (b->mem + bsz + tsz + osz);

    uint64_t vmem = 0;
    for (uint32_t i = 0; i < r->n_bufs; i++) {
        struct htp_buf_desc *d = &b->bufs[i];
        struct hd_block *blk = hd_block_by_fd((int) d->fd);
        struct hd_map *m = hd_map_find(q->domain, (int) d->fd);
        if (!blk) REJECT("batch q%d id %u: buffer %u fd %u is not an rpcmem block", q->ordinal, r->id, i, d->fd);
        if (!m) REJECT("batch q%d id %u: buffer %u fd %u is not mapped in domain %d", q->ordinal, r->id, i, d->fd, q->domain);
        if (d->base != (uint64_t) (uintptr_t) blk->base)
            REJECT("batch q%d id %u: buffer %u fd %u base 0x%" PRIx64 " != block base %p", q->ordinal, r->id, i, d->fd,
                   d->base, blk->base);
        /* the DSP maps `size` bytes of the fd itself (HAP_mmap), so the bound is the block, not the fastrpc_mmap length */
        if (d->size == 0 || d->size > blk->size)
            REJECT("batch q%d id %u: buffer %u fd %u size %" PRIu64 " (block %zu)", q->ordinal, r->id, i, d->fd,
                   d->size, blk->size);
        if (d->flags & ~1u) REJECT("batch q%d id %u: buffer %u flags 0x%x", q->ordinal, r->id, i, d->flags);
        /* the fence protocol's EXTENDED buffer flag says how the host mapped the fd (the public DSP reads no flag) */
        if (hd.cfg.protocol != HD_PROTO_PUBLIC && !!(d->flags & 1u) != !!is_extended_map(m->flags))
            REJECT("batch q%d id %u: buffer %u fd %u EXTENDED flag %u, but fastrpc_mmap flags %d", q->ordinal, r->id, i,
                   d->fd, d->flags & 1u, m->flags);
        for (uint32_t j = 0; j < i; j++)
            if (b->bufs[j].fd == d->fd) REJECT("batch q%d id %u: fd %u listed twice (buffers %u and %u)", q->ordinal, r->id, d->fd, j, i);
        if (!(d->flags & 1u) && !is_extended_map(m->flags)) vmem += d->size;
        b->blk[i] = blk;
    }
    if (b->h && vmem > b->h->max_vmem)
        REJECT("batch q%d id %u: %" PRIu64 " bytes of buffers > max_vmem %" PRIu64, q->ordinal, r->id, vmem, b->h->max_vmem);
    for (uint32_t i = 0; i < r->n_tensors; i++) {
        struct htp_tensor *t = &b->tens[i];
        if (t->bi >= r->n_bufs) REJECT("batch q%d id %u: tensor %u buffer index %u >= n_bufs %u", q->ordinal, r->id, i, t->bi, r->n_bufs);
        if (t->ti != i) REJECT("batch q%d id %u: tensor %u carries index %u", q->ordinal, r->id, i, t->ti);
        if ((uint64_t) t->data + t->size > b->bufs[t->bi].size)
            REJECT("batch q%d id %u: tensor %u offset %u + size %u past its buffer %u (%" PRIu64 " bytes)", q->ordinal,
                   r->id, i, t->data, t->size, t->bi, b->bufs[t->bi].size);
        uint64_t ext = tensor_extent(t);
        if (ext == UINT64_MAX) REJECT("batch q%d id %u: tensor %u type %u / ne0 %u invalid", q->ordinal, r->id, i, t->type, t->ne[0]);
        if (ext > t->size)
            REJECT("batch q%d id %u: tensor %u spans %" PRIu64 " bytes (ne %u %u %u %u, nb %u %u %u %u) > size %u",
                   q->ordinal, r->id, i, ext, t->ne[0], t->ne[1], t->ne[2], t->ne[3], t->nb[0], t->nb[1], t->nb[2],
                   t->nb[3], t->size);
        if (t->flags & ~(hd.cfg.protocol == HD_PROTO_PUBLIC ? 3u : 7u))
            REJECT("batch q%d id %u: tensor %u flags 0x%x", q->ordinal, r->id, i, t->flags);
        /* a fence tensor is a whole number of slots at a slot boundary of its buffer (hexagon.md 2.4): a slot index
         * computed wrongly by the host shows up as a misaligned or oversized one */
        if ((t->flags & HD_FENCE_TENSOR_FENCE) &&
            (t->type != HD_TYPE_I8 || t->ne[0] < 8 || t->nb[0] != 1 || t->nb[1] != t->ne[0] || t->ne[2] != 1 ||
             t->ne[3] != 1 || t->data % t->ne[0] != 0))
            REJECT("batch q%d id %u: fence tensor %u (type %u, ne %u %u %u %u, nb %u %u, at %u) is not whole slots at a slot boundary",
                   q->ordinal, r->id, i, t->type, t->ne[0], t->ne[1], t->ne[2], t->ne[3], t->nb[0], t->nb[1], t->data);
        if (t->type == HD_TYPE_I8 && hd.cfg.protocol == HD_PROTO_PUBLIC)
            REJECT("batch q%d id %u: tensor %u type I8 (fence tensors need protocol=qdev or fence)", q->ordinal, r->id, i);
    }
    b->ops = calloc(r->n_ops ? r->n_ops : 1, sizeof *b->ops);
    if (!b->ops) REJECT("batch q%d id %u: out of memory for %u ops", q->ordinal, r->id, r->n_ops);
    const uint8_t *raw = b->mem + bsz + tsz;
    for (uint32_t i = 0; i < r->n_ops; i++) {
        struct hd_op *o = &b->ops[i];
        if (hd.cfg.protocol == HD_PROTO_FENCE) {
            struct hd_fence_op_desc w;
            memcpy(&w, raw + i * sizeof w, sizeof w);
            o->wire_opcode = w.opcode; o->flags = w.flags;
            memcpy(o->params, w.params, sizeof o->params);
            memcpy(o->kernel_params, w.kernel_params, sizeof o->kernel_params);
            memcpy(o->src, w.src, sizeof o->src);
            memcpy(o->dst, w.dst, sizeof o->dst);
        } else {
            struct htp_op_desc w;
            memcpy(&w, raw + i * sizeof w, sizeof w);
            o->wire_opcode = w.opcode; o->flags = w.flags;
            memcpy(o->params, w.params, sizeof o->params);
            memcpy(o->kernel_params, w.kernel_params, sizeof o->kernel_params);
            for (int s = 0; s < HD_FENCE_MAX_INPUTS; s++) o->src[s] = s < HTP_OP_MAX_INPUTS ? w.src[s] : HTP_NO_TENSOR;
            memcpy(o->dst, w.dst, sizeof o->dst);
        }
        o->opcode = hd_map_opcode(o->wire_opcode);
        if (o->opcode == HD_OP_COUNT)
            REJECT("batch q%d id %u: op %u opcode %u not in the %s table", q->ordinal, r->id, i, o->wire_opcode,
                   hd.cfg.protocol == HD_PROTO_FENCE ? "fence" : hd.cfg.protocol == HD_PROTO_QDEV ? "qdev" : "public");
        for (int s = 0; s < HD_FENCE_MAX_INPUTS; s++)
            if (o->src[s] != HTP_NO_TENSOR && o->src[s] >= r->n_tensors)
                REJECT("batch q%d id %u: op %u (%s) src[%d] = %u >= n_tensors %u", q->ordinal, r->id, i,
                       hd_op_name(o->opcode), s, o->src[s], r->n_tensors);
        for (int s = 0; s < HTP_OP_MAX_OUTPUTS; s++)
            if (o->dst[s] != HTP_NO_TENSOR && o->dst[s] >= r->n_tensors)
                REJECT("batch q%d id %u: op %u (%s) dst[%d] = %u >= n_tensors %u", q->ordinal, r->id, i,
                       hd_op_name(o->opcode), s, o->dst[s], r->n_tensors);
        if (o->dst[0] == HTP_NO_TENSOR && o->opcode != HD_OP_MDEV_GROUP) REJECT("batch q%d id %u: op %u (%s) without dst", q->ordinal, r->id, i, hd_op_name(o->opcode));
        if (o->flags & ~(uint32_t) HTP_OPFLAGS_SKIP_COMPUTE) REJECT("batch q%d id %u: op %u flags 0x%x", q->ordinal, r->id, i, o->flags);
    }
    return 1;
}

static void respond(struct batch *b, uint32_t status, uint32_t usecs) {
    struct dspqueue *q = b->q;
    struct hd_opbatch_rsp_seq rsp;
    memset(&rsp, 0, sizeof rsp);
    rsp.base.id = b->req.id;
    rsp.base.status = status;
    rsp.base.n_bufs = b->req.n_bufs;
    rsp.base.n_tensors = b->req.n_tensors;
    rsp.base.n_ops = b->req.n_ops;
    rsp.base.usecs = usecs;
    rsp.seq = b->seq;
    uint32_t len = b->has_seq ? sizeof(struct hd_opbatch_rsp_seq) : sizeof(struct htp_opbatch_rsp), code;
    if (hd_fault(HD_F_RSP_SIZE, q->ordinal, -1, q->domain, -1, &code)) len = code < sizeof rsp ? code : sizeof rsp;
    struct dspqueue_buffer db = b->pkt->bufs ? b->pkt->bufs[0] : (struct dspqueue_buffer) { 0 };
    db.flags = DSPQUEUE_BUFFER_FLAG_FLUSH_SENDER | DSPQUEUE_BUFFER_FLAG_INVALIDATE_RECIPIENT;
    if (b->pkt->nbuf) cache_dsp_answers(&db);
    struct hd_packet *p = packet_new(0, b->pkt->nbuf ? 1 : 0, &db, len, (const uint8_t *) &rsp);
    if (!p) { hd_violation("batch q%d: out of memory for the response", q->ordinal); return; }
    p->batch_id = b->req.id;
    p->tracked = !b->pkt->bad && b->pkt->tracked;
    while (q->live && !q->stop && q->rsp.used + p->cost > q->rsp.cap) pthread_cond_wait(&q->cv, &hd.mu);
    if (!q->live || q->stop) { packet_free(p); return; }
    p->reader_waiting = q->readers > 0;
    ring_push(&q->rsp, p);
    hd.st.dsp_wall_ns += p->t_queued - b->pkt->t_queued;
    pthread_cond_broadcast(&q->cv);
}

/* ---------------------------------------------------------------- MDEV_GROUP (fence protocol; NOT verified) */

/* A multi-NSP group batch (the double's convention, README "MDEV_GROUP"): op 0 is MDEV_GROUP with src[0] a fence
 * tensor of `count` slots (ne[1]) and params[0] this member's index. Every member gets the same batch; each computes
 * every op into private copies of its outputs, all meet at a barrier, each writes its share of the output rows
 * (rows [rows*idx/count, rows*(idx+1)/count)), all meet again. Fence ops and ALLREDUCE run on member 0 alone
 * between two barriers. A barrier bumps the member's own slot (u32 seq @0) and waits for every slot to reach the
 * same generation; a failing member posts its status (@4) and jumps its seq ahead so the others stop too. */
struct group { uint8_t *slots; uint32_t stride, count, idx, gen; };

static uint32_t *gslot(const struct group *g, uint32_t k) { return (uint32_t *) (g->slots + (size_t) k * g->stride); }

static uint32_t group_barrier(struct group *g, uint32_t my_status) {
    uint32_t *mine = gslot(g, g->idx);
    if (__atomic_load_n(&mine[0], __ATOMIC_ACQUIRE) != g->gen) {
        pthread_mutex_lock(&hd.mu);
        hd_violation("MDEV_GROUP: slot %u moved under member %u (its index used by another member?)", g->idx, g->idx);
        pthread_mutex_unlock(&hd.mu);
        return HTP_STATUS_INVAL_PARAMS;
    }
    g->gen++;
    if (my_status != HTP_STATUS_OK) {
        __atomic_store_n(&mine[1], my_status, __ATOMIC_RELAXED);
        __atomic_store_n(&mine[0], g->gen + 0x40000000u, __ATOMIC_RELEASE);
        return my_status;
    }
    __atomic_store_n(&mine[0], g->gen, __ATOMIC_RELEASE);
    /* longer than a fence wait, which member 0 may be in while the others wait here */
    uint64_t deadline = hd_now_ns() + 4ull * hd.cfg.fence_timeout_us * 1000ull;
    for (uint32_t k = 0; k < g->count; k++)
        while ((int32_t) (__atomic_load_n(&gslot(g, k)[0], __ATOMIC_ACQUIRE) - g->gen) < 0) {
            if (hd_now_ns() > deadline) return HTP_STATUS_INTERNAL_ERR;
            sched_yield();
        }
    for (uint32_t k = 0; k < g->count; k++) {
        uint32_t st = __atomic_load_n(&gslot(g, k)[1], __ATOMIC_RELAXED);
        if (st > HTP_STATUS_OK) return st;
    }
    return HTP_STATUS_OK;
}

/* Starts a group from the MDEV_GROUP op; its status. */
static uint32_t group_start(struct group *g, const struct hd_op *o, const struct hd_tensor *f) {
    if (!f || f->d->type != HD_TYPE_I8 || !(f->d->flags & HD_FENCE_TENSOR_FENCE) || f->d->ne[0] < 8 || f->d->ne[1] < 2 ||
        o->params[0] < 0 || (uint32_t) o->params[0] >= f->d->ne[1])
        return HTP_STATUS_INVAL_PARAMS;
    g->slots = f->p; g->stride = f->d->nb[1]; g->count = f->d->ne[1]; g->idx = (uint32_t) o->params[0];
    uint32_t *mine = gslot(g, g->idx);
    g->gen = __atomic_load_n(&mine[0], __ATOMIC_ACQUIRE);
    __atomic_store_n(&mine[1], (uint32_t) HTP_STATUS_OK, __ATOMIC_RELAXED);
    return group_barrier(g, HTP_STATUS_OK);
}

/* Copies this member's share of t's rows from the private copy `from` to t's memory. */
static void group_write_share(const struct group *g, const struct hd_tensor *t, const uint8_t *from) {
    const struct htp_tensor *d = t->d;
    uint64_t rows = (uint64_t) d->ne[1] * d->ne[2] * d->ne[3], r0 = rows * g->idx / g->count,
             r1 = rows * (g->idx + 1) / g->count;
    uint32_t ts = hd_type_size(d->type);
    for (uint64_t r = r0; r < r1; r++) {
        uint64_t i1 = r % d->ne[1], i2 = r / d->ne[1] % d->ne[2], i3 = r / ((uint64_t) d->ne[1] * d->ne[2]);
        uint64_t off = i1 * d->nb[1] + i2 * d->nb[2] + i3 * d->nb[3];
        if (d->nb[0] == ts) memcpy(t->p + off, from + off, (size_t) d->ne[0] * ts);
        else
            for (uint64_t i0 = 0; i0 < d->ne[0]; i0++) memcpy(t->p + off + i0 * d->nb[0], from + off + i0 * d->nb[0], ts);
    }
}

static int group_solo_op(uint32_t opcode) {
    return opcode == HD_OP_FENCE || opcode == HD_OP_CPY_FENCE || opcode == HD_OP_ALLREDUCE || opcode == HD_OP_ALLREDUCE_ADD;
}

/* Runs op o of a group batch as member g->idx (see struct group). */
static uint32_t group_op(struct group *g, const struct hd_op *o, struct hd_tensor *const src[HD_FENCE_MAX_INPUTS],
                         struct hd_tensor *const dst[HTP_OP_MAX_OUTPUTS], int exec) {
    if (group_solo_op(o->opcode)) {
        uint32_t st = group_barrier(g, HTP_STATUS_OK);
        if (st == HTP_STATUS_OK && g->idx == 0 && exec) st = (uint32_t) hd_exec_op(o, src, dst);
        return group_barrier(g, st);
    }
    struct hd_tensor priv[HTP_OP_MAX_OUTPUTS], *pdst[HTP_OP_MAX_OUTPUTS] = { 0 };
    uint8_t *copy[HTP_OP_MAX_OUTPUTS] = { 0 };
    uint32_t st = HTP_STATUS_OK;
    for (int k = 0; k < HTP_OP_MAX_OUTPUTS && st == HTP_STATUS_OK; k++) {
        if (!dst[k]) continue;
        uint64_t ext = tensor_extent(dst[k]->d);
        if (ext == UINT64_MAX || !(copy[k] = malloc(ext ? ext : 1))) { st = HTP_STATUS_INTERNAL_ERR; break; }
        memcpy(copy[k], dst[k]->p, ext);
        priv[k] = (struct hd_tensor) { dst[k]->d, copy[k], 0 };
        pdst[k] = &priv[k];
    }
    if (st == HTP_STATUS_OK && exec) st = (uint32_t) hd_exec_op(o, src, pdst);
    st = group_barrier(g, st);
    if (st == HTP_STATUS_OK) {
        for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++)
            if (dst[k]) group_write_share(g, dst[k], copy[k]);
        pthread_mutex_lock(&hd.mu);
        hd.st.mdev_shares++;
        pthread_mutex_unlock(&hd.mu);
        st = group_barrier(g, HTP_STATUS_OK);
    }
    for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++) free(copy[k]);
    return st;
}

/* ---------------------------------------------------------------- kernel parameters (public d99724f blocks) */

/* d99724f's htp_unary_kernel_params (unary-ops.h): 15 u32, then fastdiv {mp, l} for ne01, ne02, ne01*ne02 and the
 * column tiles per row. The double checks what a shape and the session determine. */
enum { UKP_N_THREADS = 0, UKP_BCAST = 4, UKP_SRC0_ROW = 11, UKP_SRC1_ROW = 12, UKP_DST_ROW = 13, UKP_VTCM = 14,
       UKP_DIV_NE01 = 15, UKP_DIV_NE02 = 17, UKP_DIV_NE012 = 19 };

static int unary_kparams_op(uint32_t op) {
    switch (op) {
    case HTP_OP_CLAMP: case HTP_OP_NORM: case HTP_OP_RMS_NORM: case HTP_OP_RMS_NORM_MUL: case HTP_OP_SCALE:
    case HTP_OP_SQR: case HTP_OP_SQRT: case HTP_OP_UNARY_NEG: case HTP_OP_UNARY_EXP: case HTP_OP_UNARY_SIGMOID:
    case HTP_OP_UNARY_SILU: case HTP_OP_UNARY_GELU: case HTP_OP_UNARY_SOFTPLUS: case HTP_OP_UNARY_TANH:
    case HTP_OP_L2_NORM: case HTP_OP_TRI: return 1;
    default: return 0;
    }
}

/* The DSP's multiply-shift divisor of d (hexagon.md 9): l = ceil(log2 d), mp = 2^32 (2^l - d) / d + 1. */
static void fastdiv_of(uint32_t d, uint32_t out[2]) {
    uint32_t l = 0;
    while (l < 32 && (1ull << l) < d) l++;
    out[0] = d ? (uint32_t) (((1ull << 32) * ((1ull << l) - d)) / d + 1) : 0;
    out[1] = l;
}

static uint32_t align128(uint64_t n) { return (uint32_t) ((n + 127) / 128 * 128); }

/* Reports a wrong field of an op's kernel parameter block (a violation naming it) and fails the op. */
static uint32_t kparams_bad(uint32_t op_index, uint32_t opcode, const char *block, const char *field, uint32_t got,
                            uint32_t exp) {
    pthread_mutex_lock(&hd.mu);
    hd_violation("op #%u %s: kernel params %s = %u, want %u (%s)", op_index, hd_op_name(opcode), field, got, exp, block);
    pthread_mutex_unlock(&hd.mu);
    return HTP_STATUS_INVAL_PARAMS;
}

/* Checks a unary op's kernel parameter block; HTP_STATUS_OK, or INVAL_PARAMS with a violation naming the field. */
static uint32_t check_unary_kparams(const struct hd_op *o, struct hd_tensor *const src[], struct hd_tensor *const dst[],
                                    const struct hd_handle *h, uint32_t op_index) {
    if (!hd.cfg.kparams || !unary_kparams_op(o->opcode) || !src[0] || !dst[0] || !h) return HTP_STATUS_OK;
    const struct htp_tensor *s0 = src[0]->d, *d = dst[0]->d;
    const uint32_t *k = (const uint32_t *) o->kernel_params;
    uint32_t rows = s0->ne[1] * s0->ne[2] * s0->ne[3];
    uint32_t want[24] = { 0 }, mask[24] = { 0 };
    want[UKP_N_THREADS] = h->n_hvx < rows ? h->n_hvx : rows; mask[UKP_N_THREADS] = 1;
    want[UKP_SRC0_ROW] = align128((uint64_t) s0->ne[0] * 4); mask[UKP_SRC0_ROW] = 1;
    want[UKP_DST_ROW] = align128((uint64_t) d->ne[0] * 4); mask[UKP_DST_ROW] = 1;
    mask[UKP_SRC1_ROW] = mask[UKP_BCAST] = 1;
    if (o->opcode == HTP_OP_RMS_NORM_MUL && src[1]) {
        want[UKP_SRC1_ROW] = align128((uint64_t) src[1]->d->ne[0] * 4);
        want[UKP_BCAST] = src[1]->d->ne[1] * src[1]->d->ne[2] * src[1]->d->ne[3] == 1;
    }
    fastdiv_of(s0->ne[1], &want[UKP_DIV_NE01]);
    fastdiv_of(s0->ne[2], &want[UKP_DIV_NE02]);
    fastdiv_of(s0->ne[1] * s0->ne[2], &want[UKP_DIV_NE012]);
    for (int i = UKP_DIV_NE01; i < UKP_DIV_NE012 + 2; i++) mask[i] = 1;
    static const char *const names[24] = { [UKP_N_THREADS] = "n_threads", [UKP_BCAST] = "broadcast_weight",
        [UKP_SRC0_ROW] = "src0_row_size_aligned", [UKP_SRC1_ROW] = "src1_row_size_aligned",
        [UKP_DST_ROW] = "dst_row_size_aligned", [UKP_DIV_NE01] = "div_ne01.mp", [UKP_DIV_NE01 + 1] = "div_ne01.l",
        [UKP_DIV_NE02] = "div_ne02.mp", [UKP_DIV_NE02 + 1] = "div_ne02.l", [UKP_DIV_NE012] = "div_ne012.mp",
        [UKP_DIV_NE012 + 1] = "div_ne012.l" };
    const char *bad = NULL;
    uint32_t got = 0, exp = 0;
    for (int i = 0; i < 24 && !bad; i++)
        if (mask[i] && k[i] != want[i]) { bad = names[i]; got = k[i]; exp = want[i]; }
    if (!bad && k[UKP_VTCM] > h->vtcm) { bad = "vtcm_size (past the session's VTCM)"; got = k[UKP_VTCM]; exp = (uint32_t) h->vtcm; }
    if (!bad) return HTP_STATUS_OK;
    return kparams_bad(op_index, o->opcode, "htp_unary_kernel_params", bad, got, exp);
}

/* d99724f's htp_fa_kernel_params (flash-attn-ops.h): u8 kernel_type, is_q_fp32, is_dst_fp32, n_threads @0; u16 Br,
 * Bc, n_kv_blocks, G @4; f32 scale, max_bias, logit_softcap @12; u32 vtcm_size @24, qrows @28, qrows_per_thread @32;
 * f32 m0, m1 @36; u32 n_head_log2 @44; fastdiv src3_div2 @48, src3_div3 @56, broadcast_rk2 @64, rk3 @72, rv2 @80,
 * rv3 @88; the HMX/HVX union @96. Checked: what the shapes, types and session fix for either kernel. */
static uint32_t check_fa_kparams(const struct hd_op *o, struct hd_tensor *const src[], struct hd_tensor *const dst[],
                                 const struct hd_handle *h, uint32_t op_index) {
    if (!hd.cfg.kparams || o->opcode != HTP_OP_FLASH_ATTN_EXT || !src[0] || !src[1] || !src[2] || !dst[0] || !h)
        return HTP_STATUS_OK;
    const uint8_t *k = (const uint8_t *) o->kernel_params;
    const struct htp_tensor *q = src[0]->d, *kk = src[1]->d, *v = src[2]->d;
    uint16_t Bc, nkv, G;
    uint32_t vtcm, qrows, div[2], want[2];
    memcpy(&Bc, k + 6, 2); memcpy(&nkv, k + 8, 2); memcpy(&G, k + 10, 2);
    memcpy(&vtcm, k + 24, 4); memcpy(&qrows, k + 28, 4); memcpy(div, k + 64, 8);
    fastdiv_of(kk->ne[2] ? q->ne[2] / kk->ne[2] : 0, want);
    const char *bad = NULL;
    uint32_t got = 0, exp = 0;
#define FA_WANT(name, g, e) if (!bad && (uint32_t) (g) != (uint32_t) (e)) { bad = name; got = (uint32_t) (g); exp = (uint32_t) (e); }
    if (k[0] != 1 && k[0] != 2) { bad = "kernel_type (1 HVX or 2 HMX)"; got = k[0]; exp = 1; }
    FA_WANT("is_q_fp32", k[1], q->type == HTP_TYPE_F32);
    FA_WANT("is_dst_fp32", k[2], dst[0]->d->type == HTP_TYPE_F32);
    FA_WANT("G", G, kk->ne[2] ? q->ne[2] / kk->ne[2] : 0);
    FA_WANT("n_kv_blocks", nkv, Bc ? (kk->ne[1] + Bc - 1) / Bc : 0);
    FA_WANT("broadcast_rk2.mp", div[0], want[0]);
    FA_WANT("broadcast_rk2.l", div[1], want[1]);
    if (k[0] == 1) FA_WANT("qrows", qrows, q->ne[1] * q->ne[2] * q->ne[3]);
#undef FA_WANT
    if (!bad && (k[3] == 0 || k[3] > h->n_hvx)) { bad = "n_threads"; got = k[3]; exp = h->n_hvx; }
    if (!bad && vtcm > h->vtcm) { bad = "vtcm_size (past the session's VTCM)"; got = vtcm; exp = (uint32_t) h->vtcm; }
    (void) v;
    if (!bad) return HTP_STATUS_OK;
    return kparams_bad(op_index, o->opcode, "htp_fa_kernel_params", bad, got, exp);
}

/* d99724f's htp_mm_kernel_params (matmul-ops.h): 17 i32 - kernel_type @0, pipeline, m_chunk, n_chunk, n_threads,
 * n_act_threads, n_hmx @24, n_prefetch @28, tile_size @32, aligned_tile_size @36, src1_row_size @40, vtcm_size @44,
 * vtcm_src0..3_size @48..60, vtcm_dst_size @64 - then fastdiv div_ne12_ne1 @68, div_ne1 @76, div_r2 @84, div_r3 @92,
 * div_ne11 @100, div_n_act_threads @108, div_ne00_padded @116. Kernels (htp_mm_kernel_type): 1 HMX_2D, 2
 * HMX_F16_BATCHED, 3 HVX_F16_F16_VTCM, 4 F16_F16_DDR, 5 F16_F32_DDR, 6 F32_F32_VTCM, 7 F32_F32_DDR, 8 F32_F16_DDR, 9
 * QUANT_ROW, 10 QUANT_BLOCK, 11 QUANT_ROW_FLAT. Checked for the HVX kernels: that the kernel suits the weight type,
 * the block-parallel choice, the tile sizes, the activation row the kernel reads, the VTCM the activation takes and
 * that the areas add up within the session's VTCM, a power-of-two prefetch depth, the divisors of the shapes. For
 * the HMX kernels (only with HMX units started): a float or repacked weight, 32-multiple chunks, all threads, the
 * activation threads and their divisor, the padded K's divisor, the Q8 activation row, no HVX areas, the VTCM bound. */
enum { MKP_KERNEL = 0, MKP_N_HMX = 6, MKP_PREFETCH = 7, MKP_TILE = 8, MKP_ATILE = 9, MKP_SRC1_ROW = 10, MKP_VTCM = 11,
       MKP_VSRC0 = 12, MKP_VSRC1 = 13, MKP_VSRC2 = 14, MKP_VSRC3 = 15, MKP_VDST = 16, MKP_DIV_NE12_NE1 = 17,
       MKP_DIV_NE1 = 19, MKP_DIV_R2 = 21, MKP_DIV_R3 = 23, MKP_DIV_NE11 = 25, MKP_DIV_ACT = 27, MKP_DIV_NE00P = 29,
       MKP_WORDS = 31, MKP_PIPELINE = 1, MKP_M_CHUNK = 2, MKP_N_CHUNK = 3, MKP_N_THREADS = 4, MKP_N_ACT = 5 };

static uint64_t up(uint64_t n, uint64_t m) { return (n + m - 1) / m * m; }

/* A weight type's tile bytes in DDR and its 128-padded size in VTCM (hexagon.md 10); 0 for an untiled type. */
static void mm_tile(uint32_t type, uint32_t *size, uint32_t *aligned) {
    switch (type) {
    case HTP_TYPE_Q4_0: case HTP_TYPE_Q4_0_TILED: case HTP_TYPE_IQ4_NL: *size = 576; *aligned = 640; return;
    case HTP_TYPE_Q4_1: case HTP_TYPE_Q4_1_TILED: *size = 640; *aligned = 640; return;
    case HTP_TYPE_Q8_0: case HTP_TYPE_Q8_0_TILED: *size = 1088; *aligned = 1152; return;
    case HTP_TYPE_MXFP4: case HTP_TYPE_MXFP4_TILED: *size = 544; *aligned = 640; return;
    default: *size = *aligned = 0;
    }
}

static uint32_t check_mm_kparams(const struct hd_op *o, struct hd_tensor *const src[], struct hd_tensor *const dst[],
                                 const struct hd_handle *h, uint32_t op_index) {
    if (!hd.cfg.kparams || !src[0] || !src[1] || !dst[0] || !h ||
        (o->opcode != HTP_OP_MUL_MAT && o->opcode != HTP_OP_MUL_MAT_ID && o->opcode != HTP_OP_MUL_MAT_ADD))
        return HTP_STATUS_OK;
    const uint32_t *k = (const uint32_t *) o->kernel_params;
    const struct htp_tensor *w = src[0]->d, *x = src[1]->d;
    const int quant = w->type != HTP_TYPE_F16 && w->type != HTP_TYPE_F32, id = o->opcode == HTP_OP_MUL_MAT_ID;
    const uint64_t rows = (uint64_t) x->ne[1] * x->ne[2] * x->ne[3], ne10 = x->ne[0];
    uint32_t want[MKP_WORDS] = { 0 }, mask[MKP_WORDS] = { 0 };
    const char *bad = NULL;
    uint32_t got = 0, exp = 0, kt = k[MKP_KERNEL];
    const int hmx = kt == 1 || kt == 2;
    uint32_t tile = 0, atile = 0;
    mm_tile(w->type, &tile, &atile);
    int ok_kernel = quant ? (kt == 9 || kt == 10 || (kt == 11 && !id)) : w->type == HTP_TYPE_F16 ? (kt >= 3 && kt <= 5)
                                                                                                 : (kt >= 6 && kt <= 8);
    if (hmx) ok_kernel = h->n_hmx > 0 && (!quant || tile) && w->ne[0] % 32 == 0;
    if (!ok_kernel) { bad = "kernel_type (a kernel for the weight type and the units)"; got = kt; exp = quant ? 9 : w->type ? 3 : 6; }
    if (!bad && quant && !hmx && kt != 11) { want[MKP_KERNEL] = rows < h->n_hvx ? 10 : 9; mask[MKP_KERNEL] = 1; }
    want[MKP_N_HMX] = hmx; mask[MKP_N_HMX] = 1;
    if (quant) { want[MKP_TILE] = tile; want[MKP_ATILE] = atile; }
    mask[MKP_TILE] = mask[MKP_ATILE] = 1;
    if (hmx) {
        want[MKP_N_THREADS] = h->n_hvx; mask[MKP_N_THREADS] = 1;
        mask[MKP_PREFETCH] = mask[MKP_VSRC0] = mask[MKP_VSRC2] = mask[MKP_VSRC3] = mask[MKP_VDST] = 1;
        fastdiv_of(k[MKP_N_ACT], &want[MKP_DIV_ACT]);
        fastdiv_of((uint32_t) up(w->ne[0], quant ? 32 : 1), &want[MKP_DIV_NE00P]);
        for (int i = MKP_DIV_ACT; i < MKP_WORDS; i++) mask[i] = 1;
        if (!bad && (k[MKP_N_ACT] == 0 || k[MKP_N_ACT] > h->n_hvx)) { bad = "n_act_threads"; got = k[MKP_N_ACT]; exp = h->n_hvx; }
        if (!bad && (k[MKP_M_CHUNK] == 0 || k[MKP_M_CHUNK] % 32 || k[MKP_N_CHUNK] == 0 || k[MKP_N_CHUNK] % 32)) {
            bad = "m_chunk/n_chunk (multiples of 32)"; got = k[MKP_M_CHUNK]; exp = 32;
        }
        if (!bad && k[MKP_PIPELINE] > 1) { bad = "pipeline"; got = k[MKP_PIPELINE]; exp = 1; }
    } else {
        /* the snapshot leaves the HMX fields of an HVX block zero */
        mask[MKP_PIPELINE] = mask[MKP_M_CHUNK] = mask[MKP_N_CHUNK] = mask[MKP_N_THREADS] = mask[MKP_N_ACT] = 1;
    }
    /* the activation row each kernel reads, and the VTCM the whole activation takes where it is kept there */
    uint64_t act = 0, vsrc1 = 0;
    const int q81 = w->type == HTP_TYPE_Q4_1 || w->type == HTP_TYPE_Q4_1_TILED;
    switch (kt) {
    case 3: act = up(ne10 * 2, 128); vsrc1 = up(act * rows, 256); break;
    case 6: act = up(ne10 * 4, 128); vsrc1 = up(act * rows, 256); break;
    case 4: case 5: case 7: case 8: act = x->nb[1]; vsrc1 = up(k[MKP_PREFETCH] * act, 256) * h->n_hvx; break;
    case 9: case 10: act = up(ne10, 128) / 32 * (q81 ? 1280 : 1152); vsrc1 = up(act * rows, 256); break;
    case 1: case 2: act = up(ne10, 128) / 32 * (q81 ? 1280 : 1152); break; /* HMX keeps its areas to itself */
    case 11: act = up(ne10, 128) + up((ne10 + 31) / 32 * (q81 ? 4 : 2), 128); vsrc1 = up(act * rows, 256); break;
    }
    want[MKP_SRC1_ROW] = (uint32_t) act; want[MKP_VSRC1] = (uint32_t) vsrc1;
    mask[MKP_SRC1_ROW] = mask[MKP_VSRC1] = 1;
    fastdiv_of(x->ne[2] * x->ne[1], &want[MKP_DIV_NE12_NE1]);
    fastdiv_of(x->ne[1], &want[MKP_DIV_NE1]);
    fastdiv_of(w->ne[2] ? x->ne[2] / w->ne[2] : 1, &want[MKP_DIV_R2]);
    fastdiv_of(w->ne[3] ? x->ne[3] / w->ne[3] : 1, &want[MKP_DIV_R3]);
    fastdiv_of(x->ne[1], &want[MKP_DIV_NE11]);
    for (int i = MKP_DIV_NE12_NE1; i < MKP_WORDS; i++) mask[i] = 1;
    static const char *const names[MKP_WORDS] = { [MKP_KERNEL] = "kernel_type (block- or row-parallel)",
        [MKP_N_HMX] = "n_hmx", [MKP_TILE] = "tile_size", [MKP_ATILE] = "aligned_tile_size",
        [MKP_SRC1_ROW] = "src1_row_size", [MKP_VSRC1] = "vtcm_src1_size", [MKP_DIV_NE12_NE1] = "div_ne12_ne1.mp",
        [MKP_DIV_NE12_NE1 + 1] = "div_ne12_ne1.l", [MKP_DIV_NE1] = "div_ne1.mp", [MKP_DIV_NE1 + 1] = "div_ne1.l",
        [MKP_DIV_R2] = "div_r2.mp", [MKP_DIV_R2 + 1] = "div_r2.l", [MKP_DIV_R3] = "div_r3.mp",
        [MKP_DIV_R3 + 1] = "div_r3.l", [MKP_DIV_NE11] = "div_ne11.mp", [MKP_DIV_NE11 + 1] = "div_ne11.l",
        [MKP_N_THREADS] = "n_threads", [MKP_PIPELINE] = "pipeline", [MKP_M_CHUNK] = "m_chunk",
        [MKP_N_CHUNK] = "n_chunk", [MKP_N_ACT] = "n_act_threads", [MKP_PREFETCH] = "n_prefetch", [MKP_VSRC0] = "vtcm_src0_size",
        [MKP_VSRC2] = "vtcm_src2_size", [MKP_VSRC3] = "vtcm_src3_size", [MKP_VDST] = "vtcm_dst_size",
        [MKP_DIV_ACT] = "div_n_act_threads.mp", [MKP_DIV_ACT + 1] = "div_n_act_threads.l",
        [MKP_DIV_NE00P] = "div_ne00_padded.mp", [MKP_DIV_NE00P + 1] = "div_ne00_padded.l" };
    for (int i = 0; i < MKP_WORDS && !bad; i++)
        if (mask[i] && k[i] != want[i]) { bad = names[i]; got = k[i]; exp = want[i]; }
    uint32_t d = k[MKP_PREFETCH];
    if (!bad && hmx && (k[MKP_VTCM] == 0 || k[MKP_VTCM] > h->vtcm)) {
        bad = "vtcm_size (within the session's VTCM)"; got = k[MKP_VTCM]; exp = (uint32_t) h->vtcm;
    }
    if (!bad && !hmx && (d < 2 || d > 16 || (d & (d - 1)))) { bad = "n_prefetch (2, 4, 8 or 16)"; got = d; exp = 16; }
    /* MUL_MAT_ADD's addend row is counted in the total, not in vtcm_src2_size */
    uint64_t src2 = o->opcode == HTP_OP_MUL_MAT_ADD && src[2] ? up(src[2]->d->nb[1], 128) : 0;
    uint64_t sum = (uint64_t) k[MKP_VSRC0] + k[MKP_VSRC1] + k[MKP_VSRC2] + k[MKP_VSRC3] + k[MKP_VDST] + src2;
    if (!bad && !hmx && k[MKP_VTCM] != sum) { bad = "vtcm_size (the sum of the areas)"; got = k[MKP_VTCM]; exp = (uint32_t) sum; }
    /* the VTCM kernels and the tiled quantized ones are chosen only when their plan fits; MUL_MAT_ID, the flat and the
     * DDR kernels have no smaller fallback and may plan past it */
    if (!bad && !id && (kt == 3 || kt == 6 || kt == 9 || kt == 10) && k[MKP_VTCM] > h->vtcm) {
        bad = "vtcm_size (past the session's VTCM)"; got = k[MKP_VTCM]; exp = (uint32_t) h->vtcm;
    }
    if (!bad) return HTP_STATUS_OK;
    return kparams_bad(op_index, o->opcode, "htp_mm_kernel_params", bad, got, exp);
}

/* ---------------------------------------------------------------- the DSP's cache within a batch
 * d99724f's DSP (htp-tensor.c, main.c) cleans its whole cache at the start and end of a batch; in between an op's
 * outputs stay in the DSP's write-back cache (a dirty range) while its kernels read inputs by DMA from DDR. Before an
 * op, the DSP flushes the dirty ranges of the inputs flagged HTP_TENSOR_COMPUTE ("compute data, not weights");
 * an input without the flag that an earlier op of the batch wrote is read stale. The double keeps the current bytes
 * in memory and, per dirty range, what DDR still holds; an unflagged dirty input is shown its DDR bytes during the
 * op. Under protocol=qdev/fence the flag's place is taken by "not WEIGHT" (their bit 0 is WEIGHT): how those DSP
 * libraries decide is not public, the double assumes they flush every non-weight input. */
struct dirty { uint8_t *p; size_t n; uint8_t *ddr; };
struct l2 { struct dirty *r; size_t n, cap; };

static int overlaps(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) { return a < b + bn && b < a + an; }

static int l2_push(struct l2 *c, uint8_t *p, size_t n, const uint8_t *ddr) {
    if (!n) return 1;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct dirty *r = realloc(c->r, cap * sizeof *r);
        if (!r) return 0;
        c->r = r; c->cap = cap;
    }
    uint8_t *d = malloc(n);
    if (!d) return 0;
    memcpy(d, ddr, n);
    c->r[c->n++] = (struct dirty) { p, n, d };
    return 1;
}

/* Drops [p, p+n) from the dirty ranges (their bytes there are now in DDR), keeping the parts outside it. */
static int l2_clean(struct l2 *c, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < c->n;) {
        struct dirty r = c->r[i];
        if (!overlaps(r.p, r.n, p, n)) { i++; continue; }
        c->r[i] = c->r[--c->n];
        int ok = 1;
        if (r.p < p) ok &= l2_push(c, r.p, (size_t) (p - r.p), r.ddr);
        if (r.p + r.n > p + n) ok &= l2_push(c, (uint8_t *) p + n, (size_t) (r.p + r.n - (p + n)), r.ddr + (p + n - r.p));
        free(r.ddr);
        if (!ok) return 0;
    }
    return 1;
}

static int l2_dirty(struct l2 *c, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < c->n; i++)
        if (overlaps(c->r[i].p, c->r[i].n, p, n)) return 1;
    return 0;
}

/* An op's output: the range becomes dirty, DDR keeping what it held before the op. */
static int l2_write(struct l2 *c, uint8_t *p, size_t n) {
    uint8_t *ddr = malloc(n ? n : 1);
    if (!ddr) return 0;
    memcpy(ddr, p, n);
    for (size_t i = 0; i < c->n; i++) {
        struct dirty *r = &c->r[i];
        if (!overlaps(r->p, r->n, p, n)) continue;
        uint8_t *lo = r->p > p ? r->p : p, *hi = r->p + r->n < p + n ? r->p + r->n : p + n;
        memcpy(ddr + (lo - p), r->ddr + (lo - r->p), (size_t) (hi - lo));
    }
    int ok = l2_clean(c, p, n) && l2_push(c, p, n, ddr);
    free(ddr);
    return ok;
}

/* Swaps memory and DDR over [p, p+n): called before and after an op that reads the range stale. */
static void l2_swap(struct l2 *c, uint8_t *p, size_t n) {
    for (size_t i = 0; i < c->n; i++) {
        struct dirty *r = &c->r[i];
        if (!overlaps(r->p, r->n, p, n)) continue;
        uint8_t *lo = r->p > p ? r->p : p, *hi = r->p + r->n < p + n ? r->p + r->n : p + n;
        for (uint8_t *m = lo, *d = r->ddr + (lo - r->p); m < hi; m++, d++) { uint8_t t = *m; *m = *d; *d = t; }
    }
}

static void l2_free(struct l2 *c) {
    for (size_t i = 0; i < c->n; i++) free(c->r[i].ddr);
    free(c->r);
    c->r = NULL; c->n = c->cap = 0;
}

static int flushed_input(const struct htp_tensor *t) {
    return hd.cfg.protocol == HD_PROTO_PUBLIC ? (t->flags & HTP_TENSOR_COMPUTE) != 0 : !(t->flags & HD_FENCE_TENSOR_WEIGHT);
}

/* Before op i: flushes its flagged dirty inputs, marks its outputs dirty and returns in stale[] the inputs read
 * from DDR (swapped in; swap them back after the op). 0 when out of memory. */
static int l2_before_op(struct l2 *c, uint32_t i, uint32_t opcode, struct hd_tensor *const src[], struct hd_tensor *const dst[],
                        int stale[HD_FENCE_MAX_INPUTS], int *n_stale) {
    *n_stale = 0;
    for (int s = 0; s < HD_FENCE_MAX_INPUTS; s++) {
        if (!src[s] || !l2_dirty(c, src[s]->p, src[s]->d->size)) continue;
        if (flushed_input(src[s]->d)) {
            if (!l2_clean(c, src[s]->p, src[s]->d->size)) return 0;
            continue;
        }
        int in_place = 0;
        for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++)
            if (dst[k] && overlaps(dst[k]->p, dst[k]->d->size, src[s]->p, src[s]->d->size)) in_place = 1;
        if (in_place) continue;
        stale[(*n_stale)++] = s;
        pthread_mutex_lock(&hd.mu);
        hd_log("op #%u %s: src[%d] (tensor %u, flags 0x%x) was written by an earlier op of the batch and is not "
               "flagged for a flush: read stale from DDR", i, hd_op_name(opcode), s, src[s]->d->ti, src[s]->d->flags);
        pthread_mutex_unlock(&hd.mu);
    }
    for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++)
        if (dst[k] && !l2_write(c, dst[k]->p, dst[k]->d->size)) return 0;
    for (int j = 0; j < *n_stale; j++) l2_swap(c, src[stale[j]]->p, src[stale[j]]->d->size);
    return 1;
}

/* Executes a validated batch with hd.mu released; the blocks stay pinned so a host that frees them meanwhile is
 * reported instead of crashing the thread. Returns the batch status. */
static uint32_t execute(struct batch *b, uint32_t prof_mode) {
    const struct htp_opbatch_req *r = &b->req;
    struct hd_tensor *views = calloc(r->n_tensors ? r->n_tensors : 1, sizeof *views);
    struct htp_tensor *tcopy = malloc(sizeof *tcopy * (r->n_tensors ? r->n_tensors : 1));
    const struct hd_op *ocopy = b->ops;
    if (!views || !tcopy) { free(views); free(tcopy); return HTP_STATUS_INTERNAL_ERR; }
    memcpy(tcopy, b->tens, sizeof *tcopy * r->n_tensors);
    for (uint32_t i = 0; i < r->n_tensors; i++) {
        views[i].d = &tcopy[i];
        views[i].p = (uint8_t *) b->blk[tcopy[i].bi]->base + tcopy[i].data;
        views[i].gen = b->blk[tcopy[i].bi]->gen;
    }
    for (uint32_t i = 0; i < r->n_bufs; i++) b->blk[i]->pins++;
    b->dblk->pins++;
    if (hd.cfg.rewrite) {
        /* what the real DSP does to the descriptors in place: its own VAs */
        for (uint32_t i = 0; i < r->n_bufs; i++) b->bufs[i].base = 0xc0000000u + (uint64_t) i * 0x04000000u;
        for (uint32_t i = 0; i < r->n_tensors; i++)
            b->tens[i].data = (uint32_t) (b->bufs[tcopy[i].bi].base + tcopy[i].data);
    }
    int do_exec = hd.cfg.exec, use_cache = hd.cfg.cache;
    struct l2 cache = { 0 };
    struct dspqueue *q = b->q;
    pthread_mutex_unlock(&hd.mu);

    uint32_t status = HTP_STATUS_OK;
    uint64_t t_exec = 0;
    uint64_t counts[HD_OP_COUNT] = { 0 };
    uint32_t failed_op = UINT32_MAX;
    struct group grp;
    int grouped = 0;
    for (uint32_t i = 0; i < r->n_ops && status == HTP_STATUS_OK; i++) {
        const struct hd_op *o = &ocopy[i];
        struct hd_tensor *src[HD_FENCE_MAX_INPUTS], *dst[HTP_OP_MAX_OUTPUTS];
        for (int s = 0; s < HD_FENCE_MAX_INPUTS; s++) src[s] = o->src[s] == HTP_NO_TENSOR ? NULL : &views[o->src[s]];
        for (int s = 0; s < HTP_OP_MAX_OUTPUTS; s++) dst[s] = o->dst[s] == HTP_NO_TENSOR ? NULL : &views[o->dst[s]];
        uint32_t code;
        pthread_mutex_lock(&hd.mu);
        int injected = hd_fault(HD_F_OP, q->ordinal, -1, q->domain, (int) o->wire_opcode, &code);
        pthread_mutex_unlock(&hd.mu);
        int stale[HD_FENCE_MAX_INPUTS], n_stale = 0;
        if (use_cache && !l2_before_op(&cache, i, o->opcode, src, dst, stale, &n_stale)) {
            status = HTP_STATUS_INTERNAL_ERR;
            break;
        }
        uint64_t t0 = hd_now_ns();
        int exec = do_exec && !(o->flags & HTP_OPFLAGS_SKIP_COMPUTE);
        if (!injected && ((status = check_unary_kparams(o, src, dst, b->h, i)) != HTP_STATUS_OK ||
                          (status = check_fa_kparams(o, src, dst, b->h, i)) != HTP_STATUS_OK ||
                          (status = check_mm_kparams(o, src, dst, b->h, i)) != HTP_STATUS_OK)) {
            if (grouped) group_barrier(&grp, status);
        } else if (injected) status = grouped ? group_barrier(&grp, code) : code;
        else if (o->opcode == HD_OP_MDEV_GROUP) {
            if (i != 0 || grouped) status = HTP_STATUS_INVAL_PARAMS;
            else if ((status = group_start(&grp, o, src[0])) == HTP_STATUS_OK) grouped = 1;
        } else if (grouped) status = group_op(&grp, o, src, dst, exec);
        else if (exec) status = (uint32_t) hd_exec_op(o, src, dst);
        uint64_t dt = hd_now_ns() - t0;
        for (int j = 0; j < n_stale; j++) l2_swap(&cache, src[stale[j]]->p, src[stale[j]]->d->size);
        t_exec += dt;
        counts[o->opcode] += status == HTP_STATUS_OK;
        if (status != HTP_STATUS_OK) failed_op = i;
        if (prof_mode) {
            struct htp_prof_desc *pd = &b->profs[i];
            memset(pd, 0, sizeof *pd);
            pd->opcode = o->wire_opcode;
            pd->usecs = (uint32_t) (dt / 1000);
            pd->cycles_start = (uint32_t) t0;
            pd->cycles_stop = (uint32_t) (t0 + dt);
        }
    }

    l2_free(&cache); /* the clean at the end of the batch */
    pthread_mutex_lock(&hd.mu);
    for (uint32_t i = 0; i < r->n_bufs; i++) hd_block_unpin(b->blk[i]);
    hd_block_unpin(b->dblk);
    hd.st.exec_ns += t_exec;
    for (uint32_t i = 0; i < HD_OP_COUNT; i++) { hd.st.op_count[i] += counts[i]; hd.st.ops += counts[i]; }
    if (hd.cfg.log_level >= 2)
        for (uint32_t i = 0; i < r->n_ops; i++)
            hd_logv(2, "  op #%u %s src %d %d %d %d %d %d dst %d", i, hd_op_name(ocopy[i].opcode),
                    (int16_t) ocopy[i].src[0], (int16_t) ocopy[i].src[1], (int16_t) ocopy[i].src[2],
                    (int16_t) ocopy[i].src[3], (int16_t) ocopy[i].src[4], (int16_t) ocopy[i].src[5],
                    (int16_t) ocopy[i].dst[0]);
    if (failed_op != UINT32_MAX)
        hd_log("batch q%d id %u: op #%u %s -> status %u", q->ordinal, r->id, failed_op,
               hd_op_name(ocopy[failed_op].opcode), status);
    free(views); free(tcopy);
    return status;
}

/* fail.crash: the DSP process dies instead of answering this batch. Host calls on the queue then fail with
 * AEE_EBADSTATE ("queue is in bad-state", dspqueue.h), the error callback gets AEE_ENOSUCH (hexagon.md 6.5), and
 * invokes on the handle fail with AEE_ECONNRESET. */
static int crash(struct dspqueue *q, struct hd_handle *h) {
    uint32_t code;
    if (!hd_fault(HD_F_CRASH, q->ordinal, h ? h->ordinal : -1, q->domain, -1, &code)) return 0;
    q->dead = 1;
    if (h) h->dead = 1;
    hd_log("DSP process of q%d died (fail.crash), error callback %s", q->ordinal, q->error_cb ? "called" : "not set");
    pthread_cond_broadcast(&q->cv);
    dspqueue_callback_t cb = q->error_cb;
    void *ctx = q->cb_ctx;
    if (cb) {
        pthread_mutex_unlock(&hd.mu);
        cb(q, (int) code, ctx);
        pthread_mutex_lock(&hd.mu);
    }
    return 1;
}

static void process(struct dspqueue *q, struct hd_packet *pkt) {
    struct batch b = { .q = q, .pkt = pkt, .h = bound_handle(q) };
    if (q->dead || crash(q, b.h)) return;
    for (uint32_t i = 0; i < pkt->nbuf; i++) cache_dsp_receives(&pkt->bufs[i]);
    uint64_t t0 = hd_now_ns(), t_start = t0;
    int ok = validate(&b);
    hd.st.validate_ns += hd_now_ns() - t0;
    uint32_t status;
    if (!ok) {
        hd.st.batches_rejected++;
        if (hd.cfg.reject_hang) {
            hd_log("batch q%d id %u rejected: dropped without an answer (reject=hang)", q->ordinal, b.req.id);
            if (pkt->tracked) retire_batch(q, b.req.id);
            free(b.ops);
            return;
        }
        status = HTP_STATUS_INVAL_PARAMS;
    } else {
        uint64_t t1 = hd_now_ns();
        status = execute(&b, b.h ? b.h->prof_mode : 0);
        if (hd.cfg.delay_us) {
            uint32_t d = hd.cfg.delay_us;
            pthread_mutex_unlock(&hd.mu);
            usleep(d);
            pthread_mutex_lock(&hd.mu);
        }
        hd.st.batches++;
        t0 = t1;
    }
    hd_log("batch q%d id %u seq %" PRIu64 " bufs %u tensors %u ops %u -> status %u", q->ordinal, b.req.id, b.seq,
           b.req.n_bufs, b.req.n_tensors, b.req.n_ops, status);
    free(b.ops);
    uint64_t now = hd_now_ns();
    hd.st.dsp_busy_ns += now - t_start;
    respond(&b, status, (uint32_t) ((now - t0) / 1000));
}

static void *dsp_thread(void *arg) {
    struct dspqueue *q = arg;
    pthread_mutex_lock(&hd.mu);
    while (!q->stop) {
        struct hd_packet *p = ring_pop(&q->req);
        if (!p) { pthread_cond_wait(&q->cv, &hd.mu); continue; }
        pthread_cond_broadcast(&q->cv); /* space for blocked writers */
        process(q, p);
        packet_free(p);
        dspqueue_callback_t cb = q->packet_cb;
        void *ctx = q->cb_ctx;
        if (cb && !q->stop) {
            pthread_mutex_unlock(&hd.mu);
            cb(q, 0, ctx);
            pthread_mutex_lock(&hd.mu);
        }
    }
    pthread_mutex_unlock(&hd.mu);
    return NULL;
}

int hd_queue_start(struct dspqueue *q) {
    q->stop = 0;
    if (pthread_create(&q->thread, NULL, dsp_thread, q)) return AEE_ENOMEMORY;
    q->thread_live = 1;
    return 0;
}

void hd_queue_stop(struct dspqueue *q) {
    if (!q->thread_live) return;
    q->stop = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&hd.mu);
    pthread_join(q->thread, NULL);
    pthread_mutex_lock(&hd.mu);
    q->thread_live = 0;
    if (q->req.count) hd_log("htp_iface_stop(q%d): %u batches were never processed", q->ordinal, q->req.count);
}
