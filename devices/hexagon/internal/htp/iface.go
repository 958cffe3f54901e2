package htp

import (
	"encoding/binary"
	"fmt"
)

// Method indices of interface htp_iface. A qaic stub reserves 0 (open)
// and 1 (close), which are remote_handle64_open and remote_handle64_close,
// and numbers the declared methods from 2 in order (checked on the
// qaic-generated stubs of quic/fastrpc, hexagon.md 6.8). ggml-org/ggml
// d99724f's src/ggml-hexagon/htp/htp_iface.idl declares, in this order,
// start, stop, mmap, munmap, profiler, etm, hwinfo: so hwinfo is 8 for
// that IDL (confirmed from the public source; a DSP library built from an
// IDL with a method inserted shifts every later index and calls the wrong
// method without an error, which only a real device shows - a sane
// hwinfo answer is the cheap check).
const (
	MethodOpen     = 0
	MethodClose    = 1
	MethodStart    = 2
	MethodStop     = 3
	MethodMmap     = 4
	MethodMunmap   = 5
	MethodProfiler = 6
	MethodEtm      = 7
	MethodHwinfo   = 8
)

// Scalars is REMOTE_SCALARS_MAKEX(0, method, in, out, 0, 0): the word that
// tells remote_handle64_invoke the method and how many input and output
// buffers follow.
func Scalars(method, in, out uint32) uint32 {
	return (method&0x1f)<<24 | (in&0xff)<<16 | (out&0xff)<<8
}

// Call is one htp_iface method as remote_handle64_invoke takes it: the
// scalars word, the one input buffer with every `in` argument packed in
// order at its natural alignment (nil when the method has none), and the
// size of the one output buffer for the `rout` arguments (0 when none).
type Call struct {
	Name    string
	Scalars uint32
	In      []byte
	OutLen  int
}

func newCall(name string, method uint32, in []byte, outLen int) Call {
	var nIn, nOut uint32
	if in != nil {
		nIn = 1
	}
	if outLen > 0 {
		nOut = 1
	}
	return Call{Name: name, Scalars: Scalars(method, nIn, nOut), In: in, OutLen: outLen}
}

var le = binary.LittleEndian

// StartArgs are htp_iface_start's inputs.
type StartArgs struct {
	SessID  uint32
	QueueID uint64 // dspqueue_export's id
	// NHVX is the DSP threads (0: all the hardware has); NHMX enables
	// HMX when not 0 (the public DSP reads it as a flag).
	NHVX, NHMX uint32
	// VTCMSize (0: the DSP's own) and PowerMode reach the DSP only in
	// the fence protocol's start.
	VTCMSize  uint64
	MaxVmem   uint64
	PowerMode uint32
}

// StartCall is htp_iface_start as protocol p's IDL declares it. Public
// (d99724f htp_iface.idl): start(sess_id, dsp_queue_id, n_hvx, n_hmx,
// max_vmem), 32 bytes: u32 @0, u64 @8, u32 @16, u32 @20, u64 @24; that
// DSP takes its whole VTCM and sets its own power corners, so VTCMSize and
// PowerMode have no field. Fence: upstream's start(session_id, queue_id,
// n_threads, n_hmx, vtcm_size, max_vmem, power_mode), 48 bytes with u64
// vtcm_size @24, u64 max_vmem @32, u32 power_mode @40 - the IDL is not
// public, so this packing is inferred from the call (hexagon.md 5.1) and
// NOT verified against a DSP library.
func StartCall(p Protocol, a StartArgs) Call {
	n := 32
	if p.Fences() {
		n = 48
	}
	b := make([]byte, n)
	le.PutUint32(b[0:], a.SessID)
	le.PutUint64(b[8:], a.QueueID)
	le.PutUint32(b[16:], a.NHVX)
	le.PutUint32(b[20:], a.NHMX)
	if p.Fences() {
		le.PutUint64(b[24:], a.VTCMSize)
		le.PutUint64(b[32:], a.MaxVmem)
		le.PutUint32(b[40:], a.PowerMode)
	} else {
		le.PutUint64(b[24:], a.MaxVmem)
	}
	return newCall("start", MethodStart, b, 0)
}

// StopCall is htp_iface_stop(): no arguments, a NULL argument array.
func StopCall() Call { return newCall("stop", MethodStop, nil, 0) }

// MmapCall is htp_iface_mmap(fd, size): 8 bytes.
func MmapCall(fd, size uint32) Call {
	b := make([]byte, 8)
	le.PutUint32(b[0:], fd)
	le.PutUint32(b[4:], size)
	return newCall("mmap", MethodMmap, b, 0)
}

// MunmapCall is htp_iface_munmap(fd): 4 bytes. The host calls it before
// fastrpc_munmap of a non-pinned buffer so the DSP drops its reference.
func MunmapCall(fd uint32) Call {
	b := make([]byte, 4)
	le.PutUint32(b, fd)
	return newCall("munmap", MethodMunmap, b, 0)
}

// ProfilerCall is htp_iface_profiler(mode, pmu_conf): 36 bytes, the struct
// htp_iface_pmu_conf {u32 events[8]} inline after mode.
func ProfilerCall(mode uint32, events [ProfPMUNCnt]uint32) Call {
	b := make([]byte, 4+4*ProfPMUNCnt)
	le.PutUint32(b, mode)
	for i, e := range events {
		le.PutUint32(b[4+4*i:], e)
	}
	return newCall("profiler", MethodProfiler, b, 0)
}

// EtmCall is htp_iface_etm(enable): 4 bytes.
func EtmCall(enable bool) Call {
	b := make([]byte, 4)
	if enable {
		le.PutUint32(b, 1)
	}
	return newCall("etm", MethodEtm, b, 0)
}

// HwinfoCall is htp_iface_hwinfo(rout n_threads, rout n_hvx, rout n_hmx,
// rout vtcm_size): one 24-byte output buffer.
func HwinfoCall() Call { return newCall("hwinfo", MethodHwinfo, nil, HwinfoSize) }

// HwinfoSize is the bytes of hwinfo's output buffer.
const HwinfoSize = 24

// HWInfo is what the DSP reports of itself.
type HWInfo struct {
	NThreads, NHVX, NHMX uint32
	VTCMSize             uint64
}

// DecodeHwinfo reads hwinfo's output buffer: u32 n_threads @0, n_hvx @4,
// n_hmx @8, u64 vtcm_size @16.
func DecodeHwinfo(out []byte) (HWInfo, error) {
	if len(out) < HwinfoSize {
		return HWInfo{}, fmt.Errorf("htp: hwinfo answer of %d bytes, want %d", len(out), HwinfoSize)
	}
	return HWInfo{NThreads: le.Uint32(out[0:]), NHVX: le.Uint32(out[4:]), NHMX: le.Uint32(out[8:]),
		VTCMSize: le.Uint64(out[16:])}, nil
}

// SkelURI is the module URI of the DSP library for arch vNN, before FastRPC
// appends the domain and session.
func SkelURI(arch int) string {
	return fmt.Sprintf("file:///libggml-htp-v%d.so?htp_iface_skel_handle_invoke&_modver=1.0", arch)
}

// SessionURI is the fallback form of the session URI when FASTRPC_GET_URI
// fails: the module URI with the domain name and session id appended.
func SessionURI(arch int, domain string, session uint32) string {
	return fmt.Sprintf("%s&_dom=%s&_session=%d", SkelURI(arch), domain, session)
}
