package htp

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScalars checks REMOTE_SCALARS_MAKEX against the values of hexagon.md
// §5.1 (computed from the public macro) and its field positions.
func TestScalars(t *testing.T) {
	for _, c := range []struct {
		call Call
		want uint32
	}{
		{StartCall(ProtocolPublic, StartArgs{}), 0x02010000},
		{StartCall(ProtocolFence, StartArgs{}), 0x02010000},
		{StopCall(), 0x03000000},
		{MmapCall(0, 0), 0x04010000},
		{MunmapCall(0), 0x05010000},
		{ProfilerCall(0, [8]uint32{}), 0x06010000},
		{EtmCall(false), 0x07010000},
		{HwinfoCall(), 0x08000100},
	} {
		require.Equal(t, c.want, c.call.Scalars, c.call.Name)
	}
	require.Equal(t, uint32(0x1f<<24|0xff<<16|0xff<<8), Scalars(0xff, 0x1ff, 0x1ff), "fields are masked")
}

func TestPackedArguments(t *testing.T) {
	le := binary.LittleEndian
	a := StartArgs{SessID: 7, QueueID: 0x1122334455667788, NHVX: 6, NHMX: 1, VTCMSize: 4 << 20, MaxVmem: 3 << 30, PowerMode: 5}
	s := StartCall(ProtocolPublic, a)
	require.Len(t, s.In, 32)
	require.Equal(t, uint32(7), le.Uint32(s.In[0:]))
	require.Zero(t, le.Uint32(s.In[4:]), "padding before the u64")
	require.Equal(t, uint64(0x1122334455667788), le.Uint64(s.In[8:]))
	require.Equal(t, uint32(6), le.Uint32(s.In[16:]))
	require.Equal(t, uint32(1), le.Uint32(s.In[20:]))
	require.Equal(t, uint64(3<<30), le.Uint64(s.In[24:]))
	require.Zero(t, s.OutLen)
	f := StartCall(ProtocolFence, a)
	require.Len(t, f.In, 48)
	require.Equal(t, s.In[:24], f.In[:24])
	require.Equal(t, uint64(4<<20), le.Uint64(f.In[24:]))
	require.Equal(t, uint64(3<<30), le.Uint64(f.In[32:]))
	require.Equal(t, uint32(5), le.Uint32(f.In[40:]))
	require.Zero(t, le.Uint32(f.In[44:]), "tail padding")

	st := StopCall()
	require.Nil(t, st.In)
	require.Zero(t, st.OutLen)

	m := MmapCall(42, 1<<20)
	require.Equal(t, []byte{42, 0, 0, 0, 0, 0, 0x10, 0}, m.In)
	require.Equal(t, []byte{9, 0, 0, 0}, MunmapCall(9).In)

	p := ProfilerCall(ProfPMU, DefaultPMUEvents)
	require.Len(t, p.In, 36)
	require.Equal(t, uint32(ProfPMU), le.Uint32(p.In))
	for i, e := range DefaultPMUEvents {
		require.Equal(t, e, le.Uint32(p.In[4+4*i:]))
	}
	require.Equal(t, []byte{1, 0, 0, 0}, EtmCall(true).In)
	require.Equal(t, []byte{0, 0, 0, 0}, EtmCall(false).In)

	h := HwinfoCall()
	require.Nil(t, h.In)
	require.Equal(t, 24, h.OutLen)
	out := make([]byte, 24)
	le.PutUint32(out[0:], 10)
	le.PutUint32(out[4:], 8)
	le.PutUint32(out[8:], 1)
	le.PutUint64(out[16:], 8<<20)
	hw, err := DecodeHwinfo(out)
	require.NoError(t, err)
	require.Equal(t, HWInfo{NThreads: 10, NHVX: 8, NHMX: 1, VTCMSize: 8 << 20}, hw)
	_, err = DecodeHwinfo(out[:20])
	require.Error(t, err)
}

func TestURIs(t *testing.T) {
	require.Equal(t, "file:///libggml-htp-v73.so?htp_iface_skel_handle_invoke&_modver=1.0", SkelURI(73))
	require.Equal(t, "file:///libggml-htp-v81.so?htp_iface_skel_handle_invoke&_modver=1.0&_dom=cdsp1&_session=2",
		SessionURI(81, "cdsp1", 2))
}
