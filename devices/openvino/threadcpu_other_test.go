//go:build !linux

package openvino

import "time"

// threadCPU is not measured off Linux: the benchmarks that read it run the
// C double, a Linux shared library, and skip elsewhere before timing.
func threadCPU() time.Duration { return 0 }
