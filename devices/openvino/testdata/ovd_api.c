/* ovdouble: the exported OpenVINO C API functions (signatures as documented, see ovd_decl.h): objects, tensor
 * binding checks, infer, properties, export/import, errors and versions. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ovd.h"
#include "ovd_decl.h"

#define ENTER                                      \
    ovd_call _c;                                   \
    do {                                           \
        static int _id = -1;                                         \
        int _v = __atomic_load_n(&_id, __ATOMIC_RELAXED);            \
        if (_v < 0) {                                                \
            _v = ovd_fn_id(__func__);                                \
            __atomic_store_n(&_id, _v, __ATOMIC_RELAXED);            \
        }                                                            \
        _c.fn = _v;                                                  \
        ovd_enter(&_c, __func__);                  \
    } while (0)
#define RET(st) return ovd_leave(&_c, (st), NULL)
#define RET_D(st, d) return ovd_leave(&_c, (st), (d))
#define FAIL(st) return ovd_leave(&_c, ovd_fail_status(st), NULL)
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            ovd_err("ovdouble: invalid C parameter in %s (%s)", __func__, #cond);   \
            FAIL(INVALID_C_PARAM);                                                    \
        }                                                                             \
    } while (0)
#define HANDLE(p, kind)                                                                                  \
    do {                                                                                                 \
        if (!(p)) {                                                                                      \
            ovd_err("ovdouble: NULL handle %s in %s", #p, __func__);                                     \
            FAIL(INVALID_C_PARAM);                                                                       \
        }                                                                                                \
        if (!ovd_reg_has((p), (kind))) {                                                                 \
            ovd_count(C_BAD_HANDLE, 1);                                                                  \
            ovd_err("ovdouble: %s in %s is not a live handle of its type (freed, or another object)", #p, \
                    __func__);                                                                           \
            FAIL(INVALID_C_PARAM);                                                                       \
        }                                                                                                \
    } while (0)

/* ---- buffers and tensors ---- */
static ovd_buf* buf_new(size_t bytes, bool zero);

ovd_buf* ovd_buf_new(size_t bytes) { return buf_new(bytes, true); }

/* buf_new without zeroing: an imported model's weights, of which only the Constants' spans are written and read
 * (the gaps between the weight buffers they came from may be large: untouched, they take no memory) */
static ovd_buf* buf_new(size_t bytes, bool zero) {
    if (ovd_fault_hit(FP_ALLOC) || (ovd_max_alloc() > 0 && (int64_t)bytes > ovd_max_alloc())) {
        ovd_err_alloc();
        return NULL;
    }
    ovd_buf* b = calloc(1, sizeof *b);
    /* 64-byte aligned like OpenVINO's default allocator */
    void* m = NULL;
    if (!b || posix_memalign(&m, 64, bytes ? bytes : 1)) {
        free(b);
        ovd_err_alloc();
        return NULL;
    }
    if (zero) memset(m, 0, bytes ? bytes : 1);
    b->refs = 1;
    b->mem = m;
    b->cap = bytes;
    b->owned = 1;
    ovd_live_bytes((int64_t)bytes);
    return b;
}

ovd_buf* ovd_buf_wrap(void* mem, size_t cap) {
    ovd_buf* b = calloc(1, sizeof *b);
    b->refs = 1;
    b->mem = mem;
    b->cap = cap;
    return b;
}

void ovd_buf_ref(ovd_buf* b) { __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED); }

void ovd_buf_unref(ovd_buf* b) {
    if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (b->owned) {
        free(b->mem);
        ovd_live_bytes(-(int64_t)b->cap);
    }
    free(b);
}

typedef struct {
    int refs;
    ovd_type type;
    ovd_pshape shape;
    ovd_buf* buf;
    int remote;       /* 0 host, 1 USM host/user (host-visible), 2 USM device (not host-visible) */
    char device[64];  /* remote tensors: the context's device */
    const void* ctx;  /* remote tensors: NULL for the device's default context, else the context created */
    int64_t usm_id;   /* a USM allocation (create_tensor/create_host_tensor): its id; a USM_USER_BUFFER: the
                       * allocation it lies in, checked live at every infer; 0 for other tensors */
    bool usm_owner;   /* this tensor made the allocation usm_id (unregistered when it goes) */
    bool plugin;      /* allocated by the request itself (the plugin's memory: never transferred) */
} timpl;

/* ---- USM allocations of the remote contexts (GPU): what a USM_USER_BUFFER's MEM_HANDLE must lie in ---- */
typedef struct {
    int64_t id;
    char* mem;
    size_t cap;
    uintptr_t handle; /* the address the host is given: mem for host memory, a PROT_NONE reservation for device memory */
    size_t resv;      /* the reservation's size (device memory) */
    int kind;         /* 1 host, 2 device */
    char device[64];
    const void* ctx;
} usm_alloc;
static usm_alloc* usm_allocs;
static int usm_n, usm_cap;
static int64_t usm_next = 1;
static pthread_mutex_t usm_mu = PTHREAD_MUTEX_INITIALIZER;

