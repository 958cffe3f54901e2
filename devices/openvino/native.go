package openvino

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// Errors of the device; test them with errors.Is.
var (
	// ErrNative wraps every failure the OpenVINO library reports; the
	// error also carries its status and message (*Error).
	ErrNative = errors.New("openvino: native call failed")
	// ErrUnsupportedType reports a ggml type the device cannot bind.
	ErrUnsupportedType = errors.New("openvino: unsupported type")
	// ErrProbe reports a library whose element-type numbering does not
	// match its version (the start-up probe failed).
	ErrProbe = errors.New("openvino: element-type probe failed")
)

// Error is a failed OpenVINO C call: the function, its ov_status_e and
// the message OpenVINO kept for it (ov_get_last_err_msg).
type Error struct {
	Func   string
	Status int32
	Msg    string
}

var statusNames = map[int32]string{
	0: "OK", -1: "GENERAL_ERROR", -2: "NOT_IMPLEMENTED", -3: "NETWORK_NOT_LOADED", -4: "PARAMETER_MISMATCH",
	-5: "NOT_FOUND", -6: "OUT_OF_BOUNDS", -7: "UNEXPECTED", -8: "REQUEST_BUSY", -9: "RESULT_NOT_READY",
	-10: "NOT_ALLOCATED", -11: "INFER_NOT_STARTED", -12: "NETWORK_NOT_READ", -13: "INFER_CANCELLED",
	-14: "INVALID_C_PARAM", -15: "UNKNOWN_C_ERROR", -16: "NOT_IMPLEMENT_C_METHOD", -17: "UNKNOW_EXCEPTION",
}

func (e *Error) Error() string {
	name, ok := statusNames[e.Status]
	if !ok {
		name = "status " + strconv.Itoa(int(e.Status))
	}
	if e.Msg == "" {
		return fmt.Sprintf("openvino: %s: %s (%d)", e.Func, name, e.Status)
	}
	return fmt.Sprintf("openvino: %s: %s (%d): %s", e.Func, name, e.Status, e.Msg)
}

// Unwrap gives ErrNative.
func (e *Error) Unwrap() error { return ErrNative }

// Version is an OpenVINO release as ov_get_openvino_version reports it.
type Version struct {
	Year, Minor, Patch int
	// Build is the whole buildNumber, e.g.
	// "2025.3.0-19807-44526285f24-releases/2025/3".
	Build string
	// Description is the version's description ("OpenVINO Runtime").
	Description string
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Year, v.Minor, v.Patch) }

// Less orders versions by year, minor, patch.
func (v Version) Less(w Version) bool {
	if v.Year != w.Year {
		return v.Year < w.Year
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// MinVersion is the oldest release the device uses: 2025.0, the first
// whose C API has every function called here with these signatures and
// whose element types include f8e8m0 (MXFP4 scales); the numbering before
// 2024.2 differs again and is not handled.
var MinVersion = Version{Year: 2025}

// parseVersion reads year.minor[.patch] from the start of a buildNumber.
func parseVersion(build string) (Version, error) {
	v := Version{Build: build}
	head := build
	if i := strings.IndexAny(head, "-+ "); i >= 0 {
		head = head[:i]
	}
	parts := strings.Split(head, ".")
	if len(parts) < 2 {
		return v, fmt.Errorf("openvino: cannot read a version from %q", build)
	}
	nums := []*int{&v.Year, &v.Minor, &v.Patch}
	for i := 0; i < len(parts) && i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return v, fmt.Errorf("openvino: cannot read a version from %q", build)
		}
		*nums[i] = n
	}
	return v, nil
}

// native is a loaded libopenvino_c: its functions, release and the
// element-type numbering of that release.
type native struct {
	lib     *dynlib.Library
	version Version
	num     *numbering

	// errMu serializes a failing call with the read of its message:
	// ov_get_last_err_msg is process-global, not per thread.
	errMu sync.Mutex

	getVersion, versionFree                                    uintptr
	coreCreate, coreFree                                       uintptr
	availableDevices, availableDevicesFree                     uintptr
	readModelFromMemory, compileModel, modelFree               uintptr
	compiledModelFree, createInferRequest, inferRequestFree    uintptr
	setInputByIndex, setOutputByIndex, getOutputByIndex, infer uintptr
	tensorCreate, tensorFromHostPtr, tensorByteSize            uintptr
	tensorElemType, tensorData, tensorFree                     uintptr
	lastErrMsg, errorInfo, free                                uintptr

	// Optional: absent functions are 0 and the features using them
	// report so.
	coreSetProperty, coreSetProperties, coreGetProperty uintptr
	importModel, exportModel                            uintptr
	profilingInfo, profilingInfoFree                    uintptr
	// The remote-context (USM) API of a GPU plugin (usm.go).
	defaultContext, remoteHostTensor, remoteTensor uintptr
	// The parameters (OCL_CONTEXT, MEM_HANDLE) reaching USM device memory.
	remoteParams, remoteTensorParams uintptr
}

