package buffer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
)

// devType is a test device's buffer type: memory the CPU does not address
// (a DeviceStorage), 64-byte aligned, each tensor padded by pad bytes, at
// most maxSize bytes a buffer.
type devType struct {
	name    string
	pad     uint64
	maxSize uint64
	// repack makes its storage transform tensor contents (TensorIO).
	repack bool
	// storages are the storages of the buffers Alloc made.
	storages map[buffer.Buffer]*devStorage
}

func (d *devType) Name() string       { return d.name }
func (d *devType) Alignment() uint64  { return 64 }
func (d *devType) MaxSize() uint64    { return d.maxSize }
func (d *devType) IsHost() bool       { return false }
func (d *devType) DeviceName() string { return "DEV0" }
func (d *devType) AllocSize(t *graph.Tensor) uint64 {
	return t.NBytes() + d.pad
}

func (d *devType) Alloc(size uint64) (buffer.Buffer, error) {
	if size > d.maxSize {
		return nil, fmt.Errorf("%w: %d", buffer.ErrTooLarge, size)
	}
	st := &devStorage{mem: make([]byte, size), inits: map[*graph.Tensor]uint64{}}
	var s buffer.Storage = st
	if d.repack {
		s = &repackStorage{st}
	}
	b, err := buffer.New(d, s, size)
	if err == nil {
		if d.storages == nil {
			d.storages = map[buffer.Buffer]*devStorage{}
		}
		d.storages[b] = st
	}
	return b, err
}

// devStorage keeps the "device" memory in a Go slice and records what the
// buffer asks of it.
type devStorage struct {
	mem      []byte
	inits    map[*graph.Tensor]uint64
	resets   int
	copies   int
	released bool
}

func (s *devStorage) Base() uintptr { return 0x10000 }
func (s *devStorage) Release() error {
	s.released = true
	return nil
}
func (s *devStorage) Write(at uint64, data []byte) error { copy(s.mem[at:], data); return nil }
func (s *devStorage) Read(at uint64, data []byte) error  { copy(data, s.mem[at:]); return nil }
func (s *devStorage) Fill(at, size uint64, v byte) error {
	for i := range size {
		s.mem[at+i] = v
	}
	return nil
}
func (s *devStorage) InitTensor(t *graph.Tensor, at uint64) error {
	s.inits[t] = at
	t.Extra = at
	return nil
}
func (s *devStorage) Reset() error {
	s.resets++
	return nil
}

// CopyTensor copies from another device buffer directly.
func (s *devStorage) CopyTensor(src, dst *graph.Tensor, at uint64) (bool, error) {
	b, err := buffer.Of(src)
	if err != nil || b.IsHost() {
		return false, nil
	}
	s.copies++
	return true, b.GetTensor(src, s.mem[at:at+src.NBytes()], 0)
}

// repackStorage stores every byte inverted, as a device with its own
// layout would, and records the usage it was told.
type repackStorage struct{ *devStorage }

func (s *repackStorage) SetTensor(t *graph.Tensor, u buffer.Usage, at, offset uint64, data []byte) error {
	if u != buffer.UsageWeights {
		return fmt.Errorf("repacking a %s buffer", u)
	}
	for i, v := range data {
		s.mem[at+offset+uint64(i)] = ^v
	}
	return nil
}

func (s *repackStorage) GetTensor(t *graph.Tensor, u buffer.Usage, at, offset uint64, data []byte) error {
	for i := range data {
		data[i] = ^s.mem[at+offset+uint64(i)]
	}
	return nil
}

func TestDeviceBuffer(t *testing.T) {
	typ := &devType{name: "DEV0", pad: 16, maxSize: 1 << 20}
	b, err := typ.Alloc(1024)
	require.NoError(t, err)
	st := typ.storages[b]
	assert.False(t, b.IsHost())
	assert.EqualValues(t, 0x10000, b.Base())

	c := graph.NewContext(graph.ContextOptions{})
	x := f32(c, 8)
	require.NoError(t, b.AllocTensor(x, 128))
	assert.Nil(t, x.Data, "device memory is not the CPU's")
	assert.Same(t, b, x.Buffer.(buffer.Buffer))
	assert.EqualValues(t, 128, st.inits[x])
	assert.EqualValues(t, 128, x.Extra, "the device keeps its state in Extra")
	assert.ErrorIs(t, b.AllocTensor(f32(c, 8), 100), buffer.ErrMisaligned)
	assert.ErrorIs(t, b.AllocTensor(f32(c, 253), 0), buffer.ErrOutOfBounds, "1012 bytes and 16 of padding")

	data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	require.NoError(t, b.SetTensor(x, data, 4))
	assert.Equal(t, data, st.mem[132:140])
	got := make([]byte, 8)
	require.NoError(t, b.GetTensor(x, got, 4))
	assert.Equal(t, data, got)
	require.NoError(t, b.MemsetTensor(x, 0xee, 0, 2))
	assert.Equal(t, []byte{0xee, 0xee, 0}, st.mem[128:131])
	assert.ErrorIs(t, b.SetTensor(x, data, 25), buffer.ErrOutOfBounds, "the padding is not the tensor's")

	v := c.View1D(x, 2, 8)
	require.NoError(t, b.InitView(v))
	assert.EqualValues(t, 136, st.inits[v])
	require.NoError(t, b.GetTensor(v, got[:8], 0))
	assert.Equal(t, []byte{5, 6, 7, 8, 0, 0, 0, 0}, got)

	// Device to device by the device's copy; host to device through host memory.
	b2, err := typ.Alloc(256)
	require.NoError(t, err)
	y := f32(c, 8)
	require.NoError(t, b2.AllocTensor(y, 0))
	require.NoError(t, buffer.CopyTensor(x, y))
	assert.Equal(t, 1, typ.storages[b2].copies)
	require.NoError(t, b2.GetTensor(y, got, 4))
	assert.Equal(t, data[2:], got[2:])
	h := cpuBuffer(t, 64)
	hx := f32(c, 8)
	require.NoError(t, h.AllocTensor(hx, 0))
	hx.Data[0] = 42
	require.NoError(t, buffer.CopyTensor(hx, y))
	assert.Equal(t, 1, typ.storages[b2].copies)
	assert.EqualValues(t, 42, typ.storages[b2].mem[0])
	require.NoError(t, buffer.CopyTensor(y, hx), "device to host")
	assert.EqualValues(t, 42, hx.Data[0])

	require.NoError(t, b.Clear(9))
	assert.EqualValues(t, 9, st.mem[1023])
	require.NoError(t, b.Reset())
	assert.Equal(t, 1, st.resets)
	assert.Nil(t, x.Buffer)
	require.NoError(t, b.Free())
	assert.True(t, st.released)
	require.NoError(t, b2.Free())
	require.NoError(t, h.Free())
}

