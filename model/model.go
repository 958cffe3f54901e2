// Package model runs llama-family GGUF models: it loads a file's weights onto
// devices, builds the decoder graph for each batch as llama.cpp does, keeps a
// KV cache, and samples tokens.
//
// A program needs a few lines:
//
//	m, err := model.Open("model.gguf", model.Options{})
//	defer m.Close()
//	s, err := m.NewSession(model.SessionOptions{})
//	defer s.Close()
//	out, err := s.Generate(ctx, prompt, 32, model.Sampler{}, func(t int32) error { ...; return nil })
//
// Architectures: llama (llama 2/3, mistral-style, SmolLM2), qwen2 and gemma3
// (Gemma 3 text models, sliding-window layers included); others are
// refused with ErrArch naming them. Weights may be F32, F16 or any type the
// devices compute matrix products in (the tests cover F32, F16, Q8_0, Q4_0,
// Q4_K and Q6_K against libllama).
package model

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/graph"
)

// Options configure Open.
type Options struct {
	// Device computes the model; nil means the CPU device. Weights and KV
	// cache go to its memory, except the token embedding, which stays on
	// the CPU as in llama.cpp (its GET_ROWS is cheap and it is often the
	// largest tensor). Ops the device refuses run on the CPU.
	Device backend.Device
	// Threads is the CPU backend's thread count; 0 lets it choose.
	Threads int
	// Params are device parameters (backend.Options.Params).
	Params map[string]map[string]string
	// Progress, when set, is called as weights are copied to a device
	// that is not the host, with the bytes done and in total. Weights the
	// CPU uses straight from the mapped file need no copy and no report.
	Progress func(done, total uint64)
	// NewTokenizer builds the tokenizer for Tokenize and Piece from the
	// file's metadata; nil means package tokenizer's (tokenizer.FromGGUF:
	// SentencePiece and Llama 3 BPE). An error wrapping
	// errors.ErrUnsupported (a vocabulary it does not implement) leaves
	// the model to token ids, with Tokenize saying why; any other error
	// fails Open. It is not called for tokenizer.ggml.model none.
	NewTokenizer func(f *gguf.File) (Tokenizer, error)
}

// Model is a loaded model: its hyperparameters, weights in device memory and
// the backends that compute it. Sessions (NewSession) decode with it.
// A Model is safe for use by one goroutine at a time.
type Model struct {
	// HParams are the hyperparameters read from the file.
	HParams HParams
	// Tied is true when the output projection is the token embedding.
	Tied bool
	// Vocab describes the tokenizer metadata.
	Vocab Vocab

	file     *gguf.File
	arch     arch
	w        weights
	bufs     []buffer.Buffer
	backends []backend.Backend // scheduler order: device first, CPU last
	dev      backend.Backend   // backend computing layers and holding the cache
	device   backend.Device    // dev's device as the caller gave it
	tok      Tokenizer
	noText   error // why tok is nil for a model with a vocabulary
	closed   bool
}

