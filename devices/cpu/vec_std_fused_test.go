//go:build !amd64 || amd64.v3

package cpu

// stdUnfused: the compiler may fuse x*y+z here (arm64 always, amd64 from
// GOAMD64=v3 on, and other architectures with the instruction), so the
// standard library's float code need not round every product.
const stdUnfused = false