func TestRepackingDevice(t *testing.T) {
	typ := &devType{name: "DEV0_REPACK", maxSize: 1 << 20, repack: true}
	b, err := typ.Alloc(256)
	require.NoError(t, err)
	defer b.Free()
	c := graph.NewContext(graph.ContextOptions{})
	x := f32(c, 4)
	require.NoError(t, b.AllocTensor(x, 0))
	assert.Error(t, b.SetTensor(x, []byte{1}, 0), "the device refuses to repack outside a weights buffer")
	b.SetUsage(buffer.UsageWeights)
	require.NoError(t, b.SetTensor(x, []byte{5, 6, 7, 8}, 0))
	require.NoError(t, b.SetTensor(x, []byte{1, 2}, 1))
	require.NoError(t, b.MemsetTensor(x, 7, 3, 1))
	got := make([]byte, 4)
	require.NoError(t, b.GetTensor(x, got, 0))
	assert.Equal(t, []byte{5, 1, 2, 7}, got, "contents come back as set")
	assert.Equal(t, []byte{^byte(5), ^byte(1)}, typ.storages[b].mem[:2], "and are stored in the device's layout")
}

func TestNewChecks(t *testing.T) {
	dev := &devType{name: "D", maxSize: 1}
	_, err := buffer.New(nil, &devStorage{}, 0)
	assert.ErrorIs(t, err, buffer.ErrArgument)
	_, err = buffer.New(buffer.CPU(), &devStorage{}, 0)
	assert.ErrorIs(t, err, buffer.ErrArgument, "a host type needs host memory")
	_, err = buffer.New(dev, releaseOnly{}, 0)
	assert.ErrorIs(t, err, buffer.ErrArgument, "storage must be host or device storage")
	_, err = buffer.New(buffer.CPU(), hostBytes(make([]byte, 10)), 11)
	assert.ErrorIs(t, err, buffer.ErrArgument, "host storage smaller than the buffer")
	b, err := buffer.New(dev, hostBytes(make([]byte, 64)), 64)
	require.NoError(t, err, "host memory behind a type that is not host: no Tensor.Data")
	x := f32(graph.NewContext(graph.ContextOptions{}), 4)
	require.NoError(t, b.AllocTensor(x, 0))
	assert.Nil(t, x.Data)
	require.NoError(t, b.SetTensor(x, []byte{1, 2, 3, 4}, 0))
}

type releaseOnly struct{}

func (releaseOnly) Base() uintptr  { return 0 }
func (releaseOnly) Release() error { return nil }

type hostBytes []byte

func (h hostBytes) Base() uintptr  { return 0 }
func (h hostBytes) Release() error { return nil }
func (h hostBytes) Bytes() []byte  { return h }

// Locate gives a device its storage and a tensor's place, views included,
// and follows the tensors when an allocator places them again.
func TestLocate(t *testing.T) {
	typ := &devType{name: "DEV0", maxSize: 1 << 20}
	b, err := typ.Alloc(1024)
	require.NoError(t, err)
	c := graph.NewContext(graph.ContextOptions{})
	x := f32(c, 16)
	require.NoError(t, b.AllocTensor(x, 256))
	v := c.View1D(x, 4, 8)
	require.NoError(t, b.InitView(v))
	st, at, err := buffer.Locate(v)
	require.NoError(t, err)
	assert.Same(t, typ.storages[b], st)
	assert.EqualValues(t, 264, at)
	at, err = buffer.Offset(x)
	require.NoError(t, err)
	assert.EqualValues(t, 256, at)

	require.NoError(t, b.Reset())
	_, err = buffer.Offset(x)
	assert.ErrorIs(t, err, buffer.ErrNotPlaced)
	require.NoError(t, b.AllocTensor(x, 512))
	at, err = buffer.Offset(x)
	require.NoError(t, err)
	assert.EqualValues(t, 512, at, "the new place, not the first one")

	_, err = buffer.Offset(f32(c, 4))
	assert.ErrorIs(t, err, buffer.ErrNotPlaced)
	require.NoError(t, b.Free())
	_, err = buffer.Offset(x)
	assert.ErrorIs(t, err, buffer.ErrFreed)
}
