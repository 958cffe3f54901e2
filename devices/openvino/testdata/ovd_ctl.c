/* ovdouble control layer: knobs (env at load, ovdouble_set later), the release presented, fault injection,
 * per-function call/time/error counters, live-object counters, the call log and the global last error. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ovd.h"
#include "ovd_decl.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- errors ---- */
static _Thread_local char errbuf[2048];
static _Thread_local bool erralloc;

int ovd_err(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    erralloc = false;
    return -1;
}

int ovd_err_alloc(void) {
    snprintf(errbuf, sizeof errbuf, "std::bad_alloc");
    erralloc = true;
    return -1;
}

const char* ovd_err_msg(void) { return errbuf; }
bool ovd_err_is_alloc(void) { return erralloc; }
void ovd_err_clear(void) {
    errbuf[0] = 0;
    erralloc = false;
}

static char* last_error; /* global, as in OpenVINO's C API */

void ovd_set_last_error(const char* msg) {
    char* c = ovd_strdup(msg);
    pthread_mutex_lock(&mu);
    free(last_error);
    last_error = c;
    pthread_mutex_unlock(&mu);
}

void ovd_clear_last_error(void) {
    pthread_mutex_lock(&mu);
    free(last_error);
    last_error = NULL;
    pthread_mutex_unlock(&mu);
}

ov_status_e ovd_fail_status(ov_status_e st) {
    if (ovd_err_is_alloc()) st = UNKNOW_EXCEPTION;
    ovd_set_last_error(errbuf);
    return st;
}

OVD_EXPORT size_t ovdouble_last_error(char* buf, size_t cap) {
    pthread_mutex_lock(&mu);
    const char* s = last_error ? last_error : "";
    size_t n = strlen(s);
    if (buf && cap) snprintf(buf, cap, "%s", s);
    pthread_mutex_unlock(&mu);
    return n;
}

/* ov_get_last_err_msg hands out a copy the caller frees with ov_free */
const char* ovd_last_error_copy(void) {
    pthread_mutex_lock(&mu);
    char* c = last_error ? ovd_strdup(last_error) : NULL;
    pthread_mutex_unlock(&mu);
    if (c) {
        ovd_live_add(L_STRING, 1);
        ovd_reg_add(c, K_STRING);
    }
    return c;
}

char* ovd_strdup(const char* s) { return ovd_strndup(s, strlen(s)); }

