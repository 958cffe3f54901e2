package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/ops"
)

// Errors returned by this package; test with errors.Is.
var (
	// ErrArch reports a model whose architecture the package does not run.
	ErrArch = errors.New("model: unsupported architecture")
	// ErrModel reports a model file missing a key or tensor, or with one of
	// the wrong type or shape.
	ErrModel = errors.New("model: bad model file")
	// ErrNoVocab reports text given to a model without a usable tokenizer.
	ErrNoVocab = errors.New("model: no tokenizer for text")
	// ErrArgument reports a bad argument (a token id past the vocabulary,
	// a batch larger than the context, ...).
	ErrArgument = errors.New("model: bad argument")
	// ErrMemory reports weights that do not fit a device's memory.
	ErrMemory = errors.New("model: not enough device memory")
	// ErrContextFull reports a decode past the session's context length.
	ErrContextFull = errors.New("model: context full")
	// ErrBusy reports a Session used by two calls at once (two
	// goroutines, or a Generate callback calling back into its session).
	ErrBusy = errors.New("model: session in use by another call")
)

// HParams are a model's hyperparameters, read from the file's metadata under
// the architecture's prefix as llama.cpp's llama_model::load_hparams reads
// them.
type HParams struct {
	// Arch is general.architecture.
	Arch string
	// NVocab is the number of tokens (rows of token_embd.weight).
	NVocab int
	// NCtxTrain is {arch}.context_length.
	NCtxTrain int
	// NEmbd is {arch}.embedding_length; NLayer {arch}.block_count.
	NEmbd, NLayer int
	// NHead, NHeadKV and NFF are per layer: {arch}.attention.head_count,
	// .head_count_kv (default head_count) and feed_forward_length may be
	// scalars or per-layer arrays.
	NHead, NHeadKV, NFF []int
	// HeadDimK and HeadDimV are {arch}.attention.key_length and
	// .value_length, by default n_embd / n_head.
	HeadDimK, HeadDimV int
	// NRot is {arch}.rope.dimension_count, by default HeadDimK.
	NRot int
	// RMSEps is {arch}.attention.layer_norm_rms_epsilon.
	RMSEps float32
	// RopeFreqBase is {arch}.rope.freq_base (10000 by default); RopeFreqScale
	// is 1 / {arch}.rope.scaling.factor for linear and YaRN scaling.
	RopeFreqBase, RopeFreqScale float32
	// RopeYarn is true for {arch}.rope.scaling.type "yarn"; NCtxOrig is
	// {arch}.rope.scaling.original_context_length (default NCtxTrain).
	RopeYarn bool
	NCtxOrig int
	// RopeMode is the architecture's: normal (adjacent pairs) for llama,
	// NEOX (halves) for qwen2.
	RopeMode ops.RopeMode
	// AttnScale multiplies Q·Kᵀ: {arch}.attention.scale, or
	// 1/sqrt(HeadDimK) when absent (Gemma 3: see archGemma3).
	AttnScale float32
	// SlidingWindow is {arch}.attention.sliding_window, the positions a
	// sliding-window layer attends to (the token's own and the
	// SlidingWindow-1 before it); 0 when no layer has a window.
	SlidingWindow int
	// SWALayers[il] is true for the layers that attend within the
	// window; nil when none does.
	SWALayers []bool
	// RopeFreqBaseSWA and RopeFreqScaleSWA are RoPE's base and scale on
	// the sliding-window layers ({arch}.rope.freq_base_swa, else 10000,
	// and 1, as llama.cpp sets them for Gemma 3).
	RopeFreqBaseSWA, RopeFreqScaleSWA float32
}

// IsSWA reports whether layer il attends within the sliding window.
func (h *HParams) IsSWA(il int) bool { return h.SWALayers != nil && h.SWALayers[il] }

// ropeBase returns layer il's RoPE base and scale.
func (h *HParams) ropeBase(il int) (base, scale float32) {
	if h.IsSWA(il) {
		return h.RopeFreqBaseSWA, h.RopeFreqScaleSWA
	}
	return h.RopeFreqBase, h.RopeFreqScale
}

// NEmbdKGQA is the width of one layer's K cache row (all KV heads).
func (h *HParams) NEmbdKGQA(il int) int { return h.HeadDimK * h.NHeadKV[il] }

// NEmbdVGQA is the width of one layer's V cache row.
func (h *HParams) NEmbdVGQA(il int) int { return h.HeadDimV * h.NHeadKV[il] }

// meta reads typed metadata under an architecture's prefix, remembering the
// first error so that a loader reads every key and checks once.
type meta struct {
	f      *gguf.File
	prefix string
	err    error
}

