/*
 * htpdouble: a test double of libcdsprpc (FastRPC, rpcmem, dspqueue) with an emulated ggml HTP DSP library.
 *
 * Written from the documented public API (qualcomm/fastrpc inc/remote.h, rpcmem.h, dspqueue.h) and the public htp
 * wire protocol of ggml-org/ggml d99724f as described in facts/hexagon.md. Every declaration here is our own;
 * the numbers are pinned with _Static_assert in wire_check.c against the facts listed in facts/README.md.
 * Internal header: shared by the double's translation units, never installed.
 */
#ifndef HTPDOUBLE_H
#define HTPDOUBLE_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#define HD_EXPORT __attribute__((visibility("default")))

/* ---- AEE error codes (AEEStdErr.h values, hexagon.md 6.7) ---- */
enum {
    AEE_SUCCESS = 0,
    AEE_EFAILED = 1,
    AEE_ENOMEMORY = 2,
    AEE_EUNABLETOLOAD = 6,
    AEE_EEXPIRED = 0xC,
    AEE_EBADSTATE = 0xD,
    AEE_EBADPARM = 0xE,
    AEE_EUNSUPPORTED = 0x14,
    AEE_EITEMBUSY = 0x20,
    AEE_EINVHANDLE = 0x2C,
    AEE_ENOSUCH = 39,
    AEE_EINTERRUPTED = 46,
    AEE_ECONNRESET = 104,
    AEE_EINVALIDDOMAIN = 0x39,
    AEE_ENOSUCHMAP = 0x48,
    AEE_EBADSIZE = 0x4D,
    AEE_ENOTINITIALIZED = 0x6B,
    AEE_EUNSUPPORTEDAPI = 0x6C,
    AEE_ECONNREFUSED = 0x72,
    AEE_ENOSESSION = 0x8A,
    AEE_ERPC = 0x200,
    AEE_EWOULDBLOCK = 516,
    AEE_EOFFSET_DSP = (int) 0x80000400,
};

/* ---- remote.h ---- */
typedef uint32_t remote_handle;
typedef uint64_t remote_handle64;
typedef struct { void *pv; size_t nLen; } remote_buf;
typedef struct { int32_t fd; uint32_t offset; } remote_dma_handle;
typedef union {
    remote_buf buf;
    remote_handle h;
    remote_handle64 h64;
    remote_dma_handle dma;
} remote_arg;

#define HD_SC_METHOD(sc)  (((sc) >> 24) & 0x1f)
#define HD_SC_ATTR(sc)    (((sc) >> 29) & 0x7)
#define HD_SC_INBUFS(sc)  (((sc) >> 16) & 0xff)
#define HD_SC_OUTBUFS(sc) (((sc) >> 8) & 0xff)
#define HD_SC_INH(sc)     (((sc) >> 4) & 0xf)
#define HD_SC_OUTH(sc)    ((sc) & 0xf)

enum { /* handle_control_req_id */
    DSPRPC_CONTROL_LATENCY = 1,
    DSPRPC_GET_DSP_INFO = 2,
};
enum { /* session_control_req_id */
    DSPRPC_CONTROL_UNSIGNED_MODULE = 2,
    FASTRPC_RESERVE_NEW_SESSION = 13,
    FASTRPC_GET_EFFECTIVE_DOMAIN_ID = 14,
    FASTRPC_GET_URI = 15,
};
enum { /* remote_dsp_attributes */
    DOMAIN_SUPPORT = 0, UNSIGNED_PD_SUPPORT = 1, HVX_SUPPORT_64B = 2, HVX_SUPPORT_128B = 3,
    VTCM_PAGE = 4, VTCM_COUNT = 5, ARCH_VER = 6, HMX_SUPPORT_DEPTH = 7, HMX_SUPPORT_SPATIAL = 8,
    ASYNC_FASTRPC_SUPPORT = 9, STATUS_NOTIFICATION_SUPPORT = 10, MCID_MULTICAST = 11,
};
enum { /* fastrpc_map_flags */
    FASTRPC_MAP_STATIC = 0, FASTRPC_MAP_FD = 2, FASTRPC_MAP_FD_DELAYED = 3, FASTRPC_MAP_FD_NOMAP = 16,
    FASTRPC_MAP_FD_EXTENDED = 17, FASTRPC_MAP_FD_DELAYED_EXTENDED = 18,
};
enum { ADSP_DOMAIN_ID = 0, MDSP_DOMAIN_ID = 1, SDSP_DOMAIN_ID = 2, CDSP_DOMAIN_ID = 3, CDSP1_DOMAIN_ID = 4 };
#define HD_NUM_DOMAINS 8  /* effective id = domain + 8 * session */
#define HD_NUM_SESSIONS 4

