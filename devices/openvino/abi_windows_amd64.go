package openvino

import (
	"fmt"
	"unsafe"
)

// callShape passes an ov_shape_t by value. The Microsoft x64 convention
// passes an aggregate larger than 8 bytes by reference to a caller-owned
// copy: s is that copy (callers keep it alive across the call). Not
// verified (no windows OpenVINO here).
func callShape(n *native, name string, fn, et uintptr, rank int64, dims []int64, ptr uintptr, out *uintptr) error {
	s := &ovShape{rank: rank, dims: uintptr(unsafe.Pointer(&dims[0]))}
	if ptr == 0 {
		return n.call(name, fn, et, uintptr(unsafe.Pointer(s)), uintptr(unsafe.Pointer(out)))
	}
	return n.call(name, fn, et, uintptr(unsafe.Pointer(s)), ptr, uintptr(unsafe.Pointer(out)))
}

// callCtxShape calls fn(ctx, et, shape by value, out), the shape passed
// as in callShape (by reference to a copy). Not verified.
func callCtxShape(n *native, name string, fn, ctx, et uintptr, rank int64, dims []int64, out *uintptr) error {
	s := &ovShape{rank: rank, dims: uintptr(unsafe.Pointer(&dims[0]))}
	return n.call(name, fn, ctx, et, uintptr(unsafe.Pointer(s)), uintptr(unsafe.Pointer(out)))
}

// callRemoteTensor calls ov_remote_context_create_tensor(ctx, et, shape,
// len(pairs), out, pairs...) - two or four - in the fixed form
// (variadicPairs). Not verified.
func callRemoteTensor(n *native, fn, ctx, et uintptr, rank int64, dims []int64, out *uintptr, pairs ...uintptr) error {
	const name = "ov_remote_context_create_tensor"
	s := &ovShape{rank: rank, dims: uintptr(unsafe.Pointer(&dims[0]))}
	switch len(pairs) {
	case 2:
		return n.call(name, fn, ctx, et, uintptr(unsafe.Pointer(s)), 2, uintptr(unsafe.Pointer(out)), pairs[0], pairs[1])
	case 4:
		return n.call(name, fn, ctx, et, uintptr(unsafe.Pointer(s)), 4, uintptr(unsafe.Pointer(out)),
			pairs[0], pairs[1], pairs[2], pairs[3])
	}
	return fmt.Errorf("openvino: %s with %d arguments", name, len(pairs))
}

// variadicPairs: Microsoft x64 passes variadic arguments in the same
// registers and stack slots as named ones, so a fixed-arity call naming
// the extra pointer arguments is ABI-correct. Not verified.
const variadicPairs = true
