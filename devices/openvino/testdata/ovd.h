/* ovdouble internals: element types, shapes, values, the IR graph, and the control/statistics layer. */
#ifndef OVD_H
#define OVD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ovd_api.h"

/* ---- element types ------------------------------------------------------------------------------------------
 * The internal numbering is the 2024.2-2025.0 one (versions.txt column 2025.0.0); ovd_types.c maps it to the
 * numbering of the release presented. */
typedef enum {
    T_UNDEF = 0, T_DYNAMIC = 1, T_BOOL = 2, T_BF16 = 3, T_F16 = 4, T_F32 = 5, T_F64 = 6, T_I4 = 7, T_I8 = 8,
    T_I16 = 9, T_I32 = 10, T_I64 = 11, T_U1 = 12, T_U2 = 13, T_U3 = 14, T_U4 = 15, T_U6 = 16, T_U8 = 17,
    T_U16 = 18, T_U32 = 19, T_U64 = 20, T_NF4 = 21, T_F8E4M3 = 22, T_F8E5M2 = 23, T_STRING = 24, T_F4E2M1 = 25,
    T_F8E8M0 = 26, T_COUNT = 27
} ovd_type;

const char* ovd_type_name(ovd_type t);      /* IR name: "f32" */
int ovd_type_from_str(const char* s, ovd_type* t); /* IR or legacy precision name; 0 ok */
int ovd_type_bits(ovd_type t);              /* bit width, 0 for dynamic/undefined/string */
bool ovd_type_is_float(ovd_type t);
bool ovd_type_is_int(ovd_type t);           /* integers and boolean */
bool ovd_type_supported(ovd_type t);        /* the double can store and convert it */
size_t ovd_type_bytes(ovd_type t, int64_t n); /* ceil(n * bits / 8) */
int ovd_type_to_ext(ovd_type t);            /* numbering of the presented release; -1 if absent there */
int ovd_type_from_ext(int ext, ovd_type* t);/* 0 ok */
/* element-wise transfer between external memory of type t and the internal representation
 * (float for floating types, int64 for integer/boolean types) */
void ovd_decode(ovd_type t, const void* src, int64_t n, void* dst);
void ovd_encode(ovd_type t, const void* src, int64_t n, void* dst);
void ovd_round_to(ovd_type t, float* f, int64_t n); /* round f32 values to t's precision */
int64_t ovd_wrap_int(ovd_type t, int64_t v);
float ovd_f16_to_f32(uint16_t h);
uint16_t ovd_f32_to_f16(float f);

/* ---- shapes ---------------------------------------------------------------------------------------------- */
#define OVD_MAXR 8
typedef struct {
    int rank;              /* -1: dynamic rank */
    int64_t d[OVD_MAXR];   /* -1: dynamic dimension */
} ovd_pshape;
bool ovd_ps_static(const ovd_pshape* s);
int64_t ovd_ps_numel(const ovd_pshape* s); /* -1 if not static */
void ovd_ps_str(const ovd_pshape* s, char* buf, size_t cap); /* "[2,?,4]" */

/* ---- values: a tensor inside the executor ----------------------------------------------------------------- */
typedef struct {
    ovd_type type;
    ovd_pshape shape; /* static */
    int64_t n;
    void* data;       /* float[n] if ovd_type_is_float(type), else int64_t[n] */
    int refs;         /* values shared between node outputs (Reshape, Squeeze...) are refcounted */
} ovd_val;
ovd_val* ovd_val_new(ovd_type t, const ovd_pshape* s); /* NULL + error set on allocation failure */
ovd_val* ovd_val_ref(ovd_val* v);
void ovd_val_unref(ovd_val* v);
size_t ovd_val_esize(ovd_type t); /* 4 or 8 */
double ovd_val_get(const ovd_val* v, int64_t i);
int64_t ovd_val_geti(const ovd_val* v, int64_t i);

/* ---- errors -----------------------------------------------------------------------------------------------
 * A failing internal function formats its message with ovd_err and returns -1; the API layer copies the
 * per-thread message into the global last-error string. */
