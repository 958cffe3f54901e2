package openvino

// shapeArgs passes an ov_shape_t by value: Apple arm64 follows AAPCS64 for
// named arguments, a composite of at most 16 bytes in two general
// registers, like two integer arguments. Not verified.
func shapeArgs(s *ovShape) []uintptr { return []uintptr{uintptr(s.rank), s.dims} }

// variadicPairs is false: Apple arm64 passes every variadic argument on
// the stack, where a fixed-arity call would put them in registers, so
// properties are only set through ov_core_set_properties (OpenVINO
// 2026.4+) there; variadic functions are called with no extra arguments.
const variadicPairs = false