// Open loads the model at path onto opts.Device. On failure nothing stays
// allocated or mapped.
func Open(path string, opts Options) (m *Model, err error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m = &Model{file: f}
	defer func() {
		if err != nil {
			err = errors.Join(err, m.Close())
			m = nil
		}
	}()
	name, err := gguf.Get[string](f, "general.architecture")
	if err != nil {
		return nil, fmt.Errorf("%w: general.architecture: %w", ErrModel, err)
	}
	a, ok := archs[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (this runner has llama, qwen2 and gemma3)", ErrArch, name)
	}
	m.arch = a
	c := graph.NewContext(graph.ContextOptions{})
	byName := map[string]*graph.Tensor{}
	infos := map[*graph.Tensor]gguf.TensorInfo{}
	for _, ti := range f.Tensors() {
		ne := ti.Ne()
		t := c.SetName(c.NewTensor(ti.Type, ne[:]...), ti.Name)
		if t == nil {
			return nil, fmt.Errorf("%w: tensor %s: %w", ErrModel, ti.Name, c.Err())
		}
		byName[ti.Name] = t
		infos[t] = ti
	}
	embd := byName["token_embd.weight"]
	if embd == nil {
		return nil, fmt.Errorf("%w: tensor token_embd.weight missing", ErrModel)
	}
	if m.HParams, err = readHParams(f, a, int(embd.Ne[1])); err != nil {
		return nil, err
	}
	if m.w, m.Tied, err = bindWeights(a, &m.HParams, byName); err != nil {
		return nil, err
	}
	if m.Vocab, err = readVocab(f, m.HParams.NVocab); err != nil {
		return nil, err
	}
	if m.Vocab.Model != "none" {
		newTok := opts.NewTokenizer
		if newTok == nil {
			newTok = defaultTokenizer
		}
		switch m.tok, err = newTok(f); {
		case errors.Is(err, errors.ErrUnsupported):
			// A vocabulary the tokenizer does not implement (a BPE
			// pre-tokenizer other than Llama 3's, say) leaves the model
			// usable on token ids; Tokenize reports why text is not.
			m.tok, m.noText = nil, err
		case err != nil:
			return nil, fmt.Errorf("model: tokenizer: %w", err)
		}
		if e, ok := m.tok.(interface{ IsEOG(int32) bool }); ok {
			m.Vocab.eog = e.IsEOG
		}
	}
	if err := m.startBackends(opts); err != nil {
		return nil, err
	}
	if err := m.loadWeights(infos, opts.Progress); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Model) startBackends(opts Options) error {
	cpuDev, err := backend.DeviceByType(backend.DeviceCPU)
	if err != nil {
		return fmt.Errorf("model: no CPU device (import github.com/ggml-go/ggml/devices/cpu): %w", err)
	}
	bo := backend.Options{Threads: opts.Threads, Params: opts.Params}
	cpu, err := cpuDev.Init(bo)
	if err != nil {
		return err
	}
	if opts.Device != nil && opts.Device.Type() != backend.DeviceCPU {
		dev, err := opts.Device.Init(bo)
		if err != nil {
			return errors.Join(fmt.Errorf("model: device %s: %w", opts.Device.Name(), err), cpu.Close())
		}
		m.backends = []backend.Backend{dev, cpu}
		m.dev, m.device = dev, opts.Device
		return nil
	}
	m.backends = []backend.Backend{cpu}
	m.dev, m.device = cpu, cpuDev
	return nil
}

// used lists the weights the graph reads, each once, in file order.
func (m *Model) used(infos map[*graph.Tensor]gguf.TensorInfo) []*graph.Tensor {
	w := &m.w
	ts := []*graph.Tensor{w.tokEmbd, w.outputNorm, w.output, w.ropeFreqs}
	for i := range w.layers {
		l := &w.layers[i]
		ts = append(ts, l.attnNorm, l.wq, l.wk, l.wv, l.wo, l.bq, l.bk, l.bv, l.bo, l.ffnNorm, l.ffnGate, l.ffnUp, l.ffnDown,
			l.qNorm, l.kNorm, l.attnPostNorm, l.ffnPostNorm)
	}
	ts = slices.DeleteFunc(ts, func(t *graph.Tensor) bool { return t == nil })
	slices.SortFunc(ts, func(a, b *graph.Tensor) int { return cmp.Compare(infos[a].Offset, infos[b].Offset) })
	return slices.Compact(ts)
}

