/*
 * The FastRPC side of the double: knobs, faults, log and counters; rpcmem over memfd; fastrpc_mmap; the control
 * calls; htp_iface handles and the methods decoded from remote_handle64_invoke.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "htpdouble.h"

struct hd_state hd = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* ---------------------------------------------------------------- log */

#define HD_LOG_CAP (16u << 20)
struct logbuf { char *p; size_t len, cap; };
static struct logbuf log_all, log_viol;
static uint64_t log_seq, log_dropped;
static FILE *log_file;

static void buf_append(struct logbuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > HD_LOG_CAP) { log_dropped++; return; }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) { log_dropped++; return; }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void buf_clear(struct logbuf *b) {
    b->len = 0;
    if (b->p) b->p[0] = 0;
}

static void log_line(int violation, const char *fmt, va_list ap) {
    char line[1024];
    int n = snprintf(line, sizeof line, "%" PRIu64 " %s", ++log_seq, violation ? "VIOLATION " : "");
    int m = vsnprintf(line + n, sizeof line - (size_t) n - 1, fmt, ap);
    size_t len = (size_t) n + (m < 0 ? 0 : (size_t) m);
    if (len > sizeof line - 2) len = sizeof line - 2;
    line[len++] = '\n';
    line[len] = 0;
    buf_append(&log_all, line, len);
    if (violation) buf_append(&log_viol, line, len);
    if (log_file) { fputs(line, log_file); fflush(log_file); }
}

void hd_log(const char *fmt, ...) {
    if (hd.cfg.log_level < 1) return;
    va_list ap; va_start(ap, fmt); log_line(0, fmt, ap); va_end(ap);
}

void hd_logv(int level, const char *fmt, ...) {
    if (hd.cfg.log_level < level) return;
    va_list ap; va_start(ap, fmt); log_line(0, fmt, ap); va_end(ap);
}

void hd_violation(const char *fmt, ...) {
    hd.st.violations++;
    va_list ap; va_start(ap, fmt); log_line(1, fmt, ap); va_end(ap);
}

uint64_t hd_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* ---------------------------------------------------------------- knobs and faults */

static const struct { const char *name; uint32_t code; } fault_points[HD_F_COUNT] = {
    [HD_F_RPCMEM_ALLOC] = { "rpcmem_alloc", 0 },
    [HD_F_MMAP] = { "fastrpc_mmap", AEE_ENOMEMORY },
    [HD_F_MUNMAP] = { "fastrpc_munmap", AEE_EBADPARM },
    [HD_F_OPEN] = { "open", AEE_ECONNREFUSED },
    [HD_F_CLOSE] = { "close", AEE_EFAILED },
    [HD_F_INVOKE] = { "invoke", AEE_EFAILED },
    [HD_F_IFACE_START] = { "iface.start", AEE_EFAILED },
    [HD_F_IFACE_STOP] = { "iface.stop", AEE_EFAILED },
    [HD_F_IFACE_MMAP] = { "iface.mmap", AEE_EFAILED },
    [HD_F_IFACE_MUNMAP] = { "iface.munmap", AEE_EFAILED },
    [HD_F_IFACE_PROFILER] = { "iface.profiler", AEE_EFAILED },
    [HD_F_IFACE_ETM] = { "iface.etm", AEE_EFAILED },
    [HD_F_IFACE_HWINFO] = { "iface.hwinfo", AEE_EFAILED },
    [HD_F_DSP_INFO] = { "dsp_info", AEE_EUNSUPPORTEDAPI },
    [HD_F_LATENCY] = { "latency", AEE_EBADPARM },
    [HD_F_SESSION_RESERVE] = { "session.reserve", AEE_ENOSESSION },
    [HD_F_SESSION_EFFECTIVE] = { "session.effective", AEE_EBADPARM },
    [HD_F_SESSION_UNSIGNED] = { "session.unsigned", AEE_EBADPARM },
    [HD_F_SESSION_URI] = { "session.uri", AEE_EBADSIZE },
    [HD_F_SYSREQ] = { "sysreq", AEE_EUNSUPPORTEDAPI },
    [HD_F_QUEUE_CREATE] = { "queue_create", AEE_ENOMEMORY },
    [HD_F_QUEUE_EXPORT] = { "queue_export", AEE_EBADPARM },
    [HD_F_QUEUE_CLOSE] = { "queue_close", AEE_ERPC },
    [HD_F_QUEUE_WRITE] = { "queue_write", AEE_EEXPIRED },
    [HD_F_QUEUE_READ] = { "queue_read", AEE_EEXPIRED },
    [HD_F_OP] = { "op", HTP_STATUS_INTERNAL_ERR },
    [HD_F_RSP_SIZE] = { "rsp_size", 80 },
    [HD_F_CRASH] = { "crash", AEE_ENOSUCH },
};

static void config_defaults(void) {
    hd.cfg = (struct hd_config) {
        .nodsp = 0, .arch = 73, .cores = 1, .sysreq = 0, .hw_threads = 6, .hw_hmx = 1, .vtcm = 8u << 20,
        .unsigned_required = 1, .dma64 = 1, .mem_limit = 8ull << 30, .map_limit = HD_DEFAULT_MAX_VMEM,
        .reject_hang = 0, .rewrite = 1, .cache = 1, .delay_us = 0, .exec = 1, .log_level = 1, .protocol = HD_PROTO_PUBLIC,
        .fence_timeout_us = 1000000, .kparams = 1, .math = HD_MATH_EMU, .ggml_extra = 1, .ggml_ulp = HD_OP_COUNT,
    };
    memset(hd.faults, 0, sizeof hd.faults);
}

int hd_fault(enum hd_fault_point p, int q_ordinal, int h_ordinal, int domain, int opcode, uint32_t *code) {
    struct hd_fault *f = &hd.faults[p];
    if (!f->set) return 0;
    switch (f->sel) {
    case 'q': if (q_ordinal != f->selv) return 0; break;
    case 'h': if (h_ordinal != f->selv) return 0; break;
    case 'd': if (domain != f->selv) return 0; break;
    case 'o': if (opcode != f->selv) return 0; break;
    default: break;
    }
    uint64_t n = ++f->seen;
    if (n < f->first || (f->count && n >= f->first + f->count)) return 0;
    *code = f->code;
    hd.st.faults_fired++;
    hd_log("FAULT %s call %" PRIu64 " -> 0x%x", fault_points[p].name, n, f->code);
    return 1;
}

static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    if (!*s) return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

/* N[xC][:CODE][@SEL] */
static int parse_fault(enum hd_fault_point p, const char *v) {
    struct hd_fault f = { .set = 1, .first = 1, .count = 1, .code = fault_points[p].code };
    if (!strcmp(v, "off")) { hd.faults[p] = (struct hd_fault) { 0 }; return 0; }
    char tmp[128];
    if (strlen(v) >= sizeof tmp) return -1;
    strcpy(tmp, v);
    char *sel = strchr(tmp, '@');
    if (sel) {
        *sel++ = 0;
        if (!strchr("qhdo", sel[0])) return -1;
        uint64_t sv;
        if (parse_u64(sel + 1, &sv)) return -1;
        f.sel = sel[0]; f.selv = (int64_t) sv;
    }
    char *code = strchr(tmp, ':');
    if (code) {
        *code++ = 0;
        uint64_t cv;
        if (parse_u64(code, &cv) || cv > 0xffffffffull) return -1;
        f.code = (uint32_t) cv;
    }
    char *cnt = strchr(tmp, 'x');
    if (cnt) {
        *cnt++ = 0;
        if (parse_u64(cnt, &f.count)) return -1;
    }
    if (parse_u64(tmp, &f.first) || f.first == 0) return -1;
    hd.faults[p] = f;
    return 0;
}

