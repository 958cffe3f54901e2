/* ovdouble's OpenCL: the few entry points of libOpenCL (the Khronos OpenCL 3.0 API specification) and of the
 * cl_intel_unified_shared_memory extension (its specification in the Khronos OpenCL registry) that a host program needs to
 * reach the USM device memory of the double's GPU contexts: context, device and platform queries, an in-order
 * command queue, clEnqueueMemcpyINTEL and clEnqueueMemFillINTEL, clFinish. Written from those specifications
 * (facts/opencl.md), not from any OpenCL header or from the Go code; every numeric value is pinned below to
 * facts/opencl.txt.
 *
 * The model (facts/opencl.md 3):
 * - one platform; one cl_context per GPU remote context of the double (the device's default context, or one made by
 *   ov_core_create_context), the OCL_CONTEXT that ov_remote_context_get_params reports; one device in each;
 * - USM device memory lives in the double behind a PROT_NONE reservation (ovd_api.c): a host read or write of it
 *   faults; only this queue and the GPU's infer reach it;
 * - a queue runs its commands in order, and only when the host waits: a blocking memcpy, clFinish, or release.
 *   A non-blocking command not waited for has not happened yet, for the host and for an infer alike (an infer runs on
 *   the plugin's queues, not on this one): "ocl.stale_infers" counts infers that started while a queue of their
 *   context still held commands;
 * - a USM allocation freed while a queue holds commands on it: the commands are dropped, never run on freed memory,
 *   and counted in "ocl.freed_pending" (the program's error: the extension's clMemFreeINTEL leaves commands still
 *   using the memory undefined, only clMemBlockingFreeINTEL waits for them);
 * - events are not modelled: a command asking for one fails with CL_INVALID_OPERATION (the double's rule). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>

#include "ovd.h"

/* cl_int values (OpenCL API 3.0, appendix "Error codes"; facts/opencl.txt) */
enum {
    CL_SUCCESS = 0,
    CL_OUT_OF_HOST_MEMORY = -6,
    CL_MEM_COPY_OVERLAP = -8,
    CL_INVALID_VALUE = -30,
    CL_INVALID_PLATFORM = -32,
    CL_INVALID_DEVICE = -33,
    CL_INVALID_CONTEXT = -34,
    CL_INVALID_QUEUE_PROPERTIES = -35,
    CL_INVALID_COMMAND_QUEUE = -36,
    CL_INVALID_EVENT_WAIT_LIST = -57,
    CL_INVALID_OPERATION = -59,
    CL_INVALID_PROPERTY = -64,
};
/* info names (cl_device_info, cl_context_info, cl_command_queue_info, cl_queue_properties) */
enum {
    CL_DEVICE_EXTENSIONS = 0x1030,
    CL_DEVICE_PLATFORM = 0x1031,
    CL_CONTEXT_DEVICES = 0x1081,
    CL_CONTEXT_NUM_DEVICES = 0x1083,
    CL_QUEUE_CONTEXT = 0x1090,
    CL_QUEUE_DEVICE = 0x1091,
    CL_QUEUE_PROPERTIES = 0x1093,
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE = 1,
    CL_QUEUE_PROFILING_ENABLE = 2,
};