struct remote_rpc_control_latency { uint32_t enable; uint32_t latency; };
struct remote_dsp_capability { uint32_t domain; uint32_t attribute_ID; uint32_t capability; };
struct remote_rpc_control_unsigned_module { int domain; int enable; };
struct remote_rpc_reserve_new_session {
    char *domain_name; uint32_t domain_name_len;
    char *session_name; uint32_t session_name_len;
    uint32_t effective_domain_id; uint32_t session_id;
};
struct remote_rpc_effective_domain_id {
    char *domain_name; uint32_t domain_name_len; uint32_t session_id; uint32_t effective_domain_id;
};
struct remote_rpc_get_uri {
    char *domain_name; uint32_t domain_name_len; uint32_t session_id;
    char *module_uri; uint32_t module_uri_len;
    char *uri; uint32_t uri_len;
};

/* Domain discovery, 96-byte layout recommended by hexagon.md 6.6 (not in the public headers; unverified). */
enum { FASTRPC_GET_DOMAINS = 0 };
enum { HD_FASTRPC_NSP = 1 };
struct hd_fastrpc_domain {
    int id; int instance_id; char name[30]; int type; int status; uint32_t card; uint32_t soc_id; uint32_t reserved[10];
};
struct hd_fastrpc_domains_info { struct hd_fastrpc_domain *domains; int max_domains; int num_domains; uint64_t flags; };
struct hd_system_req_payload { uint32_t id; struct hd_fastrpc_domains_info sys; };

/* ---- dspqueue.h ---- */
struct dspqueue;
typedef struct dspqueue *dspqueue_t;
typedef void (*dspqueue_callback_t)(dspqueue_t queue, int error, void *context);
struct dspqueue_buffer {
    uint32_t fd; uint32_t size; uint32_t offset; uint32_t flags;
    union { void *ptr; uint64_t address; };
};
#define DSPQUEUE_TIMEOUT_NONE 0xffffffffu
enum {
    DSPQUEUE_BUFFER_FLAG_REF = 0x4, DSPQUEUE_BUFFER_FLAG_DEREF = 0x8,
    DSPQUEUE_BUFFER_FLAG_FLUSH_SENDER = 0x10, DSPQUEUE_BUFFER_FLAG_INVALIDATE_SENDER = 0x20,
    DSPQUEUE_BUFFER_FLAG_FLUSH_RECIPIENT = 0x40, DSPQUEUE_BUFFER_FLAG_INVALIDATE_RECIPIENT = 0x80,
};
enum { DSPQUEUE_PACKET_FLAG_MESSAGE = 0x1, DSPQUEUE_PACKET_FLAG_BUFFERS = 0x2 };
#define HD_DSPQUEUE_MAX_MESSAGE 65536u
#define HD_DSPQUEUE_MAX_BUFFERS 64u
#define HD_DSPQUEUE_MAX_QUEUE   (16u << 20)

/* ---- rpcmem.h ---- */
enum { RPCMEM_HEAP_ID_SECURE = 9, RPCMEM_HEAP_ID_CONTIG = 22, RPCMEM_HEAP_ID_SYSTEM = 25 };

