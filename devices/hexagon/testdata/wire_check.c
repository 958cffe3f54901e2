/*
 * Compile-time pins of every struct and enum the double shares with the host, against the measured values in
 * the repository (../internal/htp/testdata/layouts-d99724f.txt for the htp wire protocol; facts/hexagon.md 6 for the FastRPC
 * structs, LP64). A mismatch fails the build, so the double can never drift from the real layouts silently.
 */
#include <stddef.h>
#include "htpdouble.h"

#define SZ(t, n) _Static_assert(sizeof(t) == (n), "sizeof " #t)
#define OFF(t, f, n) _Static_assert(offsetof(t, f) == (n), "offsetof " #t "." #f)

/* htp-ops.h @ d99724f */
SZ(struct htp_tensor, 56);
OFF(struct htp_tensor, data, 0); OFF(struct htp_tensor, reserved, 4); OFF(struct htp_tensor, size, 8);
OFF(struct htp_tensor, flags, 12); OFF(struct htp_tensor, type, 16); OFF(struct htp_tensor, bi, 20);
OFF(struct htp_tensor, ti, 22); OFF(struct htp_tensor, ne, 24); OFF(struct htp_tensor, nb, 40);
_Static_assert(_Alignof(struct htp_tensor) == 4, "alignof htp_tensor");

SZ(struct htp_buf_desc, 24);
OFF(struct htp_buf_desc, base, 0); OFF(struct htp_buf_desc, size, 8); OFF(struct htp_buf_desc, flags, 16);
OFF(struct htp_buf_desc, fd, 20);
_Static_assert(_Alignof(struct htp_buf_desc) == 8, "alignof htp_buf_desc");

SZ(struct htp_op_desc, 224);
OFF(struct htp_op_desc, opcode, 0); OFF(struct htp_op_desc, flags, 4); OFF(struct htp_op_desc, params, 8);
OFF(struct htp_op_desc, kernel_params, 72); OFF(struct htp_op_desc, src, 200); OFF(struct htp_op_desc, dst, 212);
OFF(struct htp_op_desc, pad, 220);
_Static_assert(_Alignof(struct htp_op_desc) == 4, "alignof htp_op_desc");

SZ(struct htp_trace_desc, 8);
OFF(struct htp_trace_desc, cycles, 0); OFF(struct htp_trace_desc, id, 4); OFF(struct htp_trace_desc, info, 6);

SZ(struct htp_prof_desc, 48);
OFF(struct htp_prof_desc, opcode, 0); OFF(struct htp_prof_desc, usecs, 4); OFF(struct htp_prof_desc, cycles_start, 8);
OFF(struct htp_prof_desc, cycles_stop, 12); OFF(struct htp_prof_desc, pmu, 16);

SZ(struct htp_opbatch_req, 24);
OFF(struct htp_opbatch_req, id, 0); OFF(struct htp_opbatch_req, n_bufs, 4); OFF(struct htp_opbatch_req, n_tensors, 8);
OFF(struct htp_opbatch_req, n_ops, 12); OFF(struct htp_opbatch_req, n_traces, 16); OFF(struct htp_opbatch_req, pad, 20);

SZ(struct htp_opbatch_rsp, 88);
OFF(struct htp_opbatch_rsp, id, 0); OFF(struct htp_opbatch_rsp, status, 4); OFF(struct htp_opbatch_rsp, n_bufs, 8);
OFF(struct htp_opbatch_rsp, n_tensors, 12); OFF(struct htp_opbatch_rsp, n_ops, 16);
OFF(struct htp_opbatch_rsp, n_traces, 20); OFF(struct htp_opbatch_rsp, usecs, 64); OFF(struct htp_opbatch_rsp, pad, 68);
OFF(struct htp_opbatch_rsp, cycles_start, 72); OFF(struct htp_opbatch_rsp, cycles_stop, 80);
_Static_assert(_Alignof(struct htp_opbatch_rsp) == 8, "alignof htp_opbatch_rsp");

/* fence-protocol extension per hexagon.md 2.2 (qualcomm dev 4f400747): 32 B request, 96 B response */
SZ(struct hd_opbatch_req_seq, 32); OFF(struct hd_opbatch_req_seq, seq, 24);
SZ(struct hd_opbatch_rsp_seq, 96); OFF(struct hd_opbatch_rsp_seq, seq, 88);

