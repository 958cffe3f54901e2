package openvino

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// openCLFacts reads testdata/facts/opencl.txt: name -> value.
func openCLFacts(t *testing.T) map[string]int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "facts", "opencl.txt"))
	require.NoError(t, err)
	defer f.Close()
	m := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		require.Len(t, fs, 2, line)
		v, err := strconv.ParseInt(fs[1], 0, 64)
		require.NoError(t, err, line)
		m[fs[0]] = v
	}
	require.NoError(t, sc.Err())
	return m
}

// The OpenCL values of the binding, its error names and the double's
// _Static_asserts are the facts' (each written from the specifications,
// none from the others); the one array shared with C, the queue's
// properties, has cl_queue_properties' size. No struct is shared with
// OpenCL.
func TestOpenCLFacts(t *testing.T) {
	facts := openCLFacts(t)
	for name, v := range map[string]int64{
		"CL_SUCCESS": clSuccess, "CL_DEVICE_EXTENSIONS": clDeviceExtensions, "CL_DEVICE_PLATFORM": clDevicePlatform,
		"CL_CONTEXT_DEVICES": clContextDevices, "CL_QUEUE_PROPERTIES": clQueueProperties,
		"CL_QUEUE_PROFILING_ENABLE": clQueueProfilingEnable, "CL_TRUE": clTrue,
	} {
		require.Contains(t, facts, name)
		require.Equal(t, facts[name], v, name)
	}
	for code, name := range clErrorNames {
		require.Contains(t, facts, name)
		require.EqualValues(t, facts[name], code, name)
	}
	require.EqualValues(t, facts["sizeof.cl_int"], unsafe.Sizeof(int32(0)))
	require.EqualValues(t, facts["sizeof.cl_queue_properties"], unsafe.Sizeof(uint64(0)), "newCLQueue's properties")

	src, err := os.ReadFile(filepath.Join("testdata", "ovd_ocl.c"))
	require.NoError(t, err)
	asserts := regexp.MustCompile(`_Static_assert\((CL_\w+) == (-?\w+),`).FindAllSubmatch(src, -1)
	require.GreaterOrEqual(t, len(asserts), 15)
	for _, a := range asserts {
		name := string(a[1])
		v, err := strconv.ParseInt(string(a[2]), 0, 64)
		require.NoError(t, err)
		require.Contains(t, facts, name, "ovd_ocl.c pins %s to no fact", name)
		require.Equal(t, facts[name], v, name)
	}
}

// An OpenCL error carries the code's name and is an ErrNative.
func TestCLErrorNamesTheCode(t *testing.T) {
	err := error(&CLError{Func: "clEnqueueMemFillINTEL", Code: -30})
	require.EqualError(t, err, "openvino: clEnqueueMemFillINTEL: CL_INVALID_VALUE (-30)")
	require.ErrorIs(t, err, ErrNative)
	require.Contains(t, (&CLError{Func: "f", Code: -1001}).Error(), "cl_int -1001")
}

// Where no libOpenCL is installed (this machine: no GPU, no OpenCL; the
// real runtime's GPU plugin fails to load for the same reason), loading
// it is an error naming the loader's message, beside the OpenVINO library
// and by name: on the real runtime's folder when GGML_OPENVINO_LIB names
// it, else the double built without its OpenCL.
func TestOpenCLAbsent(t *testing.T) {
	if runtime.GOOS == "darwin" {
		_, err := loadOpenCL("")
		require.ErrorIs(t, err, errNoOpenCLDarwin)
		return
	}
	if l, err := dynlib.Open(openCLNames()[0]); err == nil {
		l.Close()
		t.Skip("this machine has an OpenCL library: the absent case cannot be shown")
	}
	lib := realLibrary()
	if fi, err := os.Stat(lib); err == nil && fi.IsDir() {
		lib = filepath.Join(lib, "libopenvino_c.so") // the folder is what loadOpenCL looks in
	}
	if lib == "" {
		lib = buildDouble(t, "--no-opencl")
	}
	_, err := loadOpenCL(lib)
	t.Logf("%v", err)
	require.ErrorIs(t, err, dynlib.ErrOpen)
	if runtime.GOOS == "linux" {
		require.ErrorContains(t, err, "libOpenCL.so.1: cannot open shared object file")
	}
	require.ErrorContains(t, err, "beside OpenVINO")
}
