/* ovdouble: prototypes of every exported function, written from the documented OpenVINO C API signatures
 * (openvino.md 2.2-2.5) plus the double's own ovdouble_* read-back helpers. Shared by the library and the
 * self-test so both sides agree on one declaration. */
#ifndef OVD_DECL_H
#define OVD_DECL_H

#include "ovd_api.h"

/* errors, versions */
OVD_EXPORT const char* ov_get_error_info(ov_status_e status);
OVD_EXPORT const char* ov_get_last_err_msg(void);
OVD_EXPORT void ov_free(const char* content);
OVD_EXPORT ov_status_e ov_get_openvino_version(ov_version_t* version);
OVD_EXPORT void ov_version_free(ov_version_t* version);
OVD_EXPORT void ov_shutdown(void);

/* core */
OVD_EXPORT ov_status_e ov_core_create(ov_core_t** core);
OVD_EXPORT ov_status_e ov_core_create_with_config(const char* xml_config_file, ov_core_t** core);
OVD_EXPORT void ov_core_free(ov_core_t* core);
OVD_EXPORT ov_status_e ov_core_get_available_devices(const ov_core_t* core, ov_available_devices_t* devices);
OVD_EXPORT void ov_available_devices_free(ov_available_devices_t* devices);
OVD_EXPORT ov_status_e ov_core_get_versions_by_device_name(const ov_core_t* core, const char* device_name,
                                                           ov_core_version_list_t* versions);
OVD_EXPORT void ov_core_versions_free(ov_core_version_list_t* versions);
OVD_EXPORT ov_status_e ov_core_get_property(const ov_core_t* core, const char* device_name,
                                            const char* property_key, char** property_value);
OVD_EXPORT ov_status_e ov_core_set_property(const ov_core_t* core, const char* device_name, ...);
OVD_EXPORT ov_status_e ov_core_read_model(const ov_core_t* core, const char* model_path, const char* bin_path,
                                          ov_model_t** model);
OVD_EXPORT ov_status_e ov_core_read_model_from_memory_buffer(const ov_core_t* core, const char* model_str,
                                                             const size_t str_len, const ov_tensor_t* weights,
                                                             ov_model_t** model);
OVD_EXPORT ov_status_e ov_core_compile_model(const ov_core_t* core, const ov_model_t* model,
                                             const char* device_name, const size_t property_args_size,
                                             ov_compiled_model_t** compiled_model, ...);
OVD_EXPORT ov_status_e ov_core_compile_model_from_file(const ov_core_t* core, const char* model_path,
                                                       const char* device_name, const size_t property_args_size,
                                                       ov_compiled_model_t** compiled_model, ...);
OVD_EXPORT ov_status_e ov_core_import_model(const ov_core_t* core, const char* content, const size_t content_size,
                                            const char* device_name, ov_compiled_model_t** compiled_model);
#ifdef OVD_WITH_PROPS
OVD_EXPORT ov_status_e ov_core_compile_model_props(const ov_core_t* core, const ov_model_t* model,
                                                   const char* device_name, const size_t property_size,
                                                   const ov_property_t* properties,
                                                   ov_compiled_model_t** compiled_model);
OVD_EXPORT ov_status_e ov_core_set_properties(const ov_core_t* core, const char* device_name,
                                              const size_t property_size, const ov_property_t* properties);
OVD_EXPORT ov_status_e ov_compiled_model_set_properties(const ov_compiled_model_t* compiled_model,
                                                        const size_t property_size,
                                                        const ov_property_t* properties);
#endif

/* remote contexts (GPU): modelled with host memory, see README */
OVD_EXPORT ov_status_e ov_core_get_default_context(const ov_core_t* core, const char* device_name,
                                                   ov_remote_context_t** context);
OVD_EXPORT ov_status_e ov_core_create_context(const ov_core_t* core, const char* device_name,
                                              const size_t context_args_size, ov_remote_context_t** context, ...);
OVD_EXPORT ov_status_e ov_core_compile_model_with_context(const ov_core_t* core, const ov_model_t* model,
                                                          const ov_remote_context_t* context,
                                                          const size_t property_args_size,
                                                          ov_compiled_model_t** compiled_model, ...);
