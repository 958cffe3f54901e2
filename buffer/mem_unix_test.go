//go:build unix

package buffer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestMapHostKeepsErrno: a mapping the kernel refuses is ErrTooLarge and
// still carries mmap's errno.
func TestMapHostKeepsErrno(t *testing.T) {
	_, _, err := mapHost(1<<62, 64)
	require.ErrorIs(t, err, ErrTooLarge)
	var errno unix.Errno
	require.True(t, errors.As(err, &errno), "%v", err)
	require.Equal(t, unix.ENOMEM, errno)
}