static int set_knob(const char *k, const char *v) {
    uint64_t u;
    if (!strncmp(k, "fail.", 5)) {
        for (int p = 0; p < HD_F_COUNT; p++)
            if (!strcmp(k + 5, fault_points[p].name)) return parse_fault((enum hd_fault_point) p, v);
        return -1;
    }
    if (!strcmp(k, "reject")) {
        if (!strcmp(v, "answer")) hd.cfg.reject_hang = 0;
        else if (!strcmp(v, "hang")) hd.cfg.reject_hang = 1;
        else return -1;
        return 0;
    }
    if (!strcmp(k, "protocol")) {
        if (!strcmp(v, "public")) hd.cfg.protocol = HD_PROTO_PUBLIC;
        else if (!strcmp(v, "qdev")) hd.cfg.protocol = HD_PROTO_QDEV;
        else if (!strcmp(v, "fence") || !strcmp(v, "seed")) hd.cfg.protocol = HD_PROTO_FENCE; /* "seed": the old spelling */
        else return -1;
        return 0;
    }
    if (!strcmp(k, "gelu")) {
        if (!strcmp(v, "quick")) hd.cfg.gelu_tanh = 0;
        else if (!strcmp(v, "tanh")) hd.cfg.gelu_tanh = 1;
        else return -1;
        return 0;
    }
    if (!strcmp(k, "math")) {
        if (!strcmp(v, "emu")) hd.cfg.math = HD_MATH_EMU;
        else if (!strcmp(v, "ggml")) hd.cfg.math = HD_MATH_GGML;
        else return -1;
        return 0;
    }
    if (!strcmp(k, "ggml_dir") || !strcmp(k, "ggml_cpu")) {
        char *dst = k[5] == 'd' ? hd.cfg.ggml_dir : hd.cfg.ggml_cpu;
        size_t cap = k[5] == 'd' ? sizeof hd.cfg.ggml_dir : sizeof hd.cfg.ggml_cpu;
        if (strlen(v) >= cap) return -1;
        strcpy(dst, v);
        return 0;
    }
    if (!strcmp(k, "ggml_ulp")) {
        for (uint32_t i = 0; i < HD_OP_COUNT; i++)
            if (!strcmp(v, hd_op_name(i))) { hd.cfg.ggml_ulp = i; return 0; }
        if (strcmp(v, "none")) return -1;
        hd.cfg.ggml_ulp = HD_OP_COUNT;
        return 0;
    }
    if (!strcmp(k, "sysreq")) {
        if (!strcmp(v, "list")) hd.cfg.sysreq = 0;
        else if (!strcmp(v, "unsupported")) hd.cfg.sysreq = 1;
        else if (!strcmp(v, "none")) hd.cfg.sysreq = 2;
        else return -1;
        return 0;
    }
    if (parse_u64(v, &u)) return -1;
    if (!strcmp(k, "nodsp")) hd.cfg.nodsp = u != 0;
    else if (!strcmp(k, "arch")) { if (u < 60 || u > 99) return -1; hd.cfg.arch = (int) u; }
    else if (!strcmp(k, "cores")) { if (u < 1 || u > 4) return -1; hd.cfg.cores = (int) u; }
    else if (!strcmp(k, "hw_threads")) { if (u < 1 || u > 64) return -1; hd.cfg.hw_threads = (uint32_t) u; }
    else if (!strcmp(k, "hw_hmx")) hd.cfg.hw_hmx = (uint32_t) u;
    else if (!strcmp(k, "vtcm")) hd.cfg.vtcm = u;
    else if (!strcmp(k, "unsigned_required")) hd.cfg.unsigned_required = u != 0;
    else if (!strcmp(k, "dma64")) hd.cfg.dma64 = u != 0;
    else if (!strcmp(k, "mem_limit")) hd.cfg.mem_limit = u;
    else if (!strcmp(k, "map_limit")) hd.cfg.map_limit = u;
    else if (!strcmp(k, "rewrite")) hd.cfg.rewrite = u != 0;
    else if (!strcmp(k, "cache")) hd.cfg.cache = u != 0;
    else if (!strcmp(k, "delay_us")) hd.cfg.delay_us = (uint32_t) u;
    else if (!strcmp(k, "exec")) hd.cfg.exec = u != 0;
    else if (!strcmp(k, "kparams")) { if (u > 1) return -1; hd.cfg.kparams = (int) u; }
    else if (!strcmp(k, "fence_timeout_us")) hd.cfg.fence_timeout_us = (uint32_t) u;
    else if (!strcmp(k, "log")) { if (u > 2) return -1; hd.cfg.log_level = (int) u; }
    else if (!strcmp(k, "ggml_extra")) { if (u > 1) return -1; hd.cfg.ggml_extra = (int) u; }
    else return -1;
    return 0;
}

static int configure_locked(const char *spec) {
    if (!spec) return AEE_EBADPARM;
    char *dup = strdup(spec);
    if (!dup) return AEE_ENOMEMORY;
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(dup, "; \t\r\n", &save); tok; tok = strtok_r(NULL, "; \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) { hd_log("configure: '%s' is not key=value", tok); rc = AEE_EBADPARM; continue; }
        *eq = 0;
        if (set_knob(tok, eq + 1)) { hd_log("configure: bad knob %s=%s", tok, eq + 1); rc = AEE_EBADPARM; continue; }
        hd_log("configure %s=%s", tok, eq + 1);
    }
    free(dup);
    return rc;
}

/* math=ggml loads the libraries when configured, so a wrong directory fails the configure call rather than the first
 * op. Called without hd.mu: the DSP thread takes ggml.c's lock before hd.mu. */
static int load_math(void) {
    pthread_mutex_lock(&hd.mu);
    int ggml = hd.cfg.math == HD_MATH_GGML;
    char dir[sizeof hd.cfg.ggml_dir], cpu[sizeof hd.cfg.ggml_cpu], err[1024];
    memcpy(dir, hd.cfg.ggml_dir, sizeof dir);
    memcpy(cpu, hd.cfg.ggml_cpu, sizeof cpu);
    pthread_mutex_unlock(&hd.mu);
    if (!ggml || !hd_ggml_load(dir, cpu, err, sizeof err)) return 0;
    pthread_mutex_lock(&hd.mu);
    hd_log("configure: math=ggml: %s", err);
    pthread_mutex_unlock(&hd.mu);
    return AEE_EBADPARM;
}

HD_EXPORT int htpdouble_configure(const char *spec) {
    pthread_mutex_lock(&hd.mu);
    int rc = configure_locked(spec);
    pthread_mutex_unlock(&hd.mu);
    int lrc = load_math();
    return rc ? rc : lrc;
}

HD_EXPORT void htpdouble_reset(void) {
    pthread_mutex_lock(&hd.mu);
    config_defaults();
    memset(&hd.st, 0, sizeof hd.st);
    buf_clear(&log_all);
    buf_clear(&log_viol);
    log_dropped = 0;
    hd.n_handles_opened = hd.n_queues_created = 0;
    /* session reservations and unsigned-module flags go too, except where live objects still use them */
    for (int phys = 0; phys < HD_NUM_DOMAINS; phys++)
        for (int sess = 0; sess < HD_NUM_SESSIONS; sess++) {
            int eff = phys + HD_NUM_DOMAINS * sess, used = 0;
            for (int i = 0; i < HD_MAX_HANDLES; i++) used |= hd.handles[i].live && hd.handles[i].domain == eff;
            for (int i = 0; i < HD_MAX_QUEUES; i++) used |= hd.queues[i] && hd.queues[i]->domain == eff;
            for (int i = 0; i < hd.n_maps; i++) used |= hd.maps[i].live && hd.maps[i].domain == eff;
            if (!used) { hd.reserved[phys][sess] = 0; hd.unsigned_on[eff] = 0; }
        }
    pthread_mutex_unlock(&hd.mu);
}

