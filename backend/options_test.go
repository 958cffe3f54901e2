package backend

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDeviceSelection(t *testing.T) {
	o, err := ParseDeviceSelection("OPENVINO0:device=NPU;cache_dir = /tmp/ov ,CPU")
	require.NoError(t, err)
	require.Equal(t, []string{"OPENVINO0", "CPU"}, o.Devices)
	require.Equal(t, map[string]map[string]string{"OPENVINO0": {"device": "NPU", "cache_dir": "/tmp/ov"}}, o.Params)
	require.Equal(t, map[string]string{"device": "NPU", "cache_dir": "/tmp/ov"}, o.DeviceParams("openvino0"))
	require.Nil(t, o.DeviceParams("CPU"))

	o, err = ParseDeviceSelection("HTP0:ndev=2")
	require.NoError(t, err)
	require.Equal(t, "2", o.DeviceParams("HTP0")["ndev"])

	o, err = ParseDeviceSelection("HTP0,HTP0:1:dsp_errors=per_call, HTP1:2 ,G:1")
	require.NoError(t, err)
	require.Equal(t, []string{"HTP0", "HTP0:1", "HTP1:2", "G:1"}, o.Devices)
	require.Equal(t, map[string]map[string]string{"HTP0:1": {"dsp_errors": "per_call"}}, o.Params)

	for _, bad := range []string{
		"HTP0:1:", "HTP0:1:x", "HTP0::a=1",
		"OPENVINO0:", "OPENVINO0: ", "X:device", "X:=NPU", "X:device=", "X:a=1;a=2", "X:a=1;", "X:a b=1",
		":a=1", "X:a=1,X", "CPU,,GPU",
	} {
		_, err := ParseDeviceSelection(bad)
		require.ErrorIs(t, err, ErrArgument, bad)
	}

	t.Setenv(EnvDevice, "OPENVINO0:device=GPU,CPU")
	o, err = OptionsFromEnv()
	require.NoError(t, err)
	require.Equal(t, "GPU", o.DeviceParams("OPENVINO0")["device"])
	t.Setenv(EnvDevice, "OPENVINO0:device")
	_, err = OptionsFromEnv()
	require.ErrorContains(t, err, EnvDevice)
	require.ErrorContains(t, err, `parameter "device" is not key=value`)
}

// formatSelection writes o back in GGML_DEVICE's syntax, keys sorted.
func formatSelection(o Options) string {
	var entries []string
	for _, n := range o.Devices {
		e := n
		if p := o.Params[n]; p != nil {
			var kvs []string
			for k, v := range p {
				kvs = append(kvs, k+"="+v)
			}
			sort.Strings(kvs)
			e += ":" + strings.Join(kvs, ";")
		}
		entries = append(entries, e)
	}
	return strings.Join(entries, ",")
}

// FuzzParseDeviceSelection: parsing never panics, errors wrap ErrArgument,
// and what parses is clean (trimmed, no separators left in names, keys or
// values) and parses again to the same selection once written back.
func FuzzParseDeviceSelection(f *testing.F) {
	for _, s := range []string{"", "CPU", "OPENVINO0:device=NPU,CPU", "X:a=1;b=2", "X:", "X:a", "X:a=1;a=2", " x : k = v ", "a:b:c=d", "HTP0:1", "HTP0:1:k=v", "H:1:2:k=v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseDeviceSelection(s)
		if err != nil {
			require.ErrorIs(t, err, ErrArgument)
			return
		}
		for _, n := range o.Devices {
			require.NotEmpty(t, n)
			require.Equal(t, strings.TrimSpace(n), n)
			require.NotContains(t, n, ",")
			for _, part := range strings.Split(n, ":")[1:] {
				require.True(t, isDigits(strings.TrimSpace(part)), n)
			}
		}
		for n, p := range o.Params {
			require.Contains(t, o.Devices, n)
			for k, v := range p {
				require.NotEmpty(t, k)
				require.NotEmpty(t, v)
				require.Equal(t, strings.TrimSpace(v), v)
				require.False(t, strings.ContainsAny(k+v, ",;"), "%q=%q", k, v)
			}
		}
		again, err := ParseDeviceSelection(formatSelection(o))
		require.NoError(t, err, formatSelection(o))
		require.Equal(t, o, again)
	})
}
