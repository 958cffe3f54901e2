package htp

import (
	"bufio"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// cLayout is what testdata/layouts-d99724f.txt (a copy of
// native-facts/ggml-htp-d99724f/layouts.txt, printed by a C program from
// the public headers) says about the structs, enums and defines.
type cLayout struct {
	size    map[string]int
	fields  map[string][]cField
	enums   map[string]int64
	defines map[string]int64
}

type cField struct {
	name         string
	offset, size int
}

func readLayouts(t *testing.T) cLayout {
	f, err := os.Open("testdata/layouts-d99724f.txt")
	require.NoError(t, err)
	defer f.Close()
	l := cLayout{size: map[string]int{}, fields: map[string][]cField{}, enums: map[string]int64{}, defines: map[string]int64{}}
	reSize := regexp.MustCompile(`^sizeof\(struct (\w+)\) = (\d+)$`)
	reOff := regexp.MustCompile(`^  offsetof\((\w+), (\w+)\) = (\d+)$`)
	reFSize := regexp.MustCompile(`^  sizeof\((\w+)\.(\w+)\) = (\d+)$`)
	reEnum := regexp.MustCompile(`^  (HTP_\w+) = (\d+)$`)
	reDef := regexp.MustCompile(`^#define (\w+) = (\d+)$`)
	atoi := func(s string) int64 { n, err := strconv.ParseInt(s, 10, 64); require.NoError(t, err); return n }
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := reSize.FindStringSubmatch(line); m != nil {
			l.size[m[1]] = int(atoi(m[2]))
		} else if m := reOff.FindStringSubmatch(line); m != nil {
			l.fields[m[1]] = append(l.fields[m[1]], cField{name: m[2], offset: int(atoi(m[3]))})
		} else if m := reFSize.FindStringSubmatch(line); m != nil {
			fs := l.fields[m[1]]
			require.NotEmpty(t, fs)
			require.Equal(t, m[2], fs[len(fs)-1].name)
			fs[len(fs)-1].size = int(atoi(m[3]))
		} else if m := reEnum.FindStringSubmatch(line); m != nil {
			l.enums[m[1]] = atoi(m[2])
		} else if m := reDef.FindStringSubmatch(line); m != nil {
			l.defines[m[1]] = atoi(m[2])
		}
	}
	require.NoError(t, sc.Err())
	return l
}

