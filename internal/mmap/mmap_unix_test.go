//go:build unix

package mmap

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestAnonKeepsErrno: a mapping the kernel refuses is ErrTooLarge and
// still carries mmap's errno.
func TestAnonKeepsErrno(t *testing.T) {
	_, _, err := Anon(1<<62, 64)
	require.ErrorIs(t, err, ErrTooLarge)
	var errno unix.Errno
	require.True(t, errors.As(err, &errno), "%v", err)
	require.Equal(t, unix.ENOMEM, errno)
}
