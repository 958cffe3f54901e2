//go:build windows

package fastrpc

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
)

// platformPlaces: on Windows on Snapdragon libcdsprpc.dll sits beside the
// qcnspmcdm driver, whose folder the service's ImagePath names
// (\SystemRoot standing for %windir%), as ggml's htp-drv finds it; the
// system search path comes after.
func platformPlaces() (names, dirs []string) {
	names = []string{"libcdsprpc.dll"}
	if d := driverFolder(); d != "" {
		dirs = append(dirs, d)
	}
	return names, dirs
}

func driverFolder() string {
	var k syscall.Handle
	path, _ := syscall.UTF16PtrFromString(`SYSTEM\CurrentControlSet\Services\qcnspmcdm`)
	if syscall.RegOpenKeyEx(syscall.HKEY_LOCAL_MACHINE, path, 0, syscall.KEY_READ, &k) != nil {
		return ""
	}
	defer syscall.RegCloseKey(k)
	name, _ := syscall.UTF16PtrFromString("ImagePath")
	buf := make([]uint16, 1024)
	n := uint32(len(buf) * 2)
	var typ uint32
	if syscall.RegQueryValueEx(k, name, nil, &typ, (*byte)(unsafe.Pointer(&buf[0])), &n) != nil {
		return ""
	}
	img := syscall.UTF16ToString(buf)
	if rest, ok := strings.CutPrefix(img, `\SystemRoot`); ok {
		img = os.Getenv("windir") + rest
	}
	img = strings.TrimPrefix(img, `\??\`)
	return filepath.Dir(img)
}
