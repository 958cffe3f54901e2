// Package model runs llama-family GGUF models: it loads a file's weights onto
// devices, builds the decoder graph for each batch as llama.cpp does, keeps a
// KV cache, and samples tokens.
//
// A program needs a few lines (Example runs them):
//
//	m, err := model.Open("model.gguf", model.Options{BestDevice: true})
//	defer m.Close()
//	prompt, err := m.Tokenize("Once upon a time", true)
//	s, err := m.NewSession(model.SessionOptions{})
//	defer s.Close()
//	out, err := s.Generate(ctx, prompt, 32, model.Sampler{}, func(t int32) error { ...; return nil })
//	fmt.Println(s.Timings())
//
// The package links the CPU device (package devices/cpu) itself: a model
// always needs it, for the token embedding and whatever another device
// refuses. An accelerator is linked by importing its package (devices/openvino,
// devices/hexagon, devices/rpc) and chosen with Options.Device or
// Options.BestDevice.
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
	"strings"
	"sync"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	// The CPU device registers itself; every model needs it.
	_ "github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// Options configure Open.
type Options struct {
	// Device computes the model; nil means the CPU device, or with
	// BestDevice the best one. Weights and KV cache go to its memory,
	// except the token embedding, which stays on the CPU as in llama.cpp
	// (its GET_ROWS is cheap and it is often the largest tensor). Ops the
	// device refuses run on the CPU.
	Device backend.Device
	// BestDevice, with Device nil, picks the device as backend.InitBest
	// does: the first entry of GGML_DEVICE that is available and starts
	// (its parameters joining Params), or without GGML_DEVICE the first
	// GPU, then integrated GPU, that starts, else the CPU. A GGML_DEVICE
	// that does not parse or of which no entry starts fails Open, naming
	// why each entry could not be used. Model.DeviceName says which ran.
	BestDevice bool
	// Threads is the CPU backend's thread count; 0 lets it choose.
	Threads int
	// Split, when set, spreads the layers over these devices in order, as
	// llama.cpp's layer split does over its devices (an RPC server's among
	// them): contiguous runs of about equal length, the output norm and
	// projection with the last run, each layer's weights and KV cache on
	// its device; the scheduler copies the activations from one run to the
	// next. Device is then ignored. A CPU device in the list computes its
	// layers from the mapped file.
	Split []backend.Device
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
	backends []backend.Backend // scheduler order: devices first, CPU last
	device   backend.Device    // the first device computing layers, as the caller gave it
	// layerDev is the device of each layer's weights and cache, outDev
	// that of the output norm and projection: all the device, or the runs
	// of Options.Split.
	layerDev []backend.Device
	outDev   backend.Device
	tok      Tokenizer
	noText   error // why tok is nil for a model with a vocabulary
	closed   bool
	// sessions are the open sessions, which Close closes first. A
	// session may be closed on another goroutine than the model's.
	mu       sync.Mutex
	sessions map[*Session]struct{}
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
	// The layers' devices need the layers; nothing is allocated before.
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
		return fmt.Errorf("model: no CPU device: %w", err)
	}
	candidates := []backend.Device{opts.Device}
	if opts.Device == nil && opts.BestDevice {
		sel, err := backend.OptionsFromEnv()
		if err != nil {
			return fmt.Errorf("model: %w", err)
		}
		if candidates, err = bestDevices(sel.Devices); err != nil {
			return err
		}
		opts.Params = joinParams(opts.Params, sel.Params)
	}
	bo := backend.Options{Threads: opts.Threads, Params: opts.Params}
	cpu, err := cpuDev.Init(bo)
	if err != nil {
		return err
	}
	if len(opts.Split) > 0 {
		return m.startSplit(opts.Split, cpuDev, cpu, bo)
	}
	var why []error
	for _, d := range candidates {
		if d == nil || d.Type() == backend.DeviceCPU {
			m.backends = []backend.Backend{cpu}
			m.placeLayers([]backend.Device{cpuDev})
			return nil
		}
		dev, err := d.Init(bo)
		if err == nil {
			m.backends = []backend.Backend{dev, cpu}
			m.placeLayers([]backend.Device{d})
			return nil
		}
		// As backend.Init, a device that does not start hands over to
		// the next candidate; the CPU ends the list unless the caller
		// named the devices.
		backend.Logger().Info("model: device did not start", "device", d.Name(), "err", err)
		why = append(why, fmt.Errorf("device %s: %w", d.Name(), err))
	}
	return errors.Join(fmt.Errorf("model: %w", errors.Join(why...)), cpu.Close())
}

