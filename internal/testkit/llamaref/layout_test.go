package llamaref

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestLayout pins the structs to this build's sizes and offsets (read off
// llama_*_default_params's machine code; see params.go).
func TestLayout(t *testing.T) {
	var mp ModelParams
	require.EqualValues(t, 80, unsafe.Sizeof(mp))
	for name, c := range map[string][2]uintptr{
		"devices": {unsafe.Offsetof(mp.Devices), 0}, "tensor_buft_overrides": {unsafe.Offsetof(mp.TensorBuftOverrides), 8},
		"n_gpu_layers": {unsafe.Offsetof(mp.NGPULayers), 16}, "split_mode": {unsafe.Offsetof(mp.SplitMode), 20},
		"use_extra_bufts": {unsafe.Offsetof(mp.UseExtraBufts), 74},
	} {
		require.Equal(t, c[1], c[0], "llama_model_params.%s", name)
	}
	var cp ContextParams
	require.EqualValues(t, 160, unsafe.Sizeof(cp))
	for name, c := range map[string][2]uintptr{
		"n_ctx": {unsafe.Offsetof(cp.NCtx), 0}, "n_batch": {unsafe.Offsetof(cp.NBatch), 4},
		"n_ubatch": {unsafe.Offsetof(cp.NUbatch), 8}, "n_seq_max": {unsafe.Offsetof(cp.NSeqMax), 12},
		"n_threads": {unsafe.Offsetof(cp.NThreads), 28}, "n_threads_batch": {unsafe.Offsetof(cp.NThreadsBatch), 32},
		"rope_scaling_type": {unsafe.Offsetof(cp.RopeScalingType), 40}, "flash_attn_type": {unsafe.Offsetof(cp.FlashAttnType), 52},
		"rope_freq_base": {unsafe.Offsetof(cp.RopeFreqBase), 56}, "yarn_orig_ctx": {unsafe.Offsetof(cp.YarnOrigCtx), 80},
		"defrag_thold": {unsafe.Offsetof(cp.DefragThold), 84}, "cb_eval": {unsafe.Offsetof(cp.CbEval), 88},
		"type_k": {unsafe.Offsetof(cp.TypeK), 104}, "type_v": {unsafe.Offsetof(cp.TypeV), 108},
		"abort_callback": {unsafe.Offsetof(cp.AbortCallback), 112}, "embeddings": {unsafe.Offsetof(cp.Embeddings), 128},
		"kv_unified": {unsafe.Offsetof(cp.KVUnified), 133}, "samplers": {unsafe.Offsetof(cp.Samplers), 136},
		"n_samplers": {unsafe.Offsetof(cp.NSamplers), 144},
	} {
		require.Equal(t, c[1], c[0], "llama_context_params.%s", name)
	}
	var b Batch
	require.EqualValues(t, 56, unsafe.Sizeof(b))
	require.EqualValues(t, 8, unsafe.Offsetof(b.Token))
	require.EqualValues(t, 48, unsafe.Offsetof(b.Logits))
}

// TestDefaults reads the npm build's defaults into the structs.
func TestDefaults(t *testing.T) { require.NoError(t, CheckDefaults(ForTest(t))) }
