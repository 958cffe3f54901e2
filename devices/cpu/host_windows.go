package cpu

import (
	"syscall"
	"unsafe"
)

// memoryStatusEx is MEMORYSTATUSEX (64 bytes: two DWORDs, seven
// DWORDLONGs).
type memoryStatusEx struct {
	length, memoryLoad                     uint32
	totalPhys, availPhys                   uint64
	totalPageFile, availPageFile           uint64
	totalVirtual, availVirtual, availExtra uint64
}

var globalMemoryStatusEx = syscall.NewLazyDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

func hostMemory() (free, total uint64) {
	if globalMemoryStatusEx.Find() != nil {
		return 0, 0
	}
	st := memoryStatusEx{length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	if r, _, _ := globalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&st))); r == 0 {
		return 0, 0
	}
	return st.availPhys, st.totalPhys
}

// cpuModel is empty: the model name lives in the registry, which is not
// worth a dependency here.
func cpuModel() string { return "" }
