package mmap

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Resident is how many bytes of the pages that mem touches are in the
// resident set (mincore), for memory diagnostics: the whole first and last
// pages count when resident. 0 when mem is empty or not mmap'd memory.
func Resident(mem []byte) uint64 {
	if len(mem) == 0 {
		return 0
	}
	page := uintptr(os.Getpagesize())
	base := uintptr(unsafe.Pointer(&mem[0]))
	start := base &^ (page - 1)
	pages := (base + uintptr(len(mem)) - start + page - 1) / page
	vec := make([]byte, pages)
	// The page-aligned span is mapped wherever mem is (mappings are whole
	// pages); mincore reads only its addresses.
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, start, pages*page, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0
	}
	var n uint64
	for _, v := range vec {
		n += uint64(v & 1)
	}
	return n * uint64(page)
}

// CopiedOnWrite is how many bytes of the private mapping holding mem were
// written and so copied (smaps' Anonymous of that mapping), and whether
// that could be read (false also when mem spans more than one mapping):
// dropping such pages would lose the writes (File.Evict needs none). 0
// means DropPages keeps mem's contents: a file's pages come back from the
// file, a shared mapping's from the page cache.
func CopiedOnWrite(mem []byte) (uint64, bool) { return smapsField(mem, "Anonymous:") }

// MappedResident is the resident size of the mapping holding mem (smaps'
// Rss of it: what the process has mapped, unlike Resident's mincore, which
// tells the page cache for a file), and whether that could be read.
func MappedResident(mem []byte) (uint64, bool) { return smapsField(mem, "Rss:") }

// smapsField reads field (a size in kB) of the mapping holding all of mem
// from /proc/self/smaps, in bytes.
func smapsField(mem []byte, field string) (uint64, bool) {
	if len(mem) == 0 {
		return 0, false
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	a := uint64(uintptr(unsafe.Pointer(&mem[0])))
	end := a + uint64(len(mem))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 5 && !strings.HasSuffix(fs[0], ":") {
			lo, hi, ok := strings.Cut(fs[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = ok && err1 == nil && err2 == nil && l <= a && a < h
			if in && end > h {
				return 0, false
			}
			continue
		}
		if in && len(fs) == 3 && fs[0] == field {
			kb, err := strconv.ParseUint(fs[1], 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