OVD_EXPORT ov_status_e ov_remote_context_create_tensor(const ov_remote_context_t* context,
                                                       const ov_element_type_e type, const ov_shape_t shape,
                                                       const size_t object_args_size, ov_tensor_t** remote_tensor,
                                                       ...);
OVD_EXPORT ov_status_e ov_remote_context_create_host_tensor(const ov_remote_context_t* context,
                                                            const ov_element_type_e type, const ov_shape_t shape,
                                                            ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_remote_context_get_device_name(const ov_remote_context_t* context, char** device_name);
OVD_EXPORT ov_status_e ov_remote_context_get_params(const ov_remote_context_t* context, size_t* size,
                                                    char** params);
OVD_EXPORT ov_status_e ov_remote_tensor_get_params(ov_tensor_t* tensor, size_t* size, char** params);
OVD_EXPORT ov_status_e ov_remote_tensor_get_device_name(ov_tensor_t* remote_tensor, char** device_name);
OVD_EXPORT void ov_remote_context_free(ov_remote_context_t* context);

/* model and ports */
OVD_EXPORT void ov_model_free(ov_model_t* model);
OVD_EXPORT ov_status_e ov_model_inputs_size(const ov_model_t* model, size_t* input_size);
OVD_EXPORT ov_status_e ov_model_outputs_size(const ov_model_t* model, size_t* output_size);
OVD_EXPORT bool ov_model_is_dynamic(const ov_model_t* model);
OVD_EXPORT ov_status_e ov_model_get_friendly_name(const ov_model_t* model, char** friendly_name);
OVD_EXPORT ov_status_e ov_model_const_input_by_index(const ov_model_t* model, const size_t index,
                                                     ov_output_const_port_t** input_port);
OVD_EXPORT ov_status_e ov_model_const_output_by_index(const ov_model_t* model, const size_t index,
                                                      ov_output_const_port_t** output_port);
OVD_EXPORT ov_status_e ov_model_const_input_by_name(const ov_model_t* model, const char* tensor_name,
                                                    ov_output_const_port_t** input_port);
OVD_EXPORT ov_status_e ov_model_const_output_by_name(const ov_model_t* model, const char* tensor_name,
                                                     ov_output_const_port_t** output_port);
OVD_EXPORT ov_status_e ov_model_const_input(const ov_model_t* model, ov_output_const_port_t** input_port);
OVD_EXPORT ov_status_e ov_model_const_output(const ov_model_t* model, ov_output_const_port_t** output_port);
OVD_EXPORT ov_status_e ov_model_input(const ov_model_t* model, ov_output_port_t** input_port);
OVD_EXPORT ov_status_e ov_model_output(const ov_model_t* model, ov_output_port_t** output_port);
OVD_EXPORT ov_status_e ov_model_input_by_index(const ov_model_t* model, const size_t index, ov_output_port_t** input_port);
OVD_EXPORT ov_status_e ov_model_output_by_index(const ov_model_t* model, const size_t index,
                                                ov_output_port_t** output_port);
OVD_EXPORT ov_status_e ov_model_input_by_name(const ov_model_t* model, const char* tensor_name,
                                              ov_output_port_t** input_port);
OVD_EXPORT ov_status_e ov_model_output_by_name(const ov_model_t* model, const char* tensor_name,
                                               ov_output_port_t** output_port);
OVD_EXPORT ov_status_e ov_const_port_get_shape(const ov_output_const_port_t* port, ov_shape_t* tensor_shape);
OVD_EXPORT ov_status_e ov_port_get_element_type(const ov_output_const_port_t* port,
                                                ov_element_type_e* tensor_type);
OVD_EXPORT ov_status_e ov_port_get_any_name(const ov_output_const_port_t* port, char** tensor_name);
OVD_EXPORT ov_status_e ov_port_get_partial_shape(const ov_output_const_port_t* port,
                                                 ov_partial_shape_t* partial_shape);
OVD_EXPORT ov_status_e ov_port_get_shape(const ov_output_const_port_t* port, ov_shape_t* tensor_shape);
OVD_EXPORT void ov_output_const_port_free(ov_output_const_port_t* port);
OVD_EXPORT void ov_output_port_free(ov_output_port_t* port);

/* compiled model */
OVD_EXPORT ov_status_e ov_compiled_model_inputs_size(const ov_compiled_model_t* compiled_model, size_t* size);
OVD_EXPORT ov_status_e ov_compiled_model_outputs_size(const ov_compiled_model_t* compiled_model, size_t* size);
OVD_EXPORT ov_status_e ov_compiled_model_input_by_index(const ov_compiled_model_t* compiled_model,
                                                        const size_t index, ov_output_const_port_t** input_port);
OVD_EXPORT ov_status_e ov_compiled_model_output_by_index(const ov_compiled_model_t* compiled_model,
                                                         const size_t index, ov_output_const_port_t** output_port);
OVD_EXPORT ov_status_e ov_compiled_model_input_by_name(const ov_compiled_model_t* compiled_model,
                                                       const char* name, ov_output_const_port_t** input_port);
OVD_EXPORT ov_status_e ov_compiled_model_output_by_name(const ov_compiled_model_t* compiled_model,
                                                        const char* name, ov_output_const_port_t** output_port);
OVD_EXPORT ov_status_e ov_compiled_model_input(const ov_compiled_model_t* compiled_model,
                                               ov_output_const_port_t** input_port);
OVD_EXPORT ov_status_e ov_compiled_model_output(const ov_compiled_model_t* compiled_model,
                                                ov_output_const_port_t** output_port);
OVD_EXPORT ov_status_e ov_compiled_model_create_infer_request(const ov_compiled_model_t* compiled_model,
                                                              ov_infer_request_t** infer_request);
OVD_EXPORT ov_status_e ov_compiled_model_set_property(const ov_compiled_model_t* compiled_model, ...);
OVD_EXPORT ov_status_e ov_compiled_model_get_property(const ov_compiled_model_t* compiled_model,
                                                      const char* property_key, char** property_value);
OVD_EXPORT ov_status_e ov_compiled_model_export_model(const ov_compiled_model_t* compiled_model,
                                                      const char* export_model_path);
OVD_EXPORT void ov_compiled_model_free(ov_compiled_model_t* compiled_model);

/* infer request */
OVD_EXPORT ov_status_e ov_infer_request_set_tensor(ov_infer_request_t* infer_request, const char* tensor_name,
                                                   const ov_tensor_t* tensor);
OVD_EXPORT ov_status_e ov_infer_request_set_input_tensor_by_index(ov_infer_request_t* infer_request,
                                                                  const size_t idx, const ov_tensor_t* tensor);
OVD_EXPORT ov_status_e ov_infer_request_set_input_tensor(ov_infer_request_t* infer_request,
                                                         const ov_tensor_t* tensor);
OVD_EXPORT ov_status_e ov_infer_request_set_output_tensor_by_index(ov_infer_request_t* infer_request,
                                                                   const size_t idx, const ov_tensor_t* tensor);
OVD_EXPORT ov_status_e ov_infer_request_set_output_tensor(ov_infer_request_t* infer_request,
                                                          const ov_tensor_t* tensor);
OVD_EXPORT ov_status_e ov_infer_request_set_tensor_by_port(ov_infer_request_t* infer_request,
                                                           const ov_output_port_t* port, const ov_tensor_t* tensor);
OVD_EXPORT ov_status_e ov_infer_request_set_tensor_by_const_port(ov_infer_request_t* infer_request,
                                                                 const ov_output_const_port_t* port,
                                                                 const ov_tensor_t* tensor);
OVD_EXPORT ov_status_e ov_infer_request_get_tensor_by_port(const ov_infer_request_t* infer_request,
                                                           const ov_output_port_t* port, ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_infer_request_get_tensor_by_const_port(const ov_infer_request_t* infer_request,
                                                                 const ov_output_const_port_t* port,
                                                                 ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_infer_request_get_tensor(const ov_infer_request_t* infer_request,
                                                   const char* tensor_name, ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_infer_request_get_input_tensor_by_index(const ov_infer_request_t* infer_request,
                                                                  const size_t idx, ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_infer_request_get_input_tensor(const ov_infer_request_t* infer_request,
                                                         ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_infer_request_get_output_tensor_by_index(const ov_infer_request_t* infer_request,
                                                                   const size_t idx, ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_infer_request_get_output_tensor(const ov_infer_request_t* infer_request,
                                                          ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_infer_request_infer(ov_infer_request_t* infer_request);
OVD_EXPORT ov_status_e ov_infer_request_cancel(ov_infer_request_t* infer_request);
OVD_EXPORT ov_status_e ov_infer_request_start_async(ov_infer_request_t* infer_request);
OVD_EXPORT ov_status_e ov_infer_request_wait(ov_infer_request_t* infer_request);
OVD_EXPORT ov_status_e ov_infer_request_wait_for(ov_infer_request_t* infer_request, const int64_t timeout);
OVD_EXPORT ov_status_e ov_infer_request_set_callback(ov_infer_request_t* infer_request,
                                                     const ov_callback_t* callback);
OVD_EXPORT ov_status_e ov_infer_request_get_profiling_info(const ov_infer_request_t* infer_request,
                                                           ov_profiling_info_list_t* profiling_infos);
OVD_EXPORT void ov_profiling_info_list_free(ov_profiling_info_list_t* profiling_infos);
OVD_EXPORT void ov_infer_request_free(ov_infer_request_t* infer_request);

/* tensors */
OVD_EXPORT ov_status_e ov_tensor_create(const ov_element_type_e type, const ov_shape_t shape, ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_tensor_create_from_host_ptr(const ov_element_type_e type, const ov_shape_t shape,
                                                      void* host_ptr, ov_tensor_t** tensor);
OVD_EXPORT ov_status_e ov_tensor_set_shape(ov_tensor_t* tensor, const ov_shape_t shape);
OVD_EXPORT ov_status_e ov_tensor_get_shape(const ov_tensor_t* tensor, ov_shape_t* shape);
OVD_EXPORT ov_status_e ov_tensor_get_element_type(const ov_tensor_t* tensor, ov_element_type_e* type);
OVD_EXPORT ov_status_e ov_tensor_get_size(const ov_tensor_t* tensor, size_t* elements_size);
OVD_EXPORT ov_status_e ov_tensor_get_byte_size(const ov_tensor_t* tensor, size_t* byte_size);
OVD_EXPORT ov_status_e ov_tensor_data(const ov_tensor_t* tensor, void** data);
OVD_EXPORT void ov_tensor_free(ov_tensor_t* tensor);

/* shapes */
OVD_EXPORT ov_status_e ov_shape_create(const int64_t rank, const int64_t* dims, ov_shape_t* shape);
OVD_EXPORT ov_status_e ov_shape_free(ov_shape_t* shape);
OVD_EXPORT ov_status_e ov_partial_shape_create(const int64_t rank, const ov_dimension_t* dims,
                                               ov_partial_shape_t* partial_shape_obj);
OVD_EXPORT ov_status_e ov_partial_shape_create_static(const int64_t rank, const int64_t* dims,
                                                      ov_partial_shape_t* partial_shape_obj);
OVD_EXPORT ov_status_e ov_partial_shape_create_dynamic(const ov_rank_t rank, const ov_dimension_t* dims,
                                                       ov_partial_shape_t* partial_shape_obj);
OVD_EXPORT void ov_partial_shape_free(ov_partial_shape_t* partial_shape);
OVD_EXPORT ov_status_e ov_partial_shape_to_shape(const ov_partial_shape_t partial_shape, ov_shape_t* shape);
OVD_EXPORT ov_status_e ov_shape_to_partial_shape(const ov_shape_t shape, ov_partial_shape_t* partial_shape);
OVD_EXPORT bool ov_partial_shape_is_dynamic(const ov_partial_shape_t partial_shape);
OVD_EXPORT const char* ov_partial_shape_to_string(const ov_partial_shape_t partial_shape);
OVD_EXPORT bool ov_dimension_is_dynamic(const ov_dimension_t dim);
OVD_EXPORT bool ov_rank_is_dynamic(const ov_rank_t rank);

/* the double's own read-back and control helpers (README "Extra exported symbols") */
OVD_EXPORT int ovdouble_set(const char* knob, const char* value);
OVD_EXPORT int64_t ovdouble_stat(const char* name);
OVD_EXPORT size_t ovdouble_stats(char* buf, size_t cap);
OVD_EXPORT void ovdouble_reset_stats(void);
OVD_EXPORT int64_t ovdouble_time_ns(void);
OVD_EXPORT size_t ovdouble_last_error(char* buf, size_t cap);
OVD_EXPORT const char* ovdouble_info(void);

#endif
