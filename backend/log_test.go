package backend_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
)

// TestLoggerSilentByDefault: nothing is logged until SetLogger; then
// Init and the Scheduler say what they did; SetLogger(nil) silences again.
func TestLoggerSilentByDefault(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		assert.False(t, backend.Logger().Enabled(context.Background(), level), "level %s", level)
	}
	var buf bytes.Buffer
	backend.SetLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer backend.SetLogger(nil)
	b, err := backend.Init(backend.Options{Devices: []string{"CPU"}, Threads: 1})
	require.NoError(t, err)
	defer b.Close()
	s, err := backend.NewScheduler([]backend.Backend{b}, backend.SchedulerOptions{})
	require.NoError(t, err)
	defer s.Close()
	g, _, _ := chain(t, 2)
	require.NoError(t, s.AllocGraph(g))
	assert.Contains(t, buf.String(), `msg="backend: started" device=CPU`)
	assert.Contains(t, buf.String(), `msg="backend: scheduler placed a graph" nodes=2 splits=1`)

	backend.SetLogger(nil)
	buf.Reset()
	_, err = backend.Init(backend.Options{Devices: []string{"NOPE"}})
	require.Error(t, err)
	assert.Empty(t, buf.String())
}