static int64_t usm_register(char* mem, size_t cap, int kind, const char* device, const void* ctx) {
    pthread_mutex_lock(&usm_mu);
    if (usm_n == usm_cap) {
        usm_cap = usm_cap ? 2 * usm_cap : 16;
        usm_allocs = realloc(usm_allocs, sizeof *usm_allocs * (size_t)usm_cap);
    }
    usm_alloc* a = &usm_allocs[usm_n++];
    a->id = usm_next++;
    a->mem = mem;
    a->cap = cap;
    a->kind = kind;
    a->handle = (uintptr_t)mem;
    a->resv = 0;
    if (kind == 2) {
        /* device memory: the host is given an address range it cannot touch (a read or write of it faults), and
         * the memory starts as garbage (0xff bytes: NaN in every float type), as a GPU's does */
        long pg = sysconf(_SC_PAGESIZE);
        a->resv = (cap + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
        if (!a->resv) a->resv = (size_t)pg;
        void* r = mmap(NULL, a->resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        a->handle = r == MAP_FAILED ? 0 : (uintptr_t)r;
        memset(mem, 0xff, cap);
    }
    snprintf(a->device, sizeof a->device, "%s", device);
    a->ctx = ctx;
    int64_t id = a->id;
    pthread_mutex_unlock(&usm_mu);
    return id;
}

static void usm_unregister(int64_t id) {
    pthread_mutex_lock(&usm_mu);
    for (int i = 0; i < usm_n; i++)
        if (usm_allocs[i].id == id) {
            if (usm_allocs[i].resv) munmap((void*)usm_allocs[i].handle, usm_allocs[i].resv);
            usm_allocs[i] = usm_allocs[--usm_n];
            break;
        }
    pthread_mutex_unlock(&usm_mu);
}

static bool usm_live(int64_t id) {
    bool ok = false;
    pthread_mutex_lock(&usm_mu);
    for (int i = 0; i < usm_n && !ok; i++) ok = usm_allocs[i].id == id;
    pthread_mutex_unlock(&usm_mu);
    return ok;
}


/* finds the allocation of context ctx on device holding bytes [h, h+n) of handle h (a host pointer for USM host
 * memory, a device handle for USM device memory): 0 and the allocation's id, kind and host address, or -1 */
static int usm_find(uintptr_t h, size_t n, const char* device, const void* ctx, int64_t* id, int* kind, char** mem) {
    int rc = -1;
    pthread_mutex_lock(&usm_mu);
    for (int i = 0; i < usm_n && rc; i++) {
        usm_alloc* a = &usm_allocs[i];
        uintptr_t base = a->handle;
        if (!base || strcmp(a->device, device) || a->ctx != ctx || h < base || h - base > a->cap || n > a->cap - (h - base))
            continue;
        *id = a->id;
        *kind = a->kind;
        *mem = a->mem + (h - base);
        rc = 0;
    }
    pthread_mutex_unlock(&usm_mu);
    return rc;
}

int ovd_usm_find(uintptr_t h, size_t n, const char* device, const void* ctx, int* kind, char** mem) {
    int64_t id;
    return usm_find(h, n, device, ctx, &id, kind, mem);
}

int64_t ovd_usm_live(void) {
    pthread_mutex_lock(&usm_mu);
    int64_t n = usm_n;
    pthread_mutex_unlock(&usm_mu);
    return n;
}

/* whether p lies in the reservation of a live USM device allocation (any context) */
bool ovd_usm_in_device(uintptr_t p) {
    bool in = false;
    pthread_mutex_lock(&usm_mu);
    for (int i = 0; i < usm_n && !in; i++)
        in = usm_allocs[i].resv && p >= usm_allocs[i].handle && p - usm_allocs[i].handle < usm_allocs[i].resv;
    pthread_mutex_unlock(&usm_mu);
    return in;
}

/* host<->device bytes of the last infer on a GPU request, per port, and in total (xfer.* stats) */
static int64_t* xfer_in;
static int64_t* xfer_out;
static int xfer_nin, xfer_nout;
static pthread_mutex_t xfer_mu = PTHREAD_MUTEX_INITIALIZER;

int64_t ovd_xfer_last(const char* what) {
    int64_t v = -1;
    pthread_mutex_lock(&xfer_mu);
    int i;
    if (strcmp(what, "nin") == 0) v = xfer_nin;
    else if (strcmp(what, "nout") == 0) v = xfer_nout;
    else if (sscanf(what, "in.%d", &i) == 1 && i >= 0 && i < xfer_nin) v = xfer_in[i];
    else if (sscanf(what, "out.%d", &i) == 1 && i >= 0 && i < xfer_nout) v = xfer_out[i];
    pthread_mutex_unlock(&xfer_mu);
    return v;
}

struct ov_tensor {
    timpl* t;
};

static void timpl_unref(timpl* t) {
    if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (t->usm_owner) {
        /* before the allocation goes (and outside usm_mu, which the OpenCL side takes under its own lock) */
        ovd_ocl_forget(t->buf->mem, t->buf->cap);
        usm_unregister(t->usm_id);
    }
    ovd_buf_unref(t->buf);
    free(t);
}

static timpl* timpl_ref(timpl* t) {
    __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
    return t;
}

static size_t timpl_bytes(const timpl* t) { return ovd_type_bytes(t->type, ovd_ps_numel(&t->shape)); }

static ov_tensor_t* handle_new(timpl* t) {
    ov_tensor_t* h = malloc(sizeof *h);
    h->t = t;
    ovd_reg_add(h, K_TENSOR);
    ovd_live_add(L_TENSOR, 1);
    return h;
}

static timpl* timpl_alloc(ovd_type type, const ovd_pshape* s) {
    ovd_buf* b = ovd_buf_new(ovd_type_bytes(type, ovd_ps_numel(s)));
    if (!b) return NULL;
    timpl* t = calloc(1, sizeof *t);
    t->refs = 1;
    t->type = type;
    t->shape = *s;
    t->buf = b;
    return t;
}

static int shape_in(const ov_shape_t* s, ovd_pshape* ps) {
    if (s->rank < 0 || s->rank > OVD_MAXR) return ovd_err("ovdouble: shape rank %" PRId64 " is outside 0..%d", s->rank, OVD_MAXR);
    if (s->rank > 0 && !s->dims) return ovd_err("ovdouble: shape with rank %" PRId64 " has NULL dims", s->rank);
    ps->rank = (int)s->rank;
    for (int i = 0; i < ps->rank; i++) {
        if (s->dims[i] < 0) return ovd_err("Cannot create a tensor with a negative dimension (%" PRId64 " at %d)", s->dims[i], i);
        ps->d[i] = s->dims[i];
    }
    return 0;
}

static int type_in(ov_element_type_e e, ovd_type* t) {
    if (ovd_type_from_ext(e, t))
        return ovd_err("Exception from src/core/src/type/element_type.cpp: Unsupported element type value %d for the "
                       "release presented (%s)", e, ovd_rel()->build);
    if (*t == T_DYNAMIC || *t == T_UNDEF)
        return ovd_err("Exception from src/inference/src/dev/make_tensor.cpp: Cannot create a tensor of element type "
                       "%s (value %d)", ovd_type_name(*t), e);
    if (*t == T_STRING) return ovd_err("ovdouble: string tensors are not supported (element type value %d)", e);
    return 0;
}

OVD_EXPORT ov_status_e ov_tensor_create(const ov_element_type_e type, const ov_shape_t shape, ov_tensor_t** tensor) {
    ENTER;
    CHECK(tensor);
    if (ovd_fault_hit(FP_TENSOR_CREATE)) FAIL(GENERAL_ERROR);
    ovd_type t;
    ovd_pshape ps;
    if (type_in(type, &t) || shape_in(&shape, &ps)) FAIL(GENERAL_ERROR);
    timpl* ti = timpl_alloc(t, &ps);
    if (!ti) FAIL(UNKNOW_EXCEPTION);
    *tensor = handle_new(ti);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_tensor_create_from_host_ptr(const ov_element_type_e type, const ov_shape_t shape,
                                                      void* host_ptr, ov_tensor_t** tensor) {
    ENTER;
    CHECK(tensor && host_ptr);
    if (ovd_fault_hit(FP_TENSOR_CREATE)) FAIL(GENERAL_ERROR);
    if (ovd_usm_in_device((uintptr_t)host_ptr)) {
        /* a host tensor reads and writes its memory on the host: device memory would fault (the double's rule) */
        ovd_err("ovdouble: host pointer %p lies in USM device memory, which the host cannot address", host_ptr);
        FAIL(GENERAL_ERROR);
    }
    ovd_type t;
    ovd_pshape ps;
    if (type_in(type, &t) || shape_in(&shape, &ps)) FAIL(GENERAL_ERROR);
    timpl* ti = calloc(1, sizeof *ti);
    ti->refs = 1;
    ti->type = t;
    ti->shape = ps;
    ti->buf = ovd_buf_wrap(host_ptr, ovd_type_bytes(t, ovd_ps_numel(&ps)));
    *tensor = handle_new(ti);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_tensor_set_shape(ov_tensor_t* tensor, const ov_shape_t shape) {
    ENTER;
    HANDLE(tensor, K_TENSOR);
    ovd_pshape ps;
    if (shape_in(&shape, &ps)) FAIL(GENERAL_ERROR);
    timpl* t = tensor->t;
    size_t need = ovd_type_bytes(t->type, ovd_ps_numel(&ps));
    if (need > t->buf->cap) {
        if (!t->buf->owned) {
            char a[160], b[160];
            ovd_ps_str(&ps, a, sizeof a);
            ovd_ps_str(&t->shape, b, sizeof b);
            ovd_err("Exception from src/inference/src/dev/make_tensor.cpp: Could set new shape %s which is bigger than "
                    "allocated size of the host tensor (shape %s)", a, b);
            FAIL(GENERAL_ERROR);
        }
        ovd_buf* nb = ovd_buf_new(need);
        if (!nb) FAIL(UNKNOW_EXCEPTION);
        ovd_buf_unref(t->buf);
        t->buf = nb;
    }
    t->shape = ps;
    RET(OK);
}

static int shape_out(const ovd_pshape* ps, ov_shape_t* s) {
    s->rank = ps->rank;
    s->dims = malloc(sizeof(int64_t) * (size_t)(ps->rank > 0 ? ps->rank : 1));
    for (int i = 0; i < ps->rank; i++) s->dims[i] = ps->d[i];
    ovd_reg_add(s->dims, K_DIMS);
    ovd_live_add(L_SHAPE, 1);
    return 0;
}

OVD_EXPORT ov_status_e ov_tensor_get_shape(const ov_tensor_t* tensor, ov_shape_t* shape) {
    ENTER;
    HANDLE(tensor, K_TENSOR);
    CHECK(shape);
    shape_out(&tensor->t->shape, shape);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_tensor_get_element_type(const ov_tensor_t* tensor, ov_element_type_e* type) {
    ENTER;
    HANDLE(tensor, K_TENSOR);
    CHECK(type);
    *type = ovd_type_to_ext(tensor->t->type);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_tensor_get_size(const ov_tensor_t* tensor, size_t* elements_size) {
    ENTER;
    HANDLE(tensor, K_TENSOR);
    CHECK(elements_size);
    *elements_size = (size_t)ovd_ps_numel(&tensor->t->shape);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_tensor_get_byte_size(const ov_tensor_t* tensor, size_t* byte_size) {
    ENTER;
    HANDLE(tensor, K_TENSOR);
    CHECK(byte_size);
    *byte_size = timpl_bytes(tensor->t);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_tensor_data(const ov_tensor_t* tensor, void** data) {
    ENTER;
    HANDLE(tensor, K_TENSOR);
    CHECK(data);
    if (tensor->t->remote == 2) {
        ovd_err("Exception from src/inference/src/dev/make_tensor.cpp: [GPU] data() of a USM device tensor is not "
                "accessible from the host (ovdouble models device memory as unreachable)");
        FAIL(GENERAL_ERROR);
    }
    *data = tensor->t->buf->mem;
    RET(OK);
}

OVD_EXPORT void ov_tensor_free(ov_tensor_t* tensor) {
    ENTER;
    if (!tensor) {
        ovd_count(C_FREE_NULL, 1);
    } else if (!ovd_reg_del(tensor, K_TENSOR)) {
        ovd_count(C_BAD_FREE, 1);
    } else {
        timpl_unref(tensor->t);
        free(tensor);
        ovd_live_add(L_TENSOR, -1);
    }
    ovd_leave_void(&_c);
}

/* ---- shapes ---- */
OVD_EXPORT ov_status_e ov_shape_create(const int64_t rank, const int64_t* dims, ov_shape_t* shape) {
    ENTER;
    CHECK(shape && rank >= 0 && (rank == 0 || dims));
    shape->rank = rank;
    shape->dims = malloc(sizeof(int64_t) * (size_t)(rank > 0 ? rank : 1));
    for (int64_t i = 0; i < rank; i++) shape->dims[i] = dims[i];
    ovd_reg_add(shape->dims, K_DIMS);
    ovd_live_add(L_SHAPE, 1);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_shape_free(ov_shape_t* shape) {
    ENTER;
    CHECK(shape);
    if (shape->dims) {
        if (!ovd_reg_del(shape->dims, K_DIMS)) {
            ovd_count(C_BAD_FREE, 1);
            ovd_err("ovdouble: ov_shape_free of dims OpenVINO did not allocate (the real library would delete[] a "
                    "foreign pointer)");
            FAIL(GENERAL_ERROR);
        }
        free(shape->dims);
        ovd_live_add(L_SHAPE, -1);
    }
    shape->dims = NULL;
    shape->rank = 0;
    RET(OK);
}

static ov_status_e pshape_make(int64_t rank_min, int64_t rank_max, const ov_dimension_t* dims,
                               ov_partial_shape_t* ps) {
    ps->rank.min = rank_min;
    ps->rank.max = rank_max;
    ps->dims = NULL;
    if (rank_min == rank_max && rank_min > 0) {
        ps->dims = malloc(sizeof(ov_dimension_t) * (size_t)rank_min);
        for (int64_t i = 0; i < rank_min; i++) ps->dims[i] = dims[i];
        ovd_reg_add(ps->dims, K_PDIMS);
        ovd_live_add(L_SHAPE, 1);
    }
    return OK;
}

OVD_EXPORT ov_status_e ov_partial_shape_create(const int64_t rank, const ov_dimension_t* dims,
                                               ov_partial_shape_t* partial_shape_obj) {
    ENTER;
    CHECK(partial_shape_obj && rank >= 0 && (rank == 0 || dims));
    for (int64_t i = 0; i < rank; i++) CHECK(dims[i].min >= -1 && (dims[i].max == -1 || dims[i].max >= dims[i].min));
    RET(pshape_make(rank, rank, dims, partial_shape_obj));
}

OVD_EXPORT ov_status_e ov_partial_shape_create_static(const int64_t rank, const int64_t* dims,
                                                      ov_partial_shape_t* partial_shape_obj) {
    ENTER;
    CHECK(partial_shape_obj && rank >= 0 && (rank == 0 || dims));
    ov_dimension_t d[OVD_MAXR * 4];
    CHECK(rank <= OVD_MAXR * 4);
    for (int64_t i = 0; i < rank; i++) {
        CHECK(dims[i] >= 0);
        d[i].min = d[i].max = dims[i];
    }
    RET(pshape_make(rank, rank, d, partial_shape_obj));
}

OVD_EXPORT ov_status_e ov_partial_shape_create_dynamic(const ov_rank_t rank, const ov_dimension_t* dims,
                                                       ov_partial_shape_t* partial_shape_obj) {
    ENTER;
    CHECK(partial_shape_obj);
    if (rank.min == rank.max && rank.min >= 0) {
        CHECK(rank.min == 0 || dims);
        RET(pshape_make(rank.min, rank.max, dims, partial_shape_obj));
    }
    RET(pshape_make(rank.min, rank.max, NULL, partial_shape_obj));
}

OVD_EXPORT void ov_partial_shape_free(ov_partial_shape_t* partial_shape) {
    ENTER;
    if (!partial_shape) {
        ovd_count(C_FREE_NULL, 1);
    } else if (partial_shape->dims) {
        if (!ovd_reg_del(partial_shape->dims, K_PDIMS))
            ovd_count(C_BAD_FREE, 1);
        else {
            free(partial_shape->dims);
            ovd_live_add(L_SHAPE, -1);
        }
        partial_shape->dims = NULL;
    }
    ovd_leave_void(&_c);
}

static bool pshape_dynamic(const ov_partial_shape_t* p) {
    if (p->rank.min != p->rank.max || p->rank.min < 0) return true;
    for (int64_t i = 0; i < p->rank.min; i++)
        if (p->dims[i].min != p->dims[i].max || p->dims[i].min < 0) return true;
    return false;
}

OVD_EXPORT ov_status_e ov_partial_shape_to_shape(const ov_partial_shape_t partial_shape, ov_shape_t* shape) {
    ENTER;
    CHECK(shape);
    if (pshape_dynamic(&partial_shape)) {
        ovd_err("Exception from src/core/src/partial_shape.cpp: to_shape was called on a dynamic shape.");
        FAIL(GENERAL_ERROR);
    }
    ovd_pshape ps = {.rank = (int)partial_shape.rank.min};
    CHECK(ps.rank <= OVD_MAXR);
    for (int i = 0; i < ps.rank; i++) ps.d[i] = partial_shape.dims[i].min;
    shape_out(&ps, shape);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_shape_to_partial_shape(const ov_shape_t shape, ov_partial_shape_t* partial_shape) {
    ENTER;
    CHECK(partial_shape && shape.rank >= 0 && (shape.rank == 0 || shape.dims));
    ov_dimension_t d[OVD_MAXR * 4];
    CHECK(shape.rank <= OVD_MAXR * 4);
    for (int64_t i = 0; i < shape.rank; i++) d[i].min = d[i].max = shape.dims[i];
    RET(pshape_make(shape.rank, shape.rank, d, partial_shape));
}

OVD_EXPORT bool ov_partial_shape_is_dynamic(const ov_partial_shape_t partial_shape) {
    ENTER;
    bool r = pshape_dynamic(&partial_shape);
    ovd_leave_void(&_c);
    return r;
}

OVD_EXPORT const char* ov_partial_shape_to_string(const ov_partial_shape_t p) {
    ENTER;
    char buf[512];
    size_t k = 0;
    if (p.rank.min != p.rank.max || p.rank.min < 0)
        snprintf(buf, sizeof buf, "[...]");
    else {
        k += (size_t)snprintf(buf, sizeof buf, "[");
        for (int64_t i = 0; i < p.rank.min && k < sizeof buf - 40; i++) {
            const ov_dimension_t* d = &p.dims[i];
            if (d->min == d->max && d->min >= 0)
                k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%" PRId64, i ? "," : "", d->min);
            else if (d->max < 0 && d->min <= 0)
                k += (size_t)snprintf(buf + k, sizeof buf - k, "%s?", i ? "," : "");
            else
                k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%" PRId64 "..%" PRId64, i ? "," : "", d->min, d->max);
        }
        snprintf(buf + k, sizeof buf - k, "]");
    }
    char* s = ovd_api_string(buf);
    ovd_leave_void(&_c);
    return s;
}

OVD_EXPORT bool ov_dimension_is_dynamic(const ov_dimension_t dim) { return dim.min != dim.max || dim.min < 0; }
OVD_EXPORT bool ov_rank_is_dynamic(const ov_rank_t rank) { return rank.min != rank.max || rank.min < 0; }

/* ---- errors and versions ---- */
/* The real runtime's strings (testdata/facts/error-info.txt, 2025.0.0 = 2026.4.1). */
OVD_EXPORT const char* ov_get_error_info(ov_status_e status) {
    switch (status) {
    case OK: return "success";
    case GENERAL_ERROR: return "general error";
    case NOT_IMPLEMENTED: return "it's not implement";
    case NETWORK_NOT_LOADED: return "failed to network";
    case PARAMETER_MISMATCH: return "input parameter mismatch";
    case NOT_FOUND: return "cannot find the value";
    case OUT_OF_BOUNDS: return "out of bounds";
    case UNEXPECTED: return "run with unexpected error";
    case REQUEST_BUSY: return "request is busy";
    case RESULT_NOT_READY: return "result is not ready";
    case NOT_ALLOCATED: return "it is not allocated";
    case INFER_NOT_STARTED: return "inference start with error";
    case NETWORK_NOT_READ: return "network is not ready";
    case INFER_CANCELLED: return "inference is canceled";
    case INVALID_C_PARAM: return "invalid c input parameters";
    case UNKNOWN_C_ERROR: return "unknown c error";
    case NOT_IMPLEMENT_C_METHOD: return "not implement in c method";
    case UNKNOW_EXCEPTION: return "unknown exception";
    }
    return "unknown exception";
}

OVD_EXPORT const char* ov_get_last_err_msg(void) {
    ovd_call _c;
    static int id = -1;
    int v = __atomic_load_n(&id, __ATOMIC_RELAXED);
    if (v < 0) {
        v = ovd_fn_id(__func__);
        __atomic_store_n(&id, v, __ATOMIC_RELAXED);
    }
    _c.fn = v;
    ovd_enter(&_c, __func__);
    const char* c = ovd_last_error_copy();
    ovd_leave_void(&_c);
    return c;
}

OVD_EXPORT void ov_free(const char* content) {
    ENTER;
    if (!content)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(content, K_STRING))
        ovd_count(C_BAD_FREE, 1);
    else {
        free((void*)content);
        ovd_live_add(L_STRING, -1);
    }
    ovd_leave_void(&_c);
}

OVD_EXPORT ov_status_e ov_get_openvino_version(ov_version_t* version) {
    ENTER;
    CHECK(version);
    if (ovd_fault_hit(FP_VERSION)) FAIL(GENERAL_ERROR);
    version->buildNumber = ovd_api_string(ovd_rel()->build);
    version->description = ovd_api_string("OpenVINO Runtime");
    RET(OK);
}

static void free_api_string(const char* s) {
    if (!s) return;
    if (!ovd_reg_del(s, K_STRING)) {
        ovd_count(C_BAD_FREE, 1);
        return;
    }
    free((void*)s);
    ovd_live_add(L_STRING, -1);
}

OVD_EXPORT void ov_version_free(ov_version_t* version) {
    ENTER;
    if (!version)
        ovd_count(C_FREE_NULL, 1);
    else {
        free_api_string(version->buildNumber);
        free_api_string(version->description);
        version->buildNumber = version->description = NULL;
    }
    ovd_leave_void(&_c);
}

OVD_EXPORT void ov_shutdown(void) {
    ENTER;
    ovd_leave_void(&_c);
}

/* ---- property keys (data symbols, openvino.md 2.5) ---- */
#define KEY(s, v) OVD_EXPORT const char* ov_property_key_##s = v;
KEY(supported_properties, "SUPPORTED_PROPERTIES")
KEY(available_devices, "AVAILABLE_DEVICES")
KEY(optimal_number_of_infer_requests, "OPTIMAL_NUMBER_OF_INFER_REQUESTS")
KEY(range_for_async_infer_requests, "RANGE_FOR_ASYNC_INFER_REQUESTS")
KEY(range_for_streams, "RANGE_FOR_STREAMS")
KEY(device_full_name, "FULL_DEVICE_NAME")
KEY(device_capabilities, "OPTIMIZATION_CAPABILITIES")
KEY(model_name, "NETWORK_NAME")
KEY(optimal_batch_size, "OPTIMAL_BATCH_SIZE")
KEY(max_batch_size, "MAX_BATCH_SIZE")
KEY(cache_dir, "CACHE_DIR")
KEY(cache_mode, "CACHE_MODE")
KEY(num_streams, "NUM_STREAMS")
KEY(affinity, "AFFINITY")
KEY(inference_num_threads, "INFERENCE_NUM_THREADS")
KEY(hint_performance_mode, "PERFORMANCE_HINT")
KEY(hint_enable_cpu_pinning, "ENABLE_CPU_PINNING")
KEY(hint_scheduling_core_type, "SCHEDULING_CORE_TYPE")
KEY(hint_enable_hyper_threading, "ENABLE_HYPER_THREADING")
KEY(hint_inference_precision, "INFERENCE_PRECISION_HINT")
KEY(hint_num_requests, "PERFORMANCE_HINT_NUM_REQUESTS")
KEY(hint_model_priority, "MODEL_PRIORITY")
KEY(hint_execution_mode, "EXECUTION_MODE_HINT")
KEY(log_level, "LOG_LEVEL")
KEY(enable_profiling, "PERF_COUNT")
KEY(device_priorities, "MULTI_DEVICE_PRIORITIES")
KEY(force_tbb_terminate, "FORCE_TBB_TERMINATE")
KEY(enable_mmap, "ENABLE_MMAP")
KEY(auto_batch_timeout, "AUTO_BATCH_TIMEOUT")
KEY(cache_encryption_callbacks, "CACHE_ENCRYPTION_CALLBACKS")
#undef KEY

/* ---- devices and properties ---- */
typedef struct {
    char *dev, *key, *val;
} prop;

typedef struct {
    int n;
    prop* p;
} propset;

static void props_set(propset* s, const char* dev, const char* key, const char* val) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->p[i].dev, dev) == 0 && strcmp(s->p[i].key, key) == 0) {
            free(s->p[i].val);
            s->p[i].val = ovd_strdup(val);
            return;
        }
    s->p = realloc(s->p, sizeof(prop) * (size_t)(s->n + 1));
    s->p[s->n++] = (prop){ovd_strdup(dev), ovd_strdup(key), ovd_strdup(val)};
}

static const char* props_get(const propset* s, const char* dev, const char* key) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->p[i].dev, dev) == 0 && strcmp(s->p[i].key, key) == 0) return s->p[i].val;
    return NULL;
}

static void props_free(propset* s) {
    for (int i = 0; i < s->n; i++) {
        free(s->p[i].dev);
        free(s->p[i].key);
        free(s->p[i].val);
    }
    free(s->p);
    s->p = NULL;
    s->n = 0;
}

/* "CPU", "GPU", "GPU.1" -> the device kind prefix */
static void dev_kind(const char* dev, char* kind, size_t cap) {
    size_t i = 0;
    while (dev[i] && dev[i] != '.' && i + 1 < cap) {
        kind[i] = dev[i];
        i++;
    }
    kind[i] = 0;
}

/* resolves a device name against the configured list; AUTO/NULL/"" pick the first */
static int resolve_device(const char* dev, char* out, size_t cap) {
    char list[256];
    snprintf(list, sizeof list, "%s", ovd_devices());
    char* save = NULL;
    char* first = strtok_r(list, ",", &save);
    if (!first) return ovd_err("No devices are configured (OVDOUBLE_DEVICES is empty)");
    if (!dev || !*dev || strcmp(dev, "AUTO") == 0) {
        snprintf(out, cap, "%s", first);
        return 0;
    }
    for (char* d = first; d; d = strtok_r(NULL, ",", &save)) {
        char k[32];
        dev_kind(d, k, sizeof k);
        /* "GPU" names the first GPU when the GPUs are enumerated as GPU.0, GPU.1 */
        if (strcmp(d, dev) == 0 || (strcmp(k, dev) == 0 && strncmp(d, k, strlen(k)) == 0)) {
            snprintf(out, cap, "%s", d);
            return 0;
        }
    }
    return ovd_err("Exception from src/inference/src/dev/core_impl.cpp: Device with \"%s\" name is not registered in "
                   "the OpenVINO Runtime", dev);
}

static const char* common_keys[] = {
    "CACHE_DIR", "CACHE_MODE", "PERFORMANCE_HINT", "PERFORMANCE_HINT_NUM_REQUESTS", "INFERENCE_PRECISION_HINT",
    "EXECUTION_MODE_HINT", "NUM_STREAMS", "INFERENCE_NUM_THREADS", "PERF_COUNT", "LOG_LEVEL", "ENABLE_MMAP",
    "MODEL_PRIORITY", "KV_CACHE_PRECISION", "DYNAMIC_QUANTIZATION_GROUP_SIZE", "CACHE_ENCRYPTION_CALLBACKS",
    "WEIGHTS_PATH", "ACTIVATIONS_SCALE_FACTOR", NULL};
static const char* cpu_keys[] = {"ENABLE_CPU_PINNING", "ENABLE_HYPER_THREADING", "SCHEDULING_CORE_TYPE",
                                 "CPU_DENORMALS_OPTIMIZATION", "CPU_SPARSE_WEIGHTS_DECOMPRESSION_RATE", NULL};

static bool in_list(const char* const* l, const char* k) {
    for (; *l; l++)
        if (strcmp(*l, k) == 0) return true;
    return false;
}

static bool one_of(const char* v, const char* const* l) {
    for (; *l; l++)
        if (strcasecmp(*l, v) == 0) return true;
    return false;
}

/* the checks a plugin's set_property makes: known key for this device, valid value */
static int check_property(const char* dev, const char* key, const char* val) {
    char kind[32];
    dev_kind(dev, kind, sizeof kind);
    bool ok = in_list(common_keys, key) || (strcmp(kind, "CPU") == 0 && in_list(cpu_keys, key)) ||
              (strcmp(kind, "GPU") == 0 && strncmp(key, "GPU_", 4) == 0) ||
              (strcmp(kind, "NPU") == 0 && (strncmp(key, "NPU_", 4) == 0 || strncmp(key, "NPUW_", 5) == 0));
    if (!ok)
        return ovd_err("Exception from src/inference/src/dev/plugin.cpp: NotFound: Unsupported property %s by %s plugin.", key, kind);
    static const char* perf[] = {"LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT", "", NULL};
    static const char* prec[] = {"f32", "f16", "bf16", "dynamic", "undefined", NULL};
    static const char* mode[] = {"PERFORMANCE", "ACCURACY", NULL};
    static const char* cmode[] = {"OPTIMIZE_SIZE", "OPTIMIZE_SPEED", NULL};
    static const char* yn[] = {"YES", "NO", "TRUE", "FALSE", "1", "0", NULL};
    static const char* kvp[] = {"f32", "f16", "bf16", "u8", "i8", "u4", "i4", NULL};
    const char* const* allowed = NULL;
    if (strcmp(key, "PERFORMANCE_HINT") == 0) allowed = perf;
    else if (strcmp(key, "INFERENCE_PRECISION_HINT") == 0) allowed = prec;
    else if (strcmp(key, "EXECUTION_MODE_HINT") == 0) allowed = mode;
    else if (strcmp(key, "CACHE_MODE") == 0) allowed = cmode;
    else if (strcmp(key, "KV_CACHE_PRECISION") == 0) allowed = kvp;
    else if (strcmp(key, "PERF_COUNT") == 0 || strcmp(key, "ENABLE_MMAP") == 0 || strcmp(key, "ENABLE_CPU_PINNING") == 0 ||
             strcmp(key, "ENABLE_HYPER_THREADING") == 0)
        allowed = yn;
    if (allowed && !one_of(val, allowed))
        return ovd_err("Exception from src/inference/src/dev/plugin.cpp: Wrong value %s for property key %s.", val, key);
    if (strcmp(key, "NUM_STREAMS") == 0 || strcmp(key, "INFERENCE_NUM_THREADS") == 0 ||
        strcmp(key, "PERFORMANCE_HINT_NUM_REQUESTS") == 0) {
        char* end;
        long v = strtol(val, &end, 10);
        if ((*end || end == val || v < -1) && strcmp(val, "AUTO") != 0 && strcmp(val, "NUMA") != 0)
            return ovd_err("Exception from src/inference/src/dev/plugin.cpp: Wrong value %s for property key %s. Expected "
                           "non negative numbers.", val, key);
    }
    return 0;
}

struct ov_core {
    pthread_mutex_t mu;
    propset props;
};

OVD_EXPORT ov_status_e ov_core_create_with_config(const char* xml_config_file, ov_core_t** core) {
    ENTER;
    CHECK(xml_config_file && core);
    if (ovd_fault_hit(FP_CORE_CREATE)) FAIL(GENERAL_ERROR);
    if (*xml_config_file) {
        FILE* f = fopen(xml_config_file, "rb");
        if (!f) {
            ovd_err("Exception from src/inference/src/dev/core_impl.cpp: Cannot open plugins config file %s", xml_config_file);
            FAIL(GENERAL_ERROR);
        }
        fclose(f);
    }
    ov_core_t* c = calloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    ovd_reg_add(c, K_CORE);
    ovd_live_add(L_CORE, 1);
    *core = c;
    RET(OK);
}

OVD_EXPORT ov_status_e ov_core_create(ov_core_t** core) {
    ENTER;
    CHECK(core);
    if (ovd_fault_hit(FP_CORE_CREATE)) FAIL(GENERAL_ERROR);
    ov_core_t* c = calloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    ovd_reg_add(c, K_CORE);
    ovd_live_add(L_CORE, 1);
    *core = c;
    RET(OK);
}

OVD_EXPORT void ov_core_free(ov_core_t* core) {
    ENTER;
    if (!core)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(core, K_CORE))
        ovd_count(C_BAD_FREE, 1);
    else {
        props_free(&core->props);
        pthread_mutex_destroy(&core->mu);
        free(core);
        ovd_live_add(L_CORE, -1);
        ovd_clear_last_error();
    }
    ovd_leave_void(&_c);
}

OVD_EXPORT ov_status_e ov_core_get_available_devices(const ov_core_t* core, ov_available_devices_t* devices) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(devices);
    if (ovd_fault_hit(FP_DEVICES)) FAIL(GENERAL_ERROR);
    char list[256];
    snprintf(list, sizeof list, "%s", ovd_devices());
    char** v = calloc(16, sizeof(char*));
    size_t n = 0;
    char* save = NULL;
    for (char* d = strtok_r(list, ",", &save); d && n < 16; d = strtok_r(NULL, ",", &save)) v[n++] = ovd_strdup(d);
    devices->devices = v;
    devices->size = n;
    ovd_reg_add(v, K_DEVLIST);
    RET(OK);
}

OVD_EXPORT void ov_available_devices_free(ov_available_devices_t* devices) {
    ENTER;
    if (!devices || !devices->devices)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(devices->devices, K_DEVLIST))
        ovd_count(C_BAD_FREE, 1);
    else {
        for (size_t i = 0; i < devices->size; i++) free(devices->devices[i]);
        free(devices->devices);
        devices->devices = NULL;
        devices->size = 0;
    }
    ovd_leave_void(&_c);
}

