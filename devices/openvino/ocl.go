package openvino

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// OpenCL, as much of it as the KV cache in USM device memory needs
// (usm.go): the GPU plugin's cl_context comes from the remote context
// (OCL_CONTEXT of ov_remote_context_get_params), and a queue of our own in
// it copies and fills the device memory, which the host cannot address.
// Upstream does the same (the upstream ggml OpenVINO backend,
// ggml-openvino-extra.cpp's device config, 2026: the context of
// get_default_context, its first device and that device's platform, the
// two USM functions from clGetExtensionFunctionAddressForPlatform, and
// clCreateCommandQueueWithProperties). The declarations are written from
// the Khronos OpenCL 3.0 API specification and the
// cl_intel_unified_shared_memory extension specification; their values
// are pinned to testdata/facts/opencl.txt (TestOpenCLFacts).

// OpenCL's values used here (testdata/facts/opencl.txt).
const (
	clSuccess                = 0
	clDeviceExtensions       = 0x1030
	clDevicePlatform         = 0x1031
	clContextDevices         = 0x1081
	clQueueProperties        = 0x1093
	clQueueProfilingEnable   = 2
	clTrue                   = 1
	usmExtension             = "cl_intel_unified_shared_memory"
	clEnqueueMemcpyINTELName = "clEnqueueMemcpyINTEL"
	clEnqueueMemFillINTEL    = "clEnqueueMemFillINTEL"
)

// clErrorNames are the names of the cl_int error codes the calls here
// can return (the API specification's error-code appendix).
var clErrorNames = map[int32]string{
	-1: "CL_DEVICE_NOT_FOUND", -2: "CL_DEVICE_NOT_AVAILABLE", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	-5: "CL_OUT_OF_RESOURCES", -6: "CL_OUT_OF_HOST_MEMORY", -8: "CL_MEM_COPY_OVERLAP",
	-30: "CL_INVALID_VALUE", -32: "CL_INVALID_PLATFORM", -33: "CL_INVALID_DEVICE", -34: "CL_INVALID_CONTEXT",
	-35: "CL_INVALID_QUEUE_PROPERTIES", -36: "CL_INVALID_COMMAND_QUEUE", -38: "CL_INVALID_MEM_OBJECT",
	-57: "CL_INVALID_EVENT_WAIT_LIST", -59: "CL_INVALID_OPERATION", -64: "CL_INVALID_PROPERTY",
}

// CLError is a failed OpenCL call: the function and its cl_int code,
// named as the specification names it.
type CLError struct {
	Func string
	Code int32
}

func (e *CLError) Error() string {
	name, ok := clErrorNames[e.Code]
	if !ok {
		name = "cl_int " + strconv.Itoa(int(e.Code))
	}
	return fmt.Sprintf("openvino: %s: %s (%d)", e.Func, name, e.Code)
}

// Unwrap makes a CLError an ErrNative.
func (e *CLError) Unwrap() error { return ErrNative }

// errNoOpenCLDarwin: macOS has no OpenCL with the Intel USM extension
// (and OpenVINO no GPU plugin there).
var errNoOpenCLDarwin = errors.New("openvino: no OpenCL with cl_intel_unified_shared_memory on macOS")

// openCLNames are the names libOpenCL is loaded by: the ICD loader's.
func openCLNames() []string {
	switch runtime.GOOS {
	case "windows":
		return []string{"OpenCL.dll"}
	case "darwin":
		return nil
	}
	return []string{"libOpenCL.so.1"}
}

// openCL is the loaded library's entry points.
type openCL struct {
	lib                                          *dynlib.Library
	getContextInfo, getDeviceInfo, extensionAddr uintptr
	createQueue, finish                          uintptr
}

// loadOpenCL opens libOpenCL, first beside the OpenVINO C library ovLib
// (a runtime that ships its own), then by name through the system's
// loader, where the GPU plugin finds it.
func loadOpenCL(ovLib string) (*openCL, error) {
	names := openCLNames()
	if names == nil {
		return nil, errNoOpenCLDarwin
	}
	lib, errBeside := dynlib.Open(filepath.Join(filepath.Dir(ovLib), names[0]))
	if errBeside != nil {
		var err error
		if lib, err = dynlib.Open(names[0]); err != nil {
			return nil, fmt.Errorf("%w (beside OpenVINO: %v)", err, errBeside)
		}
	}
	cl := &openCL{lib: lib}
	for _, s := range []struct {
		name string
		p    *uintptr
	}{{"clGetContextInfo", &cl.getContextInfo}, {"clGetDeviceInfo", &cl.getDeviceInfo},
		{"clGetExtensionFunctionAddressForPlatform", &cl.extensionAddr},
		{"clCreateCommandQueueWithProperties", &cl.createQueue}, {"clFinish", &cl.finish}} {
		p, err := lib.Sym(s.name)
		if err != nil {
			lib.Close()
			return nil, err
		}
		*s.p = p
	}
	return cl, nil
}

// call runs a function returning cl_int (the low 32 bits of the return
// register). uintptrescapes, as native.call.
//
//go:uintptrescapes
func clCall(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if c := int32(uint32(r)); c != clSuccess {
		return &CLError{Func: name, Code: c}
	}
	return nil
}

