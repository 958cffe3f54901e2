package backend

import (
	"log/slog"
	"sync/atomic"
)

// logger receives the library's diagnostics; it discards them until a
// program calls SetLogger.
var logger atomic.Pointer[slog.Logger]

func init() { logger.Store(slog.New(slog.DiscardHandler)) }

// SetLogger sends the library's diagnostics (devices registered or
// refused, which device Init started and why others did not, how the
// Scheduler split a graph) to l; nil silences them again, which is the
// default. Device packages log through Logger. Errors are still returned
// as errors: the log only adds detail.
func SetLogger(l *slog.Logger) {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	logger.Store(l)
}

// Logger is the logger SetLogger installed (a discarding one by default).
func Logger() *slog.Logger { return logger.Load() }
