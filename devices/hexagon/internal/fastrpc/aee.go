// Package fastrpc binds Qualcomm's libcdsprpc (FastRPC, rpcmem, dspqueue)
// through purego, without cgo: the library is found and opened with
// internal/dynlib, its functions called with purego.SyscallN, and the
// control structs it reads are Go mirrors of the public headers
// (quic/fastrpc inc/remote.h, rpcmem.h, dspqueue.h) with layout tests.
//
// What the real library does was measured on x86-64 without a DSP
// (native-facts/fastrpc); everything else here is verified on the test
// double only. The domain-discovery API (remote_system_request,
// FASTRPC_GET_DOMAINS) is in no public header: its layout is the one the
// reference notes recommend, not verified against a real library.
package fastrpc

import "fmt"

// Error is an AEEResult other than AEE_SUCCESS: a code of AEEStdErr.h.
// Codes the DSP side returns carry AEE_EOFFSET 0x80000400.
type Error uint32

// AEE codes (AEEStdErr.h; AEE_ prefix dropped).
const (
	ESuccess        Error = 0
	EFailed         Error = 1
	ENoMemory       Error = 2
	EVersionNotSupp Error = 4
	EUnableToLoad   Error = 6
	EExpired        Error = 0xC
	EBadState       Error = 0xD
	EBadParm        Error = 0xE
	EUnsupported    Error = 0x14
	EItemBusy       Error = 0x20
	EInvHandle      Error = 0x2C
	ENoSuch         Error = 39
	EInterrupted    Error = 46
	EInvalidDomain  Error = 0x39
	ENoSuchMap      Error = 0x48
	EBadSize        Error = 0x4D
	ECONNRESET      Error = 104
	ENotInitialized Error = 0x6B
	EUnsupportedAPI Error = 0x6C
	EConnRefused    Error = 0x72
	ENoSession      Error = 0x8A
	ERPC            Error = 0x200
	EWouldBlock     Error = 516
	DSPOffset       Error = 0x80000400
)

var aeeNames = map[Error]string{
	EFailed: "EFAILED", ENoMemory: "ENOMEMORY", EVersionNotSupp: "EVERSIONNOTSUPPORT", EUnableToLoad: "EUNABLETOLOAD",
	EExpired: "EEXPIRED", EBadState: "EBADSTATE", EBadParm: "EBADPARM", EUnsupported: "EUNSUPPORTED",
	EItemBusy: "EITEMBUSY", EInvHandle: "EINVHANDLE", ENoSuch: "ENOSUCH", EInterrupted: "EINTERRUPTED",
	EInvalidDomain: "EINVALIDDOMAIN", ENoSuchMap: "ENOSUCHMAP", EBadSize: "EBADSIZE", ECONNRESET: "ECONNRESET",
	ENotInitialized: "ENOTINITIALIZED", EUnsupportedAPI: "EUNSUPPORTEDAPI", EConnRefused: "ECONNREFUSED", ENoSession: "ENOSESSION", ERPC: "ERPC",
	EWouldBlock: "EWOULDBLOCK",
}

// DSP reports whether the code came from the DSP side (AEE_EOFFSET).
func (e Error) DSP() bool { return e >= DSPOffset && e < DSPOffset+0x400 }

// base is the code without the DSP offset.
func (e Error) base() Error {
	if e.DSP() {
		return e - DSPOffset
	}
	return e
}

// Name is the AEE name ("ECONNREFUSED", "DSP EUNABLETOLOAD"), or the hex
// code for one this package does not know.
func (e Error) Name() string {
	n, ok := aeeNames[e.base()]
	if !ok {
		n = fmt.Sprintf("AEE 0x%x", uint32(e.base()))
	}
	if e.DSP() {
		return "DSP " + n
	}
	return n
}

// Meaning says what the code usually means for a program opening a
// Hexagon session, or "" when there is nothing more to say than its name.
func (e Error) Meaning() string {
	if e.DSP() {
		switch e.base() {
		case EUnableToLoad:
			return "the DSP could not load the htp library: libggml-htp-vNN.so not found in the DSP's search path " +
				"(ADSP_LIBRARY_PATH / DSP_LIBRARY_PATH, /vendor/lib/rfsa/adsp, /usr/lib/rfsa/adsp, /dsp), built for another " +
				"arch, or not signed where unsigned modules are not allowed"
		case EUnsupported:
			return "the DSP refused the module: usually an htp library for another Hexagon arch (set GGML_HEXAGON_ARCH) " +
				"or unsigned modules not allowed on this device"
		}
		return "an error the DSP side returned"
	}
	switch e {
	case EConnRefused:
		return "no FastRPC device: /dev/fastrpc-cdsp* is missing or not accessible (no Snapdragon CDSP, no driver, or no permission)"
	case EUnsupported:
		return "not supported here: FastRPC has no DSP to talk to (no device, or the DSP does not offer this call)"
	case ENotInitialized:
		return "FastRPC is not initialised for this domain: no session is open on it (no DSP, or a mapping before the session)"
	case EUnsupportedAPI:
		return "this libcdsprpc or DSP lacks the API (older phones lack domain discovery and capability queries)"
	case EUnableToLoad:
		return "libcdsprpc could not be loaded or lacks a required symbol"
	case EBadParm:
		return "bad parameter: a control struct of the wrong size, or a queue buffer not mapped into this session"
	case ENoSession:
		return "no free FastRPC session on this DSP (too many sessions open)"
	case EItemBusy:
		return "already in use (started twice, or closed with the queue still open)"
	case EInvHandle:
		return "invalid remote handle (the session is not open)"
	case ENoSuch, ECONNRESET:
		return "the DSP process died or the DSP restarted (subsystem restart)"
	case EExpired, EWouldBlock:
		return "nothing yet: timed out or would block"
	case ENoSuchMap:
		return "a buffer the DSP was given is not mapped into this session"
	}
	return ""
}

// Error gives the code in hex, its name and what it usually means.
func (e Error) Error() string {
	s := fmt.Sprintf("fastrpc: 0x%x %s", uint32(e), e.Name())
	if m := e.Meaning(); m != "" {
		s += " (" + m + ")"
	}
	return s
}

// Check turns an AEEResult into nil or an Error.
func Check(r int32) error {
	if r == 0 {
		return nil
	}
	return Error(uint32(r))
}
