package buffer_test

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

func f32(c *graph.Context, ne ...int64) *graph.Tensor { return c.NewTensor(quant.F32, ne...) }

func cpuBuffer(t *testing.T, size uint64) buffer.Buffer {
	t.Helper()
	b, err := buffer.CPU().Alloc(size)
	require.NoError(t, err)
	return b
}

func addr(p []byte) uintptr { return uintptr(unsafe.Pointer(&p[0])) }

func TestCPUType(t *testing.T) {
	typ := buffer.CPU()
	assert.Equal(t, "CPU", typ.Name())
	assert.Equal(t, "CPU", typ.DeviceName())
	assert.EqualValues(t, 32, typ.Alignment())
	assert.EqualValues(t, uint64(math.MaxUint64), typ.MaxSize())
	assert.True(t, typ.IsHost())
	c := graph.NewContext(graph.ContextOptions{})
	x := f32(c, 10, 3)
	assert.Equal(t, x.NBytes(), typ.AllocSize(x))
	assert.Equal(t, typ, buffer.CPU(), "one CPU type, so allocators see it used twice")
}

func TestHostBufferPlacement(t *testing.T) {
	b := cpuBuffer(t, 4096)
	defer b.Free()
	assert.Equal(t, "CPU", b.Name())
	assert.True(t, b.IsHost())
	assert.EqualValues(t, 4096, b.Size())
	assert.Zero(t, b.Base()%buffer.TensorAlignment)
	assert.Equal(t, buffer.UsageAny, b.Usage())
	b.SetUsage(buffer.UsageWeights)
	assert.Equal(t, buffer.UsageWeights, b.Usage())
	assert.Equal(t, "weights", b.Usage().String())

	c := graph.NewContext(graph.ContextOptions{})
	x := f32(c, 16, 4)
	require.NoError(t, b.AllocTensor(x, 64))
	assert.Same(t, b, x.Buffer.(buffer.Buffer))
	require.Len(t, x.Data, 256)
	assert.Equal(t, cap(x.Data), len(x.Data), "Data must not reach past the tensor")
	assert.Equal(t, b.Base()+64, addr(x.Data))
	for _, v := range x.Data {
		require.Zero(t, v, "new host memory is zeroed")
	}

	// A view made after its source was placed gets the buffer and memory
	// from the builder; one made before gets them from InitView.
	v := c.View2D(x, 8, 2, x.Nb[1], 4*x.Nb[1]/2)
	assert.Same(t, b, v.Buffer.(buffer.Buffer))
	v.Buffer, v.Data = nil, nil
	require.NoError(t, b.InitView(v))
	assert.Equal(t, addr(x.Data)+uintptr(v.ViewOffs), addr(v.Data))
	require.NoError(t, b.InitView(v), "initializing a view again is harmless")

	// What ggml would assert on is an error here.
	y := f32(c, 16)
	assert.ErrorIs(t, b.AllocTensor(y, 65), buffer.ErrMisaligned)
	assert.ErrorIs(t, b.AllocTensor(y, 4064), buffer.ErrOutOfBounds)
	assert.ErrorIs(t, b.AllocTensor(y, math.MaxUint64-31), buffer.ErrOutOfBounds)
	assert.ErrorIs(t, b.AllocTensor(x, 512), buffer.ErrPlaced)
	assert.ErrorIs(t, b.AllocTensor(v, 512), buffer.ErrArgument)
	assert.ErrorIs(t, b.AllocTensor(nil, 0), buffer.ErrArgument)
	assert.ErrorIs(t, b.InitView(y), buffer.ErrArgument)
	assert.ErrorIs(t, b.InitView(c.View1D(y, 4, 0)), buffer.ErrNotPlaced)
	assert.Nil(t, y.Buffer, "a failed placement leaves the tensor alone")
	bad := &graph.Tensor{Type: quant.Type(99), Ne: [4]int64{1, 1, 1, 1}}
	assert.ErrorIs(t, b.AllocTensor(bad, 0), buffer.ErrArgument)
	huge := &graph.Tensor{Type: quant.F32, Ne: [4]int64{1 << 40, 1 << 30, 1, 1}, Nb: [4]uint64{4, 1 << 42, 1 << 62, 1 << 62}}
	assert.ErrorIs(t, b.AllocTensor(huge, 0), buffer.ErrArgument)
	require.NoError(t, b.AllocTensor(y, 4032))
}

