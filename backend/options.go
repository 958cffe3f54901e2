package backend

import (
	"fmt"
	"os"
	"strings"
)

// EnvDevice names the environment variable that chooses devices at run
// time: device names, comma-separated, most preferred first
// ("OPENVINO0,CPU").
const EnvDevice = "GGML_DEVICE"

// Options choose devices and configure the backends they start. Programs
// set them directly or read them from the environment with
// OptionsFromEnv; device packages read the fields that concern them.
type Options struct {
	// Devices are device names in order of preference (case does not
	// matter). Init starts the first that is available and starts; empty
	// means the best device by type (GPU, then IGPU, then CPU).
	Devices []string
	// Threads is the number of threads CPU work is split across; 0 lets
	// the device choose (all the CPUs the Go runtime uses). Negative
	// counts and counts above MaxThreads are refused (CheckThreads).
	Threads int
}

// MaxThreads is the largest thread count a backend accepts
// (GGML_MAX_N_THREADS).
const MaxThreads = 512

// CheckThreads returns an ErrArgument error unless n is a valid thread
// count: 0 (the device's default) to MaxThreads. Init checks
// Options.Threads with it; devices check counts set on a backend.
func CheckThreads(n int) error {
	if n < 0 || n > MaxThreads {
		return fmt.Errorf("%w: %d threads, want 0 (the default) to %d", ErrArgument, n, MaxThreads)
	}
	return nil
}

// OptionsFromEnv returns Options with Devices taken from GGML_DEVICE.
// A malformed list is an error, not a silent fallback, so a typo does not
// run a model on the wrong device unnoticed.
func OptionsFromEnv() (Options, error) {
	devs, err := ParseDeviceList(os.Getenv(EnvDevice))
	if err != nil {
		return Options{}, fmt.Errorf("%s: %w", EnvDevice, err)
	}
	return Options{Devices: devs}, nil
}

// ParseDeviceList splits a comma-separated list of device names, trimming
// spaces. An empty string is an empty list; an empty name within a list,
// or a name listed twice, is an error.
func ParseDeviceList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var names []string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		n := strings.TrimSpace(f)
		if n == "" {
			return nil, fmt.Errorf("%w: empty device name in %q", ErrArgument, s)
		}
		key := strings.ToUpper(n)
		if seen[key] {
			return nil, fmt.Errorf("%w: device %q listed twice in %q", ErrArgument, n, s)
		}
		seen[key] = true
		names = append(names, n)
	}
	return names, nil
}
