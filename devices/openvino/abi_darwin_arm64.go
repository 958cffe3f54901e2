package openvino

import "unsafe"

// callShape passes an ov_shape_t by value: Apple arm64 follows AAPCS64 for
// named arguments, a composite of at most 16 bytes in two general
// registers, like two integer arguments. Not verified.
func callShape(n *native, name string, fn, et uintptr, rank int64, dims []int64, ptr uintptr, out *uintptr) error {
	if ptr == 0 {
		return n.call(name, fn, et, uintptr(rank), uintptr(unsafe.Pointer(&dims[0])), uintptr(unsafe.Pointer(out)))
	}
	return n.call(name, fn, et, uintptr(rank), uintptr(unsafe.Pointer(&dims[0])), ptr, uintptr(unsafe.Pointer(out)))
}

// callCtxShape calls fn(ctx, et, shape by value, out), the shape as in
// callShape. Not verified (and OpenVINO has no GPU plugin on macOS).
func callCtxShape(n *native, name string, fn, ctx, et uintptr, rank int64, dims []int64, out *uintptr) error {
	return n.call(name, fn, ctx, et, uintptr(rank), uintptr(unsafe.Pointer(&dims[0])), uintptr(unsafe.Pointer(out)))
}

// callRemoteTensor: ov_remote_context_create_tensor's pairs are variadic,
// which a fixed-arity call cannot pass here (variadicPairs).
func callRemoteTensor(*native, uintptr, uintptr, uintptr, int64, []int64, *uintptr, ...uintptr) error {
	return errNoVariadics
}

// variadicPairs is false: Apple arm64 passes every variadic argument on
// the stack, where a fixed-arity call would put them in registers, so
// properties are only set through ov_core_set_properties (OpenVINO
// 2026.4+) there; variadic functions are called with no extra arguments.
const variadicPairs = false