/* ---- ggml htp wire protocol, d99724f (htp-ops.h) ---- */
#define HTP_OP_MAX_DIMS 4
#define HTP_OP_MAX_INPUTS 6
#define HTP_OP_MAX_OUTPUTS 4
#define HTP_OP_MAX_PARAMS 16
#define HTP_OP_MAX_KERN_PARAMS 32
#define HTP_OP_MAX_BUFS 16
#define HTP_OP_MAX_TENSORS 8192
#define HTP_MAX_NTHREADS 10
#define HTP_PROF_PMU_NCNT 8
#define HTP_NO_TENSOR 0xffffu

enum { HTP_STATUS_OK = 1, HTP_STATUS_INTERNAL_ERR = 2, HTP_STATUS_NO_SUPPORT = 3, HTP_STATUS_INVAL_PARAMS = 4,
       HTP_STATUS_VTCM_TOO_SMALL = 5 };
enum { HTP_TYPE_F32 = 0, HTP_TYPE_F16 = 1, HTP_TYPE_Q4_0 = 2, HTP_TYPE_Q4_1 = 3, HTP_TYPE_Q8_0 = 8,
       HTP_TYPE_IQ4_NL = 20, HTP_TYPE_I32 = 26, HTP_TYPE_I64 = 27, HTP_TYPE_MXFP4 = 39,
       HTP_TYPE_Q4_0_TILED = 200, HTP_TYPE_Q4_1_TILED = 201, HTP_TYPE_Q8_0_TILED = 202, HTP_TYPE_MXFP4_TILED = 203,
       HTP_TYPE_INVALID = 204 };
enum { HTP_TENSOR_COMPUTE = 1u << 0, HTP_TENSOR_DIRTY = 1u << 1 };
enum { HTP_OPFLAGS_SKIP_COMPUTE = 1u << 0 };
enum { HTP_PROF_DISABLED = 0, HTP_PROF_BASIC = 1, HTP_PROF_PMU = 2, HTP_PROF_TRACE = 3 };
enum htp_op_code {
    HTP_OP_MUL = 0, HTP_OP_ADD, HTP_OP_SUB, HTP_OP_DIV, HTP_OP_MUL_MAT, HTP_OP_MUL_MAT_ID, HTP_OP_MUL_MAT_QKV,
    HTP_OP_MUL_MAT_FFN, HTP_OP_MUL_MAT_ADD, HTP_OP_RMS_NORM, HTP_OP_RMS_NORM_MUL, HTP_OP_UNARY_SILU,
    HTP_OP_UNARY_GELU, HTP_OP_UNARY_SIGMOID, HTP_OP_UNARY_EXP, HTP_OP_UNARY_NEG, HTP_OP_UNARY_SOFTPLUS,
    HTP_OP_UNARY_TANH, HTP_OP_GLU_SWIGLU, HTP_OP_GLU_SWIGLU_OAI, HTP_OP_GLU_GEGLU, HTP_OP_SOFTMAX, HTP_OP_ADD_ID,
    HTP_OP_ROPE, HTP_OP_FLASH_ATTN_EXT, HTP_OP_SET_ROWS, HTP_OP_GET_ROWS, HTP_OP_SCALE, HTP_OP_CPY, HTP_OP_ARGSORT,
    HTP_OP_SQR, HTP_OP_SQRT, HTP_OP_SUM_ROWS, HTP_OP_SSM_CONV, HTP_OP_REPEAT, HTP_OP_CUMSUM, HTP_OP_FILL,
    HTP_OP_DIAG, HTP_OP_SOLVE_TRI, HTP_OP_L2_NORM, HTP_OP_GATED_DELTA_NET, HTP_OP_TRI, HTP_OP_PAD, HTP_OP_NORM,
    HTP_OP_CONCAT, HTP_OP_CLAMP, HTP_OP_IM2COL, HTP_OP_INVALID,
};

