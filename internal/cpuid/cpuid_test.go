package cpuid

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// The answer agrees with the kernel's view of the processor, where Linux
// shows it.
func TestHasF16CMatchesProcCPUInfo(t *testing.T) {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || runtime.GOARCH != "amd64" {
		t.Skip("no /proc/cpuinfo on amd64 here")
	}
	var flags string
	for _, line := range strings.Split(string(info), "\n") {
		if strings.HasPrefix(line, "flags") {
			flags = line + " "
			break
		}
	}
	if flags == "" {
		t.Skip("/proc/cpuinfo has no flags line")
	}
	if want := strings.Contains(flags, " f16c "); HasF16C() != want {
		t.Fatalf("HasF16C() = %v, /proc/cpuinfo says %v", HasF16C(), want)
	}
}