static size_t copy_out(const char *src, size_t len, char *buf, size_t cap) {
    if (buf && cap) {
        size_t n = len < cap - 1 ? len : cap - 1;
        if (n) memcpy(buf, src, n);
        buf[n] = 0;
    }
    return len;
}

HD_EXPORT size_t htpdouble_log(char *buf, size_t cap) {
    pthread_mutex_lock(&hd.mu);
    size_t n = copy_out(log_all.p, log_all.len, buf, cap);
    pthread_mutex_unlock(&hd.mu);
    return n;
}

HD_EXPORT void htpdouble_log_clear(void) {
    pthread_mutex_lock(&hd.mu);
    buf_clear(&log_all);
    buf_clear(&log_viol);
    pthread_mutex_unlock(&hd.mu);
}

HD_EXPORT size_t htpdouble_violations(char *buf, size_t cap) {
    pthread_mutex_lock(&hd.mu);
    size_t n = copy_out(log_viol.p, log_viol.len, buf, cap);
    pthread_mutex_unlock(&hd.mu);
    return n;
}

HD_EXPORT uint32_t htpdouble_variant(void) {
    uint32_t v = 0;
#ifndef HD_NO_ALLOC2
    v |= 1;
#endif
#ifndef HD_NO_SYSREQ
    v |= 2;
#endif
    return v;
}

HD_EXPORT uint64_t htpdouble_stat(const char *name) {
    if (!name) return UINT64_MAX;
    pthread_mutex_lock(&hd.mu);
    uint64_t v = UINT64_MAX;
    if (!strncmp(name, "op.", 3)) {
        for (uint32_t i = 0; i < HD_OP_COUNT; i++)
            if (i != HTP_OP_INVALID && !strcmp(name + 3, hd_op_name(i))) v = hd.st.op_count[i];
        pthread_mutex_unlock(&hd.mu);
        return v;
    }
    uint64_t n = 0, bytes = 0;
    if (!strcmp(name, "rpcmem_live") || !strcmp(name, "rpcmem_live_bytes")) {
        for (int i = 0; i < hd.n_blocks; i++)
            if (hd.blocks[i].live) { n++; bytes += hd.blocks[i].size; }
        v = name[11] ? bytes : n;
    } else if (!strcmp(name, "maps_live")) {
        for (int i = 0; i < hd.n_maps; i++) n += hd.maps[i].live != 0;
        v = n;
    } else if (!strcmp(name, "iface_maps_live")) {
        for (int i = 0; i < HD_MAX_IFACE_MAPS; i++) n += hd.imaps[i].live != 0;
        v = n;
    } else if (!strcmp(name, "handles_live") || !strcmp(name, "handles_started")) {
        for (int i = 0; i < HD_MAX_HANDLES; i++)
            n += name[8] == 'l' ? hd.handles[i].live != 0 : (hd.handles[i].live && hd.handles[i].started);
        v = n;
    } else if (!strcmp(name, "sessions_reserved")) {
        for (int d = 0; d < HD_NUM_DOMAINS; d++)
            for (int s = 1; s < HD_NUM_SESSIONS; s++) n += hd.reserved[d][s] != 0;
        v = n;
    } else if (!strcmp(name, "queues_live") || !strcmp(name, "dsp_threads_live")) {
        for (int i = 0; i < HD_MAX_QUEUES; i++)
            if (hd.queues[i] && hd.queues[i]->live) n += name[0] == 'q' ? 1 : hd.queues[i]->thread_live != 0;
        v = n;
    }
#define ST(f) else if (!strcmp(name, #f)) v = hd.st.f;
    ST(rpcmem_allocs) ST(rpcmem_frees) ST(batches) ST(batches_rejected) ST(ops) ST(exec_ns) ST(validate_ns)
    ST(violations) ST(mdev_shares) ST(faults_fired) ST(ggml_weights) ST(ggml_weights_extra) ST(dsp_busy_ns) ST(dsp_wall_ns) ST(rsp_wakeup_ns)
#undef ST
    else if (!strcmp(name, "log_dropped")) v = log_dropped;
    pthread_mutex_unlock(&hd.mu);
    return v;
}

__attribute__((constructor)) static void hd_init(void) {
    config_defaults();
    const char *lf = getenv("HTPDOUBLE_LOG");
    if (lf && *lf) log_file = fopen(lf, "a");
    const char *spec = getenv("HTPDOUBLE_CONFIG");
    if (spec && *spec) configure_locked(spec);
    load_math();
    hd.next_export_id = 0x51d0000000000001ull;
}

/* On dlclose: the logs go; live blocks and threads are the host's leaks and stay visible as such until exit. */
__attribute__((destructor)) static void hd_fini(void) {
    free(log_all.p);
    free(log_viol.p);
    log_all = log_viol = (struct logbuf) { 0 };
    if (log_file) fclose(log_file);
    log_file = NULL;
}

/* ---------------------------------------------------------------- domains */

/* remote.h's domains, then two more NSPs of the double's own invention (cores=3/4; ids 5 and 6 are unused in the
 * open-source library): real multi-NSP systems name and number their NSPs differently (hexagon.md 6.6). */
#define HD_N_DOMAIN_NAMES 7
static const char *const domain_names[HD_N_DOMAIN_NAMES] = { "adsp", "mdsp", "sdsp", "cdsp", "cdsp1", "cdsp2", "cdsp3" };

const char *hd_domain_name(int phys) { return phys >= 0 && phys < HD_N_DOMAIN_NAMES ? domain_names[phys] : "?"; }

static int domain_by_name(const char *name, uint32_t len) {
    if (!name) return -1;
    for (int i = 0; i < HD_N_DOMAIN_NAMES; i++)
        if (strlen(domain_names[i]) == len && !strncmp(name, domain_names[i], len)) return i;
    return -1;
}

static int phys_exists(int phys) { return phys >= CDSP_DOMAIN_ID && phys < CDSP_DOMAIN_ID + hd.cfg.cores; }

/* An effective domain the host may use: an existing NSP and session 0 or a reserved session. */
int hd_domain_exists(int domain) {
    if (domain < 0 || domain >= HD_NUM_DOMAINS * HD_NUM_SESSIONS) return 0;
    int phys = domain % HD_NUM_DOMAINS, sess = domain / HD_NUM_DOMAINS;
    return phys_exists(phys) && (sess == 0 || hd.reserved[phys][sess]);
}

/* ---------------------------------------------------------------- rpcmem */

struct hd_block *hd_block_by_fd(int fd) {
    for (int i = 0; i < hd.n_blocks; i++)
        if (hd.blocks[i].live && hd.blocks[i].fd == fd) return &hd.blocks[i];
    return NULL;
}

static struct hd_block *block_by_ptr(void *p) {
    for (int i = 0; i < hd.n_blocks; i++)
        if (hd.blocks[i].live && hd.blocks[i].base == p) return &hd.blocks[i];
    return NULL;
}

static struct hd_block *block_containing(void *p) {
    for (int i = 0; i < hd.n_blocks; i++) {
        struct hd_block *b = &hd.blocks[i];
        if (b->live && (uint8_t *) p >= (uint8_t *) b->base && (uint8_t *) p < (uint8_t *) b->base + b->size) return b;
    }
    return NULL;
}

static void block_release(struct hd_block *b) {
    hd_ggml_block_gone(b->gen);
    free(b->ddr);
    free(b->l2);
    munmap(b->base, b->size);
    close(b->fd);
    memset(b, 0, sizeof *b);
}

void hd_block_unpin(struct hd_block *b) {
    if (--b->pins == 0 && b->zombie) block_release(b);
}

