//go:build amd64 && !amd64.v3

package cpu

// stdUnfused: below GOAMD64=v3 the amd64 compiler emits no fused
// multiply-add (the instruction is not in the v1 and v2 levels), so the
// standard library's float code rounds every product before its sum.
const stdUnfused = true