func (m *meta) fail(key, format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf("%w: %s: %s", ErrModel, key, fmt.Sprintf(format, args...))
	}
}

// number returns the key's value as a float64 whatever its numeric type
// (files written by different converters use u32, i32 or u64 for the same
// key), and whether it is present.
func (m *meta) number(key string) (float64, bool) {
	v, ok := m.f.Lookup(key)
	if !ok {
		return 0, false
	}
	switch x := v.Interface().(type) {
	case uint8:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case int16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	m.fail(key, "%s is not a number", v.Type())
	return 0, false
}

// integer returns a non-negative integer key, def when absent; required
// makes absence an error.
func (m *meta) integer(key string, def int, required bool) int {
	x, ok := m.number(m.prefix + key)
	if !ok {
		if required {
			m.fail(m.prefix+key, "missing")
		}
		return def
	}
	if x < 0 || x > math.MaxInt32 || x != math.Trunc(x) {
		m.fail(m.prefix+key, "%v is not a valid count", x)
		return def
	}
	return int(x)
}

func (m *meta) float(key string, def float32, required bool) float32 {
	x, ok := m.number(m.prefix + key)
	if !ok {
		if required {
			m.fail(m.prefix+key, "missing")
		}
		return def
	}
	return float32(x)
}

// perLayer reads a key that is a scalar for every layer or an array of one
// value per layer, as llama.cpp's get_key_or_arr.
func (m *meta) perLayer(key string, n int, def []int, required bool) []int {
	full := m.prefix + key
	v, ok := m.f.Lookup(full)
	if !ok || !v.IsArray() {
		x := m.integer(key, -1, required && def == nil)
		if x < 0 {
			return def
		}
		out := make([]int, n)
		for i := range out {
			out[i] = x
		}
		return out
	}
	if v.Len() != n {
		m.fail(full, "array of %d values for %d layers", v.Len(), n)
		return def
	}
	out := make([]int, n)
	for i := range out {
		var x int64
		switch a := v.Interface().(type) {
		case []uint32:
			x = int64(a[i])
		case []int32:
			x = int64(a[i])
		case []uint64:
			x = int64(a[i])
		case []int64:
			x = a[i]
		default:
			m.fail(full, "array of %s, want integers", v.ElemType())
			return def
		}
		if x < 0 || x > math.MaxInt32 {
			m.fail(full, "value %d out of range", x)
			return def
		}
		out[i] = int(x)
	}
	return out
}

func (m *meta) str(key string) (string, bool) {
	v, ok := m.f.Lookup(key)
	if !ok {
		return "", false
	}
	s, isStr := gguf.ValueAs[string](v)
	if !isStr {
		m.fail(key, "%s, want a string", v.Type())
	}
	return s, isStr
}

// readHParams reads the hyperparameters of an architecture this package
// runs; nVocab comes from token_embd.weight's shape.
func readHParams(f *gguf.File, a arch, nVocab int) (HParams, error) {
	arch := a.name
	m := &meta{f: f, prefix: arch + "."}
	h := HParams{Arch: arch, NVocab: nVocab}
	h.NCtxTrain = m.integer("context_length", 0, true)
	h.NEmbd = m.integer("embedding_length", 0, true)
	h.NLayer = m.integer("block_count", 0, true)
	if m.err == nil && h.NCtxTrain == 0 {
		// A session's context defaults to it: accepting 0 would only fail
		// later, at the first token, as a full context.
		m.fail(m.prefix+"context_length", "0, want the number of positions the model was trained for")
	}
	if m.err != nil {
		return h, m.err
	}
	if h.NEmbd == 0 || h.NLayer == 0 {
		return h, fmt.Errorf("%w: embedding_length %d, block_count %d", ErrModel, h.NEmbd, h.NLayer)
	}
	h.NHead = m.perLayer("attention.head_count", h.NLayer, nil, true)
	h.NHeadKV = m.perLayer("attention.head_count_kv", h.NLayer, h.NHead, false)
	h.NFF = m.perLayer("feed_forward_length", h.NLayer, nil, true)
	if m.err != nil {
		return h, m.err
	}
	for il := range h.NLayer {
		if h.NHead[il] == 0 || h.NHeadKV[il] == 0 || h.NHead[il]%h.NHeadKV[il] != 0 {
			return h, fmt.Errorf("%w: layer %d has %d heads over %d KV heads", ErrModel, il, h.NHead[il], h.NHeadKV[il])
		}
		if h.NHeadKV[il] != h.NHeadKV[0] {
			// The KV cache keeps one row width per layer; llama.cpp
			// allows varying widths, this runner does not yet.
			return h, fmt.Errorf("%w: KV head count varies by layer", ErrModel)
		}
	}
	if h.NEmbd%h.NHead[0] != 0 {
		return h, fmt.Errorf("%w: embedding_length %d not a multiple of head_count %d", ErrModel, h.NEmbd, h.NHead[0])
	}
	h.HeadDimK = m.integer("attention.key_length", h.NEmbd/h.NHead[0], false)
	h.HeadDimV = m.integer("attention.value_length", h.NEmbd/h.NHead[0], false)
	h.NRot = m.integer("rope.dimension_count", h.HeadDimK, false)
	h.RMSEps = m.float("attention.layer_norm_rms_epsilon", 0, true)
	h.RopeFreqBase = m.float("rope.freq_base", 10000, false)
	h.RopeFreqScale = 1
	// llama.cpp reads rope.scaling.factor, and the older rope.scale_linear.
	factor := m.float("rope.scaling.factor", 0, false)
	if factor == 0 {
		factor = m.float("rope.scale_linear", 0, false)
	}
	scaling := "linear"
	if s, ok := m.str(m.prefix + "rope.scaling.type"); ok {
		scaling = s
	}
	switch scaling {
	case "none":
	case "linear", "yarn":
		if factor != 0 {
			h.RopeFreqScale = 1 / factor
		}
		h.RopeYarn = scaling == "yarn"
	default:
		m.fail(m.prefix+"rope.scaling.type", "%q not supported", scaling)
	}
	h.NCtxOrig = m.integer("rope.scaling.original_context_length", h.NCtxTrain, false)
	scale := m.float("attention.scale", 0, false)
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(h.HeadDimK)))
	}
	h.AttnScale = scale
	if n := m.integer("expert_count", 0, false); n > 0 {
		m.fail(m.prefix+"expert_count", "mixture-of-experts models (%d experts) are not supported", n)
	}
	// Keys that change the computation in ways this runner does not
	// implement: refused by name rather than ignored.
	for _, key := range []string{"attn_logit_softcapping", "final_logit_softcapping", "attention.layer_norm_epsilon",
		"rope.scaling.attn_factor", "attention.sliding_window_pattern"} {
		if _, ok := f.Lookup(m.prefix + key); ok && m.err == nil {
			m.fail(m.prefix+key, "present, and this runner does not implement it for %s", arch)
		}
	}
	if a.swa {
		readSWA(m, &h)
	}
	if m.err != nil {
		return h, m.err
	}
	if a.scaleQ {
		// llama.cpp computes Gemma 3's scale itself, from the model size.
		if _, ok := f.Lookup(m.prefix + "attention.scale"); ok {
			return h, fmt.Errorf("%w: %sattention.scale: present, and %s takes its attention scale from the model size", ErrModel, m.prefix, arch)
		}
		h.AttnScale = float32(1 / math.Sqrt(float64(h.HeadDimK)))
		if h.NLayer == 62 { // the 27B model
			h.AttnScale = float32(1 / math.Sqrt(float64(h.NEmbd/h.NHead[0])))
		}
	}
	if h.HeadDimK != h.HeadDimV || h.HeadDimK*h.NHead[0] == 0 {
		return h, fmt.Errorf("%w: key_length %d and value_length %d differ", ErrModel, h.HeadDimK, h.HeadDimV)
	}
	if h.NRot <= 0 || h.NRot > h.HeadDimK || h.NRot%2 != 0 {
		return h, fmt.Errorf("%w: rope.dimension_count %d for head size %d", ErrModel, h.NRot, h.HeadDimK)
	}
	return h, nil
}

// swaPeriod is Gemma 3's sliding-window pattern as llama.cpp sets it
// (set_swa_pattern(6)): in each run of six layers the first five attend
// within the window and the sixth to every position.
const swaPeriod = 6

// readSWA reads the sliding window and marks the layers that use it.
func readSWA(m *meta, h *HParams) {
	h.SlidingWindow = m.integer("attention.sliding_window", 0, true)
	if m.err != nil {
		return
	}
	if h.SlidingWindow == 0 {
		m.fail(m.prefix+"attention.sliding_window", "0 positions")
		return
	}
	h.SWALayers = make([]bool, h.NLayer)
	for il := range h.SWALayers {
		h.SWALayers[il] = il%swaPeriod < swaPeriod-1
	}
	h.RopeFreqBaseSWA = m.float("rope.freq_base_swa", 10000, false)
	h.RopeFreqScaleSWA = 1
	if h.RopeYarn {
		m.fail(m.prefix+"rope.scaling.type", "yarn is not implemented for %s", h.Arch)
	}
}