char* ovd_strndup(const char* s, size_t n) {
    char* c = malloc(n + 1);
    if (!c) abort(); /* tiny allocations only: failing them is not a scenario the double models */
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

char* ovd_api_string(const char* s) {
    ovd_live_add(L_STRING, 1);
    char* c = ovd_strdup(s);
    ovd_reg_add(c, K_STRING);
    return c;
}

/* ---- pointer registry: open addressing, linear probing, tombstones ---- */
typedef struct {
    const void* p;
    int k; /* 0 empty, -1 tombstone */
} regent;
static regent* reg;
static size_t reg_cap, reg_used;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t reg_hash(const void* p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static regent* reg_find(const void* p);

static void reg_grow(void) {
    size_t ncap = reg_cap ? reg_cap * 2 : 1024;
    regent* n = calloc(ncap, sizeof *n);
    if (!n) abort();
    for (size_t i = 0; i < reg_cap; i++) {
        if (reg[i].k <= 0) continue;
        size_t h = reg_hash(reg[i].p) & (ncap - 1);
        while (n[h].k) h = (h + 1) & (ncap - 1);
        n[h] = reg[i];
    }
    free(reg);
    reg = n;
    reg_cap = ncap;
    size_t live_n = 0;
    for (size_t i = 0; i < reg_cap; i++) live_n += reg[i].k > 0;
    reg_used = live_n;
}

void ovd_reg_add(const void* p, ovd_kind k) {
    if (!p) return;
    pthread_mutex_lock(&reg_mu);
    if ((reg_used + 1) * 2 > reg_cap) reg_grow();
    regent* e = reg_find(p);
    if (!e) {
        size_t h = reg_hash(p) & (reg_cap - 1);
        while (reg[h].k > 0) h = (h + 1) & (reg_cap - 1);
        if (reg[h].k == 0) reg_used++;
        e = &reg[h];
    }
    e->p = p;
    e->k = (int)k;
    pthread_mutex_unlock(&reg_mu);
}

static regent* reg_find(const void* p) {
    if (!reg_cap) return NULL;
    size_t h = reg_hash(p) & (reg_cap - 1);
    for (size_t n = 0; n < reg_cap && reg[h].k; n++, h = (h + 1) & (reg_cap - 1))
        if (reg[h].k > 0 && reg[h].p == p) return &reg[h];
    return NULL;
}

bool ovd_reg_has(const void* p, ovd_kind k) {
    if (!p) return false;
    pthread_mutex_lock(&reg_mu);
    regent* e = reg_find(p);
    bool ok = e && e->k == (int)k;
    pthread_mutex_unlock(&reg_mu);
    return ok;
}

bool ovd_reg_del(const void* p, ovd_kind k) {
    if (!p) return false;
    pthread_mutex_lock(&reg_mu);
    regent* e = reg_find(p);
    bool ok = e && e->k == (int)k;
    if (ok) e->k = -1; /* tombstones count as used until the next growth */
    pthread_mutex_unlock(&reg_mu);
    return ok;
}

/* ---- counters ---- */
#define MAXFN 192
static const char* fn_names[MAXFN];
static int nfn;
static _Atomic int64_t fn_calls[MAXFN], fn_ns[MAXFN], fn_errors[MAXFN];
static _Atomic int64_t live[L_COUNT], live_bytes_v, counters[C_COUNT], total_ns;
static const char* live_names[L_COUNT] = {"core", "model", "compiled_model", "infer_request",
                                          "tensor", "port", "string", "shape", "context"};
static const char* counter_names[C_COUNT] = {"infer.count", "infer.nodes", "compile.count", "compile.const_bytes",
                                             "import.count", "export.count", "faults.injected", "warn.precision",
                                             "warn.dims", "infer.output_reshaped", "free.null", "bad.free",
                                             "bad.handle", "xfer.h2d", "xfer.d2h", "infer.inplace_hazard"};

int ovd_fn_id(const char* name) {
    pthread_mutex_lock(&mu);
    int id = -1;
    for (int i = 0; i < nfn; i++)
        if (strcmp(fn_names[i], name) == 0) id = i;
    if (id < 0 && nfn < MAXFN) {
        fn_names[nfn] = name;
        id = nfn++;
    }
    pthread_mutex_unlock(&mu);
    return id;
}

void ovd_live_add(ovd_live k, int64_t d) { atomic_fetch_add(&live[k], d); }
void ovd_live_bytes(int64_t d) { atomic_fetch_add(&live_bytes_v, d); }
void ovd_count(ovd_counter c, int64_t d) { atomic_fetch_add(&counters[c], d); }

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time of the calling thread: what a benchmark measuring its own thread's CPU time subtracts (wall time would
 * also count the time the thread waited for a core on a shared machine) */
static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static _Atomic int64_t total_cpu_ns;

static _Thread_local int depth;
static int log_fd = -1;
static _Atomic int64_t log_seq;

void ovd_enter(ovd_call* c, const char* fn) {
    (void)fn;
    depth++;
    ovd_err_clear();
    c->t0 = now_ns();
    if (depth == 1) c->c0 = thread_cpu_ns();
}

static void log_line(int fn, int st, int64_t ns, const char* detail) {
    if (log_fd < 0) return;
    char line[512];
    int n = snprintf(line, sizeof line, "%lld %s %d %lld%s%s", (long long)atomic_fetch_add(&log_seq, 1) + 1,
                     fn >= 0 ? fn_names[fn] : "?", st, (long long)ns, detail ? " " : "", detail ? detail : "");
    if (n < 0) return;
    if ((size_t)n >= sizeof line - 1) n = sizeof line - 2;
    /* one line per call: cut a multi-line detail at its first newline */
    char* nl = memchr(line, '\n', (size_t)n);
    if (nl) n = (int)(nl - line);
    line[n++] = '\n';
    pthread_mutex_lock(&mu);
    if (log_fd >= 0) {
        ssize_t w = write(log_fd, line, (size_t)n);
        (void)w;
    }
    pthread_mutex_unlock(&mu);
}

static void account(ovd_call* c, int st, const char* detail) {
    int64_t ns = now_ns() - c->t0;
    depth--;
    if (c->fn >= 0) {
        atomic_fetch_add(&fn_calls[c->fn], 1);
        if (st != 0) atomic_fetch_add(&fn_errors[c->fn], 1);
        if (depth == 0) atomic_fetch_add(&fn_ns[c->fn], ns);
    }
    if (depth == 0) {
        atomic_fetch_add(&total_ns, ns);
        atomic_fetch_add(&total_cpu_ns, thread_cpu_ns() - c->c0);
    }
    log_line(c->fn, st, ns, detail);
}

ov_status_e ovd_leave(ovd_call* c, ov_status_e st, const char* detail) {
    account(c, st, detail ? detail : (st != OK && errbuf[0] ? errbuf : NULL));
    return st;
}

void ovd_leave_void(ovd_call* c) { account(c, 0, NULL); }

OVD_EXPORT int64_t ovdouble_time_ns(void) { return atomic_load(&total_ns); }

OVD_EXPORT void ovdouble_reset_stats(void) {
    ovd_ocl_reset();
    for (int i = 0; i < MAXFN; i++) {
        atomic_store(&fn_calls[i], 0);
        atomic_store(&fn_ns[i], 0);
        atomic_store(&fn_errors[i], 0);
    }
    for (int i = 0; i < C_COUNT; i++) atomic_store(&counters[i], 0);
    atomic_store(&total_ns, 0);
    atomic_store(&total_cpu_ns, 0);
}

OVD_EXPORT int64_t ovdouble_stat(const char* name) {
    if (!name) return -1;
    if (strcmp(name, "time_ns") == 0) return atomic_load(&total_ns);
    if (strcmp(name, "cpu_ns") == 0) return atomic_load(&total_cpu_ns);
    if (strcmp(name, "live.bytes") == 0) return atomic_load(&live_bytes_v);
    if (strncmp(name, "xfer.last.", 10) == 0) return ovd_xfer_last(name + 10);
    if (strncmp(name, "ocl.", 4) == 0) return ovd_ocl_stat(name + 4);
    if (strcmp(name, "usm.live") == 0) return ovd_usm_live();
    if (strncmp(name, "live.", 5) == 0) {
        for (int i = 0; i < L_COUNT; i++)
            if (strcmp(name + 5, live_names[i]) == 0) return atomic_load(&live[i]);
        return -1;
    }
    for (int i = 0; i < C_COUNT; i++)
        if (strcmp(name, counter_names[i]) == 0) return atomic_load(&counters[i]);
    static const char* pre[3] = {"calls.", "ns.", "errors."};
    for (int p = 0; p < 3; p++) {
        size_t l = strlen(pre[p]);
        if (strncmp(name, pre[p], l) != 0) continue;
        /* a known OpenVINO function not called yet reads as 0; names are registered on first call */
        int id = -1;
        pthread_mutex_lock(&mu);
        for (int i = 0; i < nfn; i++)
            if (strcmp(fn_names[i], name + l) == 0) id = i;
        pthread_mutex_unlock(&mu);
        if (id < 0) return strncmp(name + l, "ov_", 3) == 0 ? 0 : -1;
        _Atomic int64_t* arr = p == 0 ? fn_calls : p == 1 ? fn_ns : fn_errors;
        return atomic_load(&arr[id]);
    }
    return -1;
}

OVD_EXPORT size_t ovdouble_stats(char* buf, size_t cap) {
    size_t len = 0;
    char line[256];
#define EMIT(...)                                                              \
    do {                                                                       \
        int k = snprintf(line, sizeof line, __VA_ARGS__);                      \
        if (k > 0) {                                                           \
            if (buf && len + (size_t)k < cap) memcpy(buf + len, line, (size_t)k); \
            len += (size_t)k;                                                  \
        }                                                                      \
    } while (0)
    EMIT("time_ns %lld\n", (long long)atomic_load(&total_ns));
    EMIT("cpu_ns %lld\n", (long long)atomic_load(&total_cpu_ns));
    for (int i = 0; i < L_COUNT; i++) EMIT("live.%s %lld\n", live_names[i], (long long)atomic_load(&live[i]));
    EMIT("live.bytes %lld\n", (long long)atomic_load(&live_bytes_v));
    for (int i = 0; i < C_COUNT; i++) EMIT("%s %lld\n", counter_names[i], (long long)atomic_load(&counters[i]));
    pthread_mutex_lock(&mu);
    int n = nfn;
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; i++) {
        if (!atomic_load(&fn_calls[i])) continue;
        EMIT("calls.%s %lld\n", fn_names[i], (long long)atomic_load(&fn_calls[i]));
        EMIT("ns.%s %lld\n", fn_names[i], (long long)atomic_load(&fn_ns[i]));
        EMIT("errors.%s %lld\n", fn_names[i], (long long)atomic_load(&fn_errors[i]));
    }
#undef EMIT
    if (buf && cap) buf[len < cap ? len : cap - 1] = 0;
    return len;
}

