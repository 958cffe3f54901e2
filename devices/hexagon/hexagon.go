// Package hexagon is the Hexagon NPU device: ggml graphs computed by
// ggml's HTP library (libggml-htp-vNN.so) on a Qualcomm DSP, reached
// through libcdsprpc (FastRPC, rpcmem, dspqueue), which is loaded at run
// time through purego, without cgo. It reimplements the host side of
// upstream ggml-hexagon: ggml's src/ggml-hexagon/ggml-hexagon.cpp in the
// version crates.io llama-cpp-sys-4 0.10.0 ships (newer than ggml-org/ggml
// d99724f, whose public htp headers this package's wire layer follows;
// "upstream" in this package's comments means that file). Devices from GGML_HEXAGON_DEVICES (the registry
// "HTP"), one FastRPC session per device, rpcmem buffers mapped into the
// DSP, weights repacked into the DSP's tiled layout, and op batches in
// shared memory sent over a dspqueue.
//
// Importing the package registers the registry, configured from the
// GGML_HEXAGON_* variables (OptionsFromEnv); NewRegistry gives one with
// Options set by the caller.
//
// Verification: everything here runs against the C test double under
// testdata/ (a libcdsprpc written from the public API, with an emulated
// DSP); claims are "verified on the double" unless they say otherwise.
// Nothing has run on a real DSP.
//
// Protocols (Options.Protocol, GGML_HEXAGON_PROTOCOL): ProtocolPublic,
// the default, is ggml's public protocol at d99724f (internal/htp), which
// has no fences: events ride on the batch sequence, waiting on another
// session's event or copying from another session waits on the host, a
// group device computes on its first core, and the all-reduce sums on the
// host. ProtocolFence is the fence protocol, the one upstream's host speaks,
// as testdata/facts/hexagon.md §2.2-2.4 and §3 reconstruct it; its additions (FENCE, CPY_FENCE, MDEV_GROUP, ALLREDUCE, the seq
// framing, 10-input ops, fence tensors) are fence-protocol only and NOT verified
// against a real DSP library: with it the DSPs signal and wait on fence
// slots (the host polls them as upstream does), a group's batches go to
// every core, and the all-reduce runs on the DSPs.
//
// Kernel parameters: the public unary block is solved on the host; the
// MUL_MAT and FLASH_ATTN_EXT blocks are not (see kparams.go).
//
// Without cgo this runs on Linux (Qualcomm Linux boards) and Windows on
// Snapdragon; Android builds need CGO_ENABLED=1 because purego does there.
package hexagon

import (
	"log/slog"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
)

var std = &Registry{fromEnv: true}

// The registry registers itself; it reads the GGML_HEXAGON_* variables
// when its devices are first listed, and bad variables make its devices
// unavailable with the reason.
func init() {
	if err := backend.Register(std); err != nil {
		slog.Warn("hexagon: registry not registered", "err", err)
	}
}

// Default is the registry registered from the environment.
func Default() *Registry { return std }

// SplitBufferTyper is a registry with a buffer type for tensors split
// over its devices (upstream's ggml_backend_split_buffer_type extension).
type SplitBufferTyper interface {
	SplitBufferType(main int) buffer.Type
}

// Communicator is a registry that makes communicators for all-reduce over
// its backends (upstream's ggml_backend_comm_init, _free and
// _allreduce_tensor extensions).
type Communicator interface {
	NewComm(bs ...backend.Backend) (*Comm, error)
}

var (
	_ SplitBufferTyper = (*Registry)(nil)
	_ Communicator     = (*Registry)(nil)
)

// NewComm is the package's NewComm, as the registry's extension.
func (r *Registry) NewComm(bs ...backend.Backend) (*Comm, error) { return NewComm(bs...) }