static const char* plugin_desc(const char* kind) {
    if (strcmp(kind, "GPU") == 0) return "Intel GPU plugin";
    if (strcmp(kind, "NPU") == 0) return "NPU Runtime";
    return "openvino_intel_cpu_plugin";
}

OVD_EXPORT ov_status_e ov_core_get_versions_by_device_name(const ov_core_t* core, const char* device_name,
                                                           ov_core_version_list_t* versions) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(device_name && versions);
    char dev[64], kind[32];
    if (resolve_device(device_name, dev, sizeof dev)) FAIL(GENERAL_ERROR);
    dev_kind(dev, kind, sizeof kind);
    ov_core_version_t* v = calloc(1, sizeof *v);
    v->device_name = ovd_strdup(kind);
    v->version.buildNumber = ovd_strdup(ovd_rel()->build);
    v->version.description = ovd_strdup(plugin_desc(kind));
    versions->versions = v;
    versions->size = 1;
    ovd_reg_add(v, K_VERLIST);
    RET(OK);
}

OVD_EXPORT void ov_core_versions_free(ov_core_version_list_t* versions) {
    ENTER;
    if (!versions || !versions->versions)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(versions->versions, K_VERLIST))
        ovd_count(C_BAD_FREE, 1);
    else {
        for (size_t i = 0; i < versions->size; i++) {
            free((void*)versions->versions[i].device_name);
            free((void*)versions->versions[i].version.buildNumber);
            free((void*)versions->versions[i].version.description);
        }
        free(versions->versions);
        versions->versions = NULL;
        versions->size = 0;
    }
    ovd_leave_void(&_c);
}

/* read-only device properties; NULL if the key is not a device property */
static const char* device_property(const char* dev, const char* key, char* buf, size_t cap) {
    char kind[32];
    dev_kind(dev, kind, sizeof kind);
    bool gpu = strcmp(kind, "GPU") == 0, npu = strcmp(kind, "NPU") == 0;
    if (strcmp(key, "FULL_DEVICE_NAME") == 0)
        snprintf(buf, cap, "%s", gpu ? "Intel(R) Graphics [ovdouble] (iGPU)" : npu ? "Intel(R) AI Boost [ovdouble]"
                                                                                 : "ovdouble CPU (test double)");
    else if (strcmp(key, "OPTIMIZATION_CAPABILITIES") == 0)
        snprintf(buf, cap, "%s", gpu ? "FP32 BIN FP16 INT8 EXPORT_IMPORT" : npu ? "FP16 INT8 EXPORT_IMPORT"
                                                                                : "FP32 INT8 BIN EXPORT_IMPORT");
    else if (strcmp(key, "DEVICE_TYPE") == 0)
        snprintf(buf, cap, "%s", "integrated");
    else if (strcmp(key, "DEVICE_ARCHITECTURE") == 0)
        snprintf(buf, cap, "%s", gpu ? "GPU: vendor=0x8086 arch=ovdouble" : npu ? "ovdouble-npu" : "intel64");
    else if (strcmp(key, "AVAILABLE_DEVICES") == 0) {
        const char* dot = strchr(dev, '.');
        snprintf(buf, cap, "%s", dot ? dot + 1 : "");
    } else if (strcmp(key, "RANGE_FOR_ASYNC_INFER_REQUESTS") == 0)
        snprintf(buf, cap, "1 1 1");
    else if (strcmp(key, "RANGE_FOR_STREAMS") == 0)
        snprintf(buf, cap, "1 1");
    else if (strcmp(key, "OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 0)
        snprintf(buf, cap, "1");
    else if (gpu && strcmp(key, "GPU_DEVICE_TOTAL_MEM_SIZE") == 0)
        snprintf(buf, cap, "%lld", (long long)ovd_gpu_mem());
    else if (npu && strcmp(key, "NPU_DEVICE_TOTAL_MEM_SIZE") == 0)
        snprintf(buf, cap, "%lld", (long long)ovd_gpu_mem());
    else if (strcmp(key, "SUPPORTED_PROPERTIES") == 0) {
        size_t k = (size_t)snprintf(buf, cap, "FULL_DEVICE_NAME OPTIMIZATION_CAPABILITIES DEVICE_TYPE "
                                              "DEVICE_ARCHITECTURE AVAILABLE_DEVICES RANGE_FOR_ASYNC_INFER_REQUESTS");
        for (const char* const* l = common_keys; *l && k < cap; l++) k += (size_t)snprintf(buf + k, cap - k, " %s", *l);
    } else
        return NULL;
    return buf;
}

static const char* property_default(const char* key) {
    static const struct {
        const char *k, *v;
    } d[] = {{"CACHE_DIR", ""}, {"CACHE_MODE", "OPTIMIZE_SPEED"}, {"PERFORMANCE_HINT", "LATENCY"},
             {"PERFORMANCE_HINT_NUM_REQUESTS", "0"}, {"INFERENCE_PRECISION_HINT", "f32"},
             {"EXECUTION_MODE_HINT", "PERFORMANCE"}, {"NUM_STREAMS", "1"}, {"INFERENCE_NUM_THREADS", "0"},
             {"PERF_COUNT", "NO"}, {"LOG_LEVEL", "LOG_NONE"}, {"ENABLE_MMAP", "YES"}, {"MODEL_PRIORITY", "MEDIUM"}};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (strcmp(d[i].k, key) == 0) return d[i].v;
    return NULL;
}

OVD_EXPORT ov_status_e ov_core_get_property(const ov_core_t* core, const char* device_name, const char* property_key,
                                            char** property_value) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(device_name && property_key && property_value);
    if (ovd_fault_hit(FP_GET_PROPERTY)) FAIL(GENERAL_ERROR);
    char dev[64], buf[1024];
    if (resolve_device(device_name, dev, sizeof dev)) FAIL(GENERAL_ERROR);
    ov_core_t* c = (ov_core_t*)core;
    pthread_mutex_lock(&c->mu);
    const char* v = props_get(&c->props, dev, property_key);
    char tmp[1024];
    if (v) snprintf(tmp, sizeof tmp, "%s", v);
    pthread_mutex_unlock(&c->mu);
    if (v) v = tmp;
    if (!v) v = device_property(dev, property_key, buf, sizeof buf);
    if (!v) v = property_default(property_key);
    if (!v) {
        char kind[32];
        dev_kind(dev, kind, sizeof kind);
        ovd_err("Exception from src/inference/src/dev/plugin.cpp: NotFound: Unsupported property %s by %s plugin.",
                property_key, kind);
        FAIL(GENERAL_ERROR);
    }
    *property_value = ovd_api_string(v);
    RET_D(OK, property_key);
}

static ov_status_e core_set(ov_core_t* core, const char* dev_name, const char* key, const char* val) {
    char dev[64];
    if (resolve_device(dev_name, dev, sizeof dev)) return ovd_fail_status(GENERAL_ERROR);
    if (device_property(dev, key, (char[64]){0}, 64)) {
        ovd_err("Exception from src/inference/src/dev/plugin.cpp: Property %s is read-only", key);
        return ovd_fail_status(GENERAL_ERROR);
    }
    if (check_property(dev, key, val)) return ovd_fail_status(GENERAL_ERROR);
    pthread_mutex_lock(&core->mu);
    props_set(&core->props, dev, key, val);
    pthread_mutex_unlock(&core->mu);
    return OK;
}

OVD_EXPORT ov_status_e ov_core_set_property(const ov_core_t* core, const char* device_name, ...) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(device_name);
    va_list ap;
    va_start(ap, device_name);
    const char* key = va_arg(ap, const char*);
    const char* val = va_arg(ap, const char*);
    va_end(ap);
    CHECK(key && val);
    if (ovd_fault_hit(FP_SET_PROPERTY)) FAIL(GENERAL_ERROR);
    ov_status_e st = core_set((ov_core_t*)core, device_name, key, val);
    RET_D(st, key);
}

