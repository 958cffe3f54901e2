package hexagon

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[strings.TrimPrefix(k, EnvPrefix)] }
}

func TestDefaultOptions(t *testing.T) {
	o, warns, err := ParseEnv(env(nil))
	require.NoError(t, err)
	require.Empty(t, warns)
	require.Equal(t, DefaultOptions(), o)
	require.Equal(t, 2048, o.OpBatch)
	require.Equal(t, 8, o.OpQueue)
	require.Equal(t, uint64(512*MiB), o.MbufDyn)
	require.Equal(t, uint64(GiB), o.MbufStatic)
	require.Equal(t, 2048*256+131072, o.OpTrace)
	require.Equal(t, PowerBurst, o.PowerMode)
	require.Equal(t, []DeviceConfig{{Name: "HTP0"}}, o.Devices)

	r := o.resolve(73)
	require.Equal(t, int64(3000*MiB), r.Vmem)
	require.Zero(t, r.DMA64)
	r = o.resolve(81)
	require.Equal(t, int64(3355443200), r.Vmem)
	require.Equal(t, 1, r.DMA64)
	o.DMA64 = 1
	require.Zero(t, o.resolve(79).DMA64, "no extended mappings before v81")
	o.Vmem = 0
	require.Zero(t, o.resolve(81).Vmem, "0 = measure stays")
}

func TestOptionsFromEnv(t *testing.T) {
	o, warns, err := ParseEnv(env(map[string]string{
		"LIB": "/opt/qc/lib", "VERBOSE": "2", "OPBATCH": "64", "OPQUEUE": "0x4", "OPPOLL": "1", "OPFUSION": "0",
		"RT_REPACK": "2", "OPFILTER": "mul_mat|add", "PROFILE": "0x3,0x111,1,2,3,4,5,6", "ETM": "1", "NHVX": "4",
		"NHMX": "0", "VTCM_SIZE": "4m", "MM_SELECT": "1", "FA_SELECT": "0", "FA_SPLIT": "0", "GDN_SELECT": "1",
		"AR_SELECT": "0", "AR_SCATTER": "0", "ARCH": "v79", "VMEM": "2.5G", "MBUF": " 256m , ,4g", "HOSTBUF": "1",
		"DMA64": "0", "POWER_MODE": "Balanced", "MAX_SESSIONS": "4", "DEVICES": "HTP0, HTP0:1, G[1-2:0]",
		"PROTOCOL": " Fence",
	}))
	require.NoError(t, err)
	require.Empty(t, warns)
	require.Equal(t, "/opt/qc/lib", o.Lib)
	require.Equal(t, 2, o.Verbose)
	require.Equal(t, 64, o.OpBatch)
	require.Equal(t, 4, o.OpQueue)
	require.Equal(t, 64*256+131072, o.OpTrace, "the trace default follows OPBATCH")
	require.True(t, o.OpPoll)
	require.False(t, o.OpFusion)
	require.Equal(t, 2, o.RTRepack)
	require.True(t, o.OpFilter.MatchString("MUL_MAT"))
	require.False(t, o.OpFilter.MatchString("MUL_MAT_ID"), "the whole description must match")
	require.Equal(t, 2, o.Profile)
	require.Equal(t, [8]uint32{3, 0x111, 1, 2, 3, 4, 5, 6}, o.PMUEvents)
	require.True(t, o.ETM)
	require.Equal(t, 4, o.NHVX)
	require.Zero(t, o.NHMX)
	require.Equal(t, uint64(4*MiB), o.VTCMSize)
	require.Equal(t, []int{1, 0, 0, 1, 0, 0}, []int{o.MMSelect, o.FASelect, o.FASplit, o.GDNSelect, o.ARSelect, o.ARScatter})
	require.Equal(t, 79, o.Arch)
	require.Equal(t, int64(2.5*GiB), o.Vmem)
	require.Equal(t, []uint64{256 * MiB, GiB, 4 * GiB}, []uint64{o.MbufDyn, o.MbufStatic, o.MbufTotal})
	require.True(t, o.HostBuf)
	require.Zero(t, o.DMA64)
	require.Equal(t, PowerBalanced, o.PowerMode)
	require.Equal(t, 4, o.MaxSessions)
	require.Equal(t, ProtocolFence, o.Protocol)
	require.Equal(t, []DeviceConfig{{Name: "HTP0"}, {Name: "HTP0:1", Virtual: 1},
		{Name: "G", Physical: 1, Group: []DeviceConfig{{Name: "HTP2:0", Physical: 2}}}}, o.Devices)
}

