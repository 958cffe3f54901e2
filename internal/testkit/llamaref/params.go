package llamaref

// The parameter structs of this build of libllama, laid out as
// llama_model_default_params and llama_context_default_params write them
// (read off their machine code: the llama.h copies in public indexes are
// of other versions and differ). Fields whose meaning this build's header
// would name but that are not needed here are kept as opaque bytes; they
// keep the library's defaults because every struct starts as the
// library's default. layout_test.go pins sizes, offsets and defaults, and
// the context test checks the fields set here through the context's own
// getters (llama_n_ctx, llama_n_threads, ...). The libllama scripts/fetch-rpc-ref
// builds (llama-cpp-python 0.3.36's llama.cpp) has the same layout: its
// llama.h gives these sizes and offsets, and rpcref's TestLlamaLayout
// reads its defaults through them.

// ModelParams is struct llama_model_params (80 bytes).
type ModelParams struct {
	Devices             uintptr // NULL-terminated device list; 0: all
	TensorBuftOverrides uintptr
	NGPULayers          int32
	SplitMode           int32
	// The rest (main_gpu, tensor_split, the progress callback, kv
	// overrides, the booleans vocab_only, use_mmap, ...) sits at offsets
	// that differ between llama.h versions and is only ever passed on
	// with the library's defaults, except one.
	_ [50]byte
	// UseExtraBufts lets the CPU backend repack weights into its extra
	// buffer types (Q4_0/Q4_K interleaved for AVX2), whose batched matrix
	// products quantize activations differently from the one-token path:
	// with it on, a Q4_K model's logits for a 16-token call differ from
	// the same tokens decoded one by one by NMSE ~2e-4; off, they agree to
	// ~1e-14. Offset 74, default true: the only byte of the defaults' tail
	// that is 1, and the one whose clearing removes that disagreement.
	UseExtraBufts bool
	_             [5]byte
}

// CompareModelParams are the model parameters for logit comparisons:
// the defaults without the CPU's repacked weights (see UseExtraBufts),
// so that libllama's batched and single-token logits agree.
func (l *Lib) CompareModelParams() ModelParams {
	p := l.DefaultModelParams()
	p.UseExtraBufts = false
	return p
}

// ContextParams is struct llama_context_params (160 bytes).
type ContextParams struct {
	NCtx            uint32
	NBatch          uint32
	NUbatch         uint32
	NSeqMax         uint32
	_               [12]byte // three uint32 this build adds here (defaults 0, 0, 1)
	NThreads        int32
	NThreadsBatch   int32
	_               [4]byte // the context type (default 0)
	RopeScalingType int32
	PoolingType     int32
	AttentionType   int32
	FlashAttnType   int32 // -1 auto, 0 off, 1 on
	RopeFreqBase    float32
	RopeFreqScale   float32
	YarnExtFactor   float32
	YarnAttnFactor  float32
	YarnBetaFast    float32
	YarnBetaSlow    float32
	YarnOrigCtx     uint32
	DefragThold     float32
	CbEval          uintptr
	CbEvalUserData  uintptr
	TypeK           int32 // ggml type of the K cache
	TypeV           int32 // ggml type of the V cache
	AbortCallback   uintptr
	AbortData       uintptr
	Embeddings      bool
	OffloadKQV      bool
	NoPerf          bool
	OpOffload       bool
	SwaFull         bool
	KVUnified       bool
	_               [2]byte
	Samplers        uintptr
	NSamplers       uintptr
	_               [8]byte // one more pointer-sized field (default 0)
}

// Batch is struct llama_batch (56 bytes). Its arrays come from
// llama_batch_init, in C memory.
type Batch struct {
	NTokens int32
	_       [4]byte
	Token   uintptr // llama_token *
	Embd    uintptr // float *
	Pos     uintptr // llama_pos *
	NSeqID  uintptr // int32_t *
	SeqID   uintptr // llama_seq_id **
	Logits  uintptr // int8_t *
}

// Flash attention settings (enum llama_flash_attn_type).
const (
	FlashAttnAuto     = -1
	FlashAttnDisabled = 0
	FlashAttnEnabled  = 1
)
