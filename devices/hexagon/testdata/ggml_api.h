/*
 * ggml 0.25.1's C API as the double (ggml.c, math=ggml) and the oracle (oracle.c) call it, declared here in our own
 * words from the public ggml.h / ggml-backend.h; struct ggml_tensor is the 0.25.1 layout the repository pins
 * (internal/testkit/ggmlref/graph.go, checked by its layout_test.go). Internal header of the test double.
 */
#ifndef HD_GGML_API_H
#define HD_GGML_API_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* struct ggml_tensor of ggml 0.25.1 (336 bytes) */
struct gg_tensor {
    int32_t type; int32_t pad0; void *buffer; int64_t ne[4]; size_t nb[4]; int32_t op; int32_t op_params[16];
    int32_t flags; struct gg_tensor *src[10]; struct gg_tensor *view_src; size_t view_offs; void *data; char name[64];
    void *extra; char padding[8];
};
_Static_assert(sizeof(struct gg_tensor) == 336, "ggml_tensor: 336 bytes (ggmlref/layout_test.go)");
_Static_assert(offsetof(struct gg_tensor, buffer) == 8, "ggml_tensor.buffer @8");
_Static_assert(offsetof(struct gg_tensor, ne) == 16, "ggml_tensor.ne @16");
_Static_assert(offsetof(struct gg_tensor, nb) == 48, "ggml_tensor.nb @48");
_Static_assert(offsetof(struct gg_tensor, op) == 80, "ggml_tensor.op @80");
_Static_assert(offsetof(struct gg_tensor, op_params) == 84, "ggml_tensor.op_params @84");
_Static_assert(offsetof(struct gg_tensor, src) == 152, "ggml_tensor.src @152");
_Static_assert(offsetof(struct gg_tensor, data) == 248, "ggml_tensor.data @248");
_Static_assert(offsetof(struct gg_tensor, extra) == 320, "ggml_tensor.extra @320");
/* ggml_tensor_overhead() = sizeof(struct ggml_object) (32) + the tensor */
#define GG_TENSOR_OVERHEAD (32u + 336u)

struct gg_init_params { size_t mem_size; void *mem_buffer; bool no_alloc; };
_Static_assert(sizeof(struct gg_init_params) == 24, "ggml_init_params: 24 bytes (ggmlref/layout_test.go)");

typedef struct gg_tensor gg_T;
typedef struct gg_context gg_C;
typedef void *gg_B; /* ggml_backend_t, _dev_t, _reg_t, _buffer_type_t, _buffer_t: opaque */

enum { GG_F32 = 0, GG_F16 = 1, GG_I32 = 26 }; /* enum ggml_type */