#ifdef OVD_WITH_PROPS
OVD_EXPORT ov_status_e ov_core_set_properties(const ov_core_t* core, const char* device_name,
                                              const size_t property_size, const ov_property_t* properties) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(device_name && (property_size == 0 || properties));
    for (size_t i = 0; i < property_size; i++) CHECK(properties[i].key && properties[i].value);
    if (ovd_fault_hit(FP_SET_PROPERTY)) FAIL(GENERAL_ERROR);
    for (size_t i = 0; i < property_size; i++) {
        ov_status_e st = core_set((ov_core_t*)core, device_name, properties[i].key, properties[i].value);
        if (st != OK) RET(st);
    }
    RET(OK);
}
#endif

/* ---- models ---- */
struct ov_model {
    ovd_graph* g;
};

static ov_model_t* model_new(ovd_graph* g) {
    ov_model_t* m = calloc(1, sizeof *m);
    m->g = g;
    ovd_reg_add(m, K_MODEL);
    ovd_live_add(L_MODEL, 1);
    return m;
}

OVD_EXPORT ov_status_e ov_core_read_model_from_memory_buffer(const ov_core_t* core, const char* model_str,
                                                             const size_t str_len, const ov_tensor_t* weights,
                                                             ov_model_t** model) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(model_str && model && str_len != 0);
    if (weights) HANDLE(weights, K_TENSOR);
    if (ovd_fault_hit(FP_READ_MODEL)) FAIL(GENERAL_ERROR);
    const void* w = NULL;
    size_t ws = 0;
    ovd_buf* wb = NULL;
    if (weights) {
        w = weights->t->buf->mem;
        ws = timpl_bytes(weights->t);
        wb = weights->t->buf;
    }
    ovd_graph* g = ovd_ir_read(model_str, str_len, w, ws, wb);
    if (!g) FAIL(GENERAL_ERROR);
    *model = model_new(g);
    char d[64];
    snprintf(d, sizeof d, "layers=%d", g->nnodes);
    RET_D(OK, d);
}

static char* read_file(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* b = malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t r = fread(b, 1, (size_t)(n > 0 ? n : 0), f);
    fclose(f);
    b[r] = 0;
    *len = r;
    return b;
}

static ovd_graph* read_model_files(const char* xml_path, const char* bin_path) {
    size_t xl = 0, bl = 0;
    char* x = read_file(xml_path, &xl);
    if (!x) {
        ovd_err("Exception from src/inference/src/model_reader.cpp: Model file %s cannot be opened!", xml_path);
        return NULL;
    }
    char binbuf[4096];
    if (!bin_path || !*bin_path) {
        snprintf(binbuf, sizeof binbuf, "%s", xml_path);
        char* dot = strrchr(binbuf, '.');
        if (dot) snprintf(dot, sizeof binbuf - (size_t)(dot - binbuf), ".bin");
        bin_path = binbuf;
    }
    char* b = read_file(bin_path, &bl);
    ovd_buf* wb = NULL;
    if (b) {
        wb = ovd_buf_wrap(b, bl);
        wb->owned = 1;
        ovd_live_bytes((int64_t)bl);
    }
    ovd_graph* g = ovd_ir_read(x, xl, b, bl, wb);
    if (wb) ovd_buf_unref(wb);
    free(x);
    return g;
}

OVD_EXPORT ov_status_e ov_core_read_model(const ov_core_t* core, const char* model_path, const char* bin_path,
                                          ov_model_t** model) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(model_path && model);
    if (ovd_fault_hit(FP_READ_MODEL)) FAIL(GENERAL_ERROR);
    ovd_graph* g = read_model_files(model_path, bin_path);
    if (!g) FAIL(GENERAL_ERROR);
    *model = model_new(g);
    RET(OK);
}

OVD_EXPORT void ov_model_free(ov_model_t* model) {
    ENTER;
    if (!model)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(model, K_MODEL))
        ovd_count(C_BAD_FREE, 1);
    else {
        ovd_graph_unref(model->g);
        free(model);
        ovd_live_add(L_MODEL, -1);
    }
    ovd_leave_void(&_c);
}

OVD_EXPORT ov_status_e ov_model_inputs_size(const ov_model_t* model, size_t* input_size) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(input_size);
    *input_size = (size_t)model->g->nparams;
    RET(OK);
}

OVD_EXPORT ov_status_e ov_model_outputs_size(const ov_model_t* model, size_t* output_size) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(output_size);
    *output_size = (size_t)model->g->nresults;
    RET(OK);
}

static bool graph_dynamic(const ovd_graph* g) {
    for (int i = 0; i < g->nparams; i++)
        if (!ovd_ps_static(&ovd_graph_in_port(g, i)->ps)) return true;
    for (int i = 0; i < g->nresults; i++)
        if (!ovd_ps_static(&ovd_graph_out_port(g, i)->ps)) return true;
    return false;
}

OVD_EXPORT bool ov_model_is_dynamic(const ov_model_t* model) {
    ENTER;
    bool r = model && ovd_reg_has(model, K_MODEL) && graph_dynamic(model->g);
    ovd_leave_void(&_c);
    return r;
}

OVD_EXPORT ov_status_e ov_model_get_friendly_name(const ov_model_t* model, char** friendly_name) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(friendly_name);
    *friendly_name = ovd_api_string(model->g->name);
    RET(OK);
}

/* ---- ports ---- */
struct ov_output_const_port {
    ovd_graph* g;
    int is_input;
    int index;
};

static ov_output_const_port_t* port_new(ovd_graph* g, int is_input, int index) {
    ov_output_const_port_t* p = calloc(1, sizeof *p);
    __atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
    p->g = g;
    p->is_input = is_input;
    p->index = index;
    ovd_reg_add(p, K_PORT);
    ovd_live_add(L_PORT, 1);
    return p;
}

static const ovd_out* port_out(const ov_output_const_port_t* p) {
    return p->is_input ? ovd_graph_in_port(p->g, p->index) : ovd_graph_out_port(p->g, p->index);
}

static ov_status_e port_by_index(ovd_graph* g, int is_input, size_t index, ov_output_const_port_t** port) {
    size_t n = (size_t)(is_input ? g->nparams : g->nresults);
    if (index >= n) {
        ovd_err("Exception from src/core/src/model.cpp: %s index %zu is out of range (the model has %zu)",
                is_input ? "input" : "output", index, n);
        return ovd_fail_status(OUT_OF_BOUNDS);
    }
    *port = port_new(g, is_input, (int)index);
    return OK;
}

static ov_status_e port_by_name(ovd_graph* g, int is_input, const char* name, ov_output_const_port_t** port) {
    int i = is_input ? ovd_graph_find_param(g, name) : ovd_graph_find_result(g, name);
    if (i < 0) {
        ovd_err("Exception from src/core/src/model.cpp: %s for tensor name '%s' was not found.",
                is_input ? "Input" : "Output", name);
        return ovd_fail_status(GENERAL_ERROR);
    }
    *port = port_new(g, is_input, i);
    return OK;
}

OVD_EXPORT ov_status_e ov_model_const_input_by_index(const ov_model_t* model, const size_t index,
                                                     ov_output_const_port_t** input_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(input_port);
    RET(port_by_index(model->g, 1, index, input_port));
}

OVD_EXPORT ov_status_e ov_model_const_output_by_index(const ov_model_t* model, const size_t index,
                                                      ov_output_const_port_t** output_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(output_port);
    RET(port_by_index(model->g, 0, index, output_port));
}

OVD_EXPORT ov_status_e ov_model_const_input_by_name(const ov_model_t* model, const char* tensor_name,
                                                    ov_output_const_port_t** input_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(tensor_name && input_port);
    RET(port_by_name(model->g, 1, tensor_name, input_port));
}

OVD_EXPORT ov_status_e ov_model_const_output_by_name(const ov_model_t* model, const char* tensor_name,
                                                     ov_output_const_port_t** output_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(tensor_name && output_port);
    RET(port_by_name(model->g, 0, tensor_name, output_port));
}

static ov_status_e single_port(ovd_graph* g, int is_input, ov_output_const_port_t** port) {
    int n = is_input ? g->nparams : g->nresults;
    if (n != 1) {
        ovd_err("Exception from src/core/src/model.cpp: %s() must be called on a model with exactly one %s (it has %d)",
                is_input ? "input" : "output", is_input ? "parameter" : "result", n);
        return ovd_fail_status(GENERAL_ERROR);
    }
    *port = port_new(g, is_input, 0);
    return OK;
}

OVD_EXPORT ov_status_e ov_model_const_input(const ov_model_t* model, ov_output_const_port_t** input_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(input_port);
    RET(single_port(model->g, 1, input_port));
}

OVD_EXPORT ov_status_e ov_model_const_output(const ov_model_t* model, ov_output_const_port_t** output_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(output_port);
    RET(single_port(model->g, 0, output_port));
}

OVD_EXPORT ov_status_e ov_model_input(const ov_model_t* model, ov_output_port_t** input_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(input_port);
    RET(single_port(model->g, 1, input_port));
}

OVD_EXPORT ov_status_e ov_model_output(const ov_model_t* model, ov_output_port_t** output_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(output_port);
    RET(single_port(model->g, 0, output_port));
}

OVD_EXPORT ov_status_e ov_model_input_by_index(const ov_model_t* model, const size_t index, ov_output_port_t** input_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(input_port);
    RET(port_by_index(model->g, 1, index, input_port));
}

OVD_EXPORT ov_status_e ov_model_output_by_index(const ov_model_t* model, const size_t index,
                                                ov_output_port_t** output_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(output_port);
    RET(port_by_index(model->g, 0, index, output_port));
}

OVD_EXPORT ov_status_e ov_model_input_by_name(const ov_model_t* model, const char* tensor_name,
                                              ov_output_port_t** input_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(tensor_name && input_port);
    RET(port_by_name(model->g, 1, tensor_name, input_port));
}

OVD_EXPORT ov_status_e ov_model_output_by_name(const ov_model_t* model, const char* tensor_name,
                                               ov_output_port_t** output_port) {
    ENTER;
    HANDLE(model, K_MODEL);
    CHECK(tensor_name && output_port);
    RET(port_by_name(model->g, 0, tensor_name, output_port));
}