/* ---- release presented ---- */
static ovd_release rel;
static char build_override[128];
static char devices_v[256] = "CPU";
static _Atomic int64_t gpu_mem_v = 8589934592LL;
static _Atomic int64_t max_alloc_v;
static _Atomic int const_at_infer_v;
static _Atomic int strict_v;

static int set_version(const char* v) {
    int y = 0, m = 0, p = 0;
    int k = sscanf(v, "%d.%d.%d", &y, &m, &p);
    if (k < 2 || y < 2020 || y > 2100 || m < 0 || m > 12 || p < 0) return -2;
    ovd_release r = {0};
    r.year = y;
    r.minor = m;
    r.patch = p;
    int key = y * 100 + m;
    r.numbering = key <= 202401 ? 0 : key <= 202500 ? 1 : 2;
    /* build numbers in the format of the real releases: YYYY.M.P-BUILD-HASH-releases/YYYY/M */
    static const struct {
        int key;
        const char* s;
    } known[] = {
        {202401, "2024.1.0-15008-f4afc983258-releases/2024/1"},
        {202406, "2024.6.0-17404-4c0f47d2335-releases/2024/6"},
        {202500, "2025.0.0-17942-1f68be9f594-releases/2025/0"},
        {202501, "2025.1.0-18503-6fec06580ab-releases/2025/1"},
        {202502, "2025.2.0-19140-c01cd93e24d-releases/2025/2"},
        {202601, "2026.1.2-21212-f3a30a671d3-releases/2026/1"},
    };
    r.build[0] = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].key == key && p == 0) snprintf(r.build, sizeof r.build, "%s", known[i].s);
    if (!r.build[0]) snprintf(r.build, sizeof r.build, "%d.%d.%d-%d-0vd0ub1e000-releases/%d/%d", y, m, p,
                              10000 + (y - 2020) * 1000 + m * 50, y, m);
    pthread_mutex_lock(&mu);
    rel = r;
    pthread_mutex_unlock(&mu);
    return 0;
}

