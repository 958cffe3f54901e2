package rpc

import (
	"os"
	"testing"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/internal/testkit/optest"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
)

// The interop runs: the conformance suite through every pairing of our
// client and server with ggml's (llama-cpp-python 0.3.36's ggml 0.25.3,
// built by scripts/fetch-rpc-ref). OPTEST_FULL=1 runs the full set.

// TestInteropOurClientRealServer runs the suite on a device of ggml's
// rpc-server through our client, against the real ggml (0.25.1, the
// project's oracle).
func TestInteropOurClientRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance run is in the full pass")
	}
	s := rpcref.StartServer(t, rpcref.Config{Threads: 2})
	dev := connect(t, s.Addr, Options{})[0]
	optest.TestDevice(t, dev, optest.Options{Full: os.Getenv("OPTEST_FULL") == "1", Seed: 1})
}

// TestInteropRealClientOurServer runs the suite through ggml's RPC client
// on our server (our CPU device behind it), compared with our CPU device
// computing locally.
func TestInteropRealClientOurServer(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance run is in the full pass")
	}
	addr := startServer(t, &Server{Threads: 2})
	c := rpcref.NewClient(t, addr, false)
	optest.TestDevice(t, cpu.Device(), optest.Options{Ref: c, Full: os.Getenv("OPTEST_FULL") == "1", Seed: 1})
}

// TestInteropRealPair is the baseline: ggml's client on ggml's server,
// compared with our CPU device computing locally.
func TestInteropRealPair(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance run is in the full pass")
	}
	s := rpcref.StartServer(t, rpcref.Config{Threads: 2})
	c := rpcref.NewClient(t, s.Addr, true)
	optest.TestDevice(t, cpu.Device(), optest.Options{Ref: c, Full: os.Getenv("OPTEST_FULL") == "1", Seed: 1})
}