/* The entry points, from libggml-base.so and a libggml-cpu-*.so. Builders of one, two and three operands: */
#define GG_OP1(n) gg_T *(*n)(gg_C *, gg_T *)
#define GG_OP2(n) gg_T *(*n)(gg_C *, gg_T *, gg_T *)
#define GG_OP3(n) gg_T *(*n)(gg_C *, gg_T *, gg_T *, gg_T *)
struct gg_api {
    gg_C *(*init)(struct gg_init_params);
    void (*free)(gg_C *), (*reset)(gg_C *);
    size_t (*tensor_overhead)(void), (*graph_overhead)(size_t, bool);
    gg_T *(*new4)(gg_C *, int, int64_t, int64_t, int64_t, int64_t);
    void *(*new_graph)(gg_C *), *(*new_graph_custom)(gg_C *, size_t, bool);
    void *(*data)(const gg_T *);
    size_t (*nbytes)(const gg_T *);
    size_t (*quantize)(int, const float *, void *, int64_t, int64_t, int64_t, const float *);
    int (*compute)(gg_C *, void *, int); /* ggml_graph_compute_with_ctx */
    void (*expand)(void *, gg_T *);
    void *(*set_abort)(void (*)(const char *));
    GG_OP2(add); GG_OP2(sub); GG_OP2(mul); GG_OP2(div);
    gg_T *(*rms_norm)(gg_C *, gg_T *, float), *(*norm)(gg_C *, gg_T *, float), *(*l2_norm)(gg_C *, gg_T *, float);
    gg_T *(*scale_bias)(gg_C *, gg_T *, float, float), *(*clamp)(gg_C *, gg_T *, float, float);
    gg_T *(*fill)(gg_C *, gg_T *, float), *(*leaky_relu)(gg_C *, gg_T *, float, bool);
    GG_OP1(silu); GG_OP1(gelu); GG_OP1(gelu_quick); GG_OP1(sigmoid); GG_OP1(exp); GG_OP1(neg); GG_OP1(softplus);
    GG_OP1(tanh); GG_OP1(sqr); GG_OP1(sqrt); GG_OP1(abs); GG_OP1(log); GG_OP1(relu);
    GG_OP1(swiglu); GG_OP1(swiglu_swapped); GG_OP1(geglu); GG_OP1(geglu_swapped);
    GG_OP2(swiglu_split); GG_OP2(geglu_split);
    gg_T *(*swiglu_oai)(gg_C *, gg_T *, gg_T *, float, float);
    gg_T *(*soft_max_ext)(gg_C *, gg_T *, gg_T *, float, float);
    void (*soft_max_add_sinks)(gg_T *, gg_T *);
    gg_T *(*rope_ext)(gg_C *, gg_T *, gg_T *, gg_T *, int, int, int, float, float, float, float, float, float);
    gg_T *(*rope_multi)(gg_C *, gg_T *, gg_T *, gg_T *, int, int *, int, int, float, float, float, float, float,
                        float);
    GG_OP2(get_rows); GG_OP3(set_rows); GG_OP2(cpy);
    gg_T *(*flash_attn_ext)(gg_C *, gg_T *, gg_T *, gg_T *, gg_T *, float, float, float);
    void (*fa_add_sinks)(gg_T *, gg_T *);
    GG_OP2(mul_mat); GG_OP3(mul_mat_id); GG_OP3(add_id);
    GG_OP1(sum_rows); GG_OP1(cumsum); GG_OP1(diag);
    gg_T *(*solve_tri)(gg_C *, gg_T *, gg_T *, bool, bool, bool);
    GG_OP2(repeat);
    gg_T *(*concat)(gg_C *, gg_T *, gg_T *, int), *(*argsort)(gg_C *, gg_T *, int), *(*tri)(gg_C *, gg_T *, int);
    gg_T *(*pad_ext)(gg_C *, gg_T *, int, int, int, int, int, int, int, int);
    gg_T *(*pad_ext_circular)(gg_C *, gg_T *, int, int, int, int, int, int, int, int);
    /* ggml-backend */
    int (*graph_compute)(gg_B, void *);
    gg_B (*get_device)(gg_B);
    bool (*supports_op)(gg_B, const gg_T *);
    gg_B (*dev_reg)(gg_B);
    void *(*proc_address)(gg_B, const char *);
    const char *(*buft_name)(gg_B);
    gg_B (*buft_alloc)(gg_B, size_t);
    size_t (*buft_alloc_size)(gg_B, const gg_T *);
    void *(*buffer_base)(gg_B);
    int (*tensor_alloc)(gg_B, gg_T *, void *);
    void (*tensor_set)(gg_T *, const void *, size_t, size_t);
    void (*buffer_free)(gg_B);
    /* the CPU library */
    gg_B (*backend_cpu_init)(void);
    void (*cpu_threads)(gg_B, int);
    void (*cpu_init)(void);
};
#undef GG_OP1
#undef GG_OP2
#undef GG_OP3

/* Resolves every entry of a from base (libggml-base.so) and cpu (libggml-cpu-*.so); 0, or -1 with err naming the
 * missing symbol. */