func norm(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

// TestLayouts compares every wire struct, field by field in order (name,
// offset, size), with the C layout of the public headers.
func TestLayouts(t *testing.T) {
	l := readLayouts(t)
	for c, v := range map[string]any{
		"htp_buf_desc": BufDesc{}, "htp_tensor": Tensor{}, "htp_op_desc": OpDesc{}, "htp_prof_desc": ProfDesc{},
		"htp_trace_desc": TraceDesc{}, "htp_opbatch_req": OpBatchReq{}, "htp_opbatch_rsp": OpBatchRsp{},
		"fastdiv_values": FastDiv{}, "htp_mm_kernel_params": MMKernelParams{}, "htp_fa_kernel_params": FAKernelParams{},
		"htp_unary_kernel_params": UnaryKernelParams{},
	} {
		typ := reflect.TypeOf(v)
		require.Contains(t, l.size, c)
		require.Equal(t, l.size[c], int(typ.Size()), "sizeof %s", c)
		cf := l.fields[c]
		require.Equal(t, len(cf), typ.NumField(), "fields of %s", c)
		for i, f := range cf {
			g := typ.Field(i)
			require.Equal(t, norm(f.name), norm(g.Name), "%s field %d", c, i)
			require.Equal(t, f.offset, int(g.Offset), "offsetof(%s, %s)", c, f.name)
			require.Equal(t, f.size, int(g.Type.Size()), "sizeof(%s.%s)", c, f.name)
		}
	}
	// Upstream asserts every struct the host copies into shared memory
	// is a multiple of 8 bytes.
	for _, s := range []uintptr{unsafe.Sizeof(BufDesc{}), unsafe.Sizeof(Tensor{}), unsafe.Sizeof(OpDesc{}),
		unsafe.Sizeof(ProfDesc{}), unsafe.Sizeof(OpBatchReq{}), unsafe.Sizeof(OpBatchRsp{})} {
		require.Zero(t, s%8)
	}
}

func TestEnumsAndDefines(t *testing.T) {
	l := readLayouts(t)
	for op := OpMul; op <= OpInvalid; op++ {
		v, ok := l.enums["HTP_OP_"+op.String()]
		require.True(t, ok, "HTP_OP_%s", op)
		require.EqualValues(t, v, op, "HTP_OP_%s", op)
	}
	// Every public opcode has a Go name.
	n := 0
	for k := range l.enums {
		if strings.HasPrefix(k, "HTP_OP_") && !strings.HasPrefix(k, "HTP_OPSTAGE") {
			n++
		}
	}
	require.Equal(t, int(OpInvalid)+1, n)
	for op := OpFence; op <= OpAllreduceAdd; op++ {
		require.True(t, op.FenceOnly())
		_, public := l.enums["HTP_OP_"+op.String()]
		require.False(t, public, "%s is public now: take its value", op)
	}
	require.False(t, OpCpy.FenceOnly())

	for name, v := range map[string]int64{
		"HTP_STATUS_OK": int64(StatusOK), "HTP_STATUS_INTERNAL_ERR": int64(StatusInternalErr),
		"HTP_STATUS_NO_SUPPORT": int64(StatusNoSupport), "HTP_STATUS_INVAL_PARAMS": int64(StatusInvalParams),
		"HTP_STATUS_VTCM_TOO_SMALL": int64(StatusVTCMTooSmall),
		"HTP_TYPE_F32":              TypeF32, "HTP_TYPE_F16": TypeF16, "HTP_TYPE_Q4_0": TypeQ4_0, "HTP_TYPE_Q4_1": TypeQ4_1,
		"HTP_TYPE_Q8_0": TypeQ8_0, "HTP_TYPE_IQ4_NL": TypeIQ4_NL, "HTP_TYPE_I32": TypeI32, "HTP_TYPE_I64": TypeI64,
		"HTP_TYPE_MXFP4": TypeMXFP4, "HTP_TYPE_Q4_0_TILED": TypeQ4_0Tiled, "HTP_TYPE_Q4_1_TILED": TypeQ4_1Tiled,
		"HTP_TYPE_Q8_0_TILED": TypeQ8_0Tiled, "HTP_TYPE_MXFP4_TILED": TypeMXFP4Tiled, "HTP_TYPE_INVALID": TypeInvalid,
		"HTP_TENSOR_COMPUTE": TensorCompute, "HTP_TENSOR_DIRTY": TensorDirty, "HTP_OPFLAGS_SKIP_COMPUTE": OpFlagSkipCompute,
		"HTP_PROF_DISABLED": ProfDisabled, "HTP_PROF_BASIC": ProfBasic, "HTP_PROF_PMU": ProfPMU, "HTP_PROF_TRACE": ProfTrace,
		"HTP_TRACE_EVT_DMA": 0, "HTP_TRACE_EVT_HMX_COMP": 40,
	} {
		got, ok := l.enums[name]
		require.True(t, ok, name)
		require.Equal(t, got, v, name)
	}
	for name, v := range map[string]int64{
		"HTP_OP_MAX_DIMS": MaxDims, "HTP_OP_MAX_INPUTS": MaxInputs, "HTP_OP_MAX_OUTPUTS": MaxOutputs,
		"HTP_OP_MAX_PARAMS": MaxParams, "HTP_OP_MAX_KERN_PARAMS": MaxKernParams, "HTP_OP_MAX_BUFS": MaxBufs,
		"HTP_OP_MAX_TENSORS": MaxTensors, "HTP_OP_MAX_VMEM_DEFAULT": MaxVmemDefault, "HTP_MMAP_MAX_VMEM": MmapMaxVmem,
		"HTP_MAX_NTHREADS": MaxNThreads, "HTP_TRACE_MAX_EVENTS": TraceMaxEvents, "HTP_PROF_PMU_NCNT": ProfPMUNCnt,
		"QK_Q4_0_TILED": QK4_0Tiled, "QK_Q8_0_TILED": QK8_0Tiled, "QK_MXFP4_TILED": QKMXFP4Tile,
	} {
		got, ok := l.defines[name]
		require.True(t, ok, name)
		require.Equal(t, got, v, name)
	}
	nTrace := 0
	for name, v := range l.enums {
		if ev, ok := strings.CutPrefix(name, "HTP_TRACE_EVT_"); ok {
			require.Equal(t, ev, TraceEventName(uint16(v)), "trace event %d", v)
			nTrace++
		}
	}
	require.Equal(t, len(traceNames), nTrace, "every trace event of the header is named")
	require.Equal(t, "UNKNOWN", TraceEventName(99))
}

func TestFastDiv(t *testing.T) {
	for _, d := range []uint32{1, 2, 3, 7, 32, 100, 4095, 1 << 20, 1<<31 + 5} {
		fd := NewFastDiv(d)
		// The DSP divides n by (mulhi(n, mp) + n) >> l.
		for _, n := range []uint32{0, 1, d - 1, d, d + 1, 12345, 1 << 30, 1<<31 - 1} {
			hi := uint32((uint64(n) * uint64(fd.MP)) >> 32)
			q := uint32((uint64(hi) + uint64(n)) >> fd.L)
			require.Equal(t, n/d, q, "n=%d d=%d", n, d)
		}
	}
}