// startSplit starts a backend for each device of split that is not the
// CPU (once however many runs it has; the CPU's runs are the host CPU's,
// cpu), and gives the layers to split's devices in order.
func (m *Model) startSplit(split []backend.Device, cpuDev backend.Device, cpu backend.Backend, bo backend.Options) error {
	devs := slices.Clone(split)
	started := map[backend.Device]bool{}
	for i, d := range devs {
		if d == nil || d.Type() == backend.DeviceCPU {
			devs[i] = cpuDev
			continue
		}
		if started[d] {
			continue
		}
		b, err := d.Init(bo)
		if err != nil {
			errs := []error{fmt.Errorf("model: device %s: %w", d.Name(), err), cpu.Close()}
			for _, b := range m.backends {
				errs = append(errs, b.Close())
			}
			m.backends = nil
			return errors.Join(errs...)
		}
		started[d] = true
		m.backends = append(m.backends, b)
	}
	m.backends = append(m.backends, cpu)
	m.placeLayers(devs)
	return nil
}

// placeLayers gives the layers to devs in contiguous runs of about equal
// length, the output norm and projection to the last.
func (m *Model) placeLayers(devs []backend.Device) {
	m.device, m.outDev = devs[0], devs[len(devs)-1]
	m.layerDev = make([]backend.Device, m.HParams.NLayer)
	for il := range m.layerDev {
		m.layerDev[il] = devs[il*len(devs)/len(m.layerDev)]
	}
}

// bestDevices lists the devices BestDevice tries in order: the GGML_DEVICE
// entries named (an unknown or unavailable one is an error, as a
// misspelled variable should be), or the available GPUs, then integrated
// GPUs, then the CPU.
func bestDevices(names []string) ([]backend.Device, error) {
	var ds []backend.Device
	if len(names) > 0 {
		for _, n := range names {
			d, err := backend.DeviceByName(n)
			if err != nil {
				return nil, fmt.Errorf("model: %s: %w", backend.EnvDevice, err)
			}
			if err := backend.Availability(d); err != nil {
				return nil, fmt.Errorf("model: %s: %w", backend.EnvDevice, err)
			}
			ds = append(ds, d)
		}
		return ds, nil
	}
	for _, t := range []backend.DeviceType{backend.DeviceGPU, backend.DeviceIGPU} {
		for _, d := range backend.DevicesOfType(t) {
			if backend.Availability(d) == nil {
				ds = append(ds, d)
			}
		}
	}
	return append(ds, nil), nil // nil: the CPU
}

// joinParams adds GGML_DEVICE's parameters to the caller's; the caller's
// win for a device both name.
func joinParams(mine, env map[string]map[string]string) map[string]map[string]string {
	if len(env) == 0 {
		return mine
	}
	out := map[string]map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for k, v := range mine {
		out[k] = v
	}
	return out
}

// used lists the weights the graph reads, each once, in file order.
func (m *Model) used(infos map[*graph.Tensor]gguf.TensorInfo) []*graph.Tensor {
	w := &m.w
	ts := []*graph.Tensor{w.tokEmbd, w.outputNorm, w.output, w.ropeFreqs}
	for i := range w.layers {
		l := &w.layers[i]
		ts = append(ts, l.tensors()...)
	}
	ts = slices.DeleteFunc(ts, func(t *graph.Tensor) bool { return t == nil })
	slices.SortFunc(ts, func(a, b *graph.Tensor) int { return cmp.Compare(infos[a].Offset, infos[b].Offset) })
	return slices.Compact(ts)
}

// tensors are the layer's weights, nil for those its file does not have.
func (l *layer) tensors() []*graph.Tensor {
	return []*graph.Tensor{l.attnNorm, l.wq, l.wk, l.wv, l.wo, l.bq, l.bk, l.bv, l.bo, l.ffnNorm, l.ffnGate, l.ffnUp, l.ffnDown,
		l.qNorm, l.kNorm, l.attnPostNorm, l.ffnPostNorm}
}