static void *alloc_locked(const char *fn, int heap, uint32_t flags, size_t size) {
    if (hd.cfg.nodsp) {
        /* the open-source library without /dev/dma_heap/system: NULL, errno left 0 */
        hd_log("%s(heap %d, flags 0x%x, %zu) -> NULL (nodsp)", fn, heap, flags, size);
        errno = 0;
        return NULL;
    }
    uint32_t code;
    if (hd_fault(HD_F_RPCMEM_ALLOC, -1, -1, -1, -1, &code)) {
        hd_log("%s(heap %d, flags 0x%x, %zu) -> NULL (fault)", fn, heap, flags, size);
        return NULL;
    }
    if (size == 0) { hd_log("%s(heap %d, flags 0x%x, 0) -> NULL", fn, heap, flags); return NULL; }
    size_t rounded = (size + 4095) & ~(size_t) 4095;
    uint64_t live = 0;
    for (int i = 0; i < hd.n_blocks; i++)
        if (hd.blocks[i].live) live += hd.blocks[i].size;
    if (live + rounded > hd.cfg.mem_limit) {
        hd_log("%s(heap %d, flags 0x%x, %zu) -> NULL (mem_limit)", fn, heap, flags, size);
        return NULL;
    }
    struct hd_block *slot = NULL;
    for (int i = 0; i < HD_MAX_BLOCKS && !slot; i++)
        if (!hd.blocks[i].live && !hd.blocks[i].zombie) slot = &hd.blocks[i];
    if (slot && slot - hd.blocks >= hd.n_blocks) hd.n_blocks = (int) (slot - hd.blocks) + 1;
    if (!slot) { hd_log("%s -> NULL (block table full)", fn); return NULL; }
    int fd = memfd_create("htpdouble-rpcmem", MFD_CLOEXEC);
    if (fd < 0) { hd_log("%s -> NULL (memfd_create: %s)", fn, strerror(errno)); return NULL; }
    if (ftruncate(fd, (off_t) rounded)) {
        hd_log("%s -> NULL (ftruncate: %s)", fn, strerror(errno));
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        hd_log("%s -> NULL (mmap: %s)", fn, strerror(errno));
        close(fd);
        return NULL;
    }
    *slot = (struct hd_block) { .base = p, .size = rounded, .req_size = size, .fd = fd, .heap = heap,
                                .flags = flags, .live = 1, .gen = ++hd.next_block_gen };
    hd.st.rpcmem_allocs++;
    hd_log("%s(heap %d, flags 0x%x, %zu) -> %p fd %d", fn, heap, flags, size, p, fd);
    return p;
}

HD_EXPORT void rpcmem_init(void) {
    pthread_mutex_lock(&hd.mu); hd_log("rpcmem_init()"); pthread_mutex_unlock(&hd.mu);
}

HD_EXPORT void rpcmem_deinit(void) {
    pthread_mutex_lock(&hd.mu); hd_log("rpcmem_deinit()"); pthread_mutex_unlock(&hd.mu);
}

HD_EXPORT void *rpcmem_alloc(int heapid, uint32_t flags, int size) {
    pthread_mutex_lock(&hd.mu);
    void *p = size > 0 ? alloc_locked("rpcmem_alloc", heapid, flags, (size_t) size) : NULL;
    if (size <= 0) hd_log("rpcmem_alloc(heap %d, flags 0x%x, %d) -> NULL", heapid, flags, size);
    pthread_mutex_unlock(&hd.mu);
    return p;
}

#ifndef HD_NO_ALLOC2
HD_EXPORT void *rpcmem_alloc2(int heapid, uint32_t flags, size_t size) {
    pthread_mutex_lock(&hd.mu);
    void *p = alloc_locked("rpcmem_alloc2", heapid, flags, size);
    pthread_mutex_unlock(&hd.mu);
    return p;
}
#endif

HD_EXPORT void rpcmem_free(void *po) {
    pthread_mutex_lock(&hd.mu);
    struct hd_block *b = block_by_ptr(po);
    if (!b) {
        if (po && block_containing(po)) hd_violation("rpcmem_free(%p): not a block base", po);
        else if (po) hd_violation("rpcmem_free(%p): unknown pointer (double free?)", po);
        hd_log("rpcmem_free(%p)", po);
        pthread_mutex_unlock(&hd.mu);
        return;
    }
    for (int i = 0; i < hd.n_maps; i++)
        if (hd.maps[i].live && hd.maps[i].fd == b->fd) {
            hd_violation("rpcmem_free(%p): fd %d still mapped in domain %d (fastrpc_munmap first)", po, b->fd,
                         hd.maps[i].domain);
            hd.maps[i].live = 0;
        }
    for (int i = 0; i < HD_MAX_IFACE_MAPS; i++)
        if (hd.imaps[i].live && hd.imaps[i].fd == b->fd) {
            hd_violation("rpcmem_free(%p): fd %d still mapped by htp_iface_mmap", po, b->fd);
            hd.imaps[i].live = 0;
        }
    hd.st.rpcmem_frees++;
    hd_log("rpcmem_free(%p) fd %d", po, b->fd);
    if (b->pins) {
        hd_violation("rpcmem_free(%p): fd %d used by a batch executing on the DSP", po, b->fd);
        b->live = 0;
        b->zombie = 1;
    } else {
        block_release(b);
    }
    pthread_mutex_unlock(&hd.mu);
}

HD_EXPORT int rpcmem_to_fd(void *po) {
    pthread_mutex_lock(&hd.mu);
    struct hd_block *b = block_by_ptr(po);
    int fd = b ? b->fd : -1;
    if (!b && po) hd_violation("rpcmem_to_fd(%p): not an rpcmem block base", po);
    hd_log("rpcmem_to_fd(%p) -> %d", po, fd);
    pthread_mutex_unlock(&hd.mu);
    return fd;
}

/* ---------------------------------------------------------------- fastrpc_mmap */

struct hd_map *hd_map_find(int domain, int fd) {
    for (int i = 0; i < hd.n_maps; i++)
        if (hd.maps[i].live && hd.maps[i].domain == domain && hd.maps[i].fd == fd) return &hd.maps[i];
    return NULL;
}

static int is_extended(int flags) { return flags == FASTRPC_MAP_FD_EXTENDED || flags == FASTRPC_MAP_FD_DELAYED_EXTENDED; }

