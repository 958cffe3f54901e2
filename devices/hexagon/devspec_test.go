package hexagon

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDevices(t *testing.T) {
	g := func(name string, phys, virt int, group ...DeviceConfig) DeviceConfig {
		return DeviceConfig{Name: name, Physical: phys, Virtual: virt, Group: group}
	}
	for s, want := range map[string][]DeviceConfig{
		"":                {g("HTP0", 0, 0)},
		"3":               {g("HTP0", 0, 0), g("HTP1", 0, 1), g("HTP2", 0, 2)},
		"HTP1":            {g("HTP1", 1, 0)},
		"HTP0,HTP0:1":     {g("HTP0", 0, 0), g("HTP0:1", 0, 1)},
		" HTP0 , HTP1:2 ": {g("HTP0", 0, 0), g("HTP1:2", 1, 2)},
		"G[0-1]":          {g("G", 0, 0, g("HTP1:0", 1, 0))},
		"G[0,2]":          {g("G", 0, 0, g("HTP2:0", 2, 0))},
		"G[0-1:2]":        {g("G", 0, 2, g("HTP1:2", 1, 2))},
		"G:1[0-1]":        {g("G:1", 0, 1, g("HTP1:1", 1, 1))},
		"G:1[0-1:2]":      {g("G:1", 0, 2, g("HTP1:2", 1, 2))},
		"G[0-3],HTP0:1":   {g("G", 0, 0, g("HTP1:0", 1, 0), g("HTP2:0", 2, 0), g("HTP3:0", 3, 0)), g("HTP0:1", 0, 1)},
		"G[1,0-1]":        {g("G", 1, 0, g("HTP0:0", 0, 0))},
		"G[]":             {g("G", 0, 0)},
		"A[0],B[1]":       {g("A", 0, 0), g("B", 1, 0)},
	} {
		got, warns, err := ParseDevices(s)
		require.NoError(t, err, s)
		require.Empty(t, warns, s)
		require.Equal(t, want, got, s)
	}
	got, warns, err := ParseDevices("0")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Len(t, warns, 1)
	got, warns, err = ParseDevices("40")
	require.NoError(t, err)
	require.Len(t, got, MaxSessions)
	require.Len(t, warns, 1)

	// Bad items are skipped with a warning, as upstream.
	got, warns, err = ParseDevices("HTP0,GPU1,HTPx,HTP1:99,G[3-1],HTP99,H[0]x,HTP2")
	require.NoError(t, err)
	require.Equal(t, []DeviceConfig{g("HTP0", 0, 0), g("HTP2", 2, 0)}, got)
	require.Len(t, warns, 6)

	var many []string
	for i := range 20 {
		many = append(many, "G"+strings.Repeat("x", i)+"[0]")
	}
	got, warns, err = ParseDevices(strings.Join(many, ","))
	require.NoError(t, err)
	require.Len(t, got, MaxSessions)
	require.Len(t, warns, 4)

	for _, s := range []string{"GPU0", "HTP0,HTP0", "htp", "[0]", ","} {
		_, _, err := ParseDevices(s)
		require.Error(t, err, s)
	}
}

// FuzzParseDevices: any input gives devices that are valid, or an error;
// never a panic, never more than MaxSessions, indices in range.
func FuzzParseDevices(f *testing.F) {
	for _, s := range []string{"", "2", "HTP0,HTP0:1", "G[0-1:2]", "G:1[0,2]", "A[0-3],HTP0:1", "[[]]", "HTP0:", "G[0-99999]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfgs, _, err := ParseDevices(s)
		if err != nil {
			require.Empty(t, cfgs)
			return
		}
		require.NotEmpty(t, cfgs)
		require.LessOrEqual(t, len(cfgs), MaxSessions)
		names := map[string]bool{}
		for _, c := range cfgs {
			require.NotEmpty(t, c.Name)
			require.False(t, names[strings.ToUpper(c.Name)])
			names[strings.ToUpper(c.Name)] = true
			for _, m := range append([]DeviceConfig{c}, c.Group...) {
				require.True(t, m.Physical >= 0 && m.Physical < MaxSessions)
				require.True(t, m.Virtual >= 0 && m.Virtual <= maxVirtual)
			}
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"8", "1.5g", "512K", "-1", "1e9", "64MiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSize(s)
		if err == nil {
			require.Less(t, v, uint64(1<<63))
		}
	})
}

func FuzzParseEnv(f *testing.F) {
	f.Add("PROFILE", "0x3,1,2,3,4,5,6,7")
	f.Add("MBUF", "1g,,2g")
	f.Add("OPFILTER", "(mul")
	f.Fuzz(func(t *testing.T, k, v string) {
		o, _, err := ParseEnv(env(map[string]string{k: v}))
		if err == nil {
			require.NotEmpty(t, o.Devices)
			require.GreaterOrEqual(t, o.OpBatch, 1)
		}
	})
}
