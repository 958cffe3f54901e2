package openvino

import (
	"runtime"
	"syscall"
	"unsafe"
)

// sigStack is the kernel's stack_t: void *ss_sp; int ss_flags; size_t
// ss_size (the padding after ss_flags on 64-bit targets is Go's too).
type sigStack struct {
	sp    uintptr
	flags int32
	size  uintptr
}

// ssOnStack is SS_ONSTACK, a flag sigaltstack reports and never takes.
const ssOnStack = 1

func sigaltstack(set, old *sigStack) {
	syscall.RawSyscall(syscall.SYS_SIGALTSTACK, uintptr(unsafe.Pointer(set)), uintptr(unsafe.Pointer(old)), 0)
}

// keepSignalStack runs f on one OS thread and gives that thread back the
// signal stack it had before. The real CPU plugin (2025.0.0 and 2026.4.1)
// installs a signal stack of its own on the thread that creates it (an
// mmap of AT_MINSIGSTKSZ + 8 KiB, about 11.8 KB here) and, when it is
// destroyed, puts the saved one back on whatever thread destroys it and
// unmaps its own. Under Go that thread is any M: the M that created the
// plugin is left with an unmapped signal stack, and the next signal the
// runtime sends it (SIGURG preemption, GC) cannot be delivered, a SIGSEGV
// with no Go traceback (the whole-package go test on the real library);
// the M that destroyed it gets another M's signal stack. So every call
// that can create or destroy a plugin (a core, its devices and
// properties, a compile, an import, freeing a compiled model or a
// request) runs here.
func keepSignalStack(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after sigStack
	sigaltstack(nil, &before)
	f()
	sigaltstack(nil, &after)
	if after != before {
		before.flags &^= ssOnStack
		sigaltstack(&before, nil)
	}
}
