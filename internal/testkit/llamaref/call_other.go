//go:build !(linux && amd64)

package llamaref

import "unsafe"

// callWithStruct needs the amd64 trampoline: elsewhere Open reports the
// library unavailable before anything calls it.
func callWithStruct(fn, arg0 uintptr, s unsafe.Pointer, size uintptr) uintptr { return 0 }

const platformOK = false
