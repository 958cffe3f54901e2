package rpc

import (
	"os"
	"testing"

	"github.com/ggml-go/ggml/internal/testkit/optest"
)

// TestConformanceOursOurs runs the conformance suite on a device of our
// server, through our client, against the real ggml.
func TestConformanceOursOurs(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance run is in the full pass")
	}
	addr := startServer(t, &Server{Threads: 2})
	dev := connect(t, addr, Options{})[0]
	optest.TestDevice(t, dev, optest.Options{Full: os.Getenv("OPTEST_FULL") == "1", Seed: 1})
}
