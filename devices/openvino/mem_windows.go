package openvino

import "log/slog"

// spillKeeps: spillMap gives anonymous memory on windows.
const spillKeeps = false

// spillMap is not available on windows, as in upstream: the setting is
// ignored with a warning and the buffer is ordinary host memory.
func spillMap(_ string, size uint64) ([]byte, func() error, error) {
	slog.Warn("openvino: GGML_OPENVINO_SPILL_DIR is not supported on Windows, ignoring")
	return hostAlloc(size)
}