HD_EXPORT int fastrpc_mmap(int domain, int fd, void *addr, int offset, size_t length, int flags) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    struct hd_block *b = hd_block_by_fd(fd);
    /* the open-source library without a DSP: the extended flags are refused before anything else (0xe), every other
       mapping finds FastRPC not initialised (0x6b), fastrpc-nodsp-answers-29851fd.txt */
    if (hd.cfg.nodsp) rc = is_extended(flags) ? AEE_EBADPARM : AEE_ENOTINITIALIZED;
    else if (hd_fault(HD_F_MMAP, -1, -1, domain, -1, &code)) rc = (int) code;
    else if (!hd_domain_exists(domain)) { rc = AEE_EINVALIDDOMAIN; hd_violation("fastrpc_mmap: domain %d does not exist or its session is not reserved", domain); }
    else if (!b) { rc = AEE_EBADPARM; hd_violation("fastrpc_mmap: fd %d is not an rpcmem block", fd); }
    else if (addr != b->base || offset != 0) { rc = AEE_EBADPARM; hd_violation("fastrpc_mmap: fd %d addr %p offset %d, block base %p", fd, addr, offset, b->base); }
    else if (length == 0 || length > b->size) { rc = AEE_EBADPARM; hd_violation("fastrpc_mmap: fd %d length %zu, block size %zu", fd, length, b->size); }
    else if (flags != FASTRPC_MAP_FD && flags != FASTRPC_MAP_FD_DELAYED && !is_extended(flags)) { rc = AEE_EBADPARM; hd_violation("fastrpc_mmap: fd %d flags %d not one of 2, 3, 17, 18", fd, flags); }
    else if (is_extended(flags) && !hd.cfg.dma64) rc = AEE_EBADPARM;
    else if (hd_map_find(domain, fd)) { rc = AEE_EBADPARM; hd_violation("fastrpc_mmap: fd %d already mapped in domain %d", fd, domain); }
    else {
        uint64_t mapped = 0;
        for (int i = 0; i < hd.n_maps; i++)
            if (hd.maps[i].live && hd.maps[i].domain == domain && !is_extended(hd.maps[i].flags)) mapped += hd.maps[i].len;
        struct hd_map *slot = NULL;
        for (int i = 0; i < HD_MAX_MAPS && !slot; i++)
            if (!hd.maps[i].live) slot = &hd.maps[i];
        if (slot && slot - hd.maps >= hd.n_maps) hd.n_maps = (int) (slot - hd.maps) + 1;
        if (!is_extended(flags) && mapped + length > hd.cfg.map_limit) rc = AEE_ENOMEMORY;
        else if (!slot) rc = AEE_ENOMEMORY;
        else *slot = (struct hd_map) { .domain = domain, .fd = fd, .addr = addr, .len = length, .flags = flags, .live = 1 };
    }
    hd_log("fastrpc_mmap(domain %d, fd %d, %p, %d, %zu, flags %d) -> 0x%x", domain, fd, addr, offset, length, flags,
           (unsigned) rc);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

HD_EXPORT int fastrpc_munmap(int domain, int fd, void *addr, size_t length) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    struct hd_map *m = hd_map_find(domain, fd);
    if (hd.cfg.nodsp) rc = AEE_ENOTINITIALIZED;
    else if (hd_fault(HD_F_MUNMAP, -1, -1, domain, -1, &code)) rc = (int) code;
    else if (!m) { rc = AEE_EBADPARM; hd_violation("fastrpc_munmap: fd %d is not mapped in domain %d", fd, domain); }
    else if (m->addr != addr || m->len != length) { rc = AEE_EBADPARM; hd_violation("fastrpc_munmap: fd %d (%p, %zu) does not match the mapping (%p, %zu)", fd, addr, length, m->addr, m->len); }
    else {
        struct hd_block *b = hd_block_by_fd(fd);
        if (b && b->pins) hd_violation("fastrpc_munmap: fd %d used by a batch executing on the DSP", fd);
        m->live = 0;
    }
    hd_log("fastrpc_munmap(domain %d, fd %d, %p, %zu) -> 0x%x", domain, fd, addr, length, (unsigned) rc);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

/* ---------------------------------------------------------------- control calls */

static int check_len(const char *what, uint32_t got, size_t want) {
    if (got == want) return 0;
    hd_log("%s: datalen %u != sizeof %zu -> 0xe", what, got, want);
    return AEE_EBADPARM;
}

HD_EXPORT int remote_handle_control(uint32_t req, void *data, uint32_t datalen) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    if (req == DSPRPC_GET_DSP_INFO) {
        /* The real library does not check datalen (a wrong one answers as the right one would: 0x72 without a DSP),
           answers DOMAIN_SUPPORT with 0 and capability 0 where there is no DSP, and zeroes the capability on every
           failure (fastrpc-nodsp-answers-29851fd.txt). With a DSP a wrong length would make it read and write past
           the caller's struct: a violation here. */
        struct remote_dsp_capability *c = data;
        if (!c) rc = AEE_EBADPARM;
        else {
            if (datalen != sizeof *c && !hd.cfg.nodsp)
                hd_violation("remote_handle_control(GET_DSP_INFO): datalen %u != sizeof %zu", datalen, sizeof *c);
            if (hd.cfg.nodsp) rc = c->attribute_ID == DOMAIN_SUPPORT ? 0 : AEE_ECONNREFUSED;
            else if (hd_fault(HD_F_DSP_INFO, -1, -1, (int) c->domain, -1, &code)) rc = (int) code;
            else if (!phys_exists((int) (c->domain % HD_NUM_DOMAINS))) rc = AEE_ECONNREFUSED;
            uint32_t v = 0;
            if (!rc && !hd.cfg.nodsp) {
                switch (c->attribute_ID) {
                case DOMAIN_SUPPORT: case UNSIGNED_PD_SUPPORT: case VTCM_COUNT: case ASYNC_FASTRPC_SUPPORT:
                case STATUS_NOTIFICATION_SUPPORT: v = 1; break;
                case HVX_SUPPORT_128B: v = hd.cfg.hw_threads; break;
                case VTCM_PAGE: v = (uint32_t) hd.cfg.vtcm; break;
                case ARCH_VER: v = (uint32_t) (((hd.cfg.arch / 10) << 4) | (hd.cfg.arch % 10)); break;
                case HMX_SUPPORT_DEPTH: case HMX_SUPPORT_SPATIAL: v = hd.cfg.hw_hmx ? 1 : 0; break;
                default: v = 0; break;
                }
            }
            c->capability = v;
        }
        hd_log("remote_handle_control(GET_DSP_INFO, domain %u, attr %u, len %u) -> 0x%x cap 0x%x", c ? c->domain : 0,
               c ? c->attribute_ID : 0, datalen, (unsigned) rc, c ? c->capability : 0);
    } else if (req == DSPRPC_CONTROL_LATENCY) {
        /* handle-less: the real library answers 0 without touching a DSP (fastrpc-nodsp-answers-29851fd.txt) */
        rc = check_len("remote_handle_control(LATENCY)", datalen, sizeof(struct remote_rpc_control_latency));
        hd_log("remote_handle_control(LATENCY) -> 0x%x", (unsigned) rc);
    } else {
        rc = AEE_EUNSUPPORTED;
        hd_log("remote_handle_control(req %u, len %u) -> 0x%x (not emulated)", req, datalen, (unsigned) rc);
    }
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

