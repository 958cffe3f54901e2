// Package hostmem reads the host's physical memory without cgo, for the
// devices that report it (ggml_backend_dev_get_memory): on windows
// GlobalMemoryStatusEx, on darwin the hw.memsize sysctl, on linux
// sysinfo(2).
package hostmem
