package llamaref

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/mmap"
)

// Device is one of the library's ggml devices (ggml_backend_dev_t).
type Device struct {
	ptr uintptr
	// Name is ggml_backend_dev_name ("RPC0", ...).
	Name string
}

// RPCDevices connects ggml's RPC client to the server at endpoint
// (host:port) with ggml_backend_rpc_add_server, as llama.cpp's --rpc
// does, and returns the server's devices. It needs a build with the RPC
// client (OpenLinked on scripts/fetch-rpc-ref's). ggml's client gives up
// on a server it cannot reach, so the caller checks the server is up.
func (l *Lib) RPCDevices(endpoint string) ([]Device, error) {
	addServer, err := l.ggml.Sym("ggml_backend_rpc_add_server")
	if err != nil {
		return nil, fmt.Errorf("%w: this libllama has no RPC client: %w", ErrNotAvailable, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	logs.reset()
	cep := cStr(endpoint)
	reg, _, _ := purego.SyscallN(addServer, uintptr(unsafe.Pointer(&cep[0])))
	runtime.KeepAlive(cep)
	if reg == 0 {
		return nil, fmt.Errorf("%w: ggml_backend_rpc_add_server(%s) found no devices: %s", ErrLlama, endpoint, logs.last())
	}
	n, _, _ := purego.SyscallN(l.fn.regDevCount, reg)
	devs := make([]Device, n)
	for i := range devs {
		p, _, _ := purego.SyscallN(l.fn.regDevGet, reg, uintptr(i))
		name, _, _ := purego.SyscallN(l.fn.devName, p)
		devs[i] = Device{ptr: p, Name: goString(name)}
	}
	return devs, nil
}

// LoadModelOn loads the model at path with p, offloading its last
// nGPULayers layers (llama.cpp's -ngl, the output counting as one) to
// devs, which llama.cpp splits across them by their free memory, as
// llama-cli --rpc does; the input layer and the first layers stay on the
// CPU. The device list is llama_model_params.devices, a NULL-terminated
// array, here in memory outside the Go heap.
func (l *Lib) LoadModelOn(path string, p ModelParams, devs []Device, nGPULayers int) (*Model, error) {
	if len(devs) == 0 {
		return nil, errors.New("llamaref: no devices to offload to")
	}
	mem, mapping, err := mmap.Anon(uint64(len(devs)+1)*8, 8)
	if err != nil {
		return nil, err
	}
	defer func() { _ = mmap.Unmap(mapping) }()
	list := unsafe.Slice((*uintptr)(unsafe.Pointer(&mem[0])), len(devs)+1)
	for i, d := range devs {
		list[i] = d.ptr
	}
	p.Devices, p.NGPULayers = uintptr(unsafe.Pointer(&mem[0])), int32(nGPULayers)
	return l.LoadModelParams(path, p)
}