/* fence-protocol 10-input op descriptor per hexagon.md 2.2 (232 B) */
SZ(struct hd_fence_op_desc, 232); OFF(struct hd_fence_op_desc, params, 8); OFF(struct hd_fence_op_desc, kernel_params, 72);
OFF(struct hd_fence_op_desc, src, 200); OFF(struct hd_fence_op_desc, dst, 220); OFF(struct hd_fence_op_desc, pad, 228);

/* enum values (layouts.txt) */
_Static_assert(HTP_STATUS_OK == 1 && HTP_STATUS_INTERNAL_ERR == 2 && HTP_STATUS_NO_SUPPORT == 3 &&
               HTP_STATUS_INVAL_PARAMS == 4 && HTP_STATUS_VTCM_TOO_SMALL == 5, "htp_status");
_Static_assert(HTP_TYPE_F32 == 0 && HTP_TYPE_F16 == 1 && HTP_TYPE_Q4_0 == 2 && HTP_TYPE_Q4_1 == 3 &&
               HTP_TYPE_Q8_0 == 8 && HTP_TYPE_IQ4_NL == 20 && HTP_TYPE_I32 == 26 && HTP_TYPE_I64 == 27 &&
               HTP_TYPE_MXFP4 == 39 && HTP_TYPE_Q4_0_TILED == 200 && HTP_TYPE_Q4_1_TILED == 201 &&
               HTP_TYPE_Q8_0_TILED == 202 && HTP_TYPE_MXFP4_TILED == 203 && HTP_TYPE_INVALID == 204, "htp_data_type");
_Static_assert(HTP_OP_MUL == 0 && HTP_OP_ADD == 1 && HTP_OP_SUB == 2 && HTP_OP_DIV == 3 && HTP_OP_MUL_MAT == 4 &&
               HTP_OP_MUL_MAT_ID == 5 && HTP_OP_MUL_MAT_QKV == 6 && HTP_OP_MUL_MAT_FFN == 7 &&
               HTP_OP_MUL_MAT_ADD == 8 && HTP_OP_RMS_NORM == 9 && HTP_OP_RMS_NORM_MUL == 10 &&
               HTP_OP_UNARY_SILU == 11 && HTP_OP_UNARY_GELU == 12 && HTP_OP_UNARY_SIGMOID == 13 &&
               HTP_OP_UNARY_EXP == 14 && HTP_OP_UNARY_NEG == 15 && HTP_OP_UNARY_SOFTPLUS == 16 &&
               HTP_OP_UNARY_TANH == 17 && HTP_OP_GLU_SWIGLU == 18 && HTP_OP_GLU_SWIGLU_OAI == 19 &&
               HTP_OP_GLU_GEGLU == 20 && HTP_OP_SOFTMAX == 21 && HTP_OP_ADD_ID == 22 && HTP_OP_ROPE == 23 &&
               HTP_OP_FLASH_ATTN_EXT == 24 && HTP_OP_SET_ROWS == 25 && HTP_OP_GET_ROWS == 26 &&
               HTP_OP_SCALE == 27 && HTP_OP_CPY == 28 && HTP_OP_ARGSORT == 29 && HTP_OP_SQR == 30 &&
               HTP_OP_SQRT == 31 && HTP_OP_SUM_ROWS == 32 && HTP_OP_SSM_CONV == 33 && HTP_OP_REPEAT == 34 &&
               HTP_OP_CUMSUM == 35 && HTP_OP_FILL == 36 && HTP_OP_DIAG == 37 && HTP_OP_SOLVE_TRI == 38 &&
               HTP_OP_L2_NORM == 39 && HTP_OP_GATED_DELTA_NET == 40 && HTP_OP_TRI == 41 && HTP_OP_PAD == 42 &&
               HTP_OP_NORM == 43 && HTP_OP_CONCAT == 44 && HTP_OP_CLAMP == 45 && HTP_OP_IM2COL == 46 &&
               HTP_OP_INVALID == 47, "htp_op_code");
_Static_assert(HTP_TENSOR_COMPUTE == 1 && HTP_TENSOR_DIRTY == 2 && HTP_OPFLAGS_SKIP_COMPUTE == 1, "flags");
_Static_assert(HTP_PROF_DISABLED == 0 && HTP_PROF_BASIC == 1 && HTP_PROF_PMU == 2 && HTP_PROF_TRACE == 3,
               "htp_profiler_mode");
_Static_assert(HTP_OP_MAX_INPUTS == 6 && HTP_OP_MAX_OUTPUTS == 4 && HTP_OP_MAX_PARAMS == 16 &&
               HTP_OP_MAX_KERN_PARAMS == 32 && HTP_OP_MAX_BUFS == 16 && HTP_OP_MAX_TENSORS == 8192 &&
               HTP_MAX_NTHREADS == 10 && HTP_PROF_PMU_NCNT == 8, "limits");