OVD_EXPORT ov_status_e ov_port_get_element_type(const ov_output_const_port_t* port, ov_element_type_e* tensor_type) {
    ENTER;
    HANDLE(port, K_PORT);
    CHECK(tensor_type);
    *tensor_type = ovd_type_to_ext(port_out(port)->type);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_port_get_any_name(const ov_output_const_port_t* port, char** tensor_name) {
    ENTER;
    HANDLE(port, K_PORT);
    CHECK(tensor_name);
    const ovd_out* o = port_out(port);
    if (o->nnames == 0) {
        ovd_err("Exception from src/core/src/descriptor/tensor.cpp: Attempt to get a name for a Tensor without names");
        FAIL(GENERAL_ERROR);
    }
    /* get_any_name returns the lexicographically smallest name */
    const char* best = o->names[0];
    for (int i = 1; i < o->nnames; i++)
        if (strcmp(o->names[i], best) < 0) best = o->names[i];
    *tensor_name = ovd_api_string(best);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_port_get_partial_shape(const ov_output_const_port_t* port,
                                                 ov_partial_shape_t* partial_shape) {
    ENTER;
    HANDLE(port, K_PORT);
    CHECK(partial_shape);
    const ovd_pshape* s = &port_out(port)->ps;
    if (s->rank < 0) RET(pshape_make(-1, -1, NULL, partial_shape));
    ov_dimension_t d[OVD_MAXR];
    for (int i = 0; i < s->rank; i++) {
        d[i].min = s->d[i] < 0 ? 0 : s->d[i];
        d[i].max = s->d[i];
    }
    RET(pshape_make(s->rank, s->rank, d, partial_shape));
}

OVD_EXPORT ov_status_e ov_port_get_shape(const ov_output_const_port_t* port, ov_shape_t* tensor_shape) {
    ENTER;
    HANDLE(port, K_PORT);
    CHECK(tensor_shape);
    const ovd_pshape* s = &port_out(port)->ps;
    if (!ovd_ps_static(s)) {
        char b[160];
        ovd_ps_str(s, b, sizeof b);
        ovd_err("Exception from src/core/src/partial_shape.cpp: get_shape was called on a descriptor::Tensor with "
                "dynamic shape %s", b);
        FAIL(GENERAL_ERROR);
    }
    shape_out(s, tensor_shape);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_const_port_get_shape(const ov_output_const_port_t* port, ov_shape_t* tensor_shape) {
    ENTER;
    HANDLE(port, K_PORT);
    CHECK(tensor_shape);
    const ovd_pshape* s = &port_out(port)->ps;
    if (!ovd_ps_static(s)) {
        char b[160];
        ovd_ps_str(s, b, sizeof b);
        ovd_err("Exception from src/core/src/partial_shape.cpp: get_shape was called on a descriptor::Tensor with "
                "dynamic shape %s", b);
        FAIL(GENERAL_ERROR);
    }
    shape_out(s, tensor_shape);
    RET(OK);
}

static void port_free(ov_output_const_port_t* port) {
    if (!port)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(port, K_PORT))
        ovd_count(C_BAD_FREE, 1);
    else {
        ovd_graph_unref(port->g);
        free(port);
        ovd_live_add(L_PORT, -1);
    }
}

OVD_EXPORT void ov_output_const_port_free(ov_output_const_port_t* port) {
    ENTER;
    port_free(port);
    ovd_leave_void(&_c);
}

OVD_EXPORT void ov_output_port_free(ov_output_port_t* port) {
    ENTER;
    port_free(port);
    ovd_leave_void(&_c);
}

/* ---- compiled models ---- */
struct ov_compiled_model {
    int refs; /* the user's handle and every infer request */
    ovd_plan plan;
    char device[64];
    propset props;
    const void* ctx; /* compiled with a created remote context (compile_model_with_context), else NULL: the default */
};

static void cm_unref(ov_compiled_model_t* cm) {
    if (__atomic_sub_fetch(&cm->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    ovd_plan_free(&cm->plan);
    props_free(&cm->props);
    free(cm);
}

static ov_status_e compile(const ov_core_t* core, ovd_graph* g, const char* device_name, size_t n,
                           const char* const* kv, ov_compiled_model_t** out) {
    char dev[64];
    if (resolve_device(device_name, dev, sizeof dev)) return ovd_fail_status(GENERAL_ERROR);
    for (size_t i = 0; i < n; i++)
        if (check_property(dev, kv[2 * i], kv[2 * i + 1])) return ovd_fail_status(GENERAL_ERROR);
    if (ovd_fault_hit(FP_COMPILE)) return ovd_fail_status(GENERAL_ERROR);
    if (ovd_npu_check(g, dev)) return ovd_fail_status(GENERAL_ERROR);
    ov_compiled_model_t* cm = calloc(1, sizeof *cm);
    cm->refs = 1;
    snprintf(cm->device, sizeof cm->device, "%s", dev);
    /* core properties for this device, then the call's own */
    ov_core_t* c = (ov_core_t*)core;
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < c->props.n; i++)
        if (strcmp(c->props.p[i].dev, dev) == 0) props_set(&cm->props, dev, c->props.p[i].key, c->props.p[i].val);
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++) props_set(&cm->props, dev, kv[2 * i], kv[2 * i + 1]);
    if (ovd_plan_build(&cm->plan, g, !ovd_const_at_infer())) {
        props_free(&cm->props);
        free(cm);
        return ovd_fail_status(GENERAL_ERROR);
    }
    ovd_count(C_COMPILE, 1);
    ovd_count(C_CONST_BYTES, cm->plan.const_bytes);
    ovd_reg_add(cm, K_COMPILED);
    ovd_live_add(L_COMPILED, 1);
    *out = cm;
    return OK;
}

/* reads `n` variadic char* arguments (key, value pairs) */
static int read_pairs(va_list ap, size_t nargs, const char** kv) {
    if (nargs % 2) return ovd_err("ovdouble: property_args_size must be even (key, value pairs); got %zu", nargs);
    if (nargs > 64) return ovd_err("ovdouble: more than 32 properties in one call");
    for (size_t i = 0; i < nargs; i++) {
        kv[i] = va_arg(ap, const char*);
        if (!kv[i]) return ovd_err("ovdouble: property argument %zu is NULL", i);
    }
    return 0;
}

OVD_EXPORT ov_status_e ov_core_compile_model(const ov_core_t* core, const ov_model_t* model,
                                             const char* device_name, const size_t property_args_size,
                                             ov_compiled_model_t** compiled_model, ...) {
    ENTER;
    HANDLE(core, K_CORE);
    HANDLE(model, K_MODEL);
    CHECK(compiled_model);
    const char* kv[64];
    va_list ap;
    va_start(ap, compiled_model);
    int rc = read_pairs(ap, property_args_size, kv);
    va_end(ap);
    if (rc) FAIL(INVALID_C_PARAM);
    ov_status_e st = compile(core, model->g, device_name, property_args_size / 2, kv, compiled_model);
    char d[96];
    snprintf(d, sizeof d, "device=%s props=%zu", device_name ? device_name : "(null)", property_args_size / 2);
    RET_D(st, st == OK ? d : NULL);
}

OVD_EXPORT ov_status_e ov_core_compile_model_from_file(const ov_core_t* core, const char* model_path,
                                                       const char* device_name, const size_t property_args_size,
                                                       ov_compiled_model_t** compiled_model, ...) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(model_path && compiled_model);
    const char* kv[64];
    va_list ap;
    va_start(ap, compiled_model);
    int rc = read_pairs(ap, property_args_size, kv);
    va_end(ap);
    if (rc) FAIL(INVALID_C_PARAM);
    if (ovd_fault_hit(FP_READ_MODEL)) FAIL(GENERAL_ERROR);
    ovd_graph* g = read_model_files(model_path, NULL);
    if (!g) FAIL(GENERAL_ERROR);
    ov_status_e st = compile(core, g, device_name, property_args_size / 2, kv, compiled_model);
    ovd_graph_unref(g);
    RET(st);
}

#ifdef OVD_WITH_PROPS
OVD_EXPORT ov_status_e ov_core_compile_model_props(const ov_core_t* core, const ov_model_t* model,
                                                   const char* device_name, const size_t property_size,
                                                   const ov_property_t* properties,
                                                   ov_compiled_model_t** compiled_model) {
    ENTER;
    HANDLE(core, K_CORE);
    HANDLE(model, K_MODEL);
    CHECK(compiled_model && (property_size == 0 || properties) && property_size <= 32);
    const char* kv[64];
    for (size_t i = 0; i < property_size; i++) {
        CHECK(properties[i].key && properties[i].value);
        kv[2 * i] = properties[i].key;
        kv[2 * i + 1] = properties[i].value;
    }
    RET(compile(core, model->g, device_name, property_size, kv, compiled_model));
}
#endif

OVD_EXPORT void ov_compiled_model_free(ov_compiled_model_t* compiled_model) {
    ENTER;
    if (!compiled_model)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(compiled_model, K_COMPILED))
        ovd_count(C_BAD_FREE, 1);
    else {
        ovd_live_add(L_COMPILED, -1);
        cm_unref(compiled_model);
    }
    ovd_leave_void(&_c);
}

OVD_EXPORT ov_status_e ov_compiled_model_inputs_size(const ov_compiled_model_t* compiled_model, size_t* size) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(size);
    *size = (size_t)compiled_model->plan.g->nparams;
    RET(OK);
}

OVD_EXPORT ov_status_e ov_compiled_model_outputs_size(const ov_compiled_model_t* compiled_model, size_t* size) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(size);
    *size = (size_t)compiled_model->plan.g->nresults;
    RET(OK);
}

OVD_EXPORT ov_status_e ov_compiled_model_input_by_index(const ov_compiled_model_t* compiled_model,
                                                        const size_t index, ov_output_const_port_t** input_port) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(input_port);
    RET(port_by_index(compiled_model->plan.g, 1, index, input_port));
}

OVD_EXPORT ov_status_e ov_compiled_model_output_by_index(const ov_compiled_model_t* compiled_model,
                                                         const size_t index, ov_output_const_port_t** output_port) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(output_port);
    RET(port_by_index(compiled_model->plan.g, 0, index, output_port));
}

OVD_EXPORT ov_status_e ov_compiled_model_input_by_name(const ov_compiled_model_t* compiled_model, const char* name,
                                                       ov_output_const_port_t** input_port) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(name && input_port);
    RET(port_by_name(compiled_model->plan.g, 1, name, input_port));
}

OVD_EXPORT ov_status_e ov_compiled_model_output_by_name(const ov_compiled_model_t* compiled_model, const char* name,
                                                        ov_output_const_port_t** output_port) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(name && output_port);
    RET(port_by_name(compiled_model->plan.g, 0, name, output_port));
}

OVD_EXPORT ov_status_e ov_compiled_model_input(const ov_compiled_model_t* compiled_model,
                                               ov_output_const_port_t** input_port) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(input_port);
    RET(single_port(compiled_model->plan.g, 1, input_port));
}

OVD_EXPORT ov_status_e ov_compiled_model_output(const ov_compiled_model_t* compiled_model,
                                                ov_output_const_port_t** output_port) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(output_port);
    RET(single_port(compiled_model->plan.g, 0, output_port));
}

OVD_EXPORT ov_status_e ov_compiled_model_get_property(const ov_compiled_model_t* compiled_model,
                                                      const char* property_key, char** property_value) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(property_key && property_value);
    if (ovd_fault_hit(FP_GET_PROPERTY)) FAIL(GENERAL_ERROR);
    const ov_compiled_model_t* cm = compiled_model;
    const char* v = props_get(&cm->props, cm->device, property_key);
    char buf[256];
    if (!v && strcmp(property_key, "NETWORK_NAME") == 0) v = cm->plan.g->name;
    if (!v && strcmp(property_key, "EXECUTION_DEVICES") == 0) v = cm->device;
    if (!v && strcmp(property_key, "OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 0) v = "1";
    if (!v && strcmp(property_key, "SUPPORTED_PROPERTIES") == 0)
        v = "NETWORK_NAME EXECUTION_DEVICES OPTIMAL_NUMBER_OF_INFER_REQUESTS INFERENCE_PRECISION_HINT "
            "EXECUTION_MODE_HINT PERFORMANCE_HINT NUM_STREAMS PERF_COUNT CACHE_DIR";
    if (!v && strcmp(property_key, "LOADED_FROM_CACHE") == 0) v = "NO";
    if (!v) v = property_default(property_key);
    if (!v) {
        char kind[32];
        dev_kind(cm->device, kind, sizeof kind);
        ovd_err("Exception from src/plugins/intel_%s/src/compiled_model.cpp: Unsupported property %s",
                strcmp(kind, "GPU") == 0 ? "gpu" : strcmp(kind, "NPU") == 0 ? "npu" : "cpu", property_key);
        FAIL(GENERAL_ERROR);
    }
    snprintf(buf, sizeof buf, "%s", v);
    *property_value = ovd_api_string(buf);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_compiled_model_set_property(const ov_compiled_model_t* compiled_model, ...) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    va_list ap;
    va_start(ap, compiled_model);
    const char* key = va_arg(ap, const char*);
    const char* val = va_arg(ap, const char*);
    va_end(ap);
    CHECK(key && val);
    if (ovd_fault_hit(FP_SET_PROPERTY)) FAIL(GENERAL_ERROR);
    /* the CPU plugin's compiled model accepts no run-time property changes */
    ovd_err("Exception from src/plugins/intel_cpu/src/compiled_model.cpp: Not Implemented: set_property(%s) of a "
            "compiled model", key);
    FAIL(NOT_IMPLEMENTED);
}

#ifdef OVD_WITH_PROPS
OVD_EXPORT ov_status_e ov_compiled_model_set_properties(const ov_compiled_model_t* compiled_model,
                                                        const size_t property_size,
                                                        const ov_property_t* properties) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(property_size == 0 || properties);
    for (size_t i = 0; i < property_size; i++) CHECK(properties[i].key && properties[i].value);
    if (property_size == 0) RET(OK);
    ovd_err("Exception from src/plugins/intel_cpu/src/compiled_model.cpp: Not Implemented: set_property(%s) of a "
            "compiled model", properties[0].key);
    FAIL(NOT_IMPLEMENTED);
}
#endif

/* ---- export / import: "OVDBLOB1\n" header lines, a blank line, then the XML and the Constants' bytes ----
 * Only the Constants' spans of the weights are written (each as u64 offset, u64 size, bytes), as the real plugins
 * export what the model holds: the weights tensor may span several weight buffers with unmapped memory between
 * them (a model of the device's: the IR corpus and TestCompiledModelCacheTwoProcesses), and copying it whole read
 * that memory. */
static bool is_const(const ovd_node* n) { return n->def && strcmp(n->def->name, "Constant") == 0; }
OVD_EXPORT ov_status_e ov_compiled_model_export_model(const ov_compiled_model_t* compiled_model,
                                                      const char* export_model_path) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(export_model_path);
    if (ovd_fault_hit(FP_EXPORT)) FAIL(GENERAL_ERROR);
    const ovd_graph* g = compiled_model->plan.g;
    FILE* f = fopen(export_model_path, "wb");
    if (!f) {
        ovd_err("Exception from src/bindings/c/src/ov_compiled_model.cpp: Cannot open file %s for writing", export_model_path);
        FAIL(GENERAL_ERROR);
    }
    int spans = 0;
    for (int i = 0; i < g->nnodes; i++) spans += is_const(&g->nodes[i]);
    fprintf(f, "OVDBLOB1\nbuild %s\ndevice %s\nxml %zu\nweights %zu\nspans %d\nprops %d\n", ovd_rel()->build,
            compiled_model->device, g->xml_len, g->wsize, spans, compiled_model->props.n);
    for (int i = 0; i < compiled_model->props.n; i++)
        fprintf(f, "%s\t%s\n", compiled_model->props.p[i].key, compiled_model->props.p[i].val);
    fprintf(f, "\n");
    bool ok = fwrite(g->xml, 1, g->xml_len, f) == g->xml_len;
    for (int i = 0; ok && i < g->nnodes; i++) {
        const ovd_node* n = &g->nodes[i];
        if (!is_const(n)) continue;
        uint64_t span[2] = {(uint64_t)n->off, (uint64_t)n->size};
        ok = fwrite(span, sizeof span, 1, f) == 1 && fwrite((const char*)g->w + n->off, 1, (size_t)n->size, f) == (size_t)n->size;
    }
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        ovd_err("Exception from src/bindings/c/src/ov_compiled_model.cpp: Failed writing %s", export_model_path);
        FAIL(GENERAL_ERROR);
    }
    ovd_count(C_EXPORT, 1);
    RET(OK);
}

static const char* blob_line(const char* p, const char* end, char* line, size_t cap) {
    const char* nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl || (size_t)(nl - p) >= cap) return NULL;
    memcpy(line, p, (size_t)(nl - p));
    line[nl - p] = 0;
    return nl + 1;
}

OVD_EXPORT ov_status_e ov_core_import_model(const ov_core_t* core, const char* content, const size_t content_size,
                                            const char* device_name, ov_compiled_model_t** compiled_model) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(content && compiled_model && device_name);
    if (ovd_fault_hit(FP_IMPORT)) FAIL(GENERAL_ERROR);
    const char *p = content, *end = content + content_size;
    char line[1024], build[256] = "", dev[64] = "";
    size_t xl = 0, wl = 0;
    int np = 0, spans = 0;
    const char* kv[64];
    char* kvbuf[64] = {0};
    int nkv = 0;
    p = blob_line(p, end, line, sizeof line);
    if (!p || strcmp(line, "OVDBLOB1") != 0) {
        ovd_err("Exception from src/inference/src/dev/core_impl.cpp: [CPU] Imported blob is not an OpenVINO compiled "
                "model of this plugin (bad magic)");
        FAIL(GENERAL_ERROR);
    }
    bool bad = false;
    bad |= !(p = blob_line(p, end, line, sizeof line)) || sscanf(line, "build %255[^\n]", build) != 1;
    bad |= !p || !(p = blob_line(p, end, line, sizeof line)) || sscanf(line, "device %63s", dev) != 1;
    bad |= !p || !(p = blob_line(p, end, line, sizeof line)) || sscanf(line, "xml %zu", &xl) != 1;
    bad |= !p || !(p = blob_line(p, end, line, sizeof line)) || sscanf(line, "weights %zu", &wl) != 1;
    bad |= !p || !(p = blob_line(p, end, line, sizeof line)) || sscanf(line, "spans %d", &spans) != 1 || spans < 0;
    bad |= !p || !(p = blob_line(p, end, line, sizeof line)) || sscanf(line, "props %d", &np) != 1 || np < 0 || np > 32;
    for (int i = 0; !bad && i < np; i++) {
        bad |= !(p = blob_line(p, end, line, sizeof line));
        char* tab = bad ? NULL : strchr(line, '\t');
        if (!tab) {
            bad = true;
            break;
        }
        *tab = 0;
        kvbuf[nkv] = ovd_strdup(line);
        kv[nkv] = kvbuf[nkv];
        nkv++;
        kvbuf[nkv] = ovd_strdup(tab + 1);
        kv[nkv] = kvbuf[nkv];
        nkv++;
    }
    bad |= !p || !(p = blob_line(p, end, line, sizeof line)) || line[0];
    bad |= !p || (size_t)(end - p) < xl;
    /* the spans must lie inside the blob and inside the weights */
    const char* sp = bad ? NULL : p + xl;
    for (int i = 0; !bad && i < spans; i++) {
        uint64_t span[2];
        bad |= (size_t)(end - sp) < sizeof span;
        if (bad) break;
        memcpy(span, sp, sizeof span);
        sp += sizeof span;
        bad |= span[0] > wl || span[1] > wl - span[0] || (uint64_t)(end - sp) < span[1];
        if (!bad) sp += span[1];
    }
    ov_status_e st = OK;
    char want[64];
    if (bad) {
        ovd_err("Exception from src/inference/src/dev/core_impl.cpp: [CPU] Imported blob is truncated or corrupted");
        st = ovd_fail_status(GENERAL_ERROR);
    } else if (strcmp(build, ovd_rel()->build) != 0) {
        ovd_err("Exception from src/inference/src/dev/core_impl.cpp: The blob was exported by OpenVINO %s and cannot be "
                "imported by %s", build, ovd_rel()->build);
        st = ovd_fail_status(GENERAL_ERROR);
    } else if (resolve_device(device_name, want, sizeof want)) {
        st = ovd_fail_status(GENERAL_ERROR);
    } else if (strcmp(want, dev) != 0) {
        ovd_err("Exception from src/inference/src/dev/core_impl.cpp: The blob was compiled for %s, not %s", dev, want);
        st = ovd_fail_status(GENERAL_ERROR);
    } else {
        /* the imported model owns a copy of its weights: the caller may free `content` right away */
        ovd_buf* wb = buf_new(wl, false);
        if (!wb) st = ovd_fail_status(UNKNOW_EXCEPTION);
        else {
            sp = p + xl;
            for (int i = 0; i < spans; i++) {
                uint64_t span[2];
                memcpy(span, sp, sizeof span);
                memcpy((char*)wb->mem + span[0], sp + sizeof span, (size_t)span[1]);
                sp += sizeof span + span[1];
            }
            ovd_graph* g = ovd_ir_read(p, xl, wl ? wb->mem : NULL, wl, wb);
            ovd_buf_unref(wb);
            if (!g) st = ovd_fail_status(GENERAL_ERROR);
            else {
                st = compile(core, g, want, (size_t)np, kv, compiled_model);
                ovd_graph_unref(g);
                if (st == OK) ovd_count(C_IMPORT, 1);
            }
        }
    }
    for (int i = 0; i < nkv; i++) free(kvbuf[i]);
    RET(st);
}