_Static_assert(CL_SUCCESS == 0, "facts/opencl.txt CL_SUCCESS");
_Static_assert(CL_OUT_OF_HOST_MEMORY == -6, "facts/opencl.txt CL_OUT_OF_HOST_MEMORY");
_Static_assert(CL_MEM_COPY_OVERLAP == -8, "facts/opencl.txt CL_MEM_COPY_OVERLAP");
_Static_assert(CL_INVALID_VALUE == -30, "facts/opencl.txt CL_INVALID_VALUE");
_Static_assert(CL_INVALID_PLATFORM == -32, "facts/opencl.txt CL_INVALID_PLATFORM");
_Static_assert(CL_INVALID_DEVICE == -33, "facts/opencl.txt CL_INVALID_DEVICE");
_Static_assert(CL_INVALID_CONTEXT == -34, "facts/opencl.txt CL_INVALID_CONTEXT");
_Static_assert(CL_INVALID_QUEUE_PROPERTIES == -35, "facts/opencl.txt CL_INVALID_QUEUE_PROPERTIES");
_Static_assert(CL_INVALID_COMMAND_QUEUE == -36, "facts/opencl.txt CL_INVALID_COMMAND_QUEUE");
_Static_assert(CL_INVALID_EVENT_WAIT_LIST == -57, "facts/opencl.txt CL_INVALID_EVENT_WAIT_LIST");
_Static_assert(CL_INVALID_OPERATION == -59, "facts/opencl.txt CL_INVALID_OPERATION");
_Static_assert(CL_INVALID_PROPERTY == -64, "facts/opencl.txt CL_INVALID_PROPERTY");
_Static_assert(CL_DEVICE_EXTENSIONS == 0x1030, "facts/opencl.txt CL_DEVICE_EXTENSIONS");
_Static_assert(CL_DEVICE_PLATFORM == 0x1031, "facts/opencl.txt CL_DEVICE_PLATFORM");
_Static_assert(CL_CONTEXT_DEVICES == 0x1081, "facts/opencl.txt CL_CONTEXT_DEVICES");
_Static_assert(CL_CONTEXT_NUM_DEVICES == 0x1083, "facts/opencl.txt CL_CONTEXT_NUM_DEVICES");
_Static_assert(CL_QUEUE_CONTEXT == 0x1090, "facts/opencl.txt CL_QUEUE_CONTEXT");
_Static_assert(CL_QUEUE_DEVICE == 0x1091, "facts/opencl.txt CL_QUEUE_DEVICE");
_Static_assert(CL_QUEUE_PROPERTIES == 0x1093, "facts/opencl.txt CL_QUEUE_PROPERTIES");
_Static_assert(CL_QUEUE_PROFILING_ENABLE == 2, "facts/opencl.txt CL_QUEUE_PROFILING_ENABLE");

/* the scalar types of the API on LP64 (cl_platform.h's typedefs are the C99 ones): cl_int int32_t, cl_uint and
 * cl_bool uint32_t, cl_ulong and cl_bitfield (so cl_queue_properties) uint64_t; handles are pointers */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_queue_properties;
_Static_assert(sizeof(cl_int) == 4 && sizeof(cl_uint) == 4 && sizeof(cl_queue_properties) == 8, "facts/opencl.txt sizes");

#define OCL_EXPORT __attribute__((visibility("default")))
#define MAGIC_PLATFORM 0x6f636c70u
#define MAGIC_CONTEXT 0x6f636c63u
#define MAGIC_DEVICE 0x6f636c64u
#define MAGIC_QUEUE 0x6f636c71u

typedef struct ocl_ctx ocl_ctx;
typedef struct {
    uint32_t magic;
    ocl_ctx* ctx;
} ocl_dev;
struct ocl_ctx {
    uint32_t magic;
    char device[64];
    const void* id; /* the double's remote context id (NULL: the device's default context) */
    ocl_dev dev;
    ocl_ctx* next;
};
static struct {
    uint32_t magic;
} platform = {MAGIC_PLATFORM};

typedef struct {
    int fill;            /* 0 memcpy, 1 fill */
    char* dst;           /* resolved: host memory or the backing of device memory */
    const char* src;     /* memcpy */
    unsigned char pat[128];
    size_t pat_size, size;
} ocl_cmd;
typedef struct ocl_queue {
    uint32_t magic;
    ocl_ctx* ctx;
    ocl_cmd* cmds;
    int n, cap;
    struct ocl_queue* next;
} ocl_queue;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static ocl_ctx* contexts; /* never freed: the driver's contexts live as long as the process */
static ocl_queue* queues;
static atomic_bool no_usm;
static _Atomic int64_t st_memcpy, st_memcpy_bytes, st_fill, st_fill_bytes, st_finish, st_errors, st_stale, st_queues,
    st_freed_pending;

uintptr_t ovd_ocl_context(const char* device, const void* id) {
    pthread_mutex_lock(&mu);
    ocl_ctx* c = contexts;
    while (c && (strcmp(c->device, device) || c->id != id)) c = c->next;
    if (!c) {
        c = calloc(1, sizeof *c);
        c->magic = MAGIC_CONTEXT;
        snprintf(c->device, sizeof c->device, "%s", device);
        c->id = id;
        c->dev.magic = MAGIC_DEVICE;
        c->dev.ctx = c;
        c->next = contexts;
        contexts = c;
    }
    pthread_mutex_unlock(&mu);
    return (uintptr_t)c;
}