/* FastRPC public structs (hexagon.md 6.1, 6.2, 6.5; LP64) */
SZ(remote_buf, 16); OFF(remote_buf, pv, 0); OFF(remote_buf, nLen, 8);
SZ(remote_dma_handle, 8); OFF(remote_dma_handle, fd, 0); OFF(remote_dma_handle, offset, 4);
SZ(remote_arg, 16);
SZ(struct remote_rpc_control_latency, 8);
OFF(struct remote_rpc_control_latency, enable, 0); OFF(struct remote_rpc_control_latency, latency, 4);
SZ(struct remote_dsp_capability, 12);
OFF(struct remote_dsp_capability, domain, 0); OFF(struct remote_dsp_capability, attribute_ID, 4);
OFF(struct remote_dsp_capability, capability, 8);
SZ(struct remote_rpc_control_unsigned_module, 8);
OFF(struct remote_rpc_control_unsigned_module, domain, 0); OFF(struct remote_rpc_control_unsigned_module, enable, 4);
SZ(struct remote_rpc_reserve_new_session, 40);
OFF(struct remote_rpc_reserve_new_session, domain_name, 0); OFF(struct remote_rpc_reserve_new_session, domain_name_len, 8);
OFF(struct remote_rpc_reserve_new_session, session_name, 16);
OFF(struct remote_rpc_reserve_new_session, session_name_len, 24);
OFF(struct remote_rpc_reserve_new_session, effective_domain_id, 28);
OFF(struct remote_rpc_reserve_new_session, session_id, 32);
SZ(struct remote_rpc_effective_domain_id, 24);
OFF(struct remote_rpc_effective_domain_id, domain_name, 0); OFF(struct remote_rpc_effective_domain_id, domain_name_len, 8);
OFF(struct remote_rpc_effective_domain_id, session_id, 12);
OFF(struct remote_rpc_effective_domain_id, effective_domain_id, 16);
SZ(struct remote_rpc_get_uri, 48);
OFF(struct remote_rpc_get_uri, domain_name, 0); OFF(struct remote_rpc_get_uri, domain_name_len, 8);
OFF(struct remote_rpc_get_uri, session_id, 12); OFF(struct remote_rpc_get_uri, module_uri, 16);
OFF(struct remote_rpc_get_uri, module_uri_len, 24); OFF(struct remote_rpc_get_uri, uri, 32);
OFF(struct remote_rpc_get_uri, uri_len, 40);
SZ(struct dspqueue_buffer, 24);
OFF(struct dspqueue_buffer, fd, 0); OFF(struct dspqueue_buffer, size, 4); OFF(struct dspqueue_buffer, offset, 8);
OFF(struct dspqueue_buffer, flags, 12); OFF(struct dspqueue_buffer, ptr, 16);
_Static_assert(DSPRPC_CONTROL_LATENCY == 1 && DSPRPC_GET_DSP_INFO == 2 && DSPRPC_CONTROL_UNSIGNED_MODULE == 2 &&
               FASTRPC_RESERVE_NEW_SESSION == 13 && FASTRPC_GET_EFFECTIVE_DOMAIN_ID == 14 && FASTRPC_GET_URI == 15 &&
               ARCH_VER == 6, "control request ids");
_Static_assert(FASTRPC_MAP_FD == 2 && FASTRPC_MAP_FD_DELAYED == 3 && FASTRPC_MAP_FD_EXTENDED == 17 &&
               FASTRPC_MAP_FD_DELAYED_EXTENDED == 18, "map flags");
_Static_assert(RPCMEM_HEAP_ID_SYSTEM == 25, "rpcmem heap");
/* discovery layout, hexagon.md 6.6 (96-byte candidate; unverified on a device) */
SZ(struct hd_fastrpc_domain, 96);
OFF(struct hd_fastrpc_domain, instance_id, 4); OFF(struct hd_fastrpc_domain, name, 8);
OFF(struct hd_fastrpc_domain, type, 40); OFF(struct hd_fastrpc_domain, status, 44);
SZ(struct hd_system_req_payload, 32); OFF(struct hd_system_req_payload, sys, 8);
OFF(struct hd_fastrpc_domains_info, max_domains, 8); OFF(struct hd_fastrpc_domains_info, num_domains, 12);
OFF(struct hd_fastrpc_domains_info, flags, 16);
