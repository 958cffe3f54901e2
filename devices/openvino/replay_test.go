//go:build unix

package openvino

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/quant"
)

// replayed is what one dumped model (GGML_OPENVINO_DUMP_IR) gave when
// replayed through a library: the stage that refused it, or "ok" and
// its outputs.
type replayed struct {
	Model string `json:"model"`
	// Stage is read, compile, request, bind or infer (where it was
	// refused), ok, or crash (the process died in it: corpus children).
	Stage   string   `json:"stage"`
	Status  int32    `json:"status,omitempty"`
	Msg     string   `json:"msg,omitempty"`
	Outputs [][]byte `json:"outputs,omitempty"`
}

func readManifest(prefix string) (dumpManifest, error) {
	var m dumpManifest
	b, err := os.ReadFile(prefix + ".json")
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	return m, err
}

func elemByName(name string) (elemType, error) {
	for e := elemType(0); e < etCount; e++ {
		if elemTypeInfo[e].irName == name {
			return e, nil
		}
	}
	return 0, fmt.Errorf("unknown element type %q", name)
}

// mapFile maps a file read-only outside the Go heap (a sparse weights
// blob stays sparse); empty files give nil.
func mapFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil, func() {}, err
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}

// replayDump reads prefix.xml over prefix.bin, compiles it for device,
// binds prefix.input<i>.bin as the manifest describes and infers, as a
// user replaying the dump would, through the C API only.
func replayDump(n *native, core uintptr, device, prefix string) replayed {
	r := replayed{Model: prefix}
	fail := func(stage string, err error) replayed {
		r.Stage, r.Msg = stage, err.Error()
		if e, ok := err.(*Error); ok {
			r.Status, r.Msg = e.Status, e.Msg
		}
		return r
	}
	man, err := readManifest(prefix)
	if err != nil {
		return fail("manifest", err)
	}
	xml, err := os.ReadFile(prefix + ".xml")
	if err != nil {
		return fail("manifest", err)
	}
	bin, unmap, err := mapFile(prefix + ".bin")
	if err != nil {
		return fail("manifest", err)
	}
	defer unmap()
	var wt uintptr
	if len(bin) > 0 {
		if wt, err = n.hostTensor(etU8, []int64{int64(len(bin))}, uintptr(unsafe.Pointer(&bin[0]))); err != nil {
			return fail("read", err)
		}
		defer n.freeTensor(wt)
	}
	var model, cm, req uintptr
	x := cstr(string(xml))
	if err := n.call("ov_core_read_model_from_memory_buffer", n.readModelFromMemory, core, uintptr(unsafe.Pointer(x)), uintptr(len(xml)), wt, uintptr(unsafe.Pointer(&model))); err != nil {
		return fail("read", err)
	}
	dev := cstr(device)
	err = n.call("ov_core_compile_model", n.compileModel, core, model, uintptr(unsafe.Pointer(dev)), 0, uintptr(unsafe.Pointer(&cm)))
	purego.SyscallN(n.modelFree, model)
	if err != nil {
		return fail("compile", err)
	}
	defer purego.SyscallN(n.compiledModelFree, cm)
	if err := n.call("ov_compiled_model_create_infer_request", n.createInferRequest, cm, uintptr(unsafe.Pointer(&req))); err != nil {
		return fail("request", err)
	}
	defer purego.SyscallN(n.inferRequestFree, req)
	for i, in := range man.Inputs {
		et, err := elemByName(in.Type)
		if err != nil {
			return fail("manifest", err)
		}
		data, err := os.ReadFile(fmt.Sprintf("%s.input%d.bin", prefix, i))
		if err != nil {
			return fail("manifest", err)
		}
		mem, free, err := hostAlloc(uint64(max(len(data), 1)))
		if err != nil {
			return fail("bind", err)
		}
		defer free()
		copy(mem, data)
		h, err := n.hostTensor(et, in.Shape, uintptr(unsafe.Pointer(&mem[0])))
		if err != nil {
			return fail("bind", err)
		}
		err = n.call("ov_infer_request_set_input_tensor_by_index", n.setInputByIndex, req, uintptr(i), h)
		n.freeTensor(h)
		if err != nil {
			return fail("bind", err)
		}
	}
	if err := n.call("ov_infer_request_infer", n.infer, req); err != nil {
		return fail("infer", err)
	}
	for i := range man.Outputs {
		var t uintptr
		if err := n.call("ov_infer_request_get_output_tensor_by_index", n.getOutputByIndex, req, uintptr(i), uintptr(unsafe.Pointer(&t))); err != nil {
			return fail("infer", err)
		}
		sz, err := n.tensorBytes(t)
		var p uintptr
		if err == nil {
			err = n.call("ov_tensor_data", n.tensorData, t, uintptr(unsafe.Pointer(&p)))
		}
		if err != nil {
			n.freeTensor(t)
			return fail("infer", err)
		}
		r.Outputs = append(r.Outputs, append([]byte(nil), unsafe.Slice((*byte)(cPtr(p)), sz)...))
		n.freeTensor(t)
	}
	r.Stage = "ok"
	return r
}

// asFloats decodes the bytes of an output of element type name.
func asFloats(name string, b []byte) ([]float64, error) {
	var size int
	var get func([]byte) float64
	switch name {
	case "f32":
		size, get = 4, func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) }
	case "f16":
		size, get = 2, func(b []byte) float64 { return float64(quant.FP16ToFP32(binary.LittleEndian.Uint16(b))) }
	case "bf16":
		size, get = 2, func(b []byte) float64 {
			return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
		}
	case "i32":
		size, get = 4, func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) }
	case "i64":
		size, get = 8, func(b []byte) float64 { return float64(int64(binary.LittleEndian.Uint64(b))) }
	default:
		return nil, fmt.Errorf("no decoding of %s outputs", name)
	}
	x := make([]float64, len(b)/size)
	for i := range x {
		x[i] = get(b[i*size:])
	}
	return x, nil
}

// outputNMSE is test-backend-ops' error of got against want, both outputs
// of element type name; NaN and infinities must agree element by element
// (they count as an infinite error otherwise).
func outputNMSE(name string, got, want []byte) (float64, error) {
	if len(got) != len(want) {
		return math.Inf(1), fmt.Errorf("%d bytes, want %d", len(got), len(want))
	}
	g, err := asFloats(name, got)
	if err != nil {
		return 0, err
	}
	w, _ := asFloats(name, want)
	var num, den float64
	for i := range g {
		if math.IsNaN(w[i]) || math.IsInf(w[i], 0) || math.IsNaN(g[i]) || math.IsInf(g[i], 0) {
			if !(math.IsNaN(w[i]) && math.IsNaN(g[i])) && g[i] != w[i] {
				return math.Inf(1), nil
			}
			continue
		}
		d := g[i] - w[i]
		num += d * d
		den += w[i] * w[i]
	}
	if den == 0 {
		return num, nil
	}
	return num / den, nil
}