/* ---- infer requests ---- */
struct ov_infer_request {
    ov_compiled_model_t* cm;
    int nin, nout;
    timpl** in;        /* bound or request-owned input tensors */
    timpl** out;       /* bound or request-owned output tensors */
    bool* out_owned;   /* the request allocated it (may be reshaped freely) */
    ov_status_e async_status;
    bool async_pending;
    ov_callback_t* callback;
    char* async_msg;
    ovd_state state; /* ReadValue/Assign variables: fresh per request */
    int64_t* node_ns; /* per node, the last infer's execution time (profiling info) */
};

OVD_EXPORT ov_status_e ov_compiled_model_create_infer_request(const ov_compiled_model_t* compiled_model,
                                                              ov_infer_request_t** infer_request) {
    ENTER;
    HANDLE(compiled_model, K_COMPILED);
    CHECK(infer_request);
    if (ovd_fault_hit(FP_CREATE_INFER_REQUEST)) FAIL(GENERAL_ERROR);
    ov_infer_request_t* r = calloc(1, sizeof *r);
    r->cm = (ov_compiled_model_t*)compiled_model;
    __atomic_add_fetch(&r->cm->refs, 1, __ATOMIC_RELAXED);
    r->nin = r->cm->plan.g->nparams;
    r->nout = r->cm->plan.g->nresults;
    r->in = calloc((size_t)r->nin + 1, sizeof(timpl*));
    r->out = calloc((size_t)r->nout + 1, sizeof(timpl*));
    r->out_owned = calloc((size_t)r->nout + 1, sizeof(bool));
    r->node_ns = calloc((size_t)r->cm->plan.g->nnodes + 1, sizeof(int64_t));
    ovd_reg_add(r, K_REQUEST);
    ovd_live_add(L_REQUEST, 1);
    *infer_request = r;
    RET(OK);
}

OVD_EXPORT void ov_infer_request_free(ov_infer_request_t* r) {
    ENTER;
    if (!r)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(r, K_REQUEST))
        ovd_count(C_BAD_FREE, 1);
    else {
        for (int i = 0; i < r->nin; i++) timpl_unref(r->in[i]);
        for (int i = 0; i < r->nout; i++) timpl_unref(r->out[i]);
        free(r->in);
        free(r->out);
        free(r->out_owned);
        free(r->node_ns);
        free(r->async_msg);
        ovd_state_free(&r->state);
        cm_unref(r->cm);
        free(r);
        ovd_live_add(L_REQUEST, -1);
    }
    ovd_leave_void(&_c);
}

static bool is_npu(const ov_infer_request_t* r) { return strncmp(r->cm->device, "NPU", 3) == 0; }
static bool is_gpu(const ov_infer_request_t* r) { return strncmp(r->cm->device, "GPU", 3) == 0; }

/* a remote tensor belongs to one context: the GPU plugin takes it only on a request compiled in that context (the
 * device's default one unless compile_model_with_context named another); messages are the double's own */
static int check_remote(const ov_infer_request_t* r, const timpl* t, const char* kind, size_t idx) {
    if (!t->remote) return 0;
    if (!is_gpu(r) || strcmp(t->device, r->cm->device) != 0)
        return ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: [%s] the %s tensor %zu is a remote "
                       "tensor of %s, not of the device this request was compiled for (ovdouble)", r->cm->device, kind,
                       idx, t->device);
    if (t->ctx != r->cm->ctx)
        return ovd_err("Exception from src/plugins/intel_gpu/src/plugin/sync_infer_request.cpp: [GPU] the %s tensor %zu "
                       "belongs to another remote context than the compiled model's (ovdouble)", kind, idx);
    if (t->usm_id && !usm_live(t->usm_id))
        return ovd_err("Exception from src/plugins/intel_gpu/src/plugin/sync_infer_request.cpp: [GPU] the USM memory of "
                       "the %s tensor %zu was freed (ovdouble)", kind, idx);
    return 0;
}

/* the checks OpenVINO makes when a tensor is bound to a port (check_tensor + the CPU plugin's shape check) */
static int check_binding(const ov_infer_request_t* r, const ovd_out* port, const timpl* t, bool input, size_t idx) {
    const char* kind = input ? "input" : "output";
    /* the NPU plugin copies user tensors at infer time: its type check fires there */
    if (port->type != t->type && !is_npu(r))
        return ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: The tensor element type is not "
                       "corresponding with output element type (%s != %s)", ovd_type_name(t->type), ovd_type_name(port->type));
    char a[160], b[160];
    ovd_ps_str(&t->shape, a, sizeof a);
    ovd_ps_str(&port->ps, b, sizeof b);
    if (ovd_ps_static(&port->ps)) {
        bool eq = port->ps.rank == t->shape.rank;
        for (int i = 0; eq && i < t->shape.rank; i++) eq = port->ps.d[i] == t->shape.d[i];
        if (!eq)
            return ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: The %s tensor size is not equal "
                           "to the model %s type: got %s expecting %s.", kind, kind, a, b);
    } else if (port->ps.rank >= 0) {
        bool ok = port->ps.rank == t->shape.rank;
        for (int i = 0; ok && i < t->shape.rank; i++) ok = port->ps.d[i] < 0 || port->ps.d[i] == t->shape.d[i];
        /* an output tensor of a dynamic port may have any shape: infer reshapes it to the result */
        if (!ok && input)
            return ovd_err("Exception from src/plugins/intel_cpu/src/infer_request.cpp: Can't set the input tensor with "
                           "index: %zu, because the model input (shape=%s) and the tensor (shape=%s) are incompatible",
                           idx, b, a);
    }
    if (!t->buf->mem && ovd_ps_numel(&t->shape) > 0)
        return ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: Tensor data equal nullptr!");
    return check_remote(r, t, kind, idx);
}

static ov_status_e bind(ov_infer_request_t* r, bool input, size_t idx, const ov_tensor_t* tensor) {
    const ovd_graph* g = r->cm->plan.g;
    size_t n = (size_t)(input ? r->nin : r->nout);
    if (idx >= n) {
        ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: Failed to find %s tensor with index %zu "
                "(the model has %zu)", input ? "input" : "output", idx, n);
        return ovd_fail_status(OUT_OF_BOUNDS);
    }
    const ovd_out* port = input ? ovd_graph_in_port(g, (int)idx) : ovd_graph_out_port(g, (int)idx);
    if (check_binding(r, port, tensor->t, input, idx)) return ovd_fail_status(GENERAL_ERROR);
    timpl** slot = input ? &r->in[idx] : &r->out[idx];
    timpl* old = *slot;
    *slot = timpl_ref(tensor->t);
    if (!input) r->out_owned[idx] = false;
    timpl_unref(old);
    return OK;
}

