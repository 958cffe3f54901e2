package openvino

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// The failures a user can meet from the runtime itself come back as an
// *Error holding OpenVINO's own message, and the backend computes the next
// graph correctly. With GGML_OPENVINO_LIB naming the real library the
// messages are the real runtime's (checked word for word below, recorded
// from 2025.0.0 and 2026.4.1 on linux/amd64); on the double, its own.
func TestRuntimeErrorsCarryOpenVINOMessage(t *testing.T) {
	real := realLibrary() != ""
	dev := openDevice(t, buildDouble(t), Options{})
	be := newBackend(dev)
	t.Cleanup(func() { be.Close() })
	// Every graph has a size of its own, so that none is a cache hit of
	// another (the compiled-model cache is the device's).
	size := int64(32)
	fresh := func() int64 { size++; return size }
	// usable: a graph never compiled before computes y = a + b right
	// after the failure.
	usable := func(t *testing.T, be *ovBackend, n int64) {
		t.Helper()
		g, _, _, y := addGraph(t, dev, n)
		require.NoError(t, be.GraphCompute(g))
		require.Equal(t, float32(2*7), getF32(t, y)[7])
	}
	ovError := func(t *testing.T, err error, fn string, words ...string) {
		t.Helper()
		var e *Error
		require.True(t, errors.As(err, &e), "an OpenVINO error: %v", err)
		require.Equal(t, fn, e.Func)
		require.NotEmpty(t, e.Msg, "OpenVINO's message is kept")
		for _, w := range words {
			require.Contains(t, e.Msg, w)
		}
		t.Log(err)
	}

	// Malformed IR: the reader's message. The real reader names the op
	// and the opset in its own words; the double in its words.
	for _, c := range []struct {
		name, from, to string
		words, real    []string
	}{
		{"unknown op", `type="Add"`, `type="NoSuchOp"`, []string{"NoSuchOp"},
			[]string{"Opset opset1 doesn't contain the operation with type: NoSuchOp"}},
		{"unknown opset", `version="opset1"`, `version="opset99"`, []string{"opset99"},
			[]string{"Cannot create Parameter layer a id:0 from unsupported opset: opset99"}},
		{"unclosed XML", `</net>`, ``, nil, []string{"Start-end tags mismatch"}},
		{"IR version", `version="11"`, `version="99"`, []string{"Unable to read the model"},
			[]string{"Unable to read the model. Please check if the model format is supported and model is correct."}},
	} {
		t.Run("malformed IR: "+c.name, func(t *testing.T) {
			irMutator = func(x []byte) []byte { return bytes.Replace(x, []byte(c.from), []byte(c.to), 1) }
			g, _, _, _ := addGraph(t, dev, fresh())
			err := be.GraphCompute(g)
			irMutator = nil
			words := c.words
			if real {
				words = c.real
			}
			ovError(t, err, "ov_core_read_model_from_memory_buffer", words...)
			usable(t, be, fresh())
		})
	}

	// A tensor of the wrong shape or type at bind time. The device checks
	// both before binding (checkSlot), so no graph reaches OpenVINO's
	// check: the test binds through the same call the device uses, on the
	// request of a model it compiled.
	t.Run("shape mismatch at bind time", func(t *testing.T) {
		be := newBackend(dev)
		t.Cleanup(func() { be.Close() })
		usable(t, be, 32)
		require.Len(t, be.reqs, 1)
		var st *reqState
		for _, s := range be.reqs {
			st = s
		}
		n := dev.rt.lib
		mem, free, err := hostAlloc(1024)
		require.NoError(t, err)
		t.Cleanup(func() { _ = free() })
		bindWrong := func(et elemType, shape ...int64) error {
			h, err := n.hostTensor(et, shape, uintptr(unsafe.Pointer(&mem[0])))
			require.NoError(t, err)
			defer n.freeTensor(h)
			return n.call("ov_infer_request_set_input_tensor_by_index", n.setInputByIndex, st.req, 0, h)
		}
		shapeWords, typeWords := []string{"[65]", "[64]"}, []string{"f16", "f32"}
		if real {
			shapeWords = []string{"Can't set the input tensor with index: 0, because the model input (shape=[64]) and the tensor (shape=(65)) are incompatible"}
			typeWords = []string{"Failed to set tensor for input with precision: f16, since the model input tensor precision is: f32"}
		}
		ovError(t, bindWrong(etF32, 65), "ov_infer_request_set_input_tensor_by_index", shapeWords...)
		ovError(t, bindWrong(etF16, 64), "ov_infer_request_set_input_tensor_by_index", typeWords...)
		usable(t, be, 32)
	})

	// A node of no elements is an error, not the real CPU plugin's
	// SIGFPE (2026.4.1), which stopped -cases full -o VIEW.
	t.Run("empty node", func(t *testing.T) {
		ctx := graph.NewContext(graph.ContextOptions{})
		a := ctx.NewTensor(quant.F32, 1, 10)
		y := ctx.Cont(ctx.View4D(a, 0, 5, 1, 1, 2*a.Nb[1], a.Nb[2], a.Nb[3], 0))
		g, err := ctx.Build(y)
		require.NoError(t, err)
		buf, err := buffer.AllocContextTensors(ctx, dev.BufferType())
		require.NoError(t, err)
		t.Cleanup(func() { buf.Free() })
		require.False(t, dev.SupportsOp(y))
		require.ErrorIs(t, be.GraphCompute(g), ErrTranslate)
		usable(t, be, fresh())
	})

	// A device OpenVINO does not have. The device falls back to the CPU
	// for a device the runtime does not list (upstream's rule), so a
	// compile for one is reached by pointing the runtime at it. The real
	// wheel has GPU and NPU plugins but no such hardware here: the GPU
	// plugin cannot load libOpenCL.so.1 (both releases); the NPU plugin
	// finds no device (2025.0.0: "No NPU devices were found.") or no
	// compiler library (2026.4.1), from src/plugins/intel_npu.
	for _, c := range []struct{ device, real string }{
		{"GPU", "libopenvino_intel_gpu_plugin.so"},
		{"NPU", "intel_npu"},
		{"NOSUCH", `Device with "NOSUCH" name is not registered in the OpenVINO Runtime`},
	} {
		t.Run("unknown device "+c.device, func(t *testing.T) {
			require.NotContains(t, dev.rt.avail, c.device)
			dev.rt.device = c.device
			g, _, _, _ := addGraph(t, dev, fresh())
			err := be.GraphCompute(g)
			dev.rt.device = "CPU"
			words := []string{c.device}
			if real {
				words = []string{c.real}
			}
			ovError(t, err, "ov_core_compile_model", words...)
			usable(t, be, fresh())
		})
	}
}