struct htp_buf_desc { uint64_t base; uint64_t size; uint32_t flags; uint32_t fd; };
struct htp_tensor {
    uint32_t data; uint32_t reserved; uint32_t size; uint32_t flags; uint32_t type; uint16_t bi; uint16_t ti;
    uint32_t ne[HTP_OP_MAX_DIMS]; uint32_t nb[HTP_OP_MAX_DIMS];
};
struct htp_op_desc {
    uint32_t opcode; uint32_t flags; int32_t params[HTP_OP_MAX_PARAMS]; int32_t kernel_params[HTP_OP_MAX_KERN_PARAMS];
    uint16_t src[HTP_OP_MAX_INPUTS]; uint16_t dst[HTP_OP_MAX_OUTPUTS]; uint16_t pad[2];
};
struct htp_prof_desc { uint32_t opcode; uint32_t usecs; uint32_t cycles_start; uint32_t cycles_stop;
                       uint32_t pmu[HTP_PROF_PMU_NCNT]; };
struct htp_trace_desc { uint32_t cycles; uint16_t id; uint16_t info; };
struct htp_opbatch_req { uint32_t id; uint32_t n_bufs; uint32_t n_tensors; uint32_t n_ops; uint32_t n_traces;
                         uint32_t pad; };
struct htp_opbatch_rsp {
    uint32_t id; uint32_t status; uint32_t n_bufs; uint32_t n_tensors; uint32_t n_ops;
    uint32_t n_traces[HTP_MAX_NTHREADS + 1]; uint32_t usecs; uint32_t pad; uint64_t cycles_start; uint64_t cycles_stop;
};
/* Fence-protocol extension (qualcomm dev htp-ops.h @4f400747 per hexagon.md 2.2; NOT verified against a DSP library):
 * the request gains a trailing u64 seq (32 B), the response a trailing u64 seq (96 B). */
struct hd_opbatch_req_seq { struct htp_opbatch_req base; uint64_t seq; };
struct hd_opbatch_rsp_seq { struct htp_opbatch_rsp base; uint64_t seq; };
/* Fence-protocol op descriptor with HTP_OP_MAX_INPUTS = 10 (hexagon.md 2.2: the Rust port and the fake harness; NOT
 * verified): 232 bytes, src[10] @200, dst[4] @220. Used with protocol=fence. */
#define HD_FENCE_MAX_INPUTS 10
struct hd_fence_op_desc {
    uint32_t opcode; uint32_t flags; int32_t params[HTP_OP_MAX_PARAMS]; int32_t kernel_params[HTP_OP_MAX_KERN_PARAMS];
    uint16_t src[HD_FENCE_MAX_INPUTS]; uint16_t dst[HTP_OP_MAX_OUTPUTS]; uint16_t pad[2];
};
/* Fence-protocol tensor flags (hexagon.md 2.2, unverified) and the I8 type of fence tensors. */
enum { HD_FENCE_TENSOR_WEIGHT = 1u << 0, HD_FENCE_TENSOR_TILED = 1u << 1, HD_FENCE_TENSOR_FENCE = 1u << 2 };
#define HD_TYPE_I8 24u
/* Wire protocol flavours (protocol= knob). */
enum {
    HD_PROTO_PUBLIC = 0, /* ggml d99724f */
    HD_PROTO_QDEV = 1,   /* qualcomm/llama.cpp dev htp-ops.h @4f400747: d99724f's table + FENCE 47, WEIGHT/REPACK */
    HD_PROTO_FENCE = 2,   /* hexagon.md's reconstruction of upstream: Rust-port table, 10 inputs (unverified) */
};
/* Internal op ids: the public opcodes, then the ones only the later tables have. */
enum {
    HD_OP_ABS = HTP_OP_INVALID + 1, HD_OP_LOG, HD_OP_RELU, HD_OP_LEAKY_RELU, HD_OP_FENCE, HD_OP_CPY_FENCE,
    HD_OP_MDEV_GROUP, HD_OP_ALLREDUCE, HD_OP_ALLREDUCE_ADD, HD_OP_FENCE_OTHER, HD_OP_COUNT
};
/* An op descriptor of either layout, decoded; opcode is the internal id. */
struct hd_op {
    uint32_t opcode; uint32_t wire_opcode; uint32_t flags;
    int32_t params[HTP_OP_MAX_PARAMS]; int32_t kernel_params[HTP_OP_MAX_KERN_PARAMS];
    uint16_t src[HD_FENCE_MAX_INPUTS]; uint16_t dst[HTP_OP_MAX_OUTPUTS];
};