// info reads a clGet*Info value of unknown size: its size, then itself.
func (cl *openCL) info(name string, fn, obj uintptr, param uint32) ([]byte, error) {
	var n uintptr
	if err := clCall(name, fn, obj, uintptr(param), 0, 0, uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	if err := clCall(name, fn, obj, uintptr(param), n, uintptr(unsafe.Pointer(&b[0])), 0); err != nil {
		return nil, err
	}
	return b, nil
}

// handleAt is the first handle of a clGet*Info array value.
func handleAt(b []byte) uintptr {
	if len(b) < int(unsafe.Sizeof(uintptr(0))) {
		return 0
	}
	return *(*uintptr)(unsafe.Pointer(&b[0]))
}

// clQueue is a queue of ours in the GPU plugin's cl_context, with the
// extension's copy and fill. Every command waits for its completion
// (blocking copies; fills followed by clFinish), as upstream's: the
// plugin's infers run on its own queues, which do not wait for ours.
type clQueue struct {
	cl           *openCL
	q            uintptr
	memcpy, fill uintptr
}

// newCLQueue makes the queue in context clCtx: its first device (a GPU
// plugin's context has one), that device's platform, and the USM
// functions, which must be there (the extension listed by the device).
func newCLQueue(cl *openCL, clCtx uintptr, profiling bool) (*clQueue, error) {
	devs, err := cl.info("clGetContextInfo", cl.getContextInfo, clCtx, clContextDevices)
	if err != nil {
		return nil, err
	}
	dev := handleAt(devs)
	if dev == 0 {
		return nil, errors.New("openvino: the GPU's cl_context has no device")
	}
	ext, err := cl.info("clGetDeviceInfo", cl.getDeviceInfo, dev, clDeviceExtensions)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(" "+strings.TrimRight(string(ext), "\x00")+" ", " "+usmExtension+" ") {
		return nil, fmt.Errorf("openvino: the GPU's OpenCL device lacks %s", usmExtension)
	}
	plat, err := cl.info("clGetDeviceInfo", cl.getDeviceInfo, dev, clDevicePlatform)
	if err != nil {
		return nil, err
	}
	q := &clQueue{cl: cl}
	for _, f := range []struct {
		name string
		p    *uintptr
	}{{clEnqueueMemcpyINTELName, &q.memcpy}, {clEnqueueMemFillINTEL, &q.fill}} {
		n := cstr(f.name)
		r, _, _ := purego.SyscallN(cl.extensionAddr, handleAt(plat), uintptr(unsafe.Pointer(n)))
		if r == 0 {
			return nil, fmt.Errorf("openvino: the OpenCL platform has no %s (%s)", f.name, usmExtension)
		}
		*f.p = r
	}
	// Upstream's queue: in order, profiled when GGML_OPENVINO_PROFILING >= 2.
	var code int32
	var r uintptr
	if profiling {
		props := []uint64{clQueueProperties, clQueueProfilingEnable, 0}
		r, _, _ = purego.SyscallN(cl.createQueue, clCtx, dev, uintptr(unsafe.Pointer(&props[0])), uintptr(unsafe.Pointer(&code)))
	} else {
		r, _, _ = purego.SyscallN(cl.createQueue, clCtx, dev, 0, uintptr(unsafe.Pointer(&code)))
	}
	if code != clSuccess || r == 0 {
		return nil, &CLError{Func: "clCreateCommandQueueWithProperties", Code: code}
	}
	q.q = r
	return q, nil
}

// copy copies n bytes from src to dst (device or host addresses) and
// returns when they are there (blocking). uintptrescapes: a host buffer
// passed as uintptr(unsafe.Pointer(...)) in its argument list stays put.
//
//go:uintptrescapes
func (q *clQueue) copy(dst, src uintptr, n uint64) error {
	return clCall(clEnqueueMemcpyINTELName, q.memcpy, q.q, clTrue, dst, src, uintptr(n), 0, 0, 0)
}

// write copies data to device address dst.
func (q *clQueue) write(dst uintptr, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	err := q.copy(dst, uintptr(unsafe.Pointer(&data[0])), uint64(len(data)))
	runtime.KeepAlive(data)
	return err
}

// read copies from device address src into data.
func (q *clQueue) read(src uintptr, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	err := q.copy(uintptr(unsafe.Pointer(&data[0])), src, uint64(len(data)))
	runtime.KeepAlive(data)
	return err
}

// setBytes sets n bytes at device address dst to v: upstream's one-byte
// pattern, then clFinish, since a fill does not block.
func (q *clQueue) setBytes(dst uintptr, v byte, n uint64) error {
	pat := []byte{v}
	err := clCall(clEnqueueMemFillINTEL, q.fill, q.q, dst, uintptr(unsafe.Pointer(&pat[0])), 1, uintptr(n), 0, 0, 0)
	runtime.KeepAlive(pat)
	if err != nil {
		return err
	}
	return clCall("clFinish", q.cl.finish, q.q)
}
