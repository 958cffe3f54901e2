package backend

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
)

type capsDevice struct {
	Device
	caps Caps
}

func (d capsDevice) Name() string { return "CAPS0" }
func (d capsDevice) Props() Props { return Props{Name: "CAPS0", Caps: d.caps} }

type eventsDevice struct{ capsDevice }

func (eventsDevice) NewEvent() (Event, error) { return nil, ErrUnsupported }

type hostBufDevice struct {
	capsDevice
	bt buffer.Type
}

func (d hostBufDevice) HostBufferType() buffer.Type { return d.bt }

func TestCheckCaps(t *testing.T) {
	require.NoError(t, CheckCaps(capsDevice{}))
	require.NoError(t, CheckCaps(eventsDevice{capsDevice{caps: Caps{Events: true}}}))
	require.NoError(t, CheckCaps(hostBufDevice{capsDevice{caps: Caps{HostBuffer: true}}, buffer.CPU()}))

	err := CheckCaps(capsDevice{caps: Caps{Events: true, BufferFromHostPtr: true}})
	require.ErrorIs(t, err, ErrArgument)
	require.ErrorContains(t, err, "Caps.Events is true but the device does not implement EventCreator")
	require.ErrorContains(t, err, "Caps.BufferFromHostPtr is true")
	require.ErrorContains(t, CheckCaps(eventsDevice{}), "Caps.Events is false but the device implements EventCreator")
	require.ErrorContains(t, CheckCaps(hostBufDevice{capsDevice{caps: Caps{HostBuffer: true}}, nil}), "Caps.HostBuffer is true")
}
