//go:build windows

package dynlib

import (
	"path/filepath"
	"syscall"
	"unsafe"
)

// loadWithAlteredSearchPath makes LoadLibraryEx resolve a library's own
// dependencies in its folder first (openvino_c.dll needs openvino.dll and
// tbb12.dll beside it in the wheel's openvino\libs), which LoadLibrary of
// a full path does not.
const loadWithAlteredSearchPath = 0x00000008

var loadLibraryExW = syscall.NewLazyDLL("kernel32.dll").NewProc("LoadLibraryExW")

func open(path string) (uintptr, error) {
	if !filepath.IsAbs(path) {
		h, err := syscall.LoadLibrary(path)
		return uintptr(h), err
	}
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	h, _, err := loadLibraryExW.Call(uintptr(unsafe.Pointer(p)), 0, loadWithAlteredSearchPath)
	if h == 0 {
		return 0, err
	}
	return h, nil
}

func sym(h uintptr, name string) (uintptr, error) {
	return syscall.GetProcAddress(syscall.Handle(h), name)
}

func closeLib(h uintptr) error { return syscall.FreeLibrary(syscall.Handle(h)) }
