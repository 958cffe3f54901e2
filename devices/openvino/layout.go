package openvino

// The C structs of the OpenVINO C API that cross the boundary, laid out as
// the real headers have them on LP64 (testdata/facts/c-api-layouts-2025.0.0.txt,
// measured with cc from the 2025.0.0 headers; the 2025.1-2026.1.2 bindgen
// layouts of testdata/facts/c-api-versions.txt are the same). layout_test.go
// reads that file and checks every size and offset against it.

// ovShape is ov_shape_t {int64_t rank; int64_t* dims;}: 16 bytes.
type ovShape struct {
	rank int64
	dims uintptr
}

// ovVersion is ov_version_t {const char* buildNumber; const char* description;}.
type ovVersion struct {
	buildNumber uintptr
	description uintptr
}

// ovAvailableDevices is ov_available_devices_t {char** devices; size_t size;}.
type ovAvailableDevices struct {
	devices uintptr
	size    uint64
}

// ovProfilingInfo is ov_profiling_info_t: status (int enum, 4 bytes of
// padding after it), real_time and cpu_time in microseconds, and three
// strings.
type ovProfilingInfo struct {
	status   int32
	_        int32
	realTime int64
	cpuTime  int64
	nodeName uintptr
	execType uintptr
	nodeType uintptr
}

// ovProfilingInfoList is ov_profiling_info_list_t {ov_profiling_info_t* profiling_infos; size_t size;}.
type ovProfilingInfoList struct {
	infos uintptr
	size  uint64
}