static inline int gg_api_load(struct gg_api *a, void *base, void *cpu, char *err, size_t errn) {
    struct { void *lib; const char *name; void **dst; } s[] = {
#define BS(f, n) { base, n, (void **) &a->f }
        BS(init, "ggml_init"), BS(free, "ggml_free"), BS(reset, "ggml_reset"),
        BS(tensor_overhead, "ggml_tensor_overhead"),
        BS(graph_overhead, "ggml_graph_overhead_custom"), BS(new4, "ggml_new_tensor_4d"),
        BS(new_graph, "ggml_new_graph"), BS(new_graph_custom, "ggml_new_graph_custom"),
        BS(data, "ggml_get_data"), BS(nbytes, "ggml_nbytes"), BS(quantize, "ggml_quantize_chunk"),
        BS(expand, "ggml_build_forward_expand"),
        BS(set_abort, "ggml_set_abort_callback"), BS(add, "ggml_add"), BS(sub, "ggml_sub"), BS(mul, "ggml_mul"),
        BS(div, "ggml_div"), BS(rms_norm, "ggml_rms_norm"), BS(norm, "ggml_norm"), BS(l2_norm, "ggml_l2_norm"),
        BS(scale_bias, "ggml_scale_bias"), BS(clamp, "ggml_clamp"), BS(fill, "ggml_fill"),
        BS(leaky_relu, "ggml_leaky_relu"), BS(silu, "ggml_silu"), BS(gelu, "ggml_gelu"),
        BS(gelu_quick, "ggml_gelu_quick"), BS(sigmoid, "ggml_sigmoid"), BS(exp, "ggml_exp"), BS(neg, "ggml_neg"),
        BS(softplus, "ggml_softplus"), BS(tanh, "ggml_tanh"), BS(sqr, "ggml_sqr"), BS(sqrt, "ggml_sqrt"),
        BS(abs, "ggml_abs"), BS(log, "ggml_log"), BS(relu, "ggml_relu"), BS(swiglu, "ggml_swiglu"),
        BS(swiglu_swapped, "ggml_swiglu_swapped"), BS(geglu, "ggml_geglu"), BS(geglu_swapped, "ggml_geglu_swapped"),
        BS(swiglu_split, "ggml_swiglu_split"), BS(geglu_split, "ggml_geglu_split"), BS(swiglu_oai, "ggml_swiglu_oai"),
        BS(soft_max_ext, "ggml_soft_max_ext"), BS(soft_max_add_sinks, "ggml_soft_max_add_sinks"),
        BS(rope_ext, "ggml_rope_ext"), BS(rope_multi, "ggml_rope_multi"), BS(get_rows, "ggml_get_rows"),
        BS(set_rows, "ggml_set_rows"), BS(cpy, "ggml_cpy"), BS(flash_attn_ext, "ggml_flash_attn_ext"),
        BS(fa_add_sinks, "ggml_flash_attn_ext_add_sinks"), BS(mul_mat, "ggml_mul_mat"),
        BS(mul_mat_id, "ggml_mul_mat_id"), BS(add_id, "ggml_add_id"), BS(sum_rows, "ggml_sum_rows"),
        BS(cumsum, "ggml_cumsum"), BS(diag, "ggml_diag"), BS(solve_tri, "ggml_solve_tri"), BS(repeat, "ggml_repeat"),
        BS(concat, "ggml_concat"), BS(argsort, "ggml_argsort"), BS(tri, "ggml_tri"), BS(pad_ext, "ggml_pad_ext"),
        BS(pad_ext_circular, "ggml_pad_ext_circular"), BS(graph_compute, "ggml_backend_graph_compute"),
        BS(get_device, "ggml_backend_get_device"), BS(supports_op, "ggml_backend_dev_supports_op"),
        BS(dev_reg, "ggml_backend_dev_backend_reg"), BS(proc_address, "ggml_backend_reg_get_proc_address"),
        BS(buft_name, "ggml_backend_buft_name"), BS(buft_alloc, "ggml_backend_buft_alloc_buffer"),
        BS(buft_alloc_size, "ggml_backend_buft_get_alloc_size"), BS(buffer_base, "ggml_backend_buffer_get_base"),
        BS(tensor_alloc, "ggml_backend_tensor_alloc"), BS(tensor_set, "ggml_backend_tensor_set"),
        BS(buffer_free, "ggml_backend_buffer_free"),
#undef BS
        { cpu, "ggml_backend_cpu_init", (void **) &a->backend_cpu_init },
        { cpu, "ggml_backend_cpu_set_n_threads", (void **) &a->cpu_threads },
        { cpu, "ggml_cpu_init", (void **) &a->cpu_init },
        { cpu, "ggml_graph_compute_with_ctx", (void **) &a->compute },
    };
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        if (!(*s[i].dst = dlsym(s[i].lib, s[i].name))) {
            snprintf(err, errn, "missing %s", s[i].name);
            return -1;
        }
    return 0;
}

#endif
