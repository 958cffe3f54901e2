package model_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/internal/testkit/genmodel"
	"github.com/ggml-go/ggml/model"
	"github.com/ggml-go/ggml/quant"
)

// smallModel is a generated model small enough for API tests.
func smallModel(t *testing.T) string {
	return genFile(t, genmodel.Config{Arch: "llama", Type: quant.F32, Embd: 64, Layers: 1, Heads: 4, KVHeads: 2, FF: 128, VocabSize: 100})
}

func openSmall(t *testing.T, opts model.Options) (*model.Model, *model.Session) {
	t.Helper()
	m, err := model.Open(smallModel(t), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	s, err := m.NewSession(model.SessionOptions{Ctx: 64})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return m, s
}

// TestSessionBusy: a second call into a session while one runs returns
// ErrBusy, whether it comes from another goroutine or from Generate's own
// callback, and the running call finishes unharmed. Run with -race, the
// test also shows that the refused calls touch nothing the running one
// uses.
func TestSessionBusy(t *testing.T) {
	_, s := openSmall(t, model.Options{Threads: 1})
	ctx := context.Background()
	inEmit, release := make(chan struct{}), make(chan struct{})
	var reentrant error
	done := make(chan error)
	go func() {
		first := true
		_, err := s.Generate(ctx, []int32{1, 2, 3}, 4, model.Sampler{}, func(int32) error {
			if first {
				first = false
				_, reentrant = s.Decode(ctx, []int32{4}, nil)
				close(inEmit)
				<-release
			}
			return nil
		})
		done <- err
	}()
	<-inEmit
	_, err := s.Decode(ctx, []int32{5}, nil)
	require.ErrorIs(t, err, model.ErrBusy)
	_, err = s.Generate(ctx, []int32{5}, 1, model.Sampler{}, nil)
	require.ErrorIs(t, err, model.ErrBusy)
	require.ErrorIs(t, s.Close(), model.ErrBusy)
	close(release)
	require.NoError(t, <-done)
	require.ErrorIs(t, reentrant, model.ErrBusy)
	require.Equal(t, 3+3, s.Pos(), "the prompt and the three tokens decoded after it, nothing from the refused calls")

	// Two goroutines racing: each call either runs or is refused.
	s.Reset()
	var ran, refused atomic.Int32
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			for range 20 {
				_, err := s.Decode(ctx, []int32{1}, nil)
				switch {
				case err == nil:
					ran.Add(1)
				case errors.Is(err, model.ErrBusy):
					refused.Add(1)
				default:
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	require.Equal(t, int32(40), ran.Load()+refused.Load())
	require.Positive(t, ran.Load())
	require.Equal(t, int(ran.Load()), s.Pos(), "one cache cell per decode that ran")
	t.Logf("racing decodes: %d ran, %d refused", ran.Load(), refused.Load())
}

// TestModelCloseSessions: Model.Close closes the sessions still open, and
// their later calls say why.
func TestModelCloseSessions(t *testing.T) {
	m, err := model.Open(smallModel(t), model.Options{})
	require.NoError(t, err)
	a, err := m.NewSession(model.SessionOptions{Ctx: 32})
	require.NoError(t, err)
	b, err := m.NewSession(model.SessionOptions{Ctx: 32})
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.NoError(t, m.Close())
	_, err = a.Decode(context.Background(), []int32{1}, nil)
	require.ErrorIs(t, err, model.ErrArgument)
	require.ErrorContains(t, err, "model closed")
	_, err = b.Decode(context.Background(), []int32{1}, nil)
	require.ErrorContains(t, err, "session closed")
	require.NoError(t, a.Close(), "closing a session the model closed does nothing")
	_, err = m.NewSession(model.SessionOptions{})
	require.ErrorContains(t, err, "model closed")
}

// TestTimings: Generate reports what it decoded and sampled.
func TestTimings(t *testing.T) {
	_, s := openSmall(t, model.Options{})
	require.Zero(t, s.Timings())
	out, err := s.Generate(context.Background(), []int32{1, 2, 3, 4, 5}, 3, model.Sampler{}, nil)
	require.NoError(t, err)
	require.Len(t, out, 3)
	tm := s.Timings()
	require.Equal(t, 5, tm.PromptTokens)
	require.Equal(t, 3, tm.Generated, "the tokens asked for")
	require.Equal(t, 2, tm.Decoded, "the last token is not decoded")
	require.Positive(t, tm.Prompt)
	require.Positive(t, tm.Generation)
	require.Positive(t, tm.PromptRate())
	require.Positive(t, tm.DecodeRate())
	require.Contains(t, tm.String(), "generation: 3 tokens in ")

	_, err = s.Generate(context.Background(), []int32{1}, 1, model.Sampler{}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, s.Timings().Generated)
	require.Zero(t, s.Timings().Decoded)
	require.Zero(t, s.Timings().DecodeRate())
	_, err = s.Generate(context.Background(), []int32{1000}, 1, model.Sampler{}, nil)
	require.Error(t, err)
	require.Zero(t, s.Timings(), "a failed prompt leaves no timings of an earlier run")
}

// switchedRegistry lists its device only while on is set, so that the
// other tests of this binary do not see it.
type switchedRegistry struct {
	on  atomic.Bool
	dev backend.Device
}

func (r *switchedRegistry) Name() string { return "SWITCHED" }

func (r *switchedRegistry) Devices() []backend.Device {
	if r.on.Load() {
		return []backend.Device{r.dev}
	}
	return nil
}

var fakeBest = &switchedRegistry{dev: devtest.New(devtest.Config{Name: "FAKE_BEST", Type: backend.DeviceIGPU})}

func init() {
	if err := backend.Register(fakeBest); err != nil {
		panic(err)
	}
}

// TestBestDevice: Options.BestDevice takes GGML_DEVICE, else an
// accelerator, else the CPU; a bad GGML_DEVICE is an error.
func TestBestDevice(t *testing.T) {
	path := smallModel(t)
	open := func(env string) (string, error) {
		t.Setenv(backend.EnvDevice, env)
		m, err := model.Open(path, model.Options{BestDevice: true})
		if err != nil {
			return "", err
		}
		defer m.Close()
		return m.DeviceName(), nil
	}
	fakeBest.on.Store(true)
	defer fakeBest.on.Store(false)
	// With no GGML_DEVICE: the first available GPU, else integrated GPU,
	// in registration order. Another accelerator may be registered in
	// this test binary (OpenVINO on the fetched real runtime or on its
	// double, which may come first); FAKE_BEST must be that choice when
	// it is the only one.
	bestAccelerator := func() string {
		for _, ty := range []backend.DeviceType{backend.DeviceGPU, backend.DeviceIGPU} {
			for _, d := range backend.Devices() {
				if d.Type() == ty && backend.Availability(d) == nil {
					return d.Name()
				}
			}
		}
		return "CPU"
	}
	best := bestAccelerator()
	require.NotEqual(t, "CPU", best, "FAKE_BEST is an available integrated GPU")
	for env, want := range map[string]string{
		"":                          best,
		"CPU":                       "CPU",
		"fake_best":                 "FAKE_BEST",
		"FAKE_BEST:threads=2":       "FAKE_BEST",
		"FAKE_BEST:bogus=1,CPU":     "CPU", // did not start: the next entry
		"CPU,FAKE_BEST:threads=200": "CPU",
	} {
		got, err := open(env)
		require.NoError(t, err, "GGML_DEVICE=%q", env)
		require.Equal(t, want, got, "GGML_DEVICE=%q", env)
	}
	for env, want := range map[string]string{
		"garbage":           `GGML_DEVICE: backend: no such device: "garbage"`,
		"CPU,CPU":           "listed twice",
		"FAKE_BEST:bogus=1": `no parameter "bogus"`,
	} {
		_, err := open(env)
		require.ErrorContains(t, err, want, "GGML_DEVICE=%q", env)
	}
	fakeBest.on.Store(false)
	got, err := open("")
	require.NoError(t, err)
	require.Equal(t, bestAccelerator(), got, "without FAKE_BEST: another accelerator, else the CPU")
	// Without BestDevice, nil is the CPU whatever GGML_DEVICE says.
	t.Setenv(backend.EnvDevice, "garbage")
	m, err := model.Open(path, model.Options{})
	require.NoError(t, err)
	require.Equal(t, "CPU", m.DeviceName())
	require.NoError(t, m.Close())
}
