package backend

import (
	"fmt"
	"os"
	"strings"
)

// EnvDevice names the environment variable that chooses devices at run
// time: device names, comma-separated, most preferred first, each
// optionally with parameters for that device after a colon, as
// key=value pairs separated by semicolons:
//
//	GGML_DEVICE="OPENVINO0:device=NPU;cache_dir=/tmp/ov,CPU"
//
// asks for OPENVINO0 with parameters device=NPU and cache_dir=/tmp/ov,
// then the CPU. A comma always ends a device's entry, so values cannot
// hold commas (or semicolons). A colon followed by digits only belongs to
// the name, as in the Hexagon device HTP0:1 (virtual session 1 of core
// 0): "HTP0:1:dsp_errors=per_call" is HTP0:1 with one parameter.
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
	// Params are parameters for particular devices, by device name:
	// GGML_DEVICE's "NAME:key=value;key=value" entries. A device reads
	// its own with DeviceParams; its Init returns a *ParamError (wrapping
	// ErrArgument) for a key it does not know or a value it does not
	// accept, so a typo is not ignored.
	Params map[string]map[string]string
}

// ParamError is a device parameter (Options.Params) that a device's Init
// refuses: a key the device does not know, or a value its key does not
// accept. It wraps ErrArgument, and its text names the device, the key
// and the value.
type ParamError struct {
	Device, Key, Value string
	// Unknown is set when the device has no parameter Key.
	Unknown bool
	// Want says what is accepted: the device's keys when Unknown, else
	// the values Key takes.
	Want string
}

// UnknownParam is the error for key=value given to a device that has no
// parameter key; keys are the parameters it has (none when empty).
func UnknownParam(device, key, value string, keys ...string) error {
	want := "it takes none"
	if len(keys) > 0 {
		want = "it has " + strings.Join(keys, ", ")
	}
	return &ParamError{Device: device, Key: key, Value: value, Unknown: true, Want: want}
}

// BadParam is the error for a value of a device's parameter key that it
// does not accept; want says what it accepts ("a whole number").
func BadParam(device, key, value, want string) error {
	return &ParamError{Device: device, Key: key, Value: value, Want: want}
}

func (e *ParamError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("%v: device %s has no parameter %q (given %s=%q; %s)", ErrArgument, e.Device, e.Key, e.Key, e.Value, e.Want)
	}
	return fmt.Sprintf("%v: device %s: parameter %s=%q: want %s", ErrArgument, e.Device, e.Key, e.Value, e.Want)
}

// Unwrap returns ErrArgument.
func (e *ParamError) Unwrap() error { return ErrArgument }

// DeviceParams returns the parameters Params holds for the named device
// (the name's case does not matter), or nil.
func (o Options) DeviceParams(name string) map[string]string {
	if p, ok := o.Params[name]; ok {
		return p
	}
	for k, p := range o.Params {
		if strings.EqualFold(k, name) {
			return p
		}
	}
	return nil
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

// OptionsFromEnv returns Options with Devices and Params taken from
// GGML_DEVICE. A malformed value is an error, not a silent fallback, so a
// typo does not run a model on the wrong device unnoticed.
func OptionsFromEnv() (Options, error) {
	o, err := ParseDeviceSelection(os.Getenv(EnvDevice))
	if err != nil {
		return Options{}, fmt.Errorf("%s: %w", EnvDevice, err)
	}
	return o, nil
}

// ParseDeviceList returns the device names of a GGML_DEVICE value (see
// ParseDeviceSelection), without their parameters.
func ParseDeviceList(s string) ([]string, error) {
	o, err := ParseDeviceSelection(s)
	return o.Devices, err
}

// ParseDeviceSelection parses a GGML_DEVICE value: comma-separated
// entries, each a device name, optionally followed by a colon and
// key=value parameters separated by semicolons. Spaces around names, keys
// and values are trimmed. An empty string selects nothing. An empty
// name, a name listed twice, a colon with no parameters, a parameter
// without "=", an empty key or value, a key given twice, or a key with
// characters other than letters, digits, '_', '-' and '.' is an error
// wrapping ErrArgument.
func ParseDeviceSelection(s string) (Options, error) {
	var o Options
	if strings.TrimSpace(s) == "" {
		return o, nil
	}
	seen := map[string]bool{}
	for _, entry := range strings.Split(s, ",") {
		name, params, hasParams := cutDeviceName(entry)
		name = strings.TrimSpace(name)
		if name == "" {
			return Options{}, fmt.Errorf("%w: empty device name in %q", ErrArgument, s)
		}
		key := strings.ToUpper(name)
		if seen[key] {
			return Options{}, fmt.Errorf("%w: device %q listed twice in %q", ErrArgument, name, s)
		}
		seen[key] = true
		o.Devices = append(o.Devices, name)
		if !hasParams {
			continue
		}
		p, err := parseParams(params)
		if err != nil {
			return Options{}, fmt.Errorf("%w: device %s in %q: %w", ErrArgument, name, s, err)
		}
		if o.Params == nil {
			o.Params = map[string]map[string]string{}
		}
		o.Params[name] = p
	}
	return o, nil
}

// cutDeviceName splits a GGML_DEVICE entry into the device name and its
// parameters at the first colon not followed by a digits-only part (those
// colons are part of names such as HTP0:1).
func cutDeviceName(entry string) (name, params string, hasParams bool) {
	fields := strings.Split(entry, ":")
	i := 1
	for i < len(fields) && isDigits(strings.TrimSpace(fields[i])) {
		i++
	}
	if i == len(fields) {
		return entry, "", false
	}
	return strings.Join(fields[:i], ":"), strings.Join(fields[i:], ":"), true
}

func isDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// parseParams parses "key=value;key=value".
func parseParams(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no parameters after ':'")
	}
	p := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok:
			return nil, fmt.Errorf("parameter %q is not key=value", strings.TrimSpace(kv))
		case k == "":
			return nil, fmt.Errorf("parameter %q has no key", strings.TrimSpace(kv))
		case strings.IndexFunc(k, func(r rune) bool { return !isKeyRune(r) }) >= 0:
			return nil, fmt.Errorf("parameter key %q: only letters, digits, '_', '-' and '.'", k)
		case v == "":
			return nil, fmt.Errorf("parameter %s has no value", k)
		}
		if _, dup := p[k]; dup {
			return nil, fmt.Errorf("parameter %s given twice", k)
		}
		p[k] = v
	}
	return p, nil
}

func isKeyRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
}
