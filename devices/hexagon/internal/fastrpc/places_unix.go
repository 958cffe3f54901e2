//go:build !windows

package fastrpc

import "runtime"

// platformPlaces are libcdsprpc's names and the folders it is installed
// in: /vendor/lib64 on Android, /usr/lib (and the multiarch and lib64
// variants) on Qualcomm Linux. Elsewhere there is no FastRPC, and the
// search only reports where it looked.
func platformPlaces() (names, dirs []string) {
	names = []string{"libcdsprpc.so", "libcdsprpc.so.1"}
	switch runtime.GOOS {
	case "android":
		dirs = []string{"/vendor/lib64", "/system/lib64"}
	case "linux":
		dirs = []string{"/vendor/lib64", "/usr/lib", "/usr/lib64", "/usr/lib/aarch64-linux-gnu"}
	}
	return names, dirs
}