const ovd_release* ovd_rel(void) {
    static _Thread_local ovd_release copy;
    pthread_mutex_lock(&mu);
    copy = rel;
    if (build_override[0]) snprintf(copy.build, sizeof copy.build, "%s", build_override);
    pthread_mutex_unlock(&mu);
    return &copy;
}

const char* ovd_devices(void) {
    static _Thread_local char copy[256];
    pthread_mutex_lock(&mu);
    snprintf(copy, sizeof copy, "%s", devices_v);
    pthread_mutex_unlock(&mu);
    return copy;
}

int64_t ovd_gpu_mem(void) { return atomic_load(&gpu_mem_v); }
int64_t ovd_max_alloc(void) { return atomic_load(&max_alloc_v); }
bool ovd_const_at_infer(void) { return atomic_load(&const_at_infer_v) != 0; }
bool ovd_strict(void) { return atomic_load(&strict_v) != 0; }

/* ---- fault injection ---- */
static const char* fault_names[FP_COUNT] = {
    "core_create", "read_model", "compile", "import", "export", "create_infer_request", "infer",
    "set_tensor", "get_tensor", "tensor_create", "alloc", "version", "devices", "get_property", "set_property"};
typedef struct {
    int on;
    int64_t nth, count, calls;
} fault_state;
static fault_state faults[FP_COUNT];

static int set_faults(const char* spec) {
    fault_state nf[FP_COUNT];
    memset(nf, 0, sizeof nf);
    char* s = ovd_strdup(spec ? spec : "");
    int rc = 0;
    for (char* save = NULL, *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        if (!*tok) continue;
        char* c1 = strchr(tok, ':');
        if (c1) *c1++ = 0;
        int f = -1;
        for (int i = 0; i < FP_COUNT; i++)
            if (strcmp(tok, fault_names[i]) == 0) f = i;
        if (f < 0) {
            rc = -2;
            break;
        }
        nf[f].on = 1;
        if (c1) {
            char* c2 = strchr(c1, ':');
            if (c2) *c2++ = 0;
            char* end;
            nf[f].nth = strtoll(c1, &end, 10);
            if (*end || nf[f].nth < 1) rc = -2;
            nf[f].count = 1;
            if (c2) {
                nf[f].count = strtoll(c2, &end, 10);
                if (*end || nf[f].count < 1) rc = -2;
            }
        }
    }
    free(s);
    if (rc == 0) {
        pthread_mutex_lock(&mu);
        memcpy(faults, nf, sizeof nf);
        pthread_mutex_unlock(&mu);
    }
    return rc;
}