HD_EXPORT int remote_session_control(uint32_t req, void *data, uint32_t datalen) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    switch (req) {
    case DSPRPC_CONTROL_UNSIGNED_MODULE: {
        struct remote_rpc_control_unsigned_module *u = data;
        if ((rc = check_len("UNSIGNED_MODULE", datalen, sizeof *u))) break;
        if (!u) { rc = AEE_EBADPARM; break; }
        if (hd_fault(HD_F_SESSION_UNSIGNED, -1, -1, u->domain, -1, &code)) { rc = (int) code; break; }
        if (u->domain < 0 || u->domain >= HD_NUM_DOMAINS * HD_NUM_SESSIONS) { rc = AEE_EBADPARM; break; }
        hd.unsigned_on[u->domain] = u->enable != 0;
        hd_log("remote_session_control(UNSIGNED_MODULE, domain %d, enable %d) -> 0", u->domain, u->enable);
        pthread_mutex_unlock(&hd.mu);
        return 0;
    }
    case FASTRPC_RESERVE_NEW_SESSION: {
        struct remote_rpc_reserve_new_session *r = data;
        if ((rc = check_len("RESERVE_NEW_SESSION", datalen, sizeof *r))) break;
        if (!r) { rc = AEE_EBADPARM; break; }
        int phys = domain_by_name(r->domain_name, r->domain_name_len);
        if (hd_fault(HD_F_SESSION_RESERVE, -1, -1, phys, -1, &code)) { rc = (int) code; break; }
        if (phys < 0) { rc = AEE_EINVALIDDOMAIN; break; }
        int s = 1;
        while (s < HD_NUM_SESSIONS && hd.reserved[phys][s]) s++;
        if (s == HD_NUM_SESSIONS) { rc = AEE_ENOSESSION; break; }
        hd.reserved[phys][s] = 1;
        r->session_id = (uint32_t) s;
        r->effective_domain_id = (uint32_t) (phys + HD_NUM_DOMAINS * s);
        hd_log("remote_session_control(RESERVE_NEW_SESSION, %.*s) -> 0 session %d eff %u", (int) r->domain_name_len,
               r->domain_name, s, r->effective_domain_id);
        pthread_mutex_unlock(&hd.mu);
        return 0;
    }
    case FASTRPC_GET_EFFECTIVE_DOMAIN_ID: {
        struct remote_rpc_effective_domain_id *e = data;
        if ((rc = check_len("GET_EFFECTIVE_DOMAIN_ID", datalen, sizeof *e))) break;
        if (!e) { rc = AEE_EBADPARM; break; }
        int phys = domain_by_name(e->domain_name, e->domain_name_len);
        if (hd_fault(HD_F_SESSION_EFFECTIVE, -1, -1, phys, -1, &code)) { rc = (int) code; break; }
        if (phys < 0 || e->session_id >= HD_NUM_SESSIONS) { rc = AEE_EBADPARM; break; }
        e->effective_domain_id = (uint32_t) phys + HD_NUM_DOMAINS * e->session_id;
        hd_log("remote_session_control(GET_EFFECTIVE_DOMAIN_ID, %.*s, session %u) -> 0 eff %u",
               (int) e->domain_name_len, e->domain_name, e->session_id, e->effective_domain_id);
        pthread_mutex_unlock(&hd.mu);
        return 0;
    }
    case FASTRPC_GET_URI: {
        struct remote_rpc_get_uri *g = data;
        if ((rc = check_len("GET_URI", datalen, sizeof *g))) break;
        if (!g || !g->module_uri || !g->uri) { rc = AEE_EBADPARM; break; }
        int phys = domain_by_name(g->domain_name, g->domain_name_len);
        if (hd_fault(HD_F_SESSION_URI, -1, -1, phys, -1, &code)) { rc = (int) code; break; }
        if (phys < 0) { rc = AEE_EBADPARM; break; }
        if (g->uri_len <= g->module_uri_len) { rc = AEE_EBADSIZE; break; }
        int n = snprintf(g->uri, g->uri_len, "%.*s&_dom=%s&_session=%u", (int) g->module_uri_len, g->module_uri,
                         domain_names[phys], g->session_id);
        if (n < 0 || (uint32_t) n >= g->uri_len) { rc = AEE_EBADSIZE; break; }
        hd_log("remote_session_control(GET_URI) -> 0 %s", g->uri);
        pthread_mutex_unlock(&hd.mu);
        return 0;
    }
    default:
        rc = AEE_EUNSUPPORTED;
        break;
    }
    hd_log("remote_session_control(req %u, len %u) -> 0x%x", req, datalen, (unsigned) rc);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

#ifndef HD_NO_SYSREQ
HD_EXPORT int remote_system_request(void *req) {
    pthread_mutex_lock(&hd.mu);
    struct hd_system_req_payload *p = req;
    int rc = 0;
    uint32_t code;
    if (!p) rc = AEE_EBADPARM;
    else if (hd.cfg.nodsp) rc = AEE_ECONNREFUSED;
    else if (hd_fault(HD_F_SYSREQ, -1, -1, -1, -1, &code)) rc = (int) code;
    else if (hd.cfg.sysreq == 1) rc = AEE_EUNSUPPORTEDAPI;
    else if (p->id != FASTRPC_GET_DOMAINS) rc = AEE_EUNSUPPORTED;
    else {
        int n = hd.cfg.sysreq == 2 ? 0 : hd.cfg.cores;
        p->sys.num_domains = n;
        if (p->sys.domains && p->sys.max_domains > 0) {
            for (int i = 0; i < n && i < p->sys.max_domains; i++) {
                struct hd_fastrpc_domain *d = &p->sys.domains[i];
                memset(d, 0, sizeof *d);
                d->id = CDSP_DOMAIN_ID + i;
                d->instance_id = i;
                snprintf(d->name, sizeof d->name, "%s", domain_names[CDSP_DOMAIN_ID + i]);
                d->type = HD_FASTRPC_NSP;
                d->status = 1;
            }
        }
    }
    hd_log("remote_system_request(id %u, max %d) -> 0x%x num %d", p ? p->id : 0, p ? p->sys.max_domains : 0,
           (unsigned) rc, p && !rc ? p->sys.num_domains : 0);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}
#endif

/* ---------------------------------------------------------------- htp_iface handles */

#define HD_HANDLE_TAG 0xd5b0000000000000ull

static struct hd_handle *handle_lookup(remote_handle64 h) {
    if ((h & 0xffff000000000000ull) != HD_HANDLE_TAG) return NULL;
    uint32_t idx = (uint32_t) (h & 0xffff), gen = (uint32_t) ((h >> 16) & 0xffffffffu);
    if (idx >= HD_MAX_HANDLES || !hd.handles[idx].live || hd.handles[idx].gen != gen) return NULL;
    return &hd.handles[idx];
}

static int handle_index(const struct hd_handle *h) { return (int) (h - hd.handles); }

/* file:///libggml-htp-vNN.so?htp_iface_skel_handle_invoke&_modver=1.0[&_dom=NAME][&_session=N] */
static int parse_uri(const char *uri, int *arch, int *phys, int *session) {
    static const char pre[] = "file:///libggml-htp-v";
    static const char mid[] = ".so?htp_iface_skel_handle_invoke&_modver=1.0";
    if (strncmp(uri, pre, sizeof pre - 1)) return -1;
    const char *p = uri + sizeof pre - 1;
    char *end;
    long a = strtol(p, &end, 10);
    if (end == p || strncmp(end, mid, sizeof mid - 1)) return -1;
    *arch = (int) a;
    p = end + sizeof mid - 1;
    *phys = CDSP_DOMAIN_ID;
    *session = 0;
    while (*p == '&') {
        p++;
        if (!strncmp(p, "_dom=", 5)) {
            p += 5;
            size_t n = strcspn(p, "&");
            *phys = domain_by_name(p, (uint32_t) n);
            if (*phys < 0) return -2;
            p += n;
        } else if (!strncmp(p, "_session=", 9)) {
            long s = strtol(p + 9, &end, 10);
            if (end == p + 9 || s < 0 || s >= HD_NUM_SESSIONS) return -2;
            *session = (int) s;
            p = end;
        } else {
            p += strcspn(p, "&");
        }
    }
    return *p ? -1 : 0;
}

