package htp

import (
	"encoding/binary"
	"fmt"
)

// Method indices of interface htp_iface (htp_iface.idl at d99724f). A qaic
// stub reserves 0 (open) and 1 (close), which are remote_handle64_open and
// remote_handle64_close, and numbers the declared methods from 2 in order.
// An inserted method shifts every later index, and a DSP library calls
// the wrong method without an error: only a real device can confirm them
// (a sane Hwinfo is the cheap check).
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

// StartCall is htp_iface_start(sess_id, dsp_queue_id, n_hvx, n_hmx,
// max_vmem) of the public IDL: 32 bytes, u32 sess_id @0, u64 queue @8, u32
// n_hvx @16, u32 n_hmx @20, u64 max_vmem @24. Upstream's start adds the
// VTCM size and power mode, whose IDL is not public; they are not sent.
func StartCall(sessID uint32, queueID uint64, nHVX, nHMX uint32, maxVmem uint64) Call {
	b := make([]byte, 32)
	le.PutUint32(b[0:], sessID)
	le.PutUint64(b[8:], queueID)
	le.PutUint32(b[16:], nHVX)
	le.PutUint32(b[20:], nHMX)
	le.PutUint64(b[24:], maxVmem)
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
