package cpu

import (
	"golang.org/x/sys/unix"

	"github.com/ggml-go/ggml/internal/hostmem"
)

func hostMemory() (free, total uint64) { return hostmem.Physical() }

func cpuModel() string {
	s, err := unix.Sysctl("machdep.cpu.brand_string")
	if err != nil {
		return ""
	}
	return s
}
