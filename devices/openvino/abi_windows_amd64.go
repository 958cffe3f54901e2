package openvino

import "unsafe"

// shapeArgs passes an ov_shape_t by value. The Microsoft x64 convention
// passes an aggregate larger than 8 bytes by reference to a caller-owned
// copy: s is that copy (callers keep it alive across the call). Not
// verified (no windows OpenVINO here).
func shapeArgs(s *ovShape) []uintptr { return []uintptr{uintptr(unsafe.Pointer(s))} }

// variadicPairs: Microsoft x64 passes variadic arguments in the same
// registers and stack slots as named ones, so a fixed-arity call naming
// the extra pointer arguments is ABI-correct. Not verified.
const variadicPairs = true
