package backend

import (
	"errors"
	"fmt"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Weight is a weight tensor and the values LoadWeights fills it with, one
// per element in the tensor's order (Ne[0] fastest).
type Weight struct {
	Tensor *graph.Tensor
	Values []float32
}

// LoadWeights places weight tensors in one buffer of d's buffer type,
// marked buffer.UsageWeights (the scheduler then runs the ops reading them
// on d, as it does for a model's weights), and fills each with its values
// quantized to the tensor's type as a model file is: quant.Quantize
// (ggml_quantize_chunk, no importance matrix), not the activation
// conversion of SetFloat32. The tensors, of any type Quantize writes, must
// be contiguous and have no memory yet; a graph.Context made without Alloc
// gives such tensors. Free the buffer when the weights are no longer used.
// On error nothing stays allocated.
func LoadWeights(d Device, ws ...Weight) (buf buffer.Buffer, err error) {
	if d == nil {
		return nil, fmt.Errorf("%w: LoadWeights: nil device", ErrArgument)
	}
	bt := d.BufferType()
	if bt == nil {
		return nil, fmt.Errorf("%w: LoadWeights: device %s has no buffer type", ErrArgument, d.Name())
	}
	ts := make([]*graph.Tensor, len(ws))
	data := make([][]byte, len(ws))
	for i, w := range ws {
		t := w.Tensor
		if t == nil {
			return nil, fmt.Errorf("%w: LoadWeights: weight %d has no tensor", ErrArgument, i)
		}
		if _, err := checkValues(t, len(w.Values)); err != nil {
			return nil, fmt.Errorf("backend: LoadWeights: %w", err)
		}
		if t.Buffer != nil || t.Data != nil {
			return nil, fmt.Errorf("%w: LoadWeights: %s already has memory", ErrArgument, t)
		}
		// Quantized before anything is allocated: a type Quantize does
		// not write fails with nothing to undo.
		row := int(t.Ne[0])
		if data[i], err = quant.Quantize(t.Type, w.Values, len(w.Values)/max(row, 1), row, nil); err != nil {
			return nil, fmt.Errorf("backend: LoadWeights: %s: %w", t, err)
		}
		ts[i] = t
	}
	if buf, err = buffer.AllocTensors(bt, ts); err != nil {
		return nil, fmt.Errorf("backend: LoadWeights on %s: %w", d.Name(), err)
	}
	buf.SetUsage(buffer.UsageWeights)
	for i, t := range ts {
		if err := buffer.SetTensor(t, data[i], 0); err != nil {
			return nil, errors.Join(fmt.Errorf("backend: LoadWeights: setting %s on %s: %w", t, d.Name(), err), buf.Free())
		}
	}
	return buf, nil
}

// InitWithCPU starts the backend Init(opts) chooses and, unless it is the
// CPU, a CPU backend after it (with opts' threads and parameters): the list
// a Scheduler takes, the CPU last running what the first device cannot.
func InitWithCPU(opts Options) ([]Backend, error) {
	first, err := Init(opts)
	if err != nil {
		return nil, err
	}
	if first.Device().Type() == DeviceCPU {
		return []Backend{first}, nil
	}
	cpuOpts := opts
	cpuOpts.Devices = []string{"CPU"}
	cpu, err := Init(cpuOpts)
	if err != nil {
		return nil, errors.Join(err, first.Close())
	}
	return []Backend{first, cpu}, nil
}

// InitBestWithCPU is InitWithCPU for the devices GGML_DEVICE chooses, or
// without it the best device (InitBest), then the CPU.
func InitBestWithCPU() ([]Backend, error) {
	opts, err := OptionsFromEnv()
	if err != nil {
		return nil, err
	}
	return InitWithCPU(opts)
}

// CloseAll closes every backend of bs, joining their errors.
func CloseAll(bs []Backend) error {
	var errs []error
	for _, b := range bs {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}
