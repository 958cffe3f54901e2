package hostmem

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// memoryStatusEx is MEMORYSTATUSEX (64 bytes: two DWORDs, seven
// DWORDLONGs). It is declared here because golang.org/x/sys/windows has
// neither the struct nor GlobalMemoryStatusEx.
type memoryStatusEx struct {
	length, memoryLoad                     uint32
	totalPhys, availPhys                   uint64
	totalPageFile, availPageFile           uint64
	totalVirtual, availVirtual, availExtra uint64
}

// The system DLL loader only searches System32, never the program's folder.
var globalMemoryStatusEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

// Physical is ullAvailPhys and ullTotalPhys of GlobalMemoryStatusEx, or
// 0, 0 when the call fails.
func Physical() (avail, total uint64) {
	if globalMemoryStatusEx.Find() != nil {
		return 0, 0
	}
	st := memoryStatusEx{length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	if r, _, _ := globalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&st))); r == 0 {
		return 0, 0
	}
	return st.availPhys, st.totalPhys
}