// loadWeights places the weights: on the host straight from the mapping
// (the CPU computes them where the file's pages are), on another device in
// buffers of its type filled through SetTensor, so that a device repacking or
// extracting weights sees every tensor. Everything is allocated before any
// byte is copied, so a device too small fails before anything is half
// loaded.
func (m *Model) loadWeights(infos map[*graph.Tensor]gguf.TensorInfo, progress func(done, total uint64)) error {
	layerOf := map[*graph.Tensor]int{}
	for il := range m.w.layers {
		for _, t := range m.w.layers[il].tensors() {
			if t != nil {
				layerOf[t] = il
			}
		}
	}
	var host []*graph.Tensor
	var devs []backend.Device // in first use order
	byDev := map[backend.Device][]*graph.Tensor{}
	for _, t := range m.used(infos) {
		d := m.outDev
		if il, ok := layerOf[t]; ok {
			d = m.layerDev[il]
		}
		if d.Type() == backend.DeviceCPU || t == m.w.tokEmbd || !weightSupported(d, t) {
			host = append(host, t)
			continue
		}
		if byDev[d] == nil {
			devs = append(devs, d)
		}
		byDev[d] = append(byDev[d], t)
	}
	if err := m.mapHost(host, infos); err != nil {
		return err
	}
	var total, done uint64
	for _, d := range devs {
		bt := d.BufferType()
		if bt == nil {
			return fmt.Errorf("model: device %s has no buffer type", d.Name())
		}
		var need uint64
		for _, t := range byDev[d] {
			need += alignUp(bt.AllocSize(t), bt.Alignment())
			total += t.NBytes()
		}
		if free, all := d.Memory(); all > 0 && need > free {
			return fmt.Errorf("%w: %s needs %d MiB for weights, device %s has %d MiB free of %d MiB",
				ErrMemory, m.HParams.Arch, need>>20, d.Name(), free>>20, all>>20)
		}
		b, err := buffer.AllocTensors(bt, byDev[d])
		if err != nil {
			return fmt.Errorf("%w: %d MiB of weights on %s: %w", ErrMemory, need>>20, d.Name(), err)
		}
		b.SetUsage(buffer.UsageWeights)
		m.bufs = append(m.bufs, b)
	}
	for _, d := range devs {
		for _, t := range byDev[d] {
			data, err := m.file.TensorData(t.Name)
			if err != nil {
				return err
			}
			if err := buffer.SetTensor(t, data, 0); err != nil {
				return fmt.Errorf("model: setting %s on %s: %w", t.Name, d.Name(), err)
			}
			// The device holds the weight now: its pages of the file need
			// not stay resident beside that copy.
			m.file.Evict(data)
			done += uint64(len(data))
			if progress != nil {
				progress(done, total)
			}
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

// weightSupported reports whether d computes the matrix product over
// weight t, as llama.cpp asks (weight_buft_supported) before placing a
// weight in a device's buffer: a weight the device refuses (OpenVINO and
// Q5_0) stays on the host, where the CPU that computes its product reads
// it. Vectors (norms, biases) are read by element-wise ops every device
// has.
func weightSupported(d backend.Device, t *graph.Tensor) bool {
	if t.Ne[1] == 1 && t.Ne[2] == 1 && t.Ne[3] == 1 {
		return true
	}
	c := graph.NewContext(graph.ContextOptions{})
	w := c.SetName(c.NewTensor(t.Type, t.Ne[0], t.Ne[1], t.Ne[2], t.Ne[3]), t.Name)
	probe := c.MulMat(w, c.NewTensor(quant.F32, t.Ne[0], 1, t.Ne[2], t.Ne[3]))
	return probe != nil && d.SupportsOp(probe)
}

func alignUp(n, a uint64) uint64 {
	if a == 0 {
		return n
	}
	return (n + a - 1) / a * a
}

// File is the model's GGUF file (valid until Close), for its metadata.
func (m *Model) File() *gguf.File { return m.file }

// DeviceName names the device computing the layers: the devices of
// Options.Split, comma-separated, when the layers are split.
func (m *Model) DeviceName() string {
	var names []string
	for _, d := range m.layerDev {
		if !slices.Contains(names, d.Name()) {
			names = append(names, d.Name())
		}
	}
	if len(names) == 0 {
		return m.device.Name()
	}
	return strings.Join(names, ",")
}

// onCPU reports whether every layer and the output run on the CPU device.
func (m *Model) onCPU() bool {
	for _, d := range append([]backend.Device{m.outDev}, m.layerDev...) {
		if d.Type() != backend.DeviceCPU {
			return false
		}
	}
	return true
}

// Close closes the sessions still open (their later calls return an error
// saying the model was closed), frees the weights, stops the backends and
// unmaps the file. Closing again does nothing.
func (m *Model) Close() error {
	if m == nil || m.closed {
		return nil
	}
	m.closed = true
	var errs []error
	m.mu.Lock()
	open := make([]*Session, 0, len(m.sessions))
	for s := range m.sessions {
		open = append(open, s)
	}
	m.mu.Unlock()
	for _, s := range open {
		errs = append(errs, s.closeBy(errModelClosed))
	}
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