static ocl_ctx* as_ctx(const void* h) {
    pthread_mutex_lock(&mu);
    ocl_ctx* c = contexts;
    while (c && (const void*)c != h) c = c->next;
    pthread_mutex_unlock(&mu);
    return c;
}

static ocl_dev* as_dev(const void* h) {
    pthread_mutex_lock(&mu);
    ocl_ctx* c = contexts;
    while (c && (const void*)&c->dev != h) c = c->next;
    pthread_mutex_unlock(&mu);
    return c ? &c->dev : NULL;
}

/* the caller holds mu */
static ocl_queue* as_queue(const void* h) {
    ocl_queue* q = queues;
    while (q && (const void*)q != h) q = q->next;
    return q;
}

static cl_int fail(cl_int e) {
    atomic_fetch_add(&st_errors, 1);
    return e;
}

/* clGet*Info's common rule: a value buffer too small for the answer is CL_INVALID_VALUE */
static cl_int info(const void* v, size_t n, size_t size, void* value, size_t* size_ret) {
    if (value && size < n) return fail(CL_INVALID_VALUE);
    if (value) memcpy(value, v, n);
    if (size_ret) *size_ret = n;
    return CL_SUCCESS;
}

OCL_EXPORT cl_int clGetContextInfo(void* context, cl_uint name, size_t size, void* value, size_t* size_ret) {
    ocl_ctx* c = as_ctx(context);
    if (!c) return fail(CL_INVALID_CONTEXT);
    void* d = &c->dev;
    cl_uint one = 1;
    switch (name) {
    case CL_CONTEXT_DEVICES: return info(&d, sizeof d, size, value, size_ret);
    case CL_CONTEXT_NUM_DEVICES: return info(&one, sizeof one, size, value, size_ret);
    }
    return fail(CL_INVALID_VALUE);
}

OCL_EXPORT cl_int clGetDeviceInfo(void* device, cl_uint name, size_t size, void* value, size_t* size_ret) {
    if (!as_dev(device)) return fail(CL_INVALID_DEVICE);
    void* p = &platform;
    const char* ext = atomic_load(&no_usm) ? "cl_khr_fp16 cl_khr_subgroups"
                                           : "cl_khr_fp16 cl_khr_subgroups cl_intel_unified_shared_memory";
    switch (name) {
    case CL_DEVICE_PLATFORM: return info(&p, sizeof p, size, value, size_ret);
    case CL_DEVICE_EXTENSIONS: return info(ext, strlen(ext) + 1, size, value, size_ret);
    }
    return fail(CL_INVALID_VALUE);
}