/* htp_iface method ids (qaic numbering: open 0, close 1, declared methods from 2) */
enum { HTP_IFACE_START = 2, HTP_IFACE_STOP = 3, HTP_IFACE_MMAP = 4, HTP_IFACE_MUNMAP = 5, HTP_IFACE_PROFILER = 6,
       HTP_IFACE_ETM = 7, HTP_IFACE_HWINFO = 8 };
#define HD_START_ARGS_SNAPSHOT 32u  /* sess_id, pad, queue_id, n_hvx, n_hmx, max_vmem */
#define HD_START_ARGS_UPSTREAM     48u  /* ... n_hmx, u64 vtcm_size @24, u64 max_vmem @32, u32 power_mode @40 (inferred) */

/* ---- the double's internals (shared between translation units) ---- */

#define HD_MAX_BLOCKS 4096
#define HD_MAX_MAPS 8192
#define HD_MAX_HANDLES 64
#define HD_MAX_QUEUES 64
#define HD_MAX_IFACE_MAPS 1024
#define HD_MAX_INFLIGHT 256
#define HD_DEFAULT_MAX_VMEM 3355443200ull

/* A tracked rpcmem block. pins > 0 while a batch executing on a DSP thread uses it; a block freed then becomes a
 * zombie whose memory is released when the last pin goes, so a host bug cannot crash the DSP thread. */
struct hd_block {
    void *base; size_t size; size_t req_size; int fd; int heap; uint32_t flags; int live; int pins; int zombie;
    /* The memory behind a dspqueue buffer as the two caches see it (allocated at the block's first dspqueue use,
     * zero like fresh rpcmem): `ddr` holds what the host's FLUSH_SENDER pushed out, `l2` what the DSP side last
     * fetched (INVALIDATE_RECIPIENT) or wrote. The DSP works on `l2`, so a missing flag leaves it stale data. */
    uint8_t *ddr, *l2;
    uint64_t gen; /* allocation serial, never reused: what math=ggml keys its converted weights on */
};
/* One fastrpc_mmap of a block into an effective domain. */
struct hd_map { int domain; int fd; void *addr; size_t len; int flags; int live; };
/* One htp_iface_mmap on a handle (the DSP-side HAP_mmap of the public skel). */
struct hd_iface_map { int live; int handle; int fd; uint32_t size; };

struct hd_handle {
    int live; uint32_t gen; int ordinal; int domain; int phys; int session;
    int started; int queue; uint32_t sess_id; uint32_t n_hvx, n_hmx; uint64_t max_vmem, vtcm; uint32_t power_mode;
    int upstream_start; uint32_t prof_mode; uint32_t etm;
    int dead; /* its DSP process died: invokes fail with AEE_ECONNRESET, close still releases it */
};

/* A packet in one direction of a queue. */
struct hd_packet {
    struct hd_packet *next; uint32_t flags; uint32_t nbuf; uint32_t len; size_t cost;
    struct dspqueue_buffer *bufs; uint8_t *msg;
    int bad;           /* request: verdict of the write-time sequence checks (violation already logged) */
    int tracked;       /* request: recorded in flight; response: retires that entry when the host reads it */
    uint64_t t_queued; /* when the packet entered its ring */
    int reader_waiting; /* response: a host read was blocked when it was queued */
    uint32_t batch_id; /* response: the batch it answers */
};
struct hd_ring { struct hd_packet *head, *tail; size_t used, cap; uint32_t count; };

