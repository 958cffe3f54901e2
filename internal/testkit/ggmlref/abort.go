package ggmlref

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sync"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/internal/dynlib"
)

// AbortError is a GGML_ASSERT or GGML_ABORT of the real ggml, turned into
// a Go panic by the abort callback every Lib installs, and into an error by
// Catch. Without it ggml would abort the whole test process.
type AbortError struct {
	// Message is ggml's "file:line: message".
	Message string
}

func (e *AbortError) Error() string { return "ggml aborted: " + e.Message }

// abortCallback is the C function ggml calls instead of printing a
// backtrace and aborting. Callbacks are a limited resource, so there is one
// per process, shared by every loaded Lib.
var abortCallback = sync.OnceValue(func() uintptr {
	return purego.NewCallback(func(msg uintptr) {
		e := &AbortError{Message: cString(msg, 2048)}
		if insideCatch() {
			panic(e)
		}
		// Nothing would recover a panic: say what happened, and let
		// ggml abort as it would have.
		fmt.Fprintln(os.Stderr, e)
	})
})

var catchName = runtime.FuncForPC(reflect.ValueOf(Catch).Pointer()).Name()

// insideCatch reports whether the calling goroutine runs inside Catch. A
// callback on the thread that called into ggml runs on the calling
// goroutine, below its Go frames; one on a thread ggml created itself runs
// on a goroutine of its own.
func insideCatch() bool {
	pcs := make([]uintptr, 256)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if f.Function == catchName {
			return true
		}
		if !more {
			return false
		}
	}
}

// installAbortCallback makes ggml_abort panic with an *AbortError when the
// ggml call was made inside Catch. The panic unwinds through ggml's C
// frames back to Catch; ggml's state there is abandoned. On a thread ggml
// created itself (a worker of a multi-threaded computation) nothing can
// recover, and the process still dies, after printing ggml's message.
func (l *Lib) installAbortCallback(base *dynlib.Library) error {
	set, err := l.dlsym(base, "ggml_set_abort_callback")
	if err != nil {
		return err
	}
	purego.SyscallN(set, abortCallback())
	return nil
}

// Catch runs fn and returns a ggml abort inside it as an *AbortError;
// other panics go on.
func Catch(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			ae, ok := r.(*AbortError)
			if !ok {
				panic(r)
			}
			err = ae
		}
	}()
	fn()
	return nil
}