// symbols lists what the device resolves: required ones make the device
// unavailable when missing.
func (n *native) symbols() []struct {
	name     string
	p        *uintptr
	required bool
} {
	return []struct {
		name     string
		p        *uintptr
		required bool
	}{
		{"ov_get_openvino_version", &n.getVersion, true},
		{"ov_version_free", &n.versionFree, true},
		{"ov_core_create", &n.coreCreate, true},
		{"ov_core_free", &n.coreFree, true},
		{"ov_core_get_available_devices", &n.availableDevices, true},
		{"ov_available_devices_free", &n.availableDevicesFree, true},
		{"ov_core_read_model_from_memory_buffer", &n.readModelFromMemory, true},
		{"ov_core_compile_model", &n.compileModel, true},
		{"ov_model_free", &n.modelFree, true},
		{"ov_compiled_model_free", &n.compiledModelFree, true},
		{"ov_compiled_model_create_infer_request", &n.createInferRequest, true},
		{"ov_infer_request_free", &n.inferRequestFree, true},
		{"ov_infer_request_set_input_tensor_by_index", &n.setInputByIndex, true},
		{"ov_infer_request_set_output_tensor_by_index", &n.setOutputByIndex, true},
		{"ov_infer_request_get_output_tensor_by_index", &n.getOutputByIndex, true},
		{"ov_infer_request_infer", &n.infer, true},
		{"ov_tensor_create", &n.tensorCreate, true},
		{"ov_tensor_create_from_host_ptr", &n.tensorFromHostPtr, true},
		{"ov_tensor_get_byte_size", &n.tensorByteSize, true},
		{"ov_tensor_get_element_type", &n.tensorElemType, true},
		{"ov_tensor_data", &n.tensorData, true},
		{"ov_tensor_free", &n.tensorFree, true},
		{"ov_get_last_err_msg", &n.lastErrMsg, true},
		{"ov_get_error_info", &n.errorInfo, true},
		{"ov_free", &n.free, true},
		{"ov_core_set_property", &n.coreSetProperty, false},
		{"ov_core_set_properties", &n.coreSetProperties, false},
		{"ov_core_get_property", &n.coreGetProperty, false},
		{"ov_core_import_model", &n.importModel, false},
		{"ov_compiled_model_export_model", &n.exportModel, false},
		{"ov_infer_request_get_profiling_info", &n.profilingInfo, false},
		{"ov_profiling_info_list_free", &n.profilingInfoFree, false},
		{"ov_core_get_default_context", &n.defaultContext, false},
		{"ov_remote_context_create_host_tensor", &n.remoteHostTensor, false},
		{"ov_remote_context_create_tensor", &n.remoteTensor, false},
		{"ov_remote_context_get_params", &n.remoteParams, false},
		{"ov_remote_tensor_get_params", &n.remoteTensorParams, false},
	}
}

// missingSymbol is a required function the library lacks.
type missingSymbol struct {
	name string
	err  error
}

func (m *missingSymbol) Error() string { return m.err.Error() }
func (m *missingSymbol) Unwrap() error { return m.err }

// bind resolves the symbols of lib.
func bind(lib *dynlib.Library) (*native, error) {
	n := &native{lib: lib}
	for _, s := range n.symbols() {
		p, err := lib.Sym(s.name)
		if err != nil {
			if s.required {
				return nil, &missingSymbol{name: s.name, err: err}
			}
			continue
		}
		*s.p = p
	}
	return n, nil
}

// call runs a function returning ov_status_e. The status is the low 32
// bits of the return register (a C int). Like purego.SyscallN it is
// uintptrescapes: an out-parameter passed as uintptr(unsafe.Pointer(&x))
// in the call's argument list is moved to the heap and kept alive, so a
// stack growth during the call cannot leave OpenVINO writing into a
// stale stack slot. Pointers converted to uintptr anywhere else are
// not protected: build them in the argument list.
//
//go:uintptrescapes
func (n *native) call(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if st := int32(uint32(r)); st != 0 {
		return n.fail(name, st)
	}
	return nil
}