/* A batch written by the host whose response the host has not read yet. */
struct hd_inflight { uint32_t id; uint32_t fd; uint64_t off, size; };

struct dspqueue {
    int idx; int live; int ordinal; int domain; uint64_t export_id; int exported; int bound;
    dspqueue_callback_t packet_cb, error_cb; void *cb_ctx;
    struct hd_ring req, rsp;
    pthread_cond_t cv; pthread_t thread; int thread_live; int stop; int busy; int readers;
    struct hd_inflight inflight[HD_MAX_INFLIGHT]; int n_inflight;
    uint64_t last_seq; int have_seq;
    int dead; /* the emulated DSP process died (fail.crash): calls fail with AEE_EBADSTATE */
};

enum hd_fault_point {
    HD_F_RPCMEM_ALLOC, HD_F_MMAP, HD_F_MUNMAP, HD_F_OPEN, HD_F_CLOSE, HD_F_INVOKE,
    HD_F_IFACE_START, HD_F_IFACE_STOP, HD_F_IFACE_MMAP, HD_F_IFACE_MUNMAP, HD_F_IFACE_PROFILER, HD_F_IFACE_ETM,
    HD_F_IFACE_HWINFO, HD_F_DSP_INFO, HD_F_LATENCY, HD_F_SESSION_RESERVE, HD_F_SESSION_EFFECTIVE,
    HD_F_SESSION_UNSIGNED, HD_F_SESSION_URI, HD_F_SYSREQ, HD_F_QUEUE_CREATE, HD_F_QUEUE_EXPORT, HD_F_QUEUE_CLOSE,
    HD_F_QUEUE_WRITE, HD_F_QUEUE_READ, HD_F_OP, HD_F_RSP_SIZE, HD_F_CRASH, HD_F_COUNT
};
struct hd_fault { int set; uint64_t first, count, seen; uint32_t code; char sel; int64_t selv; };

struct hd_config {
    int nodsp; int arch; int cores; int sysreq; /* 0 list, 1 unsupported, 2 none */
    uint32_t hw_threads, hw_hmx; uint64_t vtcm;
    int unsigned_required; int dma64; uint64_t mem_limit, map_limit;
    int reject_hang; int rewrite; uint32_t delay_us; int exec; int log_level;
    int protocol;             /* HD_PROTO_*: opcode table, op descriptor size, tensor flags */
    uint32_t fence_timeout_us;
    int kparams;              /* 1: check the public unary kernel parameter blocks (queue.c) */
    int cache;                /* 1: model the DSP's caches (queue.c, README "Caches"); 0: coherent memory */
    int gelu_tanh;            /* UNARY_GELU as ggml's tanh form instead of d99724f's DSP (x * sigmoid(1.702 x)) */
    int math;                 /* HD_MATH_*: who computes the ops */
    char ggml_dir[1024], ggml_cpu[256]; /* math=ggml: the libraries' directory and CPU variant (or file name) */
    int ggml_extra;           /* math=ggml: weights in the CPU device's extra buffer types where it takes them */
    uint32_t ggml_ulp;        /* math=ggml: internal op id whose outputs are perturbed by one ulp; HD_OP_COUNT = none */
};
enum { HD_MATH_EMU = 0, HD_MATH_GGML = 1 };

struct hd_stats {
    uint64_t rpcmem_allocs, rpcmem_frees, batches, batches_rejected, ops, exec_ns, validate_ns, dsp_busy_ns, dsp_wall_ns,
        rsp_wakeup_ns, violations, mdev_shares,
        faults_fired, op_count[HD_OP_COUNT],
        ggml_weights, ggml_weights_extra; /* math=ggml: weights converted / of them placed in an extra buffer type */
};

