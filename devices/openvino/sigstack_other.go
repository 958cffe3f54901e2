//go:build !linux

package openvino

// keepSignalStack runs f. The CPU plugin's signal-stack replacement that
// sigstack_linux.go undoes is only known (and only verified) on linux.
func keepSignalStack(f func()) { f() }
