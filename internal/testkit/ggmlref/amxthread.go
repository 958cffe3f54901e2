package ggmlref

import (
	"runtime"
	"sync"
)

// OnAMXThread runs f on the one OS thread of the process kept for ggml's
// AMX code, and returns when f has. ggml loads the tile configuration once
// per thread and remembers that in thread-local memory, while our CPU
// device's amx level releases the tiles (TILERELEASE) after every kernel
// on whatever thread its goroutine ran: ggml's next tile load on such a
// thread faults (SIGILL, measured). The thread is a locked goroutine's,
// which runs no other goroutine; it lives as long as the process (ending
// it with its goroutine crashed the process: ggml keeps thread-local
// state). Calls run one at a time.
func OnAMXThread(f func()) {
	done := make(chan struct{})
	amxThread() <- func() {
		defer close(done)
		f()
	}
	<-done
}

var amxThread = sync.OnceValue(func() chan<- func() {
	work := make(chan func())
	go func() {
		runtime.LockOSThread()
		for f := range work {
			f()
		}
	}()
	return work
})
