package fastrpc

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
)

// answersFile records what the open-source libcdsprpc answers on a machine
// without a DSP; its "answer" lines are the oracle of TestRealAnswers.
const answersFile = "../../testdata/facts/fastrpc-nodsp-answers-29851fd.txt"

const htpURI = "file:///libggml-htp-v73.so?htp_iface_skel_handle_invoke&_modver=1.0&_dom=cdsp&_session=0"

// otherHandle is a handle no library handed out.
const otherHandle = 0x1234

// DOMAIN_SUPPORT of remote_dsp_attributes.
const attrDomainSupport = 0

// probe makes one recorded call and says what it answered, as the file
// writes it: the code, then the effect the file notes for that call.
type probe func(t *testing.T, l *Lib) string

func code(r int32) string {
	if r == 0 {
		return "0"
	}
	return fmt.Sprintf("0x%x", uint32(r))
}

func dspInfo(attr uint32, size uintptr) probe {
	return func(t *testing.T, l *Lib) string {
		// A larger buffer than the struct, so a length of 100 reads and
		// writes memory we own.
		var buf [128]byte
		c := (*DSPCapability)(unsafe.Pointer(&buf[0]))
		*c = DSPCapability{Domain: DomainCDSP, AttributeID: attr, Capability: 7}
		s := code(call(l.hControl, GetDSPInfo, uintptr(unsafe.Pointer(&buf[0])), size))
		if size == unsafe.Sizeof(*c) && c.Capability == 0 {
			s += " capability-zeroed"
		}
		return s
	}
}

func mmapFlags(flags uint32) probe {
	return func(t *testing.T, l *Lib) string {
		return code(call(l.mmap, DomainCDSP, 5, 0, 0, 4096, uintptr(flags)))
	}
}

var probes = map[string]probe{
	"remote_handle64_open htp-uri": func(t *testing.T, l *Lib) string {
		u := append([]byte(htpURI), 0)
		h := uint64(0xdeadbeef)
		s := code(call(l.hOpen, uintptr(unsafe.Pointer(&u[0])), uintptr(unsafe.Pointer(&h))))
		if h == 0xdeadbeef {
			s += " handle-unchanged"
		}
		return s
	},
	"dspqueue_create cdsp": func(t *testing.T, l *Lib) string {
		q := uintptr(0xdeadbeef)
		s := code(call(l.qCreate, DomainCDSP, 0, 4096, 4096, 0, 0, 0, uintptr(unsafe.Pointer(&q))))
		if q == 0 {
			s += " queue-null"
		}
		return s
	},
	"fastrpc_mmap flags=0":  mmapFlags(0),
	"fastrpc_mmap flags=17": mmapFlags(MapFDExtended),
	"fastrpc_munmap flags=0": func(t *testing.T, l *Lib) string {
		return code(call(l.munmap, DomainCDSP, 5, 0, 4096))
	},
	"remote_handle64_invoke handle=0": func(t *testing.T, l *Lib) string {
		return code(call(l.hInvoke, 0, 0x08000100, 0))
	},
	"remote_handle64_invoke handle=other": func(t *testing.T, l *Lib) string {
		out := [24]byte{0xa5, 0xa5}
		args := RemoteBuf{Pv: uintptr(unsafe.Pointer(&out[0])), NLen: uintptr(len(out))}
		s := code(call(l.hInvoke, otherHandle, 0x08000100, uintptr(unsafe.Pointer(&args))))
		if out == [24]byte{0xa5, 0xa5} {
			s += " output-untouched"
		}
		return s
	},
	"remote_handle64_close handle=other": func(t *testing.T, l *Lib) string {
		return code(call(l.hClose, otherHandle))
	},
	"remote_handle64_control handle=0 LATENCY": func(t *testing.T, l *Lib) string {
		a := ControlLatencyArg{Enable: RPCPMQoS}
		return code(call(l.h64Control, 0, ControlLatency, uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a)))
	},
	"remote_handle_control LATENCY": func(t *testing.T, l *Lib) string {
		a := ControlLatencyArg{Enable: RPCPMQoS}
		return code(call(l.hControl, ControlLatency, uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a)))
	},
	"remote_handle_control GET_DSP_INFO attr=ARCH_VER len=12":       dspInfo(AttrArchVer, 12),
	"remote_handle_control GET_DSP_INFO attr=ARCH_VER len=8":        dspInfo(AttrArchVer, 8),
	"remote_handle_control GET_DSP_INFO attr=ARCH_VER len=100":      dspInfo(AttrArchVer, 100),
	"remote_handle_control GET_DSP_INFO attr=DOMAIN_SUPPORT len=12": dspInfo(attrDomainSupport, 12),
	"remote_session_control GET_EFFECTIVE_DOMAIN_ID session=0": func(t *testing.T, l *Lib) string {
		eff, err := l.EffectiveDomain("cdsp")
		return errCode(err) + fmt.Sprintf(" effective=%d", eff)
	},
	"remote_session_control RESERVE_NEW_SESSION": func(t *testing.T, l *Lib) string {
		s, eff, err := l.ReserveSession("cdsp", "probe", 0)
		return errCode(err) + fmt.Sprintf(" effective=%d session=%d", eff, s)
	},
	"remote_session_control UNSIGNED_MODULE": func(t *testing.T, l *Lib) string {
		return errCode(l.EnableUnsignedModules(DomainCDSP))
	},
	"remote_session_control GET_URI uri-len=4": func(t *testing.T, l *Lib) string {
		dom, mod, buf := []byte("cdsp\x00"), []byte(htpURI[:48]+"\x00"), make([]byte, 4)
		a := GetURIArg{DomainName: uintptr(unsafe.Pointer(&dom[0])), DomainNameLen: 4,
			ModuleURI: uintptr(unsafe.Pointer(&mod[0])), ModuleURILen: 48,
			URI: uintptr(unsafe.Pointer(&buf[0])), URILen: uint32(len(buf))}
		return code(call(l.sessControl, GetURI, uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a)))
	},
	"rpcmem_alloc heap=25 flags=1 size=1048576": func(t *testing.T, l *Lib) string {
		r, _, _ := purego.SyscallN(l.rpcmemAlloc, HeapIDSystem, DefaultFlags, 1<<20)
		if r != 0 {
			purego.SyscallN(l.rpcmemFree, r)
			return "a block"
		}
		return "NULL"
	},
}

