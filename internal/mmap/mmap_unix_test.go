//go:build unix

package mmap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

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

// TestDropPages: the whole pages inside a range are dropped (anonymous
// memory reads as zeros again), the partial pages at its ends kept, and a
// file mapping reads as the file afterwards.
func TestDropPages(t *testing.T) {
	page := os.Getpagesize()
	mem, mapping, err := Anon(uint64(4*page), uint64(page))
	require.NoError(t, err)
	defer Unmap(mapping)
	for i := range mem {
		mem[i] = 1
	}
	require.Equal(t, uint64(2*page), DropPages(mem[page/2:3*page+page/2]))
	require.Equal(t, byte(1), mem[page-1], "a partial page is kept")
	require.Equal(t, byte(0), mem[page], "a whole page is dropped")
	require.Equal(t, byte(0), mem[3*page-1])
	require.Equal(t, byte(1), mem[3*page])

	path := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte{7}, 2*page)
	require.NoError(t, os.WriteFile(path, want, 0o600))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	_ = f.Bytes()[page] // fault it in
	require.Equal(t, uint64(2*page), DropPages(f.Bytes()))
	require.Equal(t, want, f.Bytes())
}

// TestEvict drops a mapped file's pages and nothing outside the mapping.
func TestEvict(t *testing.T) {
	page := os.Getpagesize()
	path := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte{3}, 3*page)
	require.NoError(t, os.WriteFile(path, want, 0o600))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, uint64(2*page), f.Evict(f.Bytes()[page:]))
	require.Equal(t, want, f.Bytes())
	other := make([]byte, 2*page)
	require.Zero(t, f.Evict(other), "outside the mapping")
}

// TestResident counts the pages touched, whole pages, and none after they
// are dropped.
func TestResident(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mincore is read on linux only")
	}
	page := os.Getpagesize()
	mem, mapping, err := Anon(uint64(8*page), uint64(page))
	require.NoError(t, err)
	defer Unmap(mapping)
	require.Zero(t, Resident(mem))
	mem[0], mem[3*page+1] = 1, 1
	require.Equal(t, uint64(2*page), Resident(mem))
	require.Equal(t, uint64(page), Resident(mem[3*page+1:3*page+2]), "a partial page counts whole")
	DropPages(mem)
	require.Zero(t, Resident(mem))
}

// TestCopiedOnWrite: a file mapping reads 0 until a page of it is written.
func TestCopiedOnWrite(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("smaps is read on linux only")
	}
	page := os.Getpagesize()
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 4*page), 0o600))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	_ = f.Bytes()[2*page] // read: the file's page
	n, ok := CopiedOnWrite(f.Bytes())
	require.True(t, ok)
	require.Zero(t, n)
	f.Bytes()[page] = 1
	n, ok = CopiedOnWrite(f.Bytes())
	require.True(t, ok)
	require.Equal(t, uint64(page), n)

	// A range past the mapping's end (a file mapping is a mapping of
	// its own) cannot be told; smaps is read, not the memory.
	_, ok = CopiedOnWrite(unsafe.Slice(&f.Bytes()[0], 8*page))
	require.False(t, ok)
}