bool ovd_fault_hit(ovd_fault f) {
    pthread_mutex_lock(&mu);
    bool hit = false;
    int64_t call = 0;
    if (faults[f].on) {
        call = ++faults[f].calls;
        hit = faults[f].nth == 0 || (call >= faults[f].nth && call < faults[f].nth + faults[f].count);
    }
    pthread_mutex_unlock(&mu);
    if (!hit) return false;
    ovd_count(C_FAULTS, 1);
    if (f == FP_ALLOC)
        ovd_err_alloc();
    else
        ovd_err("Exception from ovdouble: injected failure at %s (call %lld)", fault_names[f], (long long)call);
    return true;
}

/* ---- knobs ---- */
static int set_log(const char* path) {
    int fd = -1;
    if (path && *path) {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) return -2;
    }
    pthread_mutex_lock(&mu);
    if (log_fd >= 0) close(log_fd);
    log_fd = fd;
    pthread_mutex_unlock(&mu);
    return 0;
}

static int parse_i64(const char* v, int64_t* out) {
    char* end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < 0) return -2;
    *out = x;
    return 0;
}

OVD_EXPORT int ovdouble_set(const char* knob, const char* value) {
    if (!knob) return -1;
    if (!value) value = "";
    int64_t x;
    if (strcmp(knob, "version") == 0) return set_version(*value ? value : "2025.1");
    if (strcmp(knob, "build_number") == 0) {
        if (strlen(value) >= sizeof build_override) return -2;
        pthread_mutex_lock(&mu);
        snprintf(build_override, sizeof build_override, "%s", value);
        pthread_mutex_unlock(&mu);
        return 0;
    }
    if (strcmp(knob, "devices") == 0) {
        if (!*value) value = "CPU";
        if (strlen(value) >= sizeof devices_v) return -2;
        pthread_mutex_lock(&mu);
        snprintf(devices_v, sizeof devices_v, "%s", value);
        pthread_mutex_unlock(&mu);
        return 0;
    }
    if (strcmp(knob, "fail") == 0) return set_faults(value);
    if (strcmp(knob, "ocl") == 0) return ovd_ocl_set(value);
    if (strcmp(knob, "log") == 0) return set_log(value);
    if (strcmp(knob, "const_at_infer") == 0) {
        atomic_store(&const_at_infer_v, *value && strcmp(value, "0") != 0);
        return 0;
    }
    if (strcmp(knob, "strict") == 0) {
        atomic_store(&strict_v, *value && strcmp(value, "0") != 0);
        return 0;
    }
    if (strcmp(knob, "max_alloc") == 0) {
        if (!*value) value = "0";
        if (parse_i64(value, &x)) return -2;
        atomic_store(&max_alloc_v, x);
        return 0;
    }
    if (strcmp(knob, "gpu_mem") == 0) {
        if (parse_i64(value, &x)) return -2;
        atomic_store(&gpu_mem_v, x);
        return 0;
    }
    return -1;
}

__attribute__((constructor)) static void ovd_init(void) {
    static const struct {
        const char* env;
        const char* knob;
    } envs[] = {{"OVDOUBLE_VERSION", "version"},     {"OVDOUBLE_BUILD_NUMBER", "build_number"},
                {"OVDOUBLE_DEVICES", "devices"},     {"OVDOUBLE_FAIL", "fail"},
                {"OVDOUBLE_LOG", "log"},             {"OVDOUBLE_CONST_AT_INFER", "const_at_infer"},
                {"OVDOUBLE_MAX_ALLOC", "max_alloc"}, {"OVDOUBLE_GPU_MEM", "gpu_mem"},
                {"OVDOUBLE_STRICT", "strict"}};
    set_version("2025.1");
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        const char* v = getenv(envs[i].env);
        if (v && ovdouble_set(envs[i].knob, v) != 0)
            fprintf(stderr, "ovdouble: ignoring %s=%s (bad value)\n", envs[i].env, v);
    }
}

OVD_EXPORT const char* ovdouble_info(void) {
    static _Thread_local char buf[200];
    snprintf(buf, sizeof buf, "ovdouble 1 presenting %s", ovd_rel()->build);
    return buf;
}