OVD_EXPORT ov_status_e ov_infer_request_set_input_tensor_by_index(ov_infer_request_t* infer_request,
                                                                  const size_t idx, const ov_tensor_t* tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(tensor, K_TENSOR);
    if (ovd_fault_hit(FP_SET_TENSOR)) FAIL(GENERAL_ERROR);
    RET(bind(infer_request, true, idx, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_set_output_tensor_by_index(ov_infer_request_t* infer_request,
                                                                   const size_t idx, const ov_tensor_t* tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(tensor, K_TENSOR);
    if (ovd_fault_hit(FP_SET_TENSOR)) FAIL(GENERAL_ERROR);
    RET(bind(infer_request, false, idx, tensor));
}

static ov_status_e single(const ov_infer_request_t* r, bool input) {
    int n = input ? r->nin : r->nout;
    if (n != 1) {
        ovd_err("Exception from src/inference/src/cpp/infer_request.cpp: set_%s_tensor/get_%s_tensor need a model "
                "with exactly one %s; it has %d", input ? "input" : "output", input ? "input" : "output",
                input ? "input" : "output", n);
        return ovd_fail_status(GENERAL_ERROR);
    }
    return OK;
}

OVD_EXPORT ov_status_e ov_infer_request_set_input_tensor(ov_infer_request_t* infer_request, const ov_tensor_t* tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(tensor, K_TENSOR);
    ov_status_e st = single(infer_request, true);
    if (st != OK) RET(st);
    if (ovd_fault_hit(FP_SET_TENSOR)) FAIL(GENERAL_ERROR);
    RET(bind(infer_request, true, 0, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_set_output_tensor(ov_infer_request_t* infer_request, const ov_tensor_t* tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(tensor, K_TENSOR);
    ov_status_e st = single(infer_request, false);
    if (st != OK) RET(st);
    if (ovd_fault_hit(FP_SET_TENSOR)) FAIL(GENERAL_ERROR);
    RET(bind(infer_request, false, 0, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_set_tensor(ov_infer_request_t* infer_request, const char* tensor_name,
                                                   const ov_tensor_t* tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(tensor, K_TENSOR);
    CHECK(tensor_name);
    if (ovd_fault_hit(FP_SET_TENSOR)) FAIL(GENERAL_ERROR);
    const ovd_graph* g = infer_request->cm->plan.g;
    int i = ovd_graph_find_param(g, tensor_name);
    if (i >= 0) RET(bind(infer_request, true, (size_t)i, tensor));
    i = ovd_graph_find_result(g, tensor_name);
    if (i >= 0) RET(bind(infer_request, false, (size_t)i, tensor));
    ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: Port for tensor name %s was not found.", tensor_name);
    FAIL(NOT_FOUND);
}

/* a port of the model the request was compiled from (the compiled model shares that graph) */
static ov_status_e port_check(const ov_infer_request_t* r, const ov_output_const_port_t* port) {
    if (port->g != r->cm->plan.g) {
        ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: Cannot find tensor for port: the port "
                "belongs to another model");
        return ovd_fail_status(NOT_FOUND);
    }
    return OK;
}

OVD_EXPORT ov_status_e ov_infer_request_set_tensor_by_port(ov_infer_request_t* infer_request,
                                                           const ov_output_port_t* port, const ov_tensor_t* tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(port, K_PORT);
    HANDLE(tensor, K_TENSOR);
    ov_status_e st = port_check(infer_request, port);
    if (st != OK) RET(st);
    if (ovd_fault_hit(FP_SET_TENSOR)) FAIL(GENERAL_ERROR);
    RET(bind(infer_request, port->is_input, (size_t)port->index, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_set_tensor_by_const_port(ov_infer_request_t* infer_request,
                                                                 const ov_output_const_port_t* port,
                                                                 const ov_tensor_t* tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(port, K_PORT);
    HANDLE(tensor, K_TENSOR);
    ov_status_e st = port_check(infer_request, port);
    if (st != OK) RET(st);
    if (ovd_fault_hit(FP_SET_TENSOR)) FAIL(GENERAL_ERROR);
    RET(bind(infer_request, port->is_input, (size_t)port->index, tensor));
}

/* the request's own tensor for a port that has none bound yet (dynamic dims as 0) */
static timpl* own_tensor(const ovd_out* port) {
    ovd_pshape s = port->ps;
    if (s.rank < 0) s.rank = 0;
    for (int i = 0; i < s.rank; i++)
        if (s.d[i] < 0) s.d[i] = 0;
    timpl* t = timpl_alloc(port->type, &s);
    if (t) t->plugin = true;
    return t;
}

static ov_status_e get_tensor(const ov_infer_request_t* rc, bool input, size_t idx, ov_tensor_t** tensor) {
    ov_infer_request_t* r = (ov_infer_request_t*)rc;
    size_t n = (size_t)(input ? r->nin : r->nout);
    if (idx >= n) {
        ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: Failed to find %s tensor with index %zu "
                "(the model has %zu)", input ? "input" : "output", idx, n);
        return ovd_fail_status(OUT_OF_BOUNDS);
    }
    if (ovd_fault_hit(FP_GET_TENSOR)) return ovd_fail_status(GENERAL_ERROR);
    timpl** slot = input ? &r->in[idx] : &r->out[idx];
    if (!*slot) {
        const ovd_graph* g = r->cm->plan.g;
        *slot = own_tensor(input ? ovd_graph_in_port(g, (int)idx) : ovd_graph_out_port(g, (int)idx));
        if (!*slot) return ovd_fail_status(UNKNOW_EXCEPTION);
        if (!input) r->out_owned[idx] = true;
    }
    *tensor = handle_new(timpl_ref(*slot));
    return OK;
}

OVD_EXPORT ov_status_e ov_infer_request_get_tensor(const ov_infer_request_t* infer_request, const char* tensor_name,
                                                   ov_tensor_t** tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    CHECK(tensor_name && tensor);
    const ovd_graph* g = infer_request->cm->plan.g;
    int i = ovd_graph_find_param(g, tensor_name);
    if (i >= 0) RET(get_tensor(infer_request, true, (size_t)i, tensor));
    i = ovd_graph_find_result(g, tensor_name);
    if (i >= 0) RET(get_tensor(infer_request, false, (size_t)i, tensor));
    ovd_err("Exception from src/inference/src/dev/isync_infer_request.cpp: Port for tensor name %s was not found.", tensor_name);
    FAIL(NOT_FOUND);
}

OVD_EXPORT ov_status_e ov_infer_request_get_tensor_by_port(const ov_infer_request_t* infer_request,
                                                           const ov_output_port_t* port, ov_tensor_t** tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(port, K_PORT);
    CHECK(tensor);
    ov_status_e st = port_check(infer_request, port);
    if (st != OK) RET(st);
    RET(get_tensor(infer_request, port->is_input, (size_t)port->index, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_get_tensor_by_const_port(const ov_infer_request_t* infer_request,
                                                                 const ov_output_const_port_t* port,
                                                                 ov_tensor_t** tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    HANDLE(port, K_PORT);
    CHECK(tensor);
    ov_status_e st = port_check(infer_request, port);
    if (st != OK) RET(st);
    RET(get_tensor(infer_request, port->is_input, (size_t)port->index, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_get_input_tensor_by_index(const ov_infer_request_t* infer_request,
                                                                  const size_t idx, ov_tensor_t** tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    CHECK(tensor);
    RET(get_tensor(infer_request, true, idx, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_get_output_tensor_by_index(const ov_infer_request_t* infer_request,
                                                                   const size_t idx, ov_tensor_t** tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    CHECK(tensor);
    RET(get_tensor(infer_request, false, idx, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_get_input_tensor(const ov_infer_request_t* infer_request, ov_tensor_t** tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    CHECK(tensor);
    ov_status_e st = single(infer_request, true);
    if (st != OK) RET(st);
    RET(get_tensor(infer_request, true, 0, tensor));
}

OVD_EXPORT ov_status_e ov_infer_request_get_output_tensor(const ov_infer_request_t* infer_request, ov_tensor_t** tensor) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    CHECK(tensor);
    ov_status_e st = single(infer_request, false);
    if (st != OK) RET(st);
    RET(get_tensor(infer_request, false, 0, tensor));
}

/* what a GPU infer copies between host and device: every input bound as a plain host tensor is uploaded, every
 * output bound as one downloaded; remote (USM host or device) tensors and the request's own are used in place. A
 * plain host tensor over USM host memory counts as copied too: a discrete GPU uploads it (its plugin asks the
 * driver the pointer's allocation type only to share it on integrated GPUs), and the double models the
 * discrete case. Recorded per port for the last infer (xfer.last.*) and summed (xfer.h2d, xfer.d2h). */
static void count_transfers(const ov_infer_request_t* r) {
    pthread_mutex_lock(&xfer_mu);
    xfer_in = realloc(xfer_in, sizeof(int64_t) * (size_t)(r->nin + 1));
    xfer_out = realloc(xfer_out, sizeof(int64_t) * (size_t)(r->nout + 1));
    xfer_nin = r->nin;
    xfer_nout = r->nout;
    int64_t up = 0, down = 0;
    for (int i = 0; i < r->nin; i++) {
        const timpl* t = r->in[i];
        xfer_in[i] = t->remote || t->plugin ? 0 : (int64_t)timpl_bytes(t);
        up += xfer_in[i];
    }
    for (int j = 0; j < r->nout; j++) {
        const timpl* t = r->out[j];
        xfer_out[j] = t->remote || r->out_owned[j] ? 0 : (int64_t)timpl_bytes(t);
        down += xfer_out[j];
    }
    pthread_mutex_unlock(&xfer_mu);
    ovd_count(C_XFER_H2D, up);
    ovd_count(C_XFER_D2H, down);
}

/* ---- outputs bound over an input's memory (the KV cache written in place) ----
 * The real CPU plugin reads a zero-copy input from the caller's memory when a node needs it and may write a zero-copy
 * output into the caller's memory when the output's producer runs, before nodes that come later in its order read
 * that input. Such a binding is safe when the input's only reader is the ScatterUpdate producing that output, through
 * Reshapes only (it takes the data before writing its rows); any other reader of the old contents may run after the
 * output was written. The double models the worst order: for every other output overlapping an input, the output is
 * computed and written first and the input read again from memory, so that its other readers see the new contents.
 * (The real CPU plugins, 2025.0.0 and 2026.4.1, ordered the test's case safely: TestKVInPlaceHazardRule.) */
static int src_uses(const ovd_graph* g, ovd_src s) {
    int n = 0;
    for (int oi = 0; oi < g->norder; oi++) {
        const ovd_node* k = &g->nodes[g->order[oi]];
        for (int m = 0; m < k->nin; m++) n += k->in[m].node == s.node && k->in[m].out == s.out;
    }
    return n;
}

static bool inplace_safe(const ovd_graph* g, int j, int i) {
    ovd_src s = g->nodes[g->results[j]].in[0];
    if (s.node < 0 || strcmp(g->nodes[s.node].type, "ScatterUpdate") != 0) return false;
    ovd_src d = g->nodes[s.node].in[0];
    while (d.node >= 0 && strcmp(g->nodes[d.node].type, "Reshape") == 0 && src_uses(g, d) == 1) d = g->nodes[d.node].in[0];
    return d.node == g->params[i] && src_uses(g, d) == 1;
}

static size_t tensor_bytes(const timpl* t) { return ovd_type_bytes(t->type, ovd_ps_numel(&t->shape)); }

/* the (output, input) pairs bound to overlapping host memory that inplace_safe does not allow; returns their count */
static int inplace_hazards(const ov_infer_request_t* r, int* outs, int* ins) {
    const ovd_graph* g = r->cm->plan.g;
    int n = 0;
    for (int j = 0; j < r->nout; j++) {
        const timpl* o = r->out[j];
        if (!o || r->out_owned[j] || o->remote == 2) continue;
        const char* olo = o->buf->mem;
        size_t on = tensor_bytes(o);
        for (int i = 0; i < r->nin; i++) {
            const timpl* t = r->in[i];
            if (!t || t->remote == 2) continue;
            const char* ilo = t->buf->mem;
            size_t in = tensor_bytes(t);
            if (!(olo < ilo + in && ilo < olo + on)) continue;
            if (olo == ilo && on == in && inplace_safe(g, j, i)) continue;
            outs[n] = j;
            ins[n++] = i;
        }
    }
    return n;
}

static void state_copy(const ovd_state* from, ovd_state* to) {
    for (int i = 0; i < from->n; i++) {
        to->ids = realloc(to->ids, sizeof(char*) * (size_t)(to->n + 1));
        to->vals = realloc(to->vals, sizeof(ovd_val*) * (size_t)(to->n + 1));
        to->ids[to->n] = ovd_strdup(from->ids[i]);
        to->vals[to->n++] = ovd_val_ref(from->vals[i]);
    }
}

/* the hazard the pairs make: their outputs computed (on a throwaway copy of the variables) and written, then their
 * inputs read again */
static int run_hazards(ov_infer_request_t* r, ovd_val** ins, int n, const int* hout, const int* hin) {
    const ovd_graph* g = r->cm->plan.g;
    ovd_val** first = calloc((size_t)r->nout + 1, sizeof(ovd_val*));
    ovd_state tmp = {0};
    state_copy(&r->state, &tmp);
    int64_t ran = 0;
    ovd_state_use(&tmp);
    int rc = ovd_plan_run(&r->cm->plan, ins, first, &ran, NULL);
    ovd_state_use(NULL);
    ovd_state_free(&tmp);
    for (int k = 0; k < n && !rc; k++) {
        const ovd_out* port = ovd_graph_out_port(g, hout[k]);
        const ovd_val* v = first[hout[k]];
        if (v && v->type == port->type) ovd_encode(port->type, v->data, v->n, r->out[hout[k]]->buf->mem);
    }
    for (int k = 0; k < n && !rc; k++) {
        const ovd_out* port = ovd_graph_in_port(g, hin[k]);
        if (ovd_graph_param_port(g, hin[k])->type == port->type)
            ovd_decode(port->type, r->in[hin[k]]->buf->mem, ins[hin[k]]->n, ins[hin[k]]->data);
    }
    for (int j = 0; j < r->nout; j++) ovd_val_unref(first[j]);
    free(first);
    return rc;
}

static int do_infer(ov_infer_request_t* r, int64_t* nodes) {
    if (is_gpu(r)) ovd_ocl_note_infer(r->cm->device, r->cm->ctx);
    const ovd_graph* g = r->cm->plan.g;
    int rc = 0;
    ovd_val** ins = calloc((size_t)r->nin + 1, sizeof(ovd_val*));
    ovd_val** outs = calloc((size_t)r->nout + 1, sizeof(ovd_val*));
    for (int i = 0; i < r->nin && !rc; i++) {
        const ovd_out* port = ovd_graph_in_port(g, i);
        const ovd_node* pn = &g->nodes[g->params[i]];
        if (!r->in[i]) {
            if (!ovd_ps_static(&port->ps)) {
                rc = ovd_err("Exception from src/plugins/intel_cpu/src/infer_request.cpp: [CPU] Input tensor '%s' "
                             "(index %d) of a dynamic port was never set", pn->name, i);
                break;
            }
            r->in[i] = own_tensor(port); /* preallocated, zero-filled */
            if (!r->in[i]) {
                rc = -1;
                break;
            }
        }
        timpl* t = r->in[i];
        if (t->type != port->type) {
            rc = ovd_err("Exception from src/inference/src/dev/make_tensor.cpp: Tensor element types are not equal. "
                         "(src: %s != dst: %s) [input %d '%s']", ovd_type_name(t->type), ovd_type_name(port->type), i, pn->name);
            break;
        }
        if (check_binding(r, port, t, true, (size_t)i)) {
            rc = -1;
            break;
        }
        ins[i] = ovd_val_new(port->type, &t->shape);
        if (!ins[i]) {
            rc = -1;
            break;
        }
        ovd_decode(port->type, t->buf->mem, ins[i]->n, ins[i]->data);
        ovd_type own = ovd_graph_param_port(g, i)->type;
        if (own != port->type) { /* IR v10: the f32 input goes to the f16 Parameter as a Convert would take it */
            ovd_val* c = ovd_val_convert(ins[i], own);
            ovd_val_unref(ins[i]);
            if (!(ins[i] = c)) rc = -1;
        }
    }
    if (!rc) {
        int* hout = calloc((size_t)(r->nout * r->nin) + 1, sizeof(int));
        int* hin = calloc((size_t)(r->nout * r->nin) + 1, sizeof(int));
        int nh = inplace_hazards(r, hout, hin);
        if (nh) {
            ovd_count(C_INPLACE_HAZARD, nh);
            rc = run_hazards(r, ins, nh, hout, hin);
        }
        free(hout);
        free(hin);
    }
    /* variables change only if the whole infer succeeds: run on a copy, commit at the end */
    ovd_state next = {0};
    state_copy(&r->state, &next);
    if (!rc) {
        ovd_state_use(&next);
        rc = ovd_plan_run(&r->cm->plan, ins, outs, nodes, r->node_ns);
        ovd_state_use(NULL);
    }
    for (int j = 0; j < r->nout && !rc; j++) {
        ovd_type shown = ovd_graph_out_port(g, j)->type;
        if (outs[j] && outs[j]->type != shown) { /* IR v10: the legacy output precision */
            ovd_val* c = ovd_val_convert(outs[j], shown);
            ovd_val_unref(outs[j]);
            if (!(outs[j] = c)) rc = -1;
        }
    }
    /* check every output before writing any, so a failure leaves them all untouched */
    for (int j = 0; j < r->nout && !rc; j++) {
        const ovd_out* port = ovd_graph_out_port(g, j);
        timpl* t = r->out[j];
        if (!t) continue;
        if (t->type != outs[j]->type) {
            rc = ovd_err("Exception from src/inference/src/dev/make_tensor.cpp: Tensor element types are not equal. "
                         "(src: %s != dst: %s) [output %d]", ovd_type_name(outs[j]->type), ovd_type_name(t->type), j);
            break;
        }
        size_t need = ovd_type_bytes(port->type, outs[j]->n);
        if (!r->out_owned[j] && !t->buf->owned && need > t->buf->cap) {
            char a[160], b[160];
            ovd_ps_str(&outs[j]->shape, a, sizeof a);
            ovd_ps_str(&t->shape, b, sizeof b);
            rc = ovd_err("Exception from src/inference/src/dev/make_tensor.cpp: Could set new shape %s which is bigger "
                         "than allocated size of the output host tensor %d (shape %s)", a, j, b);
        }
    }
    for (int j = 0; j < r->nout && !rc; j++) {
        const ovd_out* port = ovd_graph_out_port(g, j);
        timpl* t = r->out[j];
        size_t need = ovd_type_bytes(port->type, outs[j]->n);
        if (!t) {
            t = r->out[j] = timpl_alloc(port->type, &outs[j]->shape);
            r->out_owned[j] = true;
            if (!t) {
                rc = -1;
                break;
            }
        }
        bool same = t->shape.rank == outs[j]->shape.rank;
        for (int d = 0; same && d < t->shape.rank; d++) same = t->shape.d[d] == outs[j]->shape.d[d];
        if (!same) {
            if (need > t->buf->cap) { /* owned: reallocate */
                ovd_buf* nb = ovd_buf_new(need);
                if (!nb) {
                    rc = -1;
                    break;
                }
                ovd_buf_unref(t->buf);
                t->buf = nb;
            }
            if (!r->out_owned[j]) ovd_count(C_OUTPUT_RESHAPED, 1);
            t->shape = outs[j]->shape;
        }
        ovd_encode(port->type, outs[j]->data, outs[j]->n, t->buf->mem);
    }
    if (!rc && is_gpu(r)) count_transfers(r);
    if (rc)
        ovd_state_free(&next);
    else {
        ovd_state_free(&r->state);
        r->state = next;
    }
    for (int i = 0; i < r->nin; i++) ovd_val_unref(ins[i]);
    for (int j = 0; j < r->nout; j++) ovd_val_unref(outs[j]);
    free(ins);
    free(outs);
    return rc;
}

static ov_status_e infer_status(void) { return ovd_err_is_alloc() ? UNKNOW_EXCEPTION : GENERAL_ERROR; }

OVD_EXPORT ov_status_e ov_infer_request_infer(ov_infer_request_t* infer_request) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    if (ovd_fault_hit(FP_INFER)) FAIL(GENERAL_ERROR);
    int64_t nodes = 0;
    if (do_infer(infer_request, &nodes)) FAIL(infer_status());
    ovd_count(C_INFER, 1);
    ovd_count(C_INFER_NODES, nodes);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_infer_request_start_async(ov_infer_request_t* infer_request) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    ov_infer_request_t* r = infer_request;
    int64_t nodes = 0;
    /* runs to completion here; wait() reports the outcome */
    if (ovd_fault_hit(FP_INFER) || do_infer(r, &nodes)) {
        r->async_status = infer_status();
        free(r->async_msg);
        r->async_msg = ovd_strdup(ovd_err_msg());
    } else {
        r->async_status = OK;
        ovd_count(C_INFER, 1);
        ovd_count(C_INFER_NODES, nodes);
    }
    r->async_pending = true;
    if (r->callback && r->callback->callback_func) r->callback->callback_func(r->callback->args);
    RET(OK);
}

static ov_status_e finish_wait(ov_infer_request_t* r) {
    if (!r->async_pending) return OK;
    r->async_pending = false;
    if (r->async_status != OK) {
        ovd_set_last_error(r->async_msg ? r->async_msg : "");
        return r->async_status;
    }
    return OK;
}

OVD_EXPORT ov_status_e ov_infer_request_wait(ov_infer_request_t* infer_request) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    RET(finish_wait(infer_request));
}

OVD_EXPORT ov_status_e ov_infer_request_wait_for(ov_infer_request_t* infer_request, const int64_t timeout) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    RET(finish_wait(infer_request));
}

OVD_EXPORT ov_status_e ov_infer_request_cancel(ov_infer_request_t* infer_request) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_infer_request_set_callback(ov_infer_request_t* infer_request, const ov_callback_t* callback) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    CHECK(callback);
    infer_request->callback = (ov_callback_t*)callback; /* kept by pointer, as OpenVINO does */
    RET(OK);
}

OVD_EXPORT ov_status_e ov_infer_request_get_profiling_info(const ov_infer_request_t* infer_request,
                                                           ov_profiling_info_list_t* profiling_infos) {
    ENTER;
    HANDLE(infer_request, K_REQUEST);
    CHECK(profiling_infos);
    const ovd_graph* g = infer_request->cm->plan.g;
    ov_profiling_info_t* p = calloc((size_t)g->norder + 1, sizeof *p);
    for (int i = 0; i < g->norder; i++) {
        const ovd_node* n = &g->nodes[g->order[i]];
        p[i].status = infer_request->cm->plan.folded[g->order[i]] ? OPTIMIZED_OUT : EXECUTED;
        /* microseconds, as ov::ProfilingInfo; the double's own single-threaded time */
        p[i].real_time = p[i].cpu_time = infer_request->node_ns[g->order[i]] / 1000;
        p[i].node_name = ovd_strdup(n->name);
        p[i].exec_type = ovd_strdup("ref_any_f32");
        p[i].node_type = ovd_strdup(n->def->name);
    }
    profiling_infos->profiling_infos = p;
    profiling_infos->size = (size_t)g->norder;
    ovd_reg_add(p, K_PROFLIST);
    RET(OK);
}

OVD_EXPORT void ov_profiling_info_list_free(ov_profiling_info_list_t* profiling_infos) {
    ENTER;
    if (!profiling_infos || !profiling_infos->profiling_infos)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(profiling_infos->profiling_infos, K_PROFLIST))
        ovd_count(C_BAD_FREE, 1);
    else {
        for (size_t i = 0; i < profiling_infos->size; i++) {
            free((void*)profiling_infos->profiling_infos[i].node_name);
            free((void*)profiling_infos->profiling_infos[i].exec_type);
            free((void*)profiling_infos->profiling_infos[i].node_type);
        }
        free(profiling_infos->profiling_infos);
        profiling_infos->profiling_infos = NULL;
        profiling_infos->size = 0;
    }
    ovd_leave_void(&_c);
}

/* ---- remote contexts: GPU only; USM host and user buffers are host memory, USM device buffers are not host-visible
 * (their MEM_HANDLE is an opaque value, their data() fails) ---- */
struct ov_remote_context {
    char device[64];
    void* ocl_queue;  /* as passed to ov_core_create_context, echoed by get_params */
    bool is_default;  /* ov_core_get_default_context: every handle of a device's default context is the same context */
};

static const void* context_id(const ov_remote_context_t* ctx) { return ctx->is_default ? NULL : ctx; }

static ov_status_e context_new(const char* device_name, void* queue, bool is_default, ov_remote_context_t** out) {
    char dev[64], kind[32];
    if (resolve_device(device_name, dev, sizeof dev)) return ovd_fail_status(GENERAL_ERROR);
    dev_kind(dev, kind, sizeof kind);
    if (strcmp(kind, "GPU") != 0) {
        /* the real runtime's status and last line (2025.0.0 and 2026.4.1, CPU plugin: TestRemoteContextErrors...) */
        ovd_err("Exception from src/inference/src/dev/plugin.cpp: Not Implemented:\nget_default_context is not "
                "supported by %s plugin!", kind);
        return ovd_fail_status(GENERAL_ERROR);
    }
    ov_remote_context_t* c = calloc(1, sizeof *c);
    snprintf(c->device, sizeof c->device, "%s", dev);
    c->ocl_queue = queue;
    c->is_default = is_default;
    ovd_reg_add(c, K_CONTEXT);
    ovd_live_add(L_CONTEXT, 1);
    *out = c;
    return OK;
}

OVD_EXPORT ov_status_e ov_core_get_default_context(const ov_core_t* core, const char* device_name,
                                                   ov_remote_context_t** context) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(device_name && context);
    RET(context_new(device_name, NULL, true, context));
}

OVD_EXPORT ov_status_e ov_core_create_context(const ov_core_t* core, const char* device_name,
                                              const size_t context_args_size, ov_remote_context_t** context, ...) {
    ENTER;
    HANDLE(core, K_CORE);
    CHECK(device_name && context);
    if (context_args_size % 2 || context_args_size > 16) {
        ovd_err("ovdouble: context_args_size must be an even count of at most 16 (key, value) arguments; got %zu",
                context_args_size);
        FAIL(INVALID_C_PARAM);
    }
    va_list ap;
    va_start(ap, context);
    void* queue = NULL;
    const char* type = NULL;
    for (size_t i = 0; i < context_args_size / 2; i++) {
        const char* k = va_arg(ap, const char*);
        void* v = va_arg(ap, void*);
        if (!k) {
            va_end(ap);
            CHECK(k);
        }
        if (strcmp(k, "CONTEXT_TYPE") == 0) type = v;
        else if (strcmp(k, "OCL_QUEUE") == 0 || strcmp(k, "OCL_CONTEXT") == 0) queue = v;
        else if (strcmp(k, "OCL_CONTEXT_DEVICE_ID") != 0 && strcmp(k, "TILE_ID") != 0 && strcmp(k, "VA_DEVICE") != 0) {
            va_end(ap);
            ovd_err("Exception from src/plugins/intel_gpu/src/plugin/remote_context.cpp: Unsupported context "
                    "parameter %s", k);
            FAIL(GENERAL_ERROR);
        }
    }
    va_end(ap);
    if (type && strcmp(type, "OCL") != 0 && strcmp(type, "VA_SHARED") != 0) {
        ovd_err("Exception from src/plugins/intel_gpu/src/plugin/remote_context.cpp: Invalid CONTEXT_TYPE %s", type);
        FAIL(GENERAL_ERROR);
    }
    RET(context_new(device_name, queue, false, context));
}

OVD_EXPORT void ov_remote_context_free(ov_remote_context_t* context) {
    ENTER;
    if (!context)
        ovd_count(C_FREE_NULL, 1);
    else if (!ovd_reg_del(context, K_CONTEXT))
        ovd_count(C_BAD_FREE, 1);
    else {
        free(context);
        ovd_live_add(L_CONTEXT, -1);
    }
    ovd_leave_void(&_c);
}

OVD_EXPORT ov_status_e ov_remote_context_get_device_name(const ov_remote_context_t* context, char** device_name) {
    ENTER;
    HANDLE(context, K_CONTEXT);
    CHECK(device_name);
    *device_name = ovd_api_string(context->device);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_remote_context_get_params(const ov_remote_context_t* context, size_t* size, char** params) {
    ENTER;
    HANDLE(context, K_CONTEXT);
    CHECK(size && params);
    char buf[256];
    /* OCL_CONTEXT: the context's cl_context (ovd_ocl.c; one per remote context, the same for every handle of a
     * device's default context); OCL_QUEUE only for a context made over a queue, as the GPU plugin reports it */
    uintptr_t cl = ovd_ocl_context(context->device, context_id(context));
    if (context->ocl_queue)
        snprintf(buf, sizeof buf, "CONTEXT_TYPE OCL OCL_CONTEXT 0x%llx OCL_QUEUE 0x%llx", (unsigned long long)cl,
                 (unsigned long long)(uintptr_t)context->ocl_queue);
    else
        snprintf(buf, sizeof buf, "CONTEXT_TYPE OCL OCL_CONTEXT 0x%llx", (unsigned long long)cl);
    *params = ovd_api_string(buf);
    *size = context->ocl_queue ? 3 : 2;
    RET(OK);
}


/* a USM allocation of kind 1 (host) or 2 (device), or with user set a USM_USER_BUFFER over memory of an allocation
 * of this context: the GPU plugin wraps a user's USM pointer without checking it, the double refuses one that lies
 * in no USM allocation of the context (a host pointer passed as USM would be undefined behaviour on a GPU) */
static ov_status_e make_remote_tensor(const ov_remote_context_t* ctx, ov_element_type_e type, const ov_shape_t* shape,
                                 int kind, void* user, ov_tensor_t** out) {
    ovd_type t;
    ovd_pshape ps;
    if (type_in(type, &t) || shape_in(shape, &ps)) return ovd_fail_status(GENERAL_ERROR);
    timpl* ti;
    size_t bytes = ovd_type_bytes(t, ovd_ps_numel(&ps));
    if (user) {
        int64_t id;
        char* mem;
        if (usm_find((uintptr_t)user, bytes, ctx->device, context_id(ctx), &id, &kind, &mem)) {
            ovd_err("Exception from src/plugins/intel_gpu/src/plugin/remote_context.cpp: [GPU] USM_USER_BUFFER MEM_HANDLE "
                    "%p (%zu bytes) lies in no USM allocation of this %s context (ovdouble)", user, bytes, ctx->device);
            return ovd_fail_status(GENERAL_ERROR);
        }
        ti = calloc(1, sizeof *ti);
        ti->refs = 1;
        ti->type = t;
        ti->shape = ps;
        ti->buf = ovd_buf_wrap(mem, bytes);
        ti->usm_id = id;
    } else {
        ti = timpl_alloc(t, &ps);
        if (!ti) return ovd_fail_status(UNKNOW_EXCEPTION);
        ti->usm_id = usm_register(ti->buf->mem, bytes, kind, ctx->device, context_id(ctx));
        ti->usm_owner = true;
    }
    ti->remote = kind;
    ti->ctx = context_id(ctx);
    snprintf(ti->device, sizeof ti->device, "%s", ctx->device);
    *out = handle_new(ti);
    return OK;
}

OVD_EXPORT ov_status_e ov_remote_context_create_host_tensor(const ov_remote_context_t* context,
                                                            const ov_element_type_e type, const ov_shape_t shape,
                                                            ov_tensor_t** tensor) {
    ENTER;
    HANDLE(context, K_CONTEXT);
    CHECK(tensor);
    if (ovd_fault_hit(FP_TENSOR_CREATE)) FAIL(GENERAL_ERROR);
    RET(make_remote_tensor(context, type, &shape, 1, NULL, tensor));
}

OVD_EXPORT ov_status_e ov_remote_context_create_tensor(const ov_remote_context_t* context,
                                                       const ov_element_type_e type, const ov_shape_t shape,
                                                       const size_t object_args_size, ov_tensor_t** remote_tensor,
                                                       ...) {
    ENTER;
    HANDLE(context, K_CONTEXT);
    CHECK(remote_tensor);
    if (object_args_size % 2 || object_args_size > 16) {
        ovd_err("ovdouble: object_args_size must be an even count of at most 16 (key, value) arguments; got %zu",
                object_args_size);
        FAIL(INVALID_C_PARAM);
    }
    if (ovd_fault_hit(FP_TENSOR_CREATE)) FAIL(GENERAL_ERROR);
    va_list ap;
    va_start(ap, remote_tensor);
    const char* mem = NULL;
    void* handle = NULL;
    for (size_t i = 0; i < object_args_size / 2; i++) {
        const char* k = va_arg(ap, const char*);
        void* v = va_arg(ap, void*);
        if (!k) {
            va_end(ap);
            CHECK(k);
        }
        if (strcmp(k, "SHARED_MEM_TYPE") == 0) mem = v;
        else if (strcmp(k, "MEM_HANDLE") == 0) handle = v;
    }
    va_end(ap);
    if (!mem) {
        ovd_err("Exception from src/plugins/intel_gpu/src/plugin/remote_context.cpp: SHARED_MEM_TYPE is required");
        FAIL(GENERAL_ERROR);
    }
    int kind;
    if (strcmp(mem, "USM_HOST_BUFFER") == 0) kind = 1;
    else if (strcmp(mem, "USM_USER_BUFFER") == 0) kind = 1;
    else if (strcmp(mem, "USM_DEVICE_BUFFER") == 0) kind = 2;
    else {
        ovd_err("Exception from src/plugins/intel_gpu/src/plugin/remote_context.cpp: ovdouble models only USM buffers, "
                "not SHARED_MEM_TYPE %s", mem);
        FAIL(NOT_IMPLEMENTED);
    }
    if (strcmp(mem, "USM_USER_BUFFER") == 0 && !handle) {
        ovd_err("Exception from src/plugins/intel_gpu/src/plugin/remote_context.cpp: USM_USER_BUFFER needs MEM_HANDLE");
        FAIL(GENERAL_ERROR);
    }
    RET(make_remote_tensor(context, type, &shape, kind, strcmp(mem, "USM_USER_BUFFER") == 0 ? handle : NULL, remote_tensor));
}

OVD_EXPORT ov_status_e ov_remote_tensor_get_params(ov_tensor_t* tensor, size_t* size, char** params) {
    ENTER;
    HANDLE(tensor, K_TENSOR);
    CHECK(size && params);
    const timpl* t = tensor->t;
    if (!t->remote) {
        ovd_err("Exception from src/inference/src/dev/remote_tensor.cpp: Tensor is not a remote tensor");
        FAIL(GENERAL_ERROR);
    }
    char buf[256];
    /* device memory: the handle of its allocation (a range the host cannot touch; ovd_ocl.c copies to and from it) */
    uintptr_t h = (uintptr_t)t->buf->mem;
    if (t->remote == 2) {
        pthread_mutex_lock(&usm_mu);
        for (int i = 0; i < usm_n; i++)
            if (usm_allocs[i].id == t->usm_id) h = usm_allocs[i].handle + (uintptr_t)((char*)t->buf->mem - usm_allocs[i].mem);
        pthread_mutex_unlock(&usm_mu);
    }
    snprintf(buf, sizeof buf, "MEM_HANDLE 0x%llx OCL_CONTEXT 0x%llx SHARED_MEM_TYPE %s", (unsigned long long)h,
             (unsigned long long)ovd_ocl_context(t->device, t->ctx), t->remote == 2 ? "USM_DEVICE_BUFFER" : "USM_HOST_BUFFER");
    *params = ovd_api_string(buf);
    *size = 3;
    RET(OK);
}

OVD_EXPORT ov_status_e ov_remote_tensor_get_device_name(ov_tensor_t* remote_tensor, char** device_name) {
    ENTER;
    HANDLE(remote_tensor, K_TENSOR);
    CHECK(device_name);
    if (!remote_tensor->t->remote) {
        ovd_err("Exception from src/inference/src/dev/remote_tensor.cpp: Tensor is not a remote tensor");
        FAIL(GENERAL_ERROR);
    }
    *device_name = ovd_api_string(remote_tensor->t->device);
    RET(OK);
}

OVD_EXPORT ov_status_e ov_core_compile_model_with_context(const ov_core_t* core, const ov_model_t* model,
                                                          const ov_remote_context_t* context,
                                                          const size_t property_args_size,
                                                          ov_compiled_model_t** compiled_model, ...) {
    ENTER;
    HANDLE(core, K_CORE);
    HANDLE(model, K_MODEL);
    HANDLE(context, K_CONTEXT);
    CHECK(compiled_model);
    const char* kv[64];
    va_list ap;
    va_start(ap, compiled_model);
    int rc = read_pairs(ap, property_args_size, kv);
    va_end(ap);
    if (rc) FAIL(INVALID_C_PARAM);
    ov_status_e st = compile(core, model->g, context->device, property_args_size / 2, kv, compiled_model);
    if (st == OK) (*compiled_model)->ctx = context_id(context);
    RET(st);
}