func TestHostBufferIO(t *testing.T) {
	b := cpuBuffer(t, 1024)
	defer b.Free()
	c := graph.NewContext(graph.ContextOptions{})
	x := f32(c, 8, 4) // 128 bytes
	require.NoError(t, b.AllocTensor(x, 256))

	data := make([]byte, 128)
	for i := range data {
		data[i] = byte(i)
	}
	require.NoError(t, b.SetTensor(x, data, 0))
	assert.Equal(t, data, x.Data)
	got := make([]byte, 16)
	require.NoError(t, buffer.GetTensor(x, got, 32))
	assert.Equal(t, data[32:48], got)
	assert.ErrorIs(t, b.SetTensor(x, data, 1), buffer.ErrOutOfBounds)
	assert.ErrorIs(t, b.GetTensor(x, make([]byte, 129), 0), buffer.ErrOutOfBounds)
	assert.ErrorIs(t, b.GetTensor(x, got, math.MaxUint64-4), buffer.ErrOutOfBounds)
	require.NoError(t, b.SetTensor(x, nil, 128), "an empty copy at the end is fine")

	// 2-D: rows 1 and 3 (32 bytes each, 64 apart) from a packed source.
	src := make([]byte, 64)
	for i := range src {
		src[i] = 0xf0
	}
	require.NoError(t, b.SetTensor2D(x, src, 32, 32, 2, 64, 32))
	assert.Equal(t, src[:32], x.Data[32:64])
	assert.Equal(t, data[64:96], x.Data[64:96])
	assert.Equal(t, src[:32], x.Data[96:128])
	back := make([]byte, 2*40)
	require.NoError(t, b.GetTensor2D(x, back, 0, 16, 2, 64, 40))
	assert.Equal(t, x.Data[0:16], back[0:16])
	assert.Equal(t, x.Data[64:80], back[40:56])
	assert.ErrorIs(t, b.SetTensor2D(x, src, 32, 32, 3, 64, 0), buffer.ErrOutOfBounds, "past the tensor")
	assert.ErrorIs(t, b.SetTensor2D(x, src, 0, 32, 2, 32, 40), buffer.ErrOutOfBounds, "past the data")
	assert.ErrorIs(t, b.SetTensor2D(x, src, 0, 1, math.MaxUint64, math.MaxUint64, 0), buffer.ErrOutOfBounds)
	require.NoError(t, b.SetTensor2D(x, nil, 0, 0, 5, 1000, 1000), "nothing to copy")

	require.NoError(t, b.MemsetTensor(x, 7, 4, 8))
	assert.Equal(t, []byte{3, 7, 7, 7, 7, 7, 7, 7, 7, 12}, x.Data[3:13])
	assert.ErrorIs(t, b.MemsetTensor(x, 7, 120, 9), buffer.ErrOutOfBounds)

	// A view reads and writes through its source.
	v := c.View1D(x, 4, 16)
	require.NoError(t, b.SetTensor(v, []byte{1, 2, 3, 4}, 4))
	assert.Equal(t, []byte{1, 2, 3, 4}, x.Data[20:24])
	assert.ErrorIs(t, b.SetTensor(v, make([]byte, 17), 0), buffer.ErrOutOfBounds)

	// A tensor not placed here.
	y := f32(c, 4)
	assert.ErrorIs(t, b.SetTensor(y, nil, 0), buffer.ErrNotPlaced)
	assert.ErrorIs(t, buffer.SetTensor(y, nil, 0), buffer.ErrNotPlaced)
	// A tensor whose shape grew after placement is not trusted with more
	// memory than it was given.
	x.Ne[1] = 5
	assert.ErrorIs(t, b.GetTensor(x, got, 0), buffer.ErrOutOfBounds)
	x.Ne[1] = 4

	require.NoError(t, b.Clear(0x5a))
	for _, v := range x.Data {
		require.EqualValues(t, 0x5a, v)
	}
}

func TestCopyTensor(t *testing.T) {
	b := cpuBuffer(t, 1024)
	defer b.Free()
	other := cpuBuffer(t, 1024)
	defer other.Free()
	c := graph.NewContext(graph.ContextOptions{})
	x, y, z := f32(c, 16), f32(c, 16), f32(c, 16)
	require.NoError(t, b.AllocTensor(x, 0))
	require.NoError(t, other.AllocTensor(y, 0))
	for i := range x.Data {
		x.Data[i] = byte(i)
	}
	require.NoError(t, buffer.CopyTensor(x, y))
	assert.Equal(t, x.Data, y.Data)
	require.NoError(t, b.CopyTensor(x, x))

	// From Go memory.
	z.Data = make([]byte, 64)
	z.Data[0] = 99
	require.NoError(t, buffer.CopyTensor(z, x))
	assert.EqualValues(t, 99, x.Data[0])

	w := f32(c, 8, 2)
	assert.ErrorIs(t, buffer.CopyTensor(w, x), buffer.ErrArgument, "different layouts")
	u := f32(c, 16)
	assert.ErrorIs(t, buffer.CopyTensor(u, x), buffer.ErrNotPlaced, "a source without memory")
	assert.ErrorIs(t, buffer.CopyTensor(x, u), buffer.ErrNotPlaced)
}

