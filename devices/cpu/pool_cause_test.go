package cpu

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPoolPanicKeepsCause: a kernel panic with an error value (a runtime
// error, or an error a kernel raises) stays reachable with errors.As/Is.
func TestPoolPanicKeepsCause(t *testing.T) {
	p := newPool(2)
	defer p.close()
	err := runWithin(t, p, func(q *Params) {
		var s []int
		_ = s[q.Nth]
	}, nil)
	var re runtime.Error
	require.ErrorAs(t, err, &re)

	cause := errors.New("kernel cause")
	err = runWithin(t, p, func(*Params) { panic(cause) }, nil)
	require.ErrorIs(t, err, cause)
}
