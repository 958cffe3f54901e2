package device_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/examples/device"
	"github.com/ggml-go/ggml/internal/testkit/optest"
)

// TestConformance is the test every device has: the conformance suite
// through the device's own memory against the real ggml (our CPU device
// when it is not installed and GGML_REF_REQUIRED is unset). TestDevice
// fails on any case the device accepts and gets wrong, and when no case
// passes; the cases of the other operations are skipped.
func TestConformance(t *testing.T) {
	dev, err := backend.DeviceByName(device.Name)
	require.NoError(t, err, "the package registers its device from init")
	rep := optest.TestDevice(t, dev, optest.Options{Seed: 1})
	passed := map[string]int{}
	for _, c := range rep.Tally.Ops() {
		passed[c.Op] = c.Passed
	}
	for _, op := range []string{"ADD", "MUL", "SCALE", "MUL_MAT"} {
		require.Positive(t, passed[op], "%s: some case passes", op)
	}
}

// TestParams: the device has no parameters, and says so naming the key.
func TestParams(t *testing.T) {
	t.Setenv(backend.EnvDevice, device.Name+":typo=1")
	_, err := backend.InitBest()
	require.ErrorIs(t, err, backend.ErrArgument)
	require.ErrorContains(t, err, `device EXAMPLE0 has no parameter "typo" (given typo="1"; it takes none)`)
	t.Setenv(backend.EnvDevice, device.Name)
	b, err := backend.InitBest()
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.ErrorIs(t, b.Synchronize(), backend.ErrClosed)
}