func TestResetAndFree(t *testing.T) {
	b := cpuBuffer(t, 1024)
	c := graph.NewContext(graph.ContextOptions{})
	x := f32(c, 16)
	require.NoError(t, b.AllocTensor(x, 0))
	v := c.View1D(x, 4, 0)
	require.NoError(t, b.InitView(v))

	require.NoError(t, b.Reset())
	assert.Nil(t, x.Buffer, "reset unplaces")
	assert.Nil(t, x.Data)
	assert.Nil(t, v.Buffer)
	require.NoError(t, b.AllocTensor(x, 32), "and the tensor can be placed again")
	require.NoError(t, b.InitView(v))

	require.NoError(t, b.Free())
	assert.Nil(t, x.Data, "freed memory is no tensor's any more")
	assert.Nil(t, v.Data)
	assert.Same(t, b, x.Buffer.(buffer.Buffer), "the tensor still says where its memory was")
	assert.ErrorIs(t, b.Free(), buffer.ErrFreed)
	assert.ErrorIs(t, b.SetTensor(x, []byte{1}, 0), buffer.ErrFreed)
	assert.ErrorIs(t, buffer.GetTensor(x, []byte{1}, 0), buffer.ErrFreed)
	assert.ErrorIs(t, b.SetTensor2D(x, []byte{1}, 0, 1, 1, 1, 1), buffer.ErrFreed)
	assert.ErrorIs(t, b.MemsetTensor(x, 0, 0, 1), buffer.ErrFreed)
	assert.ErrorIs(t, b.CopyTensor(x, x), buffer.ErrFreed)
	assert.ErrorIs(t, b.Clear(0), buffer.ErrFreed)
	assert.ErrorIs(t, b.Reset(), buffer.ErrFreed)
	assert.ErrorIs(t, b.AllocTensor(f32(c, 4), 0), buffer.ErrFreed)
	assert.ErrorIs(t, b.InitView(c.View1D(x, 2, 0)), buffer.ErrFreed)
	assert.EqualValues(t, 1024, b.Size(), "accessors still answer")
}

func TestZeroSizeBuffer(t *testing.T) {
	b := cpuBuffer(t, 0)
	assert.Zero(t, b.Base())
	c := graph.NewContext(graph.ContextOptions{})
	e := f32(c, 0, 4)
	require.NoError(t, b.AllocTensor(e, 0))
	assert.Empty(t, e.Data)
	assert.ErrorIs(t, b.AllocTensor(f32(c, 1), 0), buffer.ErrOutOfBounds)
	require.NoError(t, b.Clear(1))
	require.NoError(t, b.Free())
}

func TestHostAlloc(t *testing.T) {
	typ, err := buffer.NewHostType("BIG_ALIGN", "", 1<<16, 1<<20)
	require.NoError(t, err)
	b, err := typ.Alloc(100)
	require.NoError(t, err)
	assert.Zero(t, b.Base()%(1<<16), "the type's alignment, beyond a page")
	require.NoError(t, b.Free())
	_, err = typ.Alloc(1<<20 + 1)
	assert.ErrorIs(t, err, buffer.ErrTooLarge)
	_, err = buffer.CPU().Alloc(math.MaxUint64 / 2)
	assert.ErrorIs(t, err, buffer.ErrTooLarge, "more than the host has is an error, not a crash")
	_, err = buffer.NewHostType("X", "", 24, 1)
	assert.ErrorIs(t, err, buffer.ErrArgument)
	_, err = buffer.NewHostType("X", "", 32, 0)
	assert.ErrorIs(t, err, buffer.ErrArgument)
}

func TestFromBytes(t *testing.T) {
	// Aligned caller memory, as a native library or a mapped file gives.
	raw := make([]byte, 4096+64)
	off := (32 - addr(raw)%32) % 32
	mem := raw[off : off+4096]
	b, err := buffer.FromBytes(mem)
	require.NoError(t, err)
	assert.Equal(t, "CPU_Mapped", b.Name())
	assert.Equal(t, addr(mem), b.Base())
	c := graph.NewContext(graph.ContextOptions{})
	x := f32(c, 4)
	require.NoError(t, b.AllocTensor(x, 32))
	require.NoError(t, b.SetTensor(x, []byte{1, 2, 3, 4}, 0))
	assert.Equal(t, []byte{1, 2, 3, 4}, mem[32:36], "the caller's memory is the tensor's")
	require.NoError(t, b.Free())
	assert.Equal(t, []byte{1, 2, 3, 4}, mem[32:36], "and stays the caller's after Free")

	_, err = buffer.FromBytes(raw[off+1 : off+100])
	assert.ErrorIs(t, err, buffer.ErrMisaligned)
	e, err := buffer.FromBytes(nil)
	require.NoError(t, err)
	assert.Zero(t, e.Size())
}

