//go:build !(windows && amd64) && !(darwin && arm64)

package openvino

import (
	"fmt"
	"unsafe"
)

// callShape passes an ov_shape_t by value. On SysV amd64 (linux, darwin)
// a 16-byte struct of two INTEGER eightbytes travels in two integer
// registers, and on AAPCS64 (linux, windows/arm64) a composite of at most
// 16 bytes in two general registers, exactly as two separate integer
// arguments would: so the struct is flattened into (rank, dims). Verified
// on the double on linux/amd64; the arm64 forms are not verified.
func callShape(n *native, name string, fn, et uintptr, rank int64, dims []int64, ptr uintptr, out *uintptr) error {
	if ptr == 0 {
		return n.call(name, fn, et, uintptr(rank), uintptr(unsafe.Pointer(&dims[0])), uintptr(unsafe.Pointer(out)))
	}
	return n.call(name, fn, et, uintptr(rank), uintptr(unsafe.Pointer(&dims[0])), ptr, uintptr(unsafe.Pointer(out)))
}

// callCtxShape calls fn(ctx, et, shape by value, out) - the form of
// ov_remote_context_create_host_tensor - with the shape flattened as in
// callShape.
func callCtxShape(n *native, name string, fn, ctx, et uintptr, rank int64, dims []int64, out *uintptr) error {
	return n.call(name, fn, ctx, et, uintptr(rank), uintptr(unsafe.Pointer(&dims[0])), uintptr(unsafe.Pointer(out)))
}

// callRemoteTensor calls ov_remote_context_create_tensor(ctx, et, shape,
// len(pairs), out, pairs...) - the (key, value) arguments variadic, two or
// four of them - in the fixed form variadicPairs allows (the pairs after
// out go where named arguments would, registers then stack). The pointers
// are converted in the call's argument list, where call keeps them alive.
func callRemoteTensor(n *native, fn, ctx, et uintptr, rank int64, dims []int64, out *uintptr, pairs ...uintptr) error {
	const name = "ov_remote_context_create_tensor"
	switch len(pairs) {
	case 2:
		return n.call(name, fn, ctx, et, uintptr(rank), uintptr(unsafe.Pointer(&dims[0])), 2, uintptr(unsafe.Pointer(out)),
			pairs[0], pairs[1])
	case 4:
		return n.call(name, fn, ctx, et, uintptr(rank), uintptr(unsafe.Pointer(&dims[0])), 4, uintptr(unsafe.Pointer(out)),
			pairs[0], pairs[1], pairs[2], pairs[3])
	}
	return fmt.Errorf("openvino: %s with %d arguments", name, len(pairs))
}

// variadicPairs reports whether a variadic C function may be called with
// a fixed-arity argument list naming its extra (pointer) arguments. On
// SysV amd64 the variadic pointers go in the same registers/stack slots as
// named ones (purego sets AL = 0: no vector registers used), and on
// linux/windows AAPCS64 variadic integer arguments are passed like named
// ones, so the fixed form is ABI-correct there.
const variadicPairs = true