// callPlugin is call inside keepSignalStack, for the functions that can
// create or destroy an OpenVINO plugin. Like call it is uintptrescapes.
//
//go:uintptrescapes
func (n *native) callPlugin(name string, fn uintptr, args ...uintptr) error {
	var err error
	keepSignalStack(func() { err = n.call(name, fn, args...) })
	return err
}

// releasePlugin calls a void free function that can destroy a plugin (the
// last reference to it), inside keepSignalStack.
func releasePlugin(fn, obj uintptr) {
	keepSignalStack(func() { purego.SyscallN(fn, obj) })
}

// fail builds the error of a failed call, with OpenVINO's message, which
// is copied and released with ov_free.
func (n *native) fail(name string, status int32) error {
	n.errMu.Lock()
	defer n.errMu.Unlock()
	e := &Error{Func: name, Status: status}
	r, _, _ := purego.SyscallN(n.lastErrMsg)
	if r != 0 {
		e.Msg = goString(r)
		purego.SyscallN(n.free, r)
	}
	if e.Msg == "" {
		if s, _, _ := purego.SyscallN(n.errorInfo, uintptr(uint32(status))); s != 0 {
			e.Msg = goString(s) // static string: never freed
		}
	}
	return e
}

// goString copies a NUL-terminated C string.
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	var b []byte
	for i := uintptr(0); ; i++ {
		c := *(*byte)(cPtr(p + i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// cPtr turns an address of memory outside the Go heap (OpenVINO's, or
// host buffers mapped with mmap) into a pointer: the uintptr round trip
// vet warns about is safe for memory the garbage collector does not manage.
func cPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// cstr is s NUL-terminated, for the duration of a call.
func cstr(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// readVersion calls ov_get_openvino_version.
func (n *native) readVersion() (Version, error) {
	var v ovVersion
	if err := n.call("ov_get_openvino_version", n.getVersion, uintptr(unsafe.Pointer(&v))); err != nil {
		return Version{}, err
	}
	build, desc := goString(v.buildNumber), goString(v.description)
	purego.SyscallN(n.versionFree, uintptr(unsafe.Pointer(&v)))
	ver, err := parseVersion(build)
	ver.Description = desc
	return ver, err
}

// newTensor creates a tensor OpenVINO allocates.
func (n *native) newTensor(e elemType, dims []int64) (uintptr, error) {
	return n.createTensor("ov_tensor_create", n.tensorCreate, e, dims, 0)
}

// hostTensor wraps memory outside the Go heap (OpenVINO neither copies
// nor owns it: it must outlive the tensor and whatever is built from it).
func (n *native) hostTensor(e elemType, dims []int64, ptr uintptr) (uintptr, error) {
	if ptr == 0 {
		return 0, fmt.Errorf("openvino: host tensor over a nil pointer")
	}
	return n.createTensor("ov_tensor_create_from_host_ptr", n.tensorFromHostPtr, e, dims, ptr)
}

// createTensor calls ov_tensor_create (ptr 0) or _create_from_host_ptr
// with the shape passed by value as the ABI wants it (callShape). The dims
// are copied into a heap array (a make of variable size), which the shape
// struct points at.
func (n *native) createTensor(name string, fn uintptr, e elemType, dims []int64, ptr uintptr) (uintptr, error) {
	d := make([]int64, len(dims)+1) // never empty: dims[0] is addressable
	copy(d, dims)
	t := new(uintptr)
	err := callShape(n, name, fn, uintptr(n.num.c(e)), int64(len(dims)), d, ptr, t)
	runtime.KeepAlive(d)
	if err == nil && *t == 0 {
		err = fmt.Errorf("openvino: %s returned no tensor", name)
	}
	return *t, err
}

func (n *native) freeTensor(t uintptr) {
	if t != 0 {
		purego.SyscallN(n.tensorFree, t)
	}
}

func (n *native) tensorBytes(t uintptr) (uint64, error) {
	var sz uint64
	err := n.call("ov_tensor_get_byte_size", n.tensorByteSize, t, uintptr(unsafe.Pointer(&sz)))
	return sz, err
}

func (n *native) tensorType(t uintptr) (int32, error) {
	var et int32
	err := n.call("ov_tensor_get_element_type", n.tensorElemType, t, uintptr(unsafe.Pointer(&et)))
	return et, err
}

// probe checks the chosen numbering against the library: tensors of 8
// f16, f32 and u4 elements must report those types back and 16, 32 and 4
// bytes. With the wrong table, value 4 means f32 or f16 and value 15 u6 or
// u4, so the sizes differ.
func (n *native) probe() error {
	for _, c := range []struct {
		e    elemType
		size uint64
	}{{etF16, 16}, {etF32, 32}, {etU4, 4}, {etI64, 64}} {
		t, err := n.newTensor(c.e, []int64{8})
		if err != nil {
			return fmt.Errorf("%w: creating %v[8] with value %d: %w", ErrProbe, c.e, n.num.c(c.e), err)
		}
		sz, err1 := n.tensorBytes(t)
		et, err2 := n.tensorType(t)
		n.freeTensor(t)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%w: %w", ErrProbe, err)
		}
		if sz != c.size || et != n.num.c(c.e) {
			return fmt.Errorf("%w: %v[8] as value %d (numbering %s) reads back as type %d of %d bytes, want %d bytes",
				ErrProbe, c.e, n.num.c(c.e), n.num.name, et, sz, c.size)
		}
	}
	return nil
}

// createCore calls ov_core_create.
func (n *native) createCore() (uintptr, error) {
	var c uintptr
	err := n.callPlugin("ov_core_create", n.coreCreate, uintptr(unsafe.Pointer(&c)))
	return c, err
}

func (n *native) freeCore(c uintptr) {
	if c != 0 {
		releasePlugin(n.coreFree, c)
	}
}

// devices lists ov_core_get_available_devices.
func (n *native) devices(core uintptr) ([]string, error) {
	var d ovAvailableDevices
	if err := n.callPlugin("ov_core_get_available_devices", n.availableDevices, core, uintptr(unsafe.Pointer(&d))); err != nil {
		return nil, err
	}
	out := make([]string, 0, d.size)
	for i := uint64(0); i < d.size; i++ {
		p := *(*uintptr)(cPtr(d.devices + uintptr(i)*8))
		out = append(out, goString(p))
	}
	purego.SyscallN(n.availableDevicesFree, uintptr(unsafe.Pointer(&d)))
	return out, nil
}

// getProperty reads one property of a device from the core
// (ov_core_get_property, whose value is released with ov_free).
func (n *native) getProperty(core uintptr, device, key string) (string, error) {
	if n.coreGetProperty == 0 {
		return "", fmt.Errorf("openvino: cannot read %s: the library has no ov_core_get_property", key)
	}
	d, k := cstr(device), cstr(key)
	var v uintptr
	if err := n.callPlugin("ov_core_get_property", n.coreGetProperty, core, uintptr(unsafe.Pointer(d)), uintptr(unsafe.Pointer(k)), uintptr(unsafe.Pointer(&v))); err != nil {
		return "", err
	}
	s := goString(v)
	purego.SyscallN(n.free, v)
	return s, nil
}

// setProperty sets one property of a device on the core. ov_core_set_property
// is variadic and reads exactly one (key, value) pair of char*: it is called
// in the fixed form (core, device, key, value) where the ABI passes those
// like named arguments (variadicPairs), else through ov_core_set_properties
// (a property array, OpenVINO 2026.4+). Verified on the double on
// linux/amd64 only.
func (n *native) setProperty(core uintptr, device, key, value string) error {
	d, k, v := cstr(device), cstr(key), cstr(value)
	switch {
	case n.coreSetProperties != 0:
		// ov_property_t {const char* key; void* value;}
		prop := [2]uintptr{uintptr(unsafe.Pointer(k)), uintptr(unsafe.Pointer(v))}
		err := n.callPlugin("ov_core_set_properties", n.coreSetProperties, core, uintptr(unsafe.Pointer(d)), 1, uintptr(unsafe.Pointer(&prop)))
		runtime.KeepAlive(k)
		runtime.KeepAlive(v)
		return err
	case variadicPairs && n.coreSetProperty != 0:
		return n.callPlugin("ov_core_set_property", n.coreSetProperty, core, uintptr(unsafe.Pointer(d)), uintptr(unsafe.Pointer(k)), uintptr(unsafe.Pointer(v)))
	case n.coreSetProperty == 0:
		return fmt.Errorf("openvino: cannot set %s=%s: the library has no ov_core_set_property", key, value)
	}
	return fmt.Errorf("openvino: cannot set %s=%s on %s/%s: variadic calls are not ABI-safe here and the library has no ov_core_set_properties (OpenVINO 2026.4+)", key, value, runtime.GOOS, runtime.GOARCH)
}