func TestMulti(t *testing.T) {
	p0, p1 := cpuBuffer(t, 256), cpuBuffer(t, 512)
	m, err := buffer.NewMulti(p0, p1)
	require.NoError(t, err)
	assert.EqualValues(t, 768, m.Size())
	assert.Equal(t, "CPU", m.Name())
	assert.Equal(t, []buffer.Buffer{p0, p1}, m.Parts())
	m.SetUsage(buffer.UsageWeights)
	assert.Equal(t, buffer.UsageWeights, p1.Usage())
	assert.Equal(t, buffer.UsageWeights, m.Usage())

	c := graph.NewContext(graph.ContextOptions{})
	x, y := f32(c, 8), f32(c, 8)
	assert.ErrorIs(t, m.AllocTensor(x, 0), buffer.ErrUnsupported)
	require.NoError(t, p1.AllocTensor(x, 64))
	require.NoError(t, m.SetTensor(x, []byte{9}, 3))
	assert.EqualValues(t, 9, x.Data[3])
	got := []byte{0}
	require.NoError(t, m.GetTensor2D(x, got, 3, 1, 1, 0, 0))
	assert.EqualValues(t, 9, got[0])
	require.NoError(t, m.MemsetTensor(x, 1, 0, 32))
	v := c.View1D(x, 2, 8)
	require.NoError(t, m.InitView(v))
	assert.Equal(t, []byte{1, 1, 1, 1, 1, 1, 1, 1}, v.Data)
	assert.ErrorIs(t, m.SetTensor(y, nil, 0), buffer.ErrNotPlaced)
	require.NoError(t, m.Clear(3))
	assert.EqualValues(t, 3, x.Data[0])

	require.NoError(t, m.Free())
	assert.ErrorIs(t, m.Free(), buffer.ErrFreed)
	assert.ErrorIs(t, p0.Clear(0), buffer.ErrFreed, "the parts are freed with the multi-buffer")
	assert.ErrorIs(t, m.SetTensor(x, nil, 0), buffer.ErrFreed)
	_, err = buffer.NewMulti()
	assert.ErrorIs(t, err, buffer.ErrArgument)
}

// TestConcurrentAccess sets and reads tensors of one buffer from several
// goroutines while another frees it: each call either completes or
// reports ErrFreed, and none touches freed memory (run with -race).
func TestConcurrentAccess(t *testing.T) {
	b := cpuBuffer(t, 1<<16)
	c := graph.NewContext(graph.ContextOptions{})
	var ts []*graph.Tensor
	for i := range 16 {
		x := f32(c, 256)
		require.NoError(t, b.AllocTensor(x, uint64(i)*1024))
		ts = append(ts, x)
	}
	var wg sync.WaitGroup
	for _, x := range ts {
		wg.Go(func() {
			data := make([]byte, 1024)
			for range 200 {
				if err := b.SetTensor(x, data, 0); err != nil {
					assert.ErrorIs(t, err, buffer.ErrFreed)
					return
				}
				if err := b.GetTensor(x, data, 0); err != nil {
					assert.ErrorIs(t, err, buffer.ErrFreed)
					return
				}
			}
		})
	}
	wg.Go(func() { assert.NoError(t, b.Free()) })
	wg.Wait()
}

// flagStorage is device storage that records its release.
type flagStorage struct {
	mem      []byte
	released *atomic.Bool
}

func (s *flagStorage) Base() uintptr                      { return 0 }
func (s *flagStorage) Write(at uint64, data []byte) error { copy(s.mem[at:], data); return nil }
func (s *flagStorage) Read(at uint64, data []byte) error  { copy(data, s.mem[at:]); return nil }
func (s *flagStorage) Fill(at, size uint64, v byte) error { return nil }
func (s *flagStorage) Release() error {
	s.released.Store(true)
	return nil
}

// TestDroppedBufferReleased: a buffer dropped without Free has its memory
// released by the garbage collector, the safety net; one freed is not
// released twice.
func TestDroppedBufferReleased(t *testing.T) {
	typ := &devType{name: "D", maxSize: 1 << 20}
	var dropped, freed atomic.Bool
	func() {
		_, err := buffer.New(typ, &flagStorage{make([]byte, 64), &dropped}, 64)
		require.NoError(t, err)
	}()
	b, err := buffer.New(typ, &flagStorage{make([]byte, 64), &freed}, 64)
	require.NoError(t, err)
	require.NoError(t, b.Free())
	require.True(t, freed.Load())
	freed.Store(false)
	for range 100 {
		if dropped.Load() {
			break
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.True(t, dropped.Load())
	assert.False(t, freed.Load())
}
