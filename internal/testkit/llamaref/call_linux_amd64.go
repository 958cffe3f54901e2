package llamaref

import (
	"unsafe"

	"github.com/ebitengine/purego"
)

// structCallABI0 is the address of the assembly trampoline structCall.
var structCallABI0 uintptr

// callWithStruct calls fn(arg0, *s) with *s passed by value on the stack.
// size must be s's size, a multiple of 8.
func callWithStruct(fn, arg0 uintptr, s unsafe.Pointer, size uintptr) uintptr {
	r, _, _ := purego.SyscallN(structCallABI0, fn, arg0, uintptr(s), size)
	return r
}

const platformOK = true