int ovd_err(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int ovd_err_alloc(void); /* std::bad_alloc */
const char* ovd_err_msg(void);
bool ovd_err_is_alloc(void);
void ovd_err_clear(void);

/* ---- the IR graph ------------------------------------------------------------------------------------------ */
typedef struct {
    char* k;
    char* v;
} ovd_attr;

typedef struct {
    int port_id;
    ovd_type declared;  /* from precision= */
    char** names;
    int nnames;
    ovd_pshape dims;    /* from <dim>s (informational) */
    ovd_type type;      /* inferred */
    ovd_pshape ps;      /* inferred */
    ovd_val* known;     /* value known at read time (small integer constants and shape computations) */
} ovd_out;

typedef struct {
    int node; /* producer node index, -1 until the edge is seen */
    int out;  /* producer output index */
} ovd_src;

struct ovd_opdef;
typedef struct ovd_node {
    int64_t id;
    char* name;
    char* type;
    int opset;
    int ver; /* class version the opset holds */
    const struct ovd_opdef* def;
    ovd_attr* attrs;
    int nattrs;
    int nin;
    int* in_port_ids;
    ovd_src* in;
    int nout;
    ovd_out* out;
    /* parsed attributes, op-specific meaning */
    ovd_type et;            /* element_type / destination_type / output_type */
    ovd_pshape pshape;      /* Parameter shape, Constant shape */
    int64_t off, size;      /* Constant */
    int b[6];               /* booleans / masks count */
    int64_t iv[4];          /* small ints: axis, batch_dims, num_splits, mode */
    double fv[2];           /* Clamp min/max, eps */
    int64_t* lists[5];      /* StridedSlice masks etc. */
    int nlists[5];
    int live;               /* reached from a Result/Assign (or a Parameter) */
    int ctrl;               /* Assign: the ReadValue of its variable (control dependency), else -1 */
    char* var;              /* ReadValue/Assign variable_id */
} ovd_node;

typedef struct ovd_graph {
    int refs;
    char* name;
    int nnodes;
    ovd_node* nodes;
    int norder;
    int* order;      /* execution order */
    int nparams;
    int* params;     /* node indices, XML order */
    int nresults;
    int* results;
    const uint8_t* w; /* weights memory (borrowed through wbuf) */
    size_t wsize;
    struct ovd_buf* wbuf;
    char* xml;       /* copy, for export */
    size_t xml_len;
    int nconsts;
    /* IR v10: the model's inputs and outputs as the real runtime presents them (the legacy API's precisions,
     * ovd_ir.c legacy_port_type); NULL for IR v11, whose ports are the Parameters' and the Results' own */
    ovd_out* pin;
    ovd_out* pout;
} ovd_graph;

/* refcounted memory behind tensors */
typedef struct ovd_buf {
    int refs;
    void* mem;
    size_t cap;
    int owned;
} ovd_buf;
ovd_buf* ovd_buf_new(size_t bytes); /* owned; NULL + error on failure (alloc fault point) */
ovd_buf* ovd_buf_wrap(void* mem, size_t cap);
void ovd_buf_ref(ovd_buf* b);
void ovd_buf_unref(ovd_buf* b);

ovd_graph* ovd_ir_read(const char* xml, size_t len, const void* weights, size_t wsize, ovd_buf* wbuf);
void ovd_graph_unref(ovd_graph* g);
int ovd_graph_find_param(const ovd_graph* g, const char* tensor_name);   /* parameter index or -1 */
int ovd_graph_find_result(const ovd_graph* g, const char* tensor_name);  /* result index or -1 */
/* the port an input/output index designates: the Parameter's output, or the output feeding a Result */
const ovd_out* ovd_graph_in_port(const ovd_graph* g, int i);  /* as presented (IR v10: legacy precisions) */
const ovd_out* ovd_graph_param_port(const ovd_graph* g, int i); /* the Parameter's own output */
const ovd_out* ovd_graph_result_port(const ovd_graph* g, int i); /* the Result's own input */
ovd_val* ovd_val_convert(const ovd_val* a, ovd_type to);       /* as Convert computes it; NULL + error on failure */
const ovd_out* ovd_graph_out_port(const ovd_graph* g, int i);

/* compile-time folded values (one per node output) and execution */
typedef struct {
    ovd_graph* g;
    ovd_val*** folded; /* [node][out] or NULL */
    int64_t const_bytes;
} ovd_plan;
int ovd_plan_build(ovd_plan* p, ovd_graph* g, bool fold);
void ovd_plan_free(ovd_plan* p);
/* compile-time device rules: the NPU takes static shapes only (ovd_npu.c); 0 or ovd_err's -1 */
int ovd_npu_check(const ovd_graph* g, const char* dev);
/* runs the graph: inputs[i] are Parameter values in port types; outputs[j] receives new values */
int ovd_plan_run(const ovd_plan* p, ovd_val** inputs, ovd_val** outputs, int64_t* nodes_run, int64_t* node_ns);
/* node_ns (may be NULL): per node, the nanoseconds its execution took in this run (0 if folded or not run) */

/* variable states of one infer request (ReadValue/Assign); the executor reads the calling thread's current one */
typedef struct {
    int n;
    char** ids;
    ovd_val** vals;
} ovd_state;
void ovd_state_use(ovd_state* s); /* NULL: none (read time, compile-time folding) */
ovd_state* ovd_state_current(void);
void ovd_state_free(ovd_state* s);

/* ---- ops ----------------------------------------------------------------------------------------------- */
typedef struct {
    ovd_type t;
    ovd_pshape ps;
    const ovd_val* v; /* value if known */
} ovd_in;

typedef struct ovd_opdef {
    const char* name;
    int opset_min;     /* first opset holding this class version */
    int ver;           /* class version (v0, v1, v8...) */
    int code;          /* op-specific selector (which binary/unary/reduction) */
    int (*parse)(ovd_node* n);                                         /* attributes; may be NULL */
    int (*infer)(ovd_node* n, const ovd_in* in, ovd_type* ot, ovd_pshape* ops);  /* types and shapes */
    int (*exec)(const ovd_node* n, ovd_val* const* in, ovd_val** out);           /* out[] preallocated */
    int nin_min, nin_max, nout; /* nout -1: attribute-defined (Split) */
    int alias_out; /* 1: output 0 may alias input 0's data (Reshape-like); exec then receives out[0] NULL */
} ovd_opdef;
const ovd_opdef* ovd_op_find(const char* type, int opset, int* ver);
int ovd_op_known_anywhere(const char* type);
int ovd_node_nout(const ovd_node* n);

/* attribute helpers */
const char* ovd_attr_get(const ovd_node* n, const char* k);
int ovd_attr_bool(ovd_node* n, const char* k, int def, int* out);
int ovd_attr_int(ovd_node* n, const char* k, int64_t def, bool required, int64_t* out);
int ovd_attr_float(ovd_node* n, const char* k, double def, bool required, double* out);
int ovd_attr_list(ovd_node* n, const char* k, bool required, int64_t** out, int* count);
int ovd_parse_shape(const char* s, ovd_pshape* ps);

/* ---- control, statistics, fault injection (ovd_ctl.c) ---------------------------------------------------- */
typedef enum {
    FP_CORE_CREATE, FP_READ_MODEL, FP_COMPILE, FP_IMPORT, FP_EXPORT, FP_CREATE_INFER_REQUEST, FP_INFER,
    FP_SET_TENSOR, FP_GET_TENSOR, FP_TENSOR_CREATE, FP_ALLOC, FP_VERSION, FP_DEVICES, FP_GET_PROPERTY,
    FP_SET_PROPERTY, FP_COUNT
} ovd_fault;
bool ovd_fault_hit(ovd_fault f); /* counts the call; true if it must fail (message already set) */
int64_t ovd_max_alloc(void);
bool ovd_const_at_infer(void);
bool ovd_strict(void); /* declared precisions/dims must match inference */

typedef enum { L_CORE, L_MODEL, L_COMPILED, L_REQUEST, L_TENSOR, L_PORT, L_STRING, L_SHAPE, L_CONTEXT, L_COUNT } ovd_live;
void ovd_live_add(ovd_live k, int64_t d);
void ovd_live_bytes(int64_t d);
typedef enum {
    C_INFER, C_INFER_NODES, C_COMPILE, C_CONST_BYTES, C_IMPORT, C_EXPORT, C_FAULTS, C_WARN_PRECISION, C_WARN_DIMS,
    C_OUTPUT_RESHAPED, C_FREE_NULL, C_BAD_FREE, C_BAD_HANDLE, C_XFER_H2D, C_XFER_D2H, C_INPLACE_HAZARD, C_COUNT
} ovd_counter;
void ovd_count(ovd_counter c, int64_t d);
/* the last GPU infer's host<->device bytes per port: "in.N", "out.N", and the port counts "nin", "nout"; -1 if none */
int64_t ovd_xfer_last(const char* what);

/* ---- the OpenCL of the GPU contexts (ovd_ocl.c) and the USM allocations it reaches (ovd_api.c) ---------------- */
/* the cl_context of the GPU remote context ctx (NULL: the device's default one) of device: stable, never freed */
uintptr_t ovd_ocl_context(const char* device, const void* ctx);
/* an infer of a request compiled in (device, ctx) starts: counts it if a queue of that context holds commands */
void ovd_ocl_note_infer(const char* device, const void* ctx);
/* a USM allocation's backing [mem, mem+cap) is freed: drops the queued commands on it ("ocl.freed_pending") */
void ovd_ocl_forget(const char* mem, size_t cap);
int64_t ovd_ocl_stat(const char* name); /* "ocl.<name>" of ovdouble_stat; -1 unknown */
int ovd_ocl_set(const char* value);     /* knob "ocl": "" or "no_usm" (no cl_intel_unified_shared_memory) */
void ovd_ocl_reset(void);               /* zeroes the ocl.* counters (not ocl.pending, ocl.queues) */
int64_t ovd_usm_live(void);             /* live USM allocations ("usm.live") */
/* the USM allocation of (device, ctx) holding [h, h+n) of host-visible handle h: 0, its kind (1 host, 2 device) and
 * the backing host address of h; -1 if none */
int ovd_usm_find(uintptr_t h, size_t n, const char* device, const void* ctx, int* kind, char** mem);
/* whether p lies in the address range of a live USM device allocation of any context */
bool ovd_usm_in_device(uintptr_t p);

/* per-function call accounting: every exported OpenVINO function opens with OVD_ENTER and leaves through
 * OVD_RET / OVD_LEAVE_VOID so calls, errors and time inside the double are counted. */
typedef struct {
    int fn;
    int64_t t0;
    int64_t c0; /* the calling thread's CPU time at entry */
} ovd_call;
int ovd_fn_id(const char* name);
void ovd_enter(ovd_call* c, const char* fn);
ov_status_e ovd_leave(ovd_call* c, ov_status_e st, const char* detail);
void ovd_leave_void(ovd_call* c);
/* sets the global last error from the per-thread message and returns the status for it */
ov_status_e ovd_fail_status(ov_status_e st);
void ovd_set_last_error(const char* msg);
void ovd_clear_last_error(void);

/* registry of every handle and every block handed to the caller, so frees of foreign or freed pointers and
 * calls with stale handles are caught instead of corrupting the heap */
typedef enum { K_CORE = 1, K_MODEL, K_COMPILED, K_REQUEST, K_TENSOR, K_PORT, K_STRING, K_DIMS, K_PDIMS, K_DEVLIST,
               K_VERLIST, K_PROFLIST, K_CONTEXT } ovd_kind;
void ovd_reg_add(const void* p, ovd_kind k);
bool ovd_reg_has(const void* p, ovd_kind k);
bool ovd_reg_del(const void* p, ovd_kind k);
const char* ovd_last_error_copy(void);

/* the release presented */
typedef struct {
    int year, minor, patch;
    int numbering; /* 0: <=2024.1, 1: 2024.2-2025.0, 2: >=2025.1 */
    char build[128];
} ovd_release;
const ovd_release* ovd_rel(void);
const char* ovd_devices(void); /* comma list */
int64_t ovd_gpu_mem(void);

char* ovd_strdup(const char* s);
char* ovd_strndup(const char* s, size_t n);
char* ovd_api_string(const char* s); /* a string handed to the caller (freed with ov_free), counted */

/* XML DOM */
typedef struct ovd_xnode {
    char* tag;
    int nattr;
    char** an;
    char** av;
    int nchild;
    struct ovd_xnode** ch;
    char* text;
    int line;
} ovd_xnode;
ovd_xnode* ovd_xml_parse(const char* s, size_t len); /* NULL + error */
void ovd_xml_free(ovd_xnode* n);
const char* ovd_xml_attr(const ovd_xnode* n, const char* k);
const ovd_xnode* ovd_xml_child(const ovd_xnode* n, const char* tag);

#endif