HD_EXPORT int remote_handle64_open(const char *name, remote_handle64 *ph) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0, arch = 0, phys = 0, sess = 0;
    uint32_t code;
    int ordinal = hd.n_handles_opened + 1;
    if (hd.cfg.nodsp) rc = AEE_ECONNREFUSED;
    else if (!name || !ph) rc = AEE_EBADPARM;
    else if (hd_fault(HD_F_OPEN, -1, ordinal, -1, -1, &code)) { rc = (int) code; hd.n_handles_opened++; }
    else {
        hd.n_handles_opened++;
        int pr = parse_uri(name, &arch, &phys, &sess);
        int eff = phys + HD_NUM_DOMAINS * sess;
        if (pr == -1) { rc = AEE_EOFFSET_DSP + AEE_EUNABLETOLOAD; hd_violation("remote_handle64_open: not an htp_iface URI: %s", name); }
        else if (pr == -2) rc = AEE_EBADPARM;
        else if (!phys_exists(phys)) rc = AEE_ECONNREFUSED;
        else if (sess && !hd.reserved[phys][sess]) { rc = AEE_EBADPARM; hd_violation("remote_handle64_open: session %d of %s not reserved", sess, domain_names[phys]); }
        else if (arch != hd.cfg.arch) {
            rc = AEE_EOFFSET_DSP + AEE_EUNABLETOLOAD;
            hd_log("remote_handle64_open: the DSP has no libggml-htp-v%d.so (arch is v%d)", arch, hd.cfg.arch);
        } else if (hd.cfg.unsigned_required && !hd.unsigned_on[eff]) rc = (int) 0x80000414u;
        else {
            int idx = -1;
            for (int i = 0; i < HD_MAX_HANDLES && idx < 0; i++)
                if (!hd.handles[i].live) idx = i;
            if (idx < 0) rc = AEE_ENOMEMORY;
            else {
                struct hd_handle *h = &hd.handles[idx];
                uint32_t gen = h->gen + 1;
                *h = (struct hd_handle) { .live = 1, .gen = gen, .ordinal = ordinal, .domain = eff, .phys = phys,
                                          .session = sess, .queue = -1 };
                *ph = HD_HANDLE_TAG | ((uint64_t) gen << 16) | (uint64_t) idx;
            }
        }
    }
    hd_log("remote_handle64_open(%s) -> 0x%x h 0x%" PRIx64, name ? name : "(null)", (unsigned) rc,
           !rc && ph ? *ph : 0);
    int nodsp = hd.cfg.nodsp;
    pthread_mutex_unlock(&hd.mu);
    if (nodsp) errno = ENOENT; /* as the probe saw: the library found no /dev/fastrpc-cdsp* */
    return rc;
}

static int iface_stop(struct hd_handle *h);

HD_EXPORT int remote_handle64_close(remote_handle64 handle) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    struct hd_handle *h = handle_lookup(handle);
    if (hd.cfg.nodsp && !h) rc = AEE_EINVHANDLE;
    else if (!h) { rc = AEE_EINVHANDLE; hd_violation("remote_handle64_close(0x%" PRIx64 "): unknown handle", handle); }
    else if (hd_fault(HD_F_CLOSE, -1, h->ordinal, h->domain, -1, &code)) rc = (int) code;
    else if (h->started && !h->dead) { rc = AEE_EITEMBUSY; hd_violation("remote_handle64_close: handle still started (htp_iface_stop first)"); }
    else {
        if (h->started) iface_stop(h); /* dead DSP process: nothing left to stop on the DSP */
        for (int i = 0; i < HD_MAX_IFACE_MAPS; i++)
            if (hd.imaps[i].live && hd.imaps[i].handle == handle_index(h)) hd.imaps[i].live = 0;
        h->live = 0;
    }
    hd_log("remote_handle64_close(0x%" PRIx64 ") -> 0x%x", handle, (unsigned) rc);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

HD_EXPORT int remote_handle64_control(remote_handle64 handle, uint32_t req, void *data, uint32_t datalen) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    struct hd_handle *h = handle_lookup(handle);
    if (!h) rc = AEE_EINVHANDLE;
    else if (req == DSPRPC_CONTROL_LATENCY) {
        struct remote_rpc_control_latency *l = data;
        if (!(rc = check_len("remote_handle64_control(LATENCY)", datalen, sizeof *l))) {
            if (!l) rc = AEE_EBADPARM;
            else if (hd_fault(HD_F_LATENCY, -1, h->ordinal, h->domain, -1, &code)) rc = (int) code;
            else if (l->enable > 3) rc = AEE_EBADPARM;
        }
    } else rc = AEE_EUNSUPPORTED;
    hd_log("remote_handle64_control(0x%" PRIx64 ", req %u, len %u) -> 0x%x", handle, req, datalen, (unsigned) rc);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static int iface_start(struct hd_handle *h, const uint8_t *in, size_t len) {
    if (h->started) return AEE_EITEMBUSY;
    uint32_t sess_id = rd32(in);
    uint64_t qid = rd64(in + 8);
    uint32_t n_hvx = rd32(in + 16), n_hmx = rd32(in + 20);
    uint64_t vtcm = hd.cfg.vtcm, max_vmem;
    uint32_t power = 0;
    /* The public skel unpacks d99724f's five arguments and ignores any longer tail (nLen >= needed); a fence-protocol
       DSP library unpacks upstream's seven (hexagon.md 5.1, inferred); qdev's IDL is not known: by length. */
    int upstream = hd.cfg.protocol == HD_PROTO_PUBLIC ? 0 : hd.cfg.protocol == HD_PROTO_QDEV ? len >= HD_START_ARGS_UPSTREAM : 1;
    if (upstream && len < HD_START_ARGS_UPSTREAM) {
        hd_violation("htp_iface_start: %zu bytes of arguments, the fence protocol's start takes %u", len, HD_START_ARGS_UPSTREAM);
        return AEE_EBADPARM;
    }
    if (upstream) { vtcm = rd64(in + 24); max_vmem = rd64(in + 32); power = rd32(in + 40); }
    else max_vmem = rd64(in + 24);
    if (!vtcm) vtcm = hd.cfg.vtcm; /* 0: the DSP takes what it has */
    hd_log("htp_iface_start(sess %u, queue 0x%" PRIx64 ", n_hvx %u, n_hmx %u, vtcm %" PRIu64 ", max_vmem %" PRIu64
           ", power %u) form %s", sess_id, qid, n_hvx, n_hmx, vtcm, max_vmem, power, upstream ? "upstream" : "snapshot");
    struct dspqueue *q = hd_queue_by_export(qid);
    if (!q) { hd_violation("htp_iface_start: queue id 0x%" PRIx64 " was not exported", qid); return AEE_EBADPARM; }
    if (q->domain != h->domain) {
        hd_violation("htp_iface_start: queue of domain %d, handle of domain %d", q->domain, h->domain);
        return AEE_EBADPARM;
    }
    if (q->bound) return AEE_EITEMBUSY;
    if (n_hvx == 0 || n_hvx > hd.cfg.hw_threads) n_hvx = hd.cfg.hw_threads;
    if (n_hvx > HTP_MAX_NTHREADS) n_hvx = HTP_MAX_NTHREADS;
    if (upstream && vtcm > hd.cfg.vtcm) { hd_violation("htp_iface_start: vtcm %" PRIu64 " > hardware %" PRIu64, vtcm, hd.cfg.vtcm); return AEE_EBADPARM; }
    h->sess_id = sess_id; h->n_hvx = n_hvx; h->n_hmx = n_hmx ? (hd.cfg.hw_hmx < n_hmx ? hd.cfg.hw_hmx : n_hmx) : 0;
    h->vtcm = vtcm; h->max_vmem = max_vmem ? max_vmem : HD_DEFAULT_MAX_VMEM; h->power_mode = power;
    h->upstream_start = upstream;
    q->bound = 1;
    h->queue = q->idx;
    h->started = 1;
    int rc = hd_queue_start(q);
    if (rc) { q->bound = 0; h->queue = -1; h->started = 0; }
    return rc;
}

static int iface_stop(struct hd_handle *h) {
    if (!h->started) return AEE_EBADPARM;
    struct dspqueue *q = hd.queues[h->queue];
    hd_queue_stop(q);
    q->bound = 0;
    h->queue = -1;
    h->started = 0;
    h->prof_mode = 0;
    /* the public skel frees its context (and its mmap table) on stop */
    for (int i = 0; i < HD_MAX_IFACE_MAPS; i++)
        if (hd.imaps[i].live && hd.imaps[i].handle == handle_index(h)) hd.imaps[i].live = 0;
    return 0;
}