// loadWeights places the weights: on the host straight from the mapping
// (the CPU computes them where the file's pages are), on another device in
// buffers of its type filled through SetTensor, so that a device repacking or
// extracting weights sees every tensor. Everything is allocated before any
// byte is copied, so a device too small fails before anything is half
// loaded.
func (m *Model) loadWeights(infos map[*graph.Tensor]gguf.TensorInfo, progress func(done, total uint64)) error {
	var host, dev []*graph.Tensor
	for _, t := range m.used(infos) {
		if m.device.Type() == backend.DeviceCPU || t == m.w.tokEmbd {
			host = append(host, t)
		} else {
			dev = append(dev, t)
		}
	}
	if err := m.mapHost(host, infos); err != nil {
		return err
	}
	if len(dev) == 0 {
		return nil
	}
	d := m.device
	bt := d.BufferType()
	if bt == nil {
		return fmt.Errorf("model: device %s has no buffer type", d.Name())
	}
	var need uint64
	for _, t := range dev {
		need += alignUp(bt.AllocSize(t), bt.Alignment())
	}
	if free, total := d.Memory(); total > 0 && need > free {
		return fmt.Errorf("%w: %s needs %d MiB for weights, device %s has %d MiB free of %d MiB",
			ErrMemory, m.HParams.Arch, need>>20, d.Name(), free>>20, total>>20)
	}
	b, err := buffer.AllocTensors(bt, dev)
	if err != nil {
		return fmt.Errorf("%w: %d MiB of weights on %s: %w", ErrMemory, need>>20, d.Name(), err)
	}
	b.SetUsage(buffer.UsageWeights)
	m.bufs = append(m.bufs, b)
	var total, done uint64
	for _, t := range dev {
		total += t.NBytes()
	}
	for _, t := range dev {
		data, err := m.file.TensorData(t.Name)
		if err != nil {
			return err
		}
		if err := buffer.SetTensor(t, data, 0); err != nil {
			return fmt.Errorf("model: setting %s on %s: %w", t.Name, d.Name(), err)
		}
		done += uint64(len(data))
		if progress != nil {
			progress(done, total)
		}
	}
	return nil
}

// mapHost gives the host tensors the file's own pages: one CPU buffer over
// the data section, each tensor at its file offset. When the mapping cannot
// be used (alignment below the CPU's), they are copied into a CPU buffer.
func (m *Model) mapHost(ts []*graph.Tensor, infos map[*graph.Tensor]gguf.TensorInfo) error {
	if len(ts) == 0 {
		return nil
	}
	cpuDev := m.backends[len(m.backends)-1].Device()
	data := m.file.Bytes()[m.file.DataOffset : m.file.DataOffset+m.file.DataSize]
	if hm, ok := cpuDev.(backend.HostMemoryBufferer); ok && m.file.Alignment%buffer.TensorAlignment == 0 {
		var largest uint64
		for _, t := range ts {
			largest = max(largest, t.NBytes())
		}
		b, err := hm.BufferFromHostMemory(data, largest)
		if err != nil {
			return err
		}
		b.SetUsage(buffer.UsageWeights)
		m.bufs = append(m.bufs, b)
		for _, t := range ts {
			if err := b.AllocTensor(t, infos[t].Offset); err != nil {
				return fmt.Errorf("model: placing %s: %w", t.Name, err)
			}
		}
		return nil
	}
	b, err := buffer.AllocTensors(cpuDev.BufferType(), ts)
	if err != nil {
		return fmt.Errorf("%w: weights on the CPU: %w", ErrMemory, err)
	}
	b.SetUsage(buffer.UsageWeights)
	m.bufs = append(m.bufs, b)
	for _, t := range ts {
		d, err := m.file.TensorData(t.Name)
		if err != nil {
			return err
		}
		if err := buffer.SetTensor(t, d, 0); err != nil {
			return err
		}
	}
	return nil
}

func alignUp(n, a uint64) uint64 {
	if a == 0 {
		return n
	}
	return (n + a - 1) / a * a
}

// File is the model's GGUF file (valid until Close), for its metadata.
func (m *Model) File() *gguf.File { return m.file }

// DeviceName names the device computing the layers.
func (m *Model) DeviceName() string { return m.device.Name() }

// Close frees the weights, stops the backends and unmaps the file. Sessions
// must be closed first. Closing again does nothing.
func (m *Model) Close() error {
	if m == nil || m.closed {
		return nil
	}
	m.closed = true
	var errs []error
	for _, b := range m.bufs {
		errs = append(errs, b.Free())
	}
	for _, b := range m.backends {
		errs = append(errs, b.Close())
	}
	if m.file != nil {
		errs = append(errs, m.file.Close())
	}
	return errors.Join(errs...)
}