func errCode(err error) string {
	if err == nil {
		return "0"
	}
	if e, ok := err.(Error); ok {
		return code(int32(e))
	}
	return err.Error()
}

// recordedAnswers reads the "answer" lines: call and arguments -> answer.
func recordedAnswers(t *testing.T) map[string]string {
	f, err := os.Open(answersFile)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "answer ")
		if !ok {
			continue
		}
		call, ans, ok := strings.Cut(line, " -> ")
		require.True(t, ok, "answer line without ->: %q", line)
		out[call] = ans
	}
	require.NoError(t, sc.Err())
	return out
}

// TestRealAnswers replays every call the answers file records against
// the double in its no-DSP mode (or against GGML_HEXAGON_LIB, which is how
// a user checks a libcdsprpc of their own on a machine without a DSP) and
// requires the recorded code and effect, so the double cannot drift from
// the real library on the paths a DSP would make reachable.
func TestRealAnswers(t *testing.T) {
	rec := recordedAnswers(t)
	for k := range probes {
		require.Contains(t, rec, k, "a probe with no recorded answer")
	}
	env := os.Getenv("GGML_HEXAGON_LIB")
	if env == "" {
		d := double.Open(t, double.NoSysReq)
		d.Configure(t, "nodsp=1")
		env = d.Path
	}
	l, err := Open(env)
	require.NoError(t, err)
	defer l.Close()
	var c DSPCapability
	c.Domain, c.AttributeID = DomainCDSP, attrDomainSupport
	if l.HandleControl(GetDSPInfo, unsafe.Pointer(&c), unsafe.Sizeof(c)) == nil && c.Capability != 0 {
		t.Skipf("%s reports a DSP; the answers were recorded without one", l.Path())
	}
	for k, want := range rec {
		p, ok := probes[k]
		require.True(t, ok, "no probe for the recorded answer %q", k)
		require.Equal(t, want, p(t, l), "%s (%s)", k, l.Path())
	}
}
