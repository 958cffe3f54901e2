package openvino

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/quant"
)

// sigStack is the kernel's stack_t: {void*, int, size_t}.
func TestSigStackLayout(t *testing.T) {
	ptr := unsafe.Sizeof(uintptr(0))
	require.Equal(t, 3*ptr, unsafe.Sizeof(sigStack{}))
	require.Equal(t, ptr, unsafe.Offsetof(sigStack{}.flags))
	require.Equal(t, 2*ptr, unsafe.Offsetof(sigStack{}.size))
}

// keepSignalStack gives the thread back its signal stack when f installs
// another, as the real CPU plugin does.
func TestKeepSignalStackRestores(t *testing.T) {
	mem, err := syscall.Mmap(-1, 0, 64<<10, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	defer syscall.Munmap(mem)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, inside, after sigStack
	sigaltstack(nil, &before)
	keepSignalStack(func() {
		sigaltstack(&sigStack{sp: uintptr(unsafe.Pointer(&mem[0])), size: uintptr(len(mem))}, nil)
		sigaltstack(nil, &inside)
	})
	sigaltstack(nil, &after)
	require.Equal(t, uintptr(unsafe.Pointer(&mem[0])), inside.sp, "f's stack was installed")
	require.Equal(t, before, after, "and the thread's own is back")
}

// Opening the device, compiling and running a model and closing it all
// leave the calling thread's signal stack as it was (checked after every
// cleanup: the backend's, the buffers' and the core's). On the real CPU
// plugin (2025.0.0, 2026.4.1) creating the plugin replaces it, and
// destroying the plugin unmaps the replacement: the SIGSEGV of the
// whole-package run. The double never touches it.
func TestNativeCallsKeepSignalStack(t *testing.T) {
	runtime.LockOSThread()
	var before sigStack
	sigaltstack(nil, &before)
	check := func(when string) {
		var now sigStack
		sigaltstack(nil, &now)
		if now != before {
			t.Errorf("signal stack %+v %s, %+v before", now, when, before)
		}
	}
	t.Cleanup(func() {
		check("after the cleanups")
		runtime.UnlockOSThread()
	})
	dev := openDevice(t, buildDouble(t), Options{DisableCache: true})
	check("after opening the device")
	got, want, _, _ := mulMatWeights(t, dev, quant.F32, "blk.0.sig.weight", 16, 4, 2, rand.New(rand.NewPCG(3, 4)))
	require.Less(t, nmse(got, want), 1e-10)
	check("after a compile and an infer")
}