static int iface_mmap(struct hd_handle *h, uint32_t fd, uint32_t size) {
    if (!h->started) return AEE_EBADPARM;
    int free_slot = -1;
    for (int i = 0; i < HD_MAX_IFACE_MAPS; i++) {
        if (hd.imaps[i].live && hd.imaps[i].handle == handle_index(h) && hd.imaps[i].fd == (int) fd) return 0;
        if (!hd.imaps[i].live && free_slot < 0) free_slot = i;
    }
    struct hd_map *m = hd_map_find(h->domain, (int) fd);
    struct hd_block *b = hd_block_by_fd((int) fd);
    if (!m || !b) { hd_violation("htp_iface_mmap: fd %u not fastrpc_mmap'ed in domain %d", fd, h->domain); return AEE_EFAILED; }
    if (size == 0 || size > b->size) { hd_violation("htp_iface_mmap: fd %u size %u, block %zu", fd, size, b->size); return AEE_EFAILED; }
    if (free_slot < 0) return AEE_ENOMEMORY;
    hd.imaps[free_slot] = (struct hd_iface_map) { .live = 1, .handle = handle_index(h), .fd = (int) fd, .size = size };
    return 0;
}

static int iface_munmap(struct hd_handle *h, uint32_t fd) {
    if (!h->started) return AEE_EBADPARM;
    for (int i = 0; i < HD_MAX_IFACE_MAPS; i++)
        if (hd.imaps[i].live && hd.imaps[i].handle == handle_index(h) && hd.imaps[i].fd == (int) fd) hd.imaps[i].live = 0;
    return 0;
}

/* Expected (in, out) buffer counts and minimum sizes of each method, hexagon.md 5.1. */
static const struct { uint32_t nin, nout, in_size, out_size; const char *name; enum hd_fault_point fp; } methods[] = {
    [HTP_IFACE_START] = { 1, 0, HD_START_ARGS_SNAPSHOT, 0, "start", HD_F_IFACE_START },
    [HTP_IFACE_STOP] = { 0, 0, 0, 0, "stop", HD_F_IFACE_STOP },
    [HTP_IFACE_MMAP] = { 1, 0, 8, 0, "mmap", HD_F_IFACE_MMAP },
    [HTP_IFACE_MUNMAP] = { 1, 0, 4, 0, "munmap", HD_F_IFACE_MUNMAP },
    [HTP_IFACE_PROFILER] = { 1, 0, 36, 0, "profiler", HD_F_IFACE_PROFILER },
    [HTP_IFACE_ETM] = { 1, 0, 4, 0, "etm", HD_F_IFACE_ETM },
    [HTP_IFACE_HWINFO] = { 0, 1, 0, 24, "hwinfo", HD_F_IFACE_HWINFO },
};

HD_EXPORT int remote_handle64_invoke(remote_handle64 handle, uint32_t sc, remote_arg *pra) {
    pthread_mutex_lock(&hd.mu);
    int rc = 0;
    uint32_t code;
    uint32_t mid = HD_SC_METHOD(sc), nin = HD_SC_INBUFS(sc), nout = HD_SC_OUTBUFS(sc);
    struct hd_handle *h = handle_lookup(handle);
    if (handle == 0) {
        /* the real library answers 0 for handle 0 (hexagon.md 7); a host doing this has a bug */
        if (!hd.cfg.nodsp) hd_violation("remote_handle64_invoke on handle 0 (sc 0x%08x)", sc);
        hd_log("remote_handle64_invoke(0, 0x%08x) -> 0", sc);
        pthread_mutex_unlock(&hd.mu);
        return 0;
    }
    if (!h) {
        /* the real library answers 0 for a handle it does not know and leaves the output buffers as they were
           (fastrpc-nodsp-answers-29851fd.txt): a host must not take a zero answer for an answer */
        if (!hd.cfg.nodsp) hd_violation("remote_handle64_invoke(0x%" PRIx64 ", 0x%08x): unknown handle", handle, sc);
        hd_log("remote_handle64_invoke(0x%" PRIx64 ", 0x%08x) unknown handle -> 0", handle, sc);
        pthread_mutex_unlock(&hd.mu);
        return 0;
    }
    const char *name = mid < sizeof methods / sizeof methods[0] && methods[mid].name ? methods[mid].name : NULL;
    if (h->dead) {
        /* the DSP process is gone; stop still tears the host-side state down so the host can release */
        if (mid == HTP_IFACE_STOP && h->started) iface_stop(h);
        rc = AEE_ECONNRESET;
        goto out;
    }
    if (!name) { rc = AEE_EUNSUPPORTED; hd_violation("remote_handle64_invoke: unknown method %u (sc 0x%08x)", mid, sc); goto out; }
    if (hd_fault(HD_F_INVOKE, -1, h->ordinal, h->domain, -1, &code) ||
        hd_fault(methods[mid].fp, -1, h->ordinal, h->domain, -1, &code)) { rc = (int) code; goto out; }
    if (nin != methods[mid].nin || nout != methods[mid].nout || HD_SC_INH(sc) || HD_SC_OUTH(sc)) {
        rc = AEE_EBADPARM;
        hd_violation("htp_iface_%s: scalars 0x%08x, expected %u in / %u out buffers", name, sc, methods[mid].nin,
                     methods[mid].nout);
        goto out;
    }
    const uint8_t *in = NULL;
    size_t in_len = 0;
    if (nin) {
        if (!pra || !pra[0].buf.pv || pra[0].buf.nLen < methods[mid].in_size) {
            rc = AEE_EBADPARM;
            hd_violation("htp_iface_%s: input buffer %zu B, needs %u", name, pra ? pra[0].buf.nLen : 0,
                         methods[mid].in_size);
            goto out;
        }
        in = pra[0].buf.pv;
        in_len = pra[0].buf.nLen;
    }
    if (nout && (!pra || !pra[nin].buf.pv || pra[nin].buf.nLen < methods[mid].out_size)) {
        rc = AEE_EBADPARM;
        hd_violation("htp_iface_%s: output buffer %zu B, needs %u", name, pra ? pra[nin].buf.nLen : 0,
                     methods[mid].out_size);
        goto out;
    }
    switch (mid) {
    case HTP_IFACE_START: rc = iface_start(h, in, in_len); break;
    case HTP_IFACE_STOP: rc = iface_stop(h); break;
    case HTP_IFACE_MMAP: rc = iface_mmap(h, rd32(in), rd32(in + 4)); break;
    case HTP_IFACE_MUNMAP: rc = iface_munmap(h, rd32(in)); break;
    case HTP_IFACE_PROFILER: {
        uint32_t mode = rd32(in);
        if (!h->started) rc = AEE_EBADPARM;
        else if (mode > HTP_PROF_TRACE) rc = AEE_EBADPARM;
        else h->prof_mode = mode;
        hd_log("htp_iface_profiler(mode %u, events 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x 0x%x)", mode, rd32(in + 4),
               rd32(in + 8), rd32(in + 12), rd32(in + 16), rd32(in + 20), rd32(in + 24), rd32(in + 28), rd32(in + 32));
        break;
    }
    case HTP_IFACE_ETM: h->etm = rd32(in); break;
    case HTP_IFACE_HWINFO: {
        uint8_t *o = pra[nin].buf.pv;
        uint32_t v[3] = { hd.cfg.hw_threads > HTP_MAX_NTHREADS ? HTP_MAX_NTHREADS : hd.cfg.hw_threads, 0,
                          hd.cfg.hw_hmx };
        v[1] = v[0];
        memset(o, 0, 24);
        memcpy(o, v, sizeof v);
        memcpy(o + 16, &hd.cfg.vtcm, 8);
        break;
    }
    }
out:
    hd_log("remote_handle64_invoke(0x%" PRIx64 ", 0x%08x) htp_iface_%s -> 0x%x", handle, sc, name ? name : "?",
           (unsigned) rc);
    pthread_mutex_unlock(&hd.mu);
    return rc;
}