struct hd_state {
    pthread_mutex_t mu;
    struct hd_config cfg;
    struct hd_stats st;
    struct hd_fault faults[HD_F_COUNT];
    struct hd_block blocks[HD_MAX_BLOCKS];
    struct hd_map maps[HD_MAX_MAPS];
    struct hd_iface_map imaps[HD_MAX_IFACE_MAPS];
    struct hd_handle handles[HD_MAX_HANDLES];
    struct dspqueue *queues[HD_MAX_QUEUES];
    int reserved[HD_NUM_DOMAINS][HD_NUM_SESSIONS];
    int unsigned_on[HD_NUM_DOMAINS * HD_NUM_SESSIONS];
    int n_handles_opened, n_queues_created;
    int n_blocks, n_maps; /* high-water marks of the blocks[] and maps[] slots in use, to bound the scans */
    uint64_t next_export_id;
    uint64_t next_block_gen;
};
extern struct hd_state hd;

/* core.c */
void hd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hd_logv(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hd_violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Fault check for point p with the call's context (-1 = not applicable); returns 1 and sets *code when it fires. */
int hd_fault(enum hd_fault_point p, int q_ordinal, int h_ordinal, int domain, int opcode, uint32_t *code);
struct hd_block *hd_block_by_fd(int fd);
struct hd_map *hd_map_find(int domain, int fd);
int hd_domain_exists(int domain);
const char *hd_domain_name(int phys);
uint64_t hd_now_ns(void);
void hd_block_unpin(struct hd_block *b);

/* queue.c */
struct dspqueue *hd_queue_by_export(uint64_t id);
int hd_queue_start(struct dspqueue *q);
void hd_queue_stop(struct dspqueue *q); /* called with hd.mu held; drops it while joining */

/* ops.c: a tensor as the DSP thread sees it (host pointer resolved). */
struct hd_tensor { const struct htp_tensor *d; uint8_t *p; uint64_t gen; /* its block's */ };
/* Name of an internal op id (htp-ops.h names without HTP_OP_). */
const char *hd_op_name(uint32_t opcode);
/* Internal op id of a wire opcode under the configured protocol; HD_OP_COUNT if the opcode is invalid. */
uint32_t hd_map_opcode(uint32_t wire);
/* Executes one op; returns an htp_status. src/dst entries are NULL where the descriptor has 0xffff. */
int hd_exec_op(const struct hd_op *op, struct hd_tensor *const src[HD_FENCE_MAX_INPUTS],
               struct hd_tensor *const dst[HTP_OP_MAX_OUTPUTS]);
/* Bytes per block and elements per block of a wire type; 0 for an unknown type. */
uint32_t hd_type_size(uint32_t type);
uint32_t hd_type_blck(uint32_t type);
/* The weight operand t of a product with K inputs and N outputs: its quantized base type (or its own) in *qt and
 * whether it is tiled (hexagon.md 10); an htp status, checked as the emulation checks it. */
int hd_weight_layout(const struct hd_tensor *t, int64_t K, int64_t N, uint32_t *qt, int *tiled);
/* Bytes of one 32 x 32 tile of a quantized base type; 0 for others. */
size_t hd_tile_bytes(uint32_t qt);

/* ggml.c: math=ggml */
/* Loads libggml-base.so and the CPU library cpu (a variant name or a file name) from dir; 0, or -1 with err set. */
int hd_ggml_load(const char *dir, const char *cpu, char *err, size_t errn);
/* Executes one op with the real ggml CPU library (the DSP thread); an htp status, a violation where it cannot. */
int hd_ggml_exec_op(const struct hd_op *op, struct hd_tensor *const src[HD_FENCE_MAX_INPUTS],
                    struct hd_tensor *const dst[HTP_OP_MAX_OUTPUTS]);
/* An rpcmem block of generation gen was released: its converted weights can go. */
void hd_ggml_block_gone(uint64_t gen);

#endif