// TestProtocolNames: the protocol values name what they are; "seed", the
// old spelling of "fence", stays accepted so existing settings keep working.
func TestProtocolNames(t *testing.T) {
	for v, want := range map[string]Protocol{"": ProtocolPublic, "public": ProtocolPublic, "fence": ProtocolFence,
		"FENCE": ProtocolFence, "seed": ProtocolFence, " Seed ": ProtocolFence} {
		o, _, err := ParseEnv(env(map[string]string{"PROTOCOL": v}))
		require.NoError(t, err, v)
		require.Equal(t, want, o.Protocol, v)
	}
	_, _, err := ParseEnv(env(map[string]string{"PROTOCOL": "qdev"}))
	require.ErrorContains(t, err, `GGML_HEXAGON_PROTOCOL="qdev": want public or fence`)
}

func TestOptionsWarnings(t *testing.T) {
	o, warns, err := ParseEnv(env(map[string]string{"POWER_MODE": "turbo", "PROFILE": "1,2", "NDEV": "2"}))
	require.NoError(t, err)
	require.Equal(t, PowerBurst, o.PowerMode)
	require.Zero(t, o.Profile)
	require.Len(t, o.Devices, 2, "NDEV is the deprecated DEVICES")
	require.Len(t, warns, 3)
	require.Contains(t, strings.Join(warns, "\n"), "turbo")

	o, _, err = ParseEnv(env(map[string]string{"PROFILE": "1"}))
	require.NoError(t, err)
	require.Equal(t, 1, o.Profile)
	require.Equal(t, [8]uint32{}, o.PMUEvents, "basic mode has no PMU events")
	o, _, err = ParseEnv(env(map[string]string{"PROFILE": "2"}))
	require.NoError(t, err)
	require.Equal(t, DefaultOptions().PMUEvents, o.PMUEvents)

	_, warns, err = ParseEnv(env(map[string]string{"MAX_SESSIONS": "1", "DEVICES": "HTP0,HTP1"}))
	require.NoError(t, err)
	require.Len(t, warns, 1)
}

func TestOptionsErrors(t *testing.T) {
	for k, v := range map[string]string{
		"OPBATCH": "many", "OPQUEUE": "0", "RT_REPACK": "3", "OPFILTER": "mul(", "NHVX": "-1", "VTCM_SIZE": "8x",
		"ARCH": "vNext", "VMEM": "-1", "MBUF": "1g,abc", "HOSTBUF": "yes", "DMA64": "on", "MAX_SESSIONS": "17",
		"DEVICES": "GPU0", "OPPOLL": "1.5", "PROTOCOL": "qdev",
	} {
		_, _, err := ParseEnv(env(map[string]string{k: v}))
		require.Error(t, err, k)
		if k != "DEVICES" {
			require.Contains(t, err.Error(), EnvPrefix+k, k)
		}
	}
	_, _, err := ParseEnv(env(map[string]string{"OPBATCH": "x", "NHVX": "y"}))
	require.ErrorContains(t, err, "and 1 more")
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]uint64{
		"8": 8 * MiB, "512k": 512 * KiB, "512K": 512 * KiB, "1.5m": 1536 * KiB, "2G": 2 * GiB, " 3 g ": 3 * GiB,
		"64MB": 64 * MiB, "64MiB": 64 * MiB, "0": 0, "0.5": 512 * KiB,
	} {
		got, err := ParseSize(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "k", "-1", "1t", "1kx", "1e3", "1..2", "99999999999999g"} {
		_, err := ParseSize(s)
		require.Error(t, err, s)
	}
}

func TestParsePowerMode(t *testing.T) {
	for i, n := range powerNames {
		m, err := ParsePowerMode(strings.ToUpper(n))
		require.NoError(t, err)
		require.Equal(t, PowerMode(i), m)
		require.Equal(t, n, m.String())
	}
	m, err := ParsePowerMode("default")
	require.NoError(t, err)
	require.Equal(t, PowerBurst, m)
	_, err = ParsePowerMode("fast")
	require.Error(t, err)
}