OCL_EXPORT void* clCreateCommandQueueWithProperties(void* context, void* device, const cl_queue_properties* props,
                                                    cl_int* errcode_ret) {
    cl_int e = CL_SUCCESS;
    ocl_ctx* c = as_ctx(context);
    ocl_dev* d = as_dev(device);
    if (!c) e = CL_INVALID_CONTEXT;
    else if (!d || d->ctx != c) e = CL_INVALID_DEVICE;
    for (int i = 0; e == CL_SUCCESS && props && props[i]; i += 2) {
        if (props[i] != CL_QUEUE_PROPERTIES) e = CL_INVALID_VALUE;
        else if (props[i + 1] & ~(cl_queue_properties)(CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
            e = CL_INVALID_VALUE;
        else if (props[i + 1] & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
            e = CL_INVALID_QUEUE_PROPERTIES; /* the double's queues are in order only */
    }
    if (errcode_ret) *errcode_ret = e == CL_SUCCESS ? e : fail(e);
    if (e != CL_SUCCESS) return NULL;
    ocl_queue* q = calloc(1, sizeof *q);
    q->magic = MAGIC_QUEUE;
    q->ctx = c;
    pthread_mutex_lock(&mu);
    q->next = queues;
    queues = q;
    pthread_mutex_unlock(&mu);
    atomic_fetch_add(&st_queues, 1);
    return q;
}

/* runs q's commands in order; the caller holds mu */
static void run(ocl_queue* q) {
    for (int i = 0; i < q->n; i++) {
        ocl_cmd* c = &q->cmds[i];
        if (!c->fill) {
            memmove(c->dst, c->src, c->size);
            atomic_fetch_add(&st_memcpy_bytes, (int64_t)c->size);
        } else {
            for (size_t o = 0; o < c->size; o += c->pat_size) memcpy(c->dst + o, c->pat, c->pat_size);
            atomic_fetch_add(&st_fill_bytes, (int64_t)c->size);
        }
    }
    q->n = 0;
}

OCL_EXPORT cl_int clFinish(void* queue) {
    pthread_mutex_lock(&mu);
    ocl_queue* q = as_queue(queue);
    if (q) run(q);
    pthread_mutex_unlock(&mu);
    if (!q) return fail(CL_INVALID_COMMAND_QUEUE);
    atomic_fetch_add(&st_finish, 1);
    return CL_SUCCESS;
}

OCL_EXPORT cl_int clReleaseCommandQueue(void* queue) {
    pthread_mutex_lock(&mu);
    ocl_queue** pp = &queues;
    while (*pp && (void*)*pp != queue) pp = &(*pp)->next;
    ocl_queue* q = *pp;
    if (q) {
        run(q); /* release flushes, and the commands complete */
        *pp = q->next;
    }
    pthread_mutex_unlock(&mu);
    if (!q) return fail(CL_INVALID_COMMAND_QUEUE);
    free(q->cmds);
    free(q);
    atomic_fetch_add(&st_queues, -1);
    return CL_SUCCESS;
}

/* where [p, p+n) is for q's device: the backing of a USM allocation of q's context (device or host memory), or
 * p itself for memory the context did not allocate (system memory, which the extension's copies accept). A range
 * starting in an allocation and running past its end, or device memory of another context, is CL_INVALID_VALUE, the
 * double's reading of "must be accessible". */
static cl_int resolve(const ocl_ctx* c, const void* p, size_t n, char** out) {
    char* mem;
    int kind;
    if (ovd_usm_find((uintptr_t)p, n, c->device, c->id, &kind, &mem) == 0) {
        *out = mem;
        return CL_SUCCESS;
    }
    if (ovd_usm_find((uintptr_t)p, 1, c->device, c->id, &kind, &mem) == 0) return CL_INVALID_VALUE;
    /* device memory of another context: not this device's to reach (and the host's copy would fault) */
    if (ovd_usm_in_device((uintptr_t)p)) return CL_INVALID_VALUE;
    *out = (char*)p;
    return CL_SUCCESS;
}

static cl_int enqueue(void* queue, cl_uint nwait, const void* wait, void* event, ocl_cmd* cmd, const void* dst,
                      const void* src, int blocking) {
    pthread_mutex_lock(&mu);
    cl_int e = CL_SUCCESS;
    ocl_queue* q = as_queue(queue);
    if (!q) e = CL_INVALID_COMMAND_QUEUE;
    else if ((nwait > 0) != (wait != NULL)) e = CL_INVALID_EVENT_WAIT_LIST;
    else if (nwait || event) e = CL_INVALID_OPERATION; /* events: not modelled */
    else if (!dst || (!cmd->fill && !src)) e = CL_INVALID_VALUE;
    else if ((e = resolve(q->ctx, dst, cmd->size, &cmd->dst)) == CL_SUCCESS && !cmd->fill) {
        char* s;
        if ((e = resolve(q->ctx, src, cmd->size, &s)) == CL_SUCCESS) {
            cmd->src = s;
            if (s < cmd->dst + cmd->size && cmd->dst < s + cmd->size && cmd->size) e = CL_MEM_COPY_OVERLAP;
        }
    }
    if (e == CL_SUCCESS) {
        if (q->n == q->cap) {
            q->cap = q->cap ? 2 * q->cap : 8;
            q->cmds = realloc(q->cmds, sizeof *q->cmds * (size_t)q->cap);
        }
        q->cmds[q->n++] = *cmd;
        if (blocking) run(q);
    }
    pthread_mutex_unlock(&mu);
    return e == CL_SUCCESS ? e : fail(e);
}

/* clEnqueueMemcpyINTEL (cl_intel_unified_shared_memory): copies size bytes; blocking waits for it (and for every
 * command before it, the queue being in order) */
static cl_int mem_copy(void* queue, cl_uint blocking, void* dst, const void* src, size_t size, cl_uint nwait,
                       const void* wait, void* event) {
    ocl_cmd c = {.fill = 0, .size = size};
    atomic_fetch_add(&st_memcpy, 1);
    return enqueue(queue, nwait, wait, event, &c, dst, src, blocking != 0);
}

/* clEnqueueMemFillINTEL: pattern_size a power of two up to 128 (the largest vector type, long16), size a multiple
 * of it, dst aligned to it; the pattern is copied when enqueued (the caller may reuse it at once) */
static cl_int mem_fill(void* queue, void* dst, const void* pattern, size_t pattern_size, size_t size, cl_uint nwait,
                       const void* wait, void* event) {
    atomic_fetch_add(&st_fill, 1);
    if (!pattern || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) ||
        size % pattern_size || (uintptr_t)dst % pattern_size) {
        pthread_mutex_lock(&mu);
        cl_int e = as_queue(queue) ? CL_INVALID_VALUE : CL_INVALID_COMMAND_QUEUE;
        pthread_mutex_unlock(&mu);
        return fail(e);
    }
    ocl_cmd c = {.fill = 1, .size = size, .pat_size = pattern_size};
    memcpy(c.pat, pattern, pattern_size);
    return enqueue(queue, nwait, wait, event, &c, dst, NULL, 0);
}

/* the extension's functions are reached only here, as on a real ICD (libOpenCL exports no extension function) */
OCL_EXPORT void* clGetExtensionFunctionAddressForPlatform(void* p, const char* name) {
    if (p != (void*)&platform || !name || atomic_load(&no_usm)) return NULL;
    if (strcmp(name, "clEnqueueMemcpyINTEL") == 0) return (void*)mem_copy;
    if (strcmp(name, "clEnqueueMemFillINTEL") == 0) return (void*)mem_fill;
    return NULL;
}

void ovd_ocl_note_infer(const char* device, const void* id) {
    pthread_mutex_lock(&mu);
    bool pending = false;
    for (ocl_queue* q = queues; q && !pending; q = q->next)
        pending = q->n > 0 && strcmp(q->ctx->device, device) == 0 && q->ctx->id == id;
    pthread_mutex_unlock(&mu);
    if (pending) atomic_fetch_add(&st_stale, 1);
}

static bool overlaps(const char* p, size_t n, const char* mem, size_t cap) { return n && p < mem + cap && mem < p + n; }

void ovd_ocl_forget(const char* mem, size_t cap) {
    pthread_mutex_lock(&mu);
    for (ocl_queue* q = queues; q; q = q->next) {
        int k = 0;
        for (int i = 0; i < q->n; i++) {
            ocl_cmd* c = &q->cmds[i];
            if (overlaps(c->dst, c->size, mem, cap) || (!c->fill && overlaps(c->src, c->size, mem, cap)))
                atomic_fetch_add(&st_freed_pending, 1);
            else
                q->cmds[k++] = *c;
        }
        q->n = k;
    }
    pthread_mutex_unlock(&mu);
}

int64_t ovd_ocl_stat(const char* name) {
    static const struct {
        const char* name;
        _Atomic int64_t* v;
    } s[] = {{"memcpy", &st_memcpy}, {"memcpy_bytes", &st_memcpy_bytes}, {"fill", &st_fill},
             {"fill_bytes", &st_fill_bytes}, {"finish", &st_finish}, {"errors", &st_errors},
             {"stale_infers", &st_stale}, {"queues", &st_queues}, {"freed_pending", &st_freed_pending}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (strcmp(name, s[i].name) == 0) return atomic_load(s[i].v);
    if (strcmp(name, "pending") == 0) {
        int64_t n = 0;
        pthread_mutex_lock(&mu);
        for (ocl_queue* q = queues; q; q = q->next) n += q->n;
        pthread_mutex_unlock(&mu);
        return n;
    }
    return -1;
}

void ovd_ocl_reset(void) {
    _Atomic int64_t* c[] = {&st_memcpy, &st_memcpy_bytes, &st_fill, &st_fill_bytes, &st_finish, &st_errors, &st_stale,
                            &st_freed_pending};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) atomic_store(c[i], 0);
}

int ovd_ocl_set(const char* value) {
    if (strcmp(value, "no_usm") == 0) atomic_store(&no_usm, true);
    else if (!*value) atomic_store(&no_usm, false);
    else return -2;
    return 0;
}
