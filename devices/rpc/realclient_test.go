package rpc

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/internal/testkit/llamaref"
	"github.com/ggml-go/ggml/internal/testkit/rpcref"
	"github.com/ggml-go/ggml/quant"
)

// llamaRun evaluates, through libllama, what runModel evaluates through
// our model runner: a 16-token prompt, then 8 tokens one at a time, every
// position's logits kept; perToken is one decode step.
func llamaRun(t *testing.T, m *llamaref.Model) (logits [][]float32, perToken time.Duration) {
	t.Helper()
	c, err := m.NewContext(llamaref.CompareOptions(64, 16, 1))
	require.NoError(t, err)
	defer c.Free()
	n := m.NVocab()
	var tokens []int32
	for i := range 16 {
		tokens = append(tokens, int32((i*37+11)%n))
	}
	logits, err = c.Evaluate(tokens, 0, nil)
	require.NoError(t, err)
	const steps = 8
	start := time.Now()
	for i := range steps {
		lg, err := c.Evaluate([]int32{int32((i*53 + 7) % n)}, 16+i, nil)
		require.NoError(t, err)
		logits = append(logits, lg...)
	}
	return logits, time.Since(start) / steps
}

// TestRealClientModel is the real client on the model runner: libllama
// of the peer's llama.cpp loads a generated model with ggml's RPC client
// (ggml_backend_rpc_add_server, the devices in llama_model_params, as
// llama-cli --rpc A,B -ngl 5 does), its six layers split across two
// servers and the local CPU, and its logits are compared with libllama's
// own all-CPU run. With two of ggml's servers (the baseline) they are
// bit for bit the local ones: the servers compute with the same ggml CPU
// library. With our servers (our CPU kernels behind them), and with one of
// each, they are within float rounding: our kernels sum in another order
// than ggml's, so bits differ (the suite's tolerance for those ops is an
// NMSE of 5e-4); here the NMSE over every logit is asserted under 1e-9
// (measured: about 6e-14, the largest difference 1e-6 on logits up to
// 4.5). The placement is read from libllama's load log: both servers hold
// layers' weights, the CPU the first layers'.
func TestRealClientModel(t *testing.T) {
	if testing.Short() {
		t.Skip("the model runs are in the full pass")
	}
	lib := rpcref.Llama(t)
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, genmodel.WriteFile(path, genmodel.Config{Arch: "llama", Type: quant.F32,
		Embd: 128, Layers: 6, Heads: 4, KVHeads: 2, FF: 256, VocabSize: 2000}))
	params := lib.CompareModelParams()
	params.NGPULayers = 0
	lm, err := lib.LoadModelParams(path, params)
	require.NoError(t, err)
	local, localTok := llamaRun(t, lm)
	lm.Free()

	ours := func() string { return startServer(t, &Server{Threads: 1}) }
	ggmls := func() string { return rpcref.StartServer(t, rpcref.Config{Threads: 1}).Addr }
	for _, c := range []struct {
		name  string
		a, b  func() string
		exact bool
	}{
		{"two of ggml's servers", ggmls, ggmls, true},
		{"two of our servers", ours, ours, false},
		{"ggml's and ours", ggmls, ours, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			addrs := []string{c.a(), c.b()}
			var devs []llamaref.Device
			for _, addr := range addrs {
				ds, err := lib.RPCDevices(addr)
				require.NoError(t, err)
				require.Len(t, ds, 1)
				devs = append(devs, ds...)
			}
			// -ngl 5 of 7 (six layers and the output): layers 0 and 1 and
			// the input on the CPU, the rest split by the servers' free
			// memory, which is the same machine's.
			m, err := lib.LoadModelOn(path, lib.CompareModelParams(), devs, 5)
			require.NoError(t, err)
			defer m.Free()
			placement := grepLines(m.LoadLog(), "model buffer size", "assigned to device")
			for i, d := range devs {
				require.Contains(t, placement, fmt.Sprintf("[%s] model buffer size", addrs[i]), "no weights on %s", d.Name)
				require.Contains(t, placement, "assigned to device "+d.Name)
			}
			require.Contains(t, placement, "CPU_Mapped model buffer size")
			got, perTok := llamaRun(t, m)
			d, e := maxDiff(local, got), logitsNMSE(got, local)
			if c.exact {
				require.Equal(t, local, got, "the logits differ from libllama's local ones (max %g)", d)
			} else {
				require.Less(t, e, 1e-9, "the logits are %g from libllama's local ones (NMSE %g)", d, e)
			}
			t.Logf("ggml's client (libllama) + %s + CPU: logits within %g of libllama's local run (NMSE %.2g, largest logit %.3g); %v a token (local %v, %.2fx)",
				c.name, d, e, maxAbs(local), perTok, localTok, float64(perTok)/float64(localTok))
			t.Logf("placement:\n%s", placement)
		})
	}
}

// logitsNMSE is the normalized mean squared error of got against want,
// over every position.
func logitsNMSE(got, want [][]float32) float64 {
	var num, den float64
	for i := range want {
		for j, w := range want[i] {
			d := float64(got[i][j]) - float64(w)
			num += d * d
			den += float64(w) * float64(w)
		}
	}
	return num / den
}

func maxAbs(a [][]float32) float64 {
	var m float64
	for _, r := range a {
		for _, v := range r {
			m = math.Max(m, math.Abs(float64(v)))
		}
	}
	return m
}

// grepLines keeps the lines of s containing any of subs.
func grepLines(s string, subs ...string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				keep = append(keep, l)
				break
			}
		}
	}
	return strings.Join(keep, "\n")
}
