/* ovdouble: the public C types of the OpenVINO C API, declared from the documented ABI
 * (facts/openvino.md 2.6-2.8) and pinned with _Static_assert to the values measured on the real
 * 2025.0.0 headers (facts/c-api-layouts-2025.0.0.txt, facts/c-api-versions.txt). Written for the double; not a copy
 * of OpenVINO's headers. */
#ifndef OVD_API_H
#define OVD_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OVD_EXPORT __attribute__((visibility("default")))

typedef enum {
    OK = 0,
    GENERAL_ERROR = -1,
    NOT_IMPLEMENTED = -2,
    NETWORK_NOT_LOADED = -3,
    PARAMETER_MISMATCH = -4,
    NOT_FOUND = -5,
    OUT_OF_BOUNDS = -6,
    UNEXPECTED = -7,
    REQUEST_BUSY = -8,
    RESULT_NOT_READY = -9,
    NOT_ALLOCATED = -10,
    INFER_NOT_STARTED = -11,
    NETWORK_NOT_READ = -12,
    INFER_CANCELLED = -13,
    INVALID_C_PARAM = -14,
    UNKNOWN_C_ERROR = -15,
    NOT_IMPLEMENT_C_METHOD = -16,
    UNKNOW_EXCEPTION = -17,
} ov_status_e;

/* The element type crosses the ABI as a plain int-sized enum whose numbering depends on the release presented
 * (see ovd_types.c); internally the double uses its own enum ovd_type. */
typedef int ov_element_type_e;

typedef struct ov_core ov_core_t;
typedef struct ov_model ov_model_t;
typedef struct ov_compiled_model ov_compiled_model_t;
typedef struct ov_infer_request ov_infer_request_t;
typedef struct ov_tensor ov_tensor_t;
typedef struct ov_output_const_port ov_output_const_port_t;
typedef struct ov_output_const_port ov_output_port_t;
typedef struct ov_remote_context ov_remote_context_t;

typedef struct {
    int64_t rank;
    int64_t* dims;
} ov_shape_t;

typedef struct {
    int64_t min;
    int64_t max;
} ov_dimension_t;

typedef ov_dimension_t ov_rank_t;

typedef struct {
    ov_rank_t rank;
    ov_dimension_t* dims;
} ov_partial_shape_t;

typedef struct {
    const char* buildNumber;
    const char* description;
} ov_version_t;

typedef struct {
    const char* device_name;
    ov_version_t version;
} ov_core_version_t;

typedef struct {
    ov_core_version_t* versions;
    size_t size;
} ov_core_version_list_t;

typedef struct {
    char** devices;
    size_t size;
} ov_available_devices_t;

typedef struct {
    void (*callback_func)(void* args);
    void* args;
} ov_callback_t;

typedef struct {
    enum { NOT_RUN, OPTIMIZED_OUT, EXECUTED } status;
    int64_t real_time;
    int64_t cpu_time;
    const char* node_name;
    const char* exec_type;
    const char* node_type;
} ov_profiling_info_t;

typedef struct {
    ov_profiling_info_t* profiling_infos;
    size_t size;
} ov_profiling_info_list_t;

typedef struct {
    void (*encrypt_func)(const char*, size_t, char*, size_t*);
    void (*decrypt_func)(const char*, size_t, char*, size_t*);
} ov_encryption_callbacks;

/* [inferred] 2026.4 property pair, openvino.md 2.6. */
typedef struct {
    const char* key;
    void* value;
} ov_property_t;

/* layouts.txt (2025.0.0) and the 2026.1.2 bindgen layouts in versions.txt */
_Static_assert(sizeof(ov_status_e) == 4, "ov_status_e is int-sized");
_Static_assert(sizeof(ov_element_type_e) == 4, "ov_element_type_e is int-sized");
_Static_assert(sizeof(ov_shape_t) == 16 && _Alignof(ov_shape_t) == 8, "ov_shape_t");
_Static_assert(offsetof(ov_shape_t, rank) == 0 && offsetof(ov_shape_t, dims) == 8, "ov_shape_t fields");
_Static_assert(sizeof(ov_dimension_t) == 16 && _Alignof(ov_dimension_t) == 8, "ov_dimension_t");
_Static_assert(offsetof(ov_dimension_t, min) == 0 && offsetof(ov_dimension_t, max) == 8, "ov_dimension_t fields");
_Static_assert(sizeof(ov_rank_t) == 16, "ov_rank_t");
_Static_assert(sizeof(ov_partial_shape_t) == 24 && _Alignof(ov_partial_shape_t) == 8, "ov_partial_shape_t");
_Static_assert(offsetof(ov_partial_shape_t, rank) == 0 && offsetof(ov_partial_shape_t, dims) == 16,
               "ov_partial_shape_t fields");
_Static_assert(sizeof(ov_version_t) == 16 && offsetof(ov_version_t, description) == 8, "ov_version_t");
_Static_assert(sizeof(ov_core_version_t) == 24 && offsetof(ov_core_version_t, version) == 8, "ov_core_version_t");
_Static_assert(sizeof(ov_core_version_list_t) == 16 && offsetof(ov_core_version_list_t, size) == 8,
               "ov_core_version_list_t");
_Static_assert(sizeof(ov_available_devices_t) == 16 && offsetof(ov_available_devices_t, size) == 8,
               "ov_available_devices_t");
_Static_assert(sizeof(ov_callback_t) == 16 && offsetof(ov_callback_t, args) == 8, "ov_callback_t");
_Static_assert(sizeof(ov_profiling_info_t) == 48 && _Alignof(ov_profiling_info_t) == 8, "ov_profiling_info_t");
_Static_assert(offsetof(ov_profiling_info_t, real_time) == 8 && offsetof(ov_profiling_info_t, cpu_time) == 16 &&
                   offsetof(ov_profiling_info_t, node_name) == 24 && offsetof(ov_profiling_info_t, exec_type) == 32 &&
                   offsetof(ov_profiling_info_t, node_type) == 40,
               "ov_profiling_info_t fields");
_Static_assert(sizeof(ov_profiling_info_list_t) == 16 && offsetof(ov_profiling_info_list_t, size) == 8,
               "ov_profiling_info_list_t");
_Static_assert(sizeof(ov_encryption_callbacks) == 16 && offsetof(ov_encryption_callbacks, decrypt_func) == 8,
               "ov_encryption_callbacks");
_Static_assert(sizeof(ov_property_t) == 16 && offsetof(ov_property_t, value) == 8, "ov_property_t");
_Static_assert(OK == 0 && GENERAL_ERROR == -1 && NOT_IMPLEMENTED == -2 && NETWORK_NOT_LOADED == -3 &&
                   PARAMETER_MISMATCH == -4 && NOT_FOUND == -5 && OUT_OF_BOUNDS == -6 && UNEXPECTED == -7 &&
                   REQUEST_BUSY == -8 && RESULT_NOT_READY == -9 && NOT_ALLOCATED == -10 &&
                   INFER_NOT_STARTED == -11 && NETWORK_NOT_READ == -12 && INFER_CANCELLED == -13 &&
                   INVALID_C_PARAM == -14 && UNKNOWN_C_ERROR == -15 && NOT_IMPLEMENT_C_METHOD == -16 &&
                   UNKNOW_EXCEPTION == -17,
               "ov_status_e values (layouts.txt)");
_Static_assert(EXECUTED == 2 && OPTIMIZED_OUT == 1 && NOT_RUN == 0, "profiling status values");

#endif
