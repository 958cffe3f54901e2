package main

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/devices/cpu"
)

func TestDevicesCommand(t *testing.T) {
	code, out, errOut := runCmd("devices")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, regexp.MustCompile(`(?m)^CPU +CPU +available +(\S+ GiB|unknown) +buffer_from_host_ptr,mmap +\S`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^CPU: kernel level [^;]*\(in use\)[^;]*; vec_dot `), out)
	require.Contains(t, out, "CPU: "+cpu.KernelReport()+"\n")

	code, _, errOut = runCmd("devices", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "unexpected arguments")
}

func TestPrintDevices(t *testing.T) {
	devs := []backend.Device{
		cpu.Device(),
		backend.NewUnavailable("OPENVINO0", "OpenVINO", backend.DeviceGPU, backend.Reason{
			Kind: backend.LibraryNotFound, Library: "libopenvino_c.so",
			Tried: []string{"/opt/intel/openvino/runtime/lib/intel64/libopenvino_c.so", "libopenvino_c.so (system search path)"},
			Err:   errors.New("dynlib: library not found: libopenvino_c.so; tried /opt/intel/openvino/runtime/lib/intel64/libopenvino_c.so, ..."),
		}),
		backend.NewUnavailable("HTP0", "Hexagon", backend.DeviceAccel, backend.Reason{
			Kind: backend.SymbolMissing, Library: "/usr/lib/libcdsprpc.so", Symbol: "dspqueue_create",
		}),
		backend.NewUnavailable("OPENVINO1", "OpenVINO", backend.DeviceGPU, backend.Reason{
			Kind: backend.VersionTooOld, Library: "libopenvino_c.so", Version: "2023.3", MinVersion: "2024.0",
		}),
		backend.NewUnavailable("OPENVINO2", "OpenVINO NPU", backend.DeviceAccel, backend.Reason{
			Kind: backend.InitFailed, Err: errors.New("no NPU driver"),
		}),
	}
	var b bytes.Buffer
	printDevices(&b, devs)
	out := b.String()
	lines := strings.Split(out, "\n")
	require.Regexp(t, `^OPENVINO0 +GPU +unavailable +- +- +OpenVINO$`, lines[2])
	require.Regexp(t, `^HTP0 +ACCEL +unavailable`, lines[3])
	for _, want := range []string{
		"OPENVINO0: library not found (libopenvino_c.so)\n",
		"  searched: /opt/intel/openvino/runtime/lib/intel64/libopenvino_c.so\n",
		"  searched: libopenvino_c.so (system search path)\n",
		"HTP0: symbol missing (/usr/lib/libcdsprpc.so)\n  missing symbol: dspqueue_create\n",
		"OPENVINO1: version too old (libopenvino_c.so)\n  version 2023.3, need 2024.0 or newer\n",
		"OPENVINO2: init failed\n  error: no NPU driver\n",
	} {
		require.Contains(t, out, want)
	}
	require.Equal(t, 1, strings.Count(out, "/opt/intel/openvino"), "the search list once, not again in an error line")

	b.Reset()
	printDevices(&b, nil)
	require.Contains(t, b.String(), "no devices registered")
}

func TestMemoryFormat(t *testing.T) {
	require.Equal(t, "unknown", memory(0, 0))
	require.Equal(t, "1.5/2.0 GiB", memory(3<<29, 2<<30))
}

type reportingDevice struct{ backend.Device }

func (reportingDevice) WeightReport() string { return "weights held 1.5 MiB" }

// A device that reports its weight memory gets a line of its own.
func TestDevicesWeightReport(t *testing.T) {
	var b strings.Builder
	writeWeightReports(&b, []backend.Device{
		backend.NewUnavailable("X0", "x", backend.DeviceGPU, backend.Reason{Kind: backend.InitFailed}),
		reportingDevice{backend.NewUnavailable("OPENVINO0", "OpenVINO", backend.DeviceGPU, backend.Reason{Kind: backend.InitFailed})},
	})
	require.Equal(t, "OPENVINO0: weights held 1.5 MiB\n", b.String())
}
