package hexagon

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	double "github.com/ggml-go/ggml/internal/testkit/hexdouble"
)

func TestMain(m *testing.M) {
	code := m.Run()
	double.Cleanup()
	os.Exit(code)
}

// testOptions are defaults pointed at the double, with small batches
// and a short answer timeout so a missing answer fails fast.
func testOptions(d *double.Double) Options {
	o := DefaultOptions()
	o.Lib = d.Path
	o.ResponseTimeout = 5 * time.Second
	return o
}

func openRegistry(t *testing.T, o Options) (*Registry, []backend.Device) {
	t.Helper()
	r := NewRegistry(o)
	devs := r.Devices()
	t.Cleanup(func() { _ = r.Close() })
	return r, devs
}

func TestBringUpOnDouble(t *testing.T) {
	d := double.Open(t, double.Full)
	d.Configure(t, "arch=79")
	r, devs := openRegistry(t, testOptions(d))
	require.Len(t, devs, 1)
	require.NoError(t, backend.Availability(devs[0]), d.Log())
	require.Equal(t, 79, r.Arch())
	require.Equal(t, "HTP0", devs[0].Name())
	log := d.CallLog(t)
	t.Log(log)
	require.Empty(t, d.Violations())
	require.NoError(t, r.Close())
	require.Empty(t, d.Leaks(), d.Log())
	_ = strings.Contains
}
