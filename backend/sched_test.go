package backend_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/backend"
	"github.com/ggml-go/ggml/buffer"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/devtest"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// The scheduler's test devices, all devtest fakes computing F32 versions
// of a few ops (and the view ops) with the CPU's kernels.
var (
	// fakeMem is the fake devices' memory: the CPU is not told about it
	// (IsHost false), and reaches it only through the buffer API.
	fakeMem = devtest.NewMemoryType("FAKE0")
	// fakeDev is a GPU with memory of its own that adds and multiplies.
	fakeDev = devtest.New(devtest.Config{Name: "FAKE0", Type: backend.DeviceGPU, Memory: fakeMem,
		Supports: devtest.F32Ops(ops.Add, ops.Mul), Threads: 2})
	// offloadDev is fakeDev wanting ops next to host weights.
	offloadDev = devtest.New(devtest.Config{Name: "FAKE1", Type: backend.DeviceGPU, Memory: fakeMem,
		Supports: devtest.F32Ops(ops.Add, ops.Mul), Threads: 2, Offload: true})
	// accelDev multiplies in host memory, as BLAS does beside the CPU.
	accelDev = devtest.New(devtest.Config{Name: "ACCEL0", Type: backend.DeviceAccel, Memory: buffer.CPU(),
		Supports: devtest.F32Ops(ops.Mul), Threads: 2})
	// moeDev runs MUL_MAT_ID, and wants it next to host experts.
	moeDev = devtest.New(devtest.Config{Name: "MOE0", Type: backend.DeviceGPU, Memory: fakeMem,
		Supports: devtest.F32Ops(ops.MulMatID), Threads: 2, Offload: true})
	// eventDev is fakeDev with events and a queue of work run by a
	// goroutine, which dawdles before each computation so that a
	// scheduler that does not wait for it races with it.
	eventDev = devtest.NewWithEvents(devtest.Config{Name: "EVENT0", Type: backend.DeviceGPU, Memory: fakeMem,
		Supports: devtest.F32Ops(ops.Add, ops.Mul), Threads: 2, Faults: devtest.Faults{Delay: 200 * time.Microsecond}})

	fakeDevices = []backend.Device{fakeDev, offloadDev, accelDev, eventDev, moeDev}
)

// ran is the nodes fake backend b computed.
func ran(b backend.Backend) []*graph.Tensor { return b.(*devtest.Backend).Ran() }

func fakeAndCPU(t *testing.T) (fake, host backend.Backend) {
	t.Helper()
	fake = initFake(t, fakeDev)
	c, err := backend.DeviceByName("CPU")
	require.NoError(t, err)
	host, err = c.Init(backend.Options{Threads: 1})
	require.NoError(t, err)
	t.Cleanup(func() { host.Close() })
	return fake, host
}

// initFake starts a backend on d, found through the test's registry, which
// stays out of the process-wide one (whose devices ExampleDevices lists).
func initFake(t *testing.T, d backend.Device) backend.Backend {
	t.Helper()
	require.Contains(t, fakeDevices, d)
	b, err := d.Init(backend.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// values gives tensor number k of a network deterministic contents.
func values(k int, n int64) []byte {
	vs := make([]float32, n)
	for i := range vs {
		vs[i] = float32(math.Sin(float64(100*k + i + 1)))
	}
	return quant.F32Bytes(vs)
}

// net builds a network from weights (placed before the graph is split)
// and inputs (INPUT leafs the scheduler places).
type net func(c *graph.Context, weight, input func(ne ...int64) *graph.Tensor) *graph.Tensor

// run builds n with its weights in weightType, computes it with a
// scheduler over backends and returns the scheduler, the graph and the
// output's bytes.
func run(t *testing.T, backends []backend.Backend, opts backend.SchedulerOptions, weightType buffer.Type, n net, pre func(*backend.Scheduler, *graph.Graph)) (*backend.Scheduler, *graph.Graph, []byte) {
	t.Helper()
	s, err := backend.NewScheduler(backends, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	c := graph.NewContext(graph.ContextOptions{})
	k := 0
	var inputs []*graph.Tensor
	weight := func(ne ...int64) *graph.Tensor {
		w := c.NewTensor(quant.F32, ne...)
		b, err := weightType.Alloc(weightType.AllocSize(w))
		require.NoError(t, err)
		require.NoError(t, b.AllocTensor(w, 0))
		b.SetUsage(buffer.UsageWeights)
		k++
		require.NoError(t, buffer.SetTensor(w, values(k, w.NElements()), 0))
		w.Name = fmt.Sprintf("w%d", k)
		return w
	}
	input := func(ne ...int64) *graph.Tensor {
		x := graph.SetInput(c.NewTensor(quant.F32, ne...))
		k++
		x.Name = fmt.Sprintf("x%d", k)
		x.Extra = k
		inputs = append(inputs, x)
		return x
	}
	out := graph.SetOutput(n(c, weight, input))
	g, err := c.Build(out)
	require.NoError(t, err)
	if pre != nil {
		pre(s, g)
	}
	require.NoError(t, s.AllocGraph(g))
	for _, x := range inputs {
		if !g.Contains(x) {
			continue
		}
		require.NoError(t, buffer.SetTensor(x, values(x.Extra.(int), x.NElements()), 0))
	}
	require.NoError(t, s.GraphCompute(g))
	res := make([]byte, out.NBytes())
	require.NoError(t, buffer.GetTensor(out, res, 0))
	return s, g, res
}

type schedCase struct {
	name   string
	net    net
	splits int
	inputs int // split inputs (copies) in all
	// perSplit, when set, is the number of inputs of each split.
	perSplit []int
	placed   map[string]string // node or leaf name -> backend name
	backend  []string          // per split
	// first is the device before the CPU, fakeDev when nil;
	// hostWeights puts the weights in CPU memory.
	first       backend.Device
	hostWeights bool
	opOffload   bool
	// pre runs before the graph is placed, with the CPU backend.
	pre func(s *backend.Scheduler, g *graph.Graph, host backend.Backend)
}

func node(g *graph.Graph, name string) *graph.Tensor {
	for _, n := range g.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// chainWithWeight is x+w, squared by MUL, then SQR (CPU only), then doubled
// by ADD.
func chainWithWeight(c *graph.Context, weight, input func(...int64) *graph.Tensor) *graph.Tensor {
	x, w := input(4, 3), weight(4, 3)
	a := c.Add(x, w)
	a.Name = "a"
	b := c.Mul(a, a)
	b.Name = "b"
	sq := c.Sqr(b)
	sq.Name = "c"
	d := c.Add(sq, sq)
	d.Name = "d"
	return d
}

func schedCases() []schedCase {
	return []schedCase{{
		// Without weights nothing draws work to the device: the CPU
		// reads the inputs in place.
		name: "chain of inputs",
		net: func(c *graph.Context, _, input func(...int64) *graph.Tensor) *graph.Tensor {
			x := input(4, 3)
			return c.Add(c.Sqr(c.Mul(c.Add(x, x), x)), x)
		},
		splits: 1, inputs: 0, backend: []string{"CPU"},
		placed: map[string]string{"x1": "CPU"},
	}, {
		// a=x+w goes to w's device, b=a*a follows it, c=sqr(b) needs
		// the CPU, d=c+c goes back: x, b and c are copied.
		name:   "chain with a device weight",
		net:    chainWithWeight,
		splits: 3, inputs: 3, backend: []string{"FAKE0", "CPU", "FAKE0"},
		placed: map[string]string{"x1": "CPU", "w2": "FAKE0", "a": "FAKE0", "b": "FAKE0", "c": "CPU", "d": "FAKE0"},
	}, {
		// a on the device; b=sqr(a) on the CPU; c=a*a stays on the
		// device, reading a in place; d=b+c reads b through a copy.
		name: "diamond",
		net: func(c *graph.Context, weight, input func(...int64) *graph.Tensor) *graph.Tensor {
			x, w := input(5, 2), weight(5, 2)
			a := c.Add(x, w)
			a.Name = "a"
			b := c.Sqr(a)
			b.Name = "b"
			m := c.Mul(a, a)
			m.Name = "c"
			d := c.Add(b, m)
			d.Name = "d"
			return d
		},
		splits: 3, inputs: 3, backend: []string{"FAKE0", "CPU", "FAKE0"},
		placed: map[string]string{"a": "FAKE0", "b": "CPU", "c": "FAKE0", "d": "FAKE0"},
	}, {
		// Views of a device weight live on the device: y reads v1 in
		// place (and x through a copy), z=sqr(v2) runs on the CPU from
		// a copy of v2, and y+z goes to the device, which reads more
		// of its inputs in place... as many as the CPU: the tie goes
		// to the higher priority.
		name: "views of device tensors",
		net: func(c *graph.Context, weight, input func(...int64) *graph.Tensor) *graph.Tensor {
			w, x := weight(8), input(4)
			v1 := c.View1D(w, 4, 0)
			v1.Name = "v1"
			v2 := c.View1D(w, 4, 16)
			v2.Name = "v2"
			y := c.Add(v1, x)
			y.Name = "y"
			z := c.Sqr(v2)
			z.Name = "z"
			o := c.Add(y, z)
			o.Name = "o"
			return o
		},
		splits: 3, inputs: 3, backend: []string{"FAKE0", "CPU", "FAKE0"},
		placed: map[string]string{"v1": "FAKE0", "v2": "FAKE0", "y": "FAKE0", "z": "CPU", "o": "FAKE0"},
	}, {
		// A reshape of the device result is a view op: it is skipped
		// when cutting and follows its memory.
		name: "reshape of a device node",
		net: func(c *graph.Context, weight, input func(...int64) *graph.Tensor) *graph.Tensor {
			x, w := input(6), weight(6)
			a := c.Mul(x, w)
			a.Name = "a"
			r := c.Reshape(a, 3, 2)
			r.Name = "r"
			s := c.Sqr(r)
			s.Name = "s"
			return s
		},
		splits: 2, inputs: 2, backend: []string{"FAKE0", "CPU"},
		placed: map[string]string{"a": "FAKE0", "r": "FAKE0", "s": "CPU"},
	}, {
		// Each add reads one more input from the CPU: after 30 copies
		// the split ends, so the second split copies the other 5.
		name: "too many inputs",
		net: func(c *graph.Context, weight, input func(...int64) *graph.Tensor) *graph.Tensor {
			acc := weight(3)
			for range 35 {
				acc = c.Add(acc, input(3))
			}
			return acc
		},
		splits: 2, inputs: 35, backend: []string{"FAKE0", "FAKE0"}, perSplit: []int{backend.MaxSplitInputs, 5},
	}, {
		// A weight in host memory keeps its op on the CPU, and the
		// CPU's expansion takes the rest: the device gets nothing.
		name:   "weights in host memory",
		net:    chainWithWeight,
		splits: 1, inputs: 0, backend: []string{"CPU"}, hostWeights: true,
		placed: map[string]string{"a": "CPU", "b": "CPU", "d": "CPU"},
	}, {
		// The user's assignment of b to the CPU stays; c and d follow
		// the CPU down, and cannot move up to a device with another
		// buffer type.
		name:   "user assignment",
		net:    chainWithWeight,
		splits: 2, inputs: 2, backend: []string{"FAKE0", "CPU"},
		placed: map[string]string{"a": "FAKE0", "b": "CPU", "c": "CPU", "d": "CPU"},
		pre: func(s *backend.Scheduler, g *graph.Graph, host backend.Backend) {
			if err := s.SetTensorBackend(node(g, "b"), host); err != nil {
				panic(err)
			}
		},
	}, {
		// a=x+w runs on the CPU, next to w, and the CPU's expansion
		// takes b; pass 3 then moves b up to the accelerator, which
		// shares the CPU's buffer type and runs MUL. Nothing is copied.
		name:   "upgrade to a backend with the same buffer type",
		net:    chainWithWeight,
		splits: 3, inputs: 0, backend: []string{"CPU", "ACCEL0", "CPU"}, first: accelDev, hostWeights: true,
		placed: map[string]string{"a": "CPU", "b": "ACCEL0", "c": "CPU", "d": "CPU"},
	}, {
		// With op offload, the device that wants it takes a=x+w from
		// beside its host weight, copying x and w; b and d follow.
		name:   "op offload",
		net:    chainWithWeight,
		splits: 3, inputs: 4, backend: []string{"FAKE1", "CPU", "FAKE1"},
		first: offloadDev, hostWeights: true, opOffload: true,
		placed: map[string]string{"w2": "CPU", "a": "FAKE1", "b": "FAKE1", "c": "CPU", "d": "FAKE1"},
	}, {
		// Without it the same device leaves everything to the CPU.
		name:   "no op offload",
		net:    chainWithWeight,
		splits: 1, inputs: 0, backend: []string{"CPU"},
		first: offloadDev, hostWeights: true,
	}}
}

func TestSchedulerSplits(t *testing.T) {
	for _, tc := range schedCases() {
		t.Run(tc.name, func(t *testing.T) {
			fake, host := fakeAndCPU(t)
			if tc.first != nil {
				fake = initFake(t, tc.first)
			}
			wt := fake.Device().BufferType()
			if tc.hostWeights {
				wt = buffer.CPU()
			}
			var pre func(*backend.Scheduler, *graph.Graph)
			if tc.pre != nil {
				pre = func(s *backend.Scheduler, g *graph.Graph) { tc.pre(s, g, host) }
			}
			s, g, got := run(t, []backend.Backend{fake, host}, backend.SchedulerOptions{OpOffload: tc.opOffload}, wt, tc.net, pre)
			assert.Equal(t, tc.splits, s.NSplits(), "splits")
			assert.Equal(t, 1, s.NCopies())
			n := 0
			for i := range s.NSplits() {
				b, in := s.SplitInputs(i)
				n += len(in)
				if i < len(tc.perSplit) {
					assert.Len(t, in, tc.perSplit[i], "inputs of split %d", i)
				}
				if i < len(tc.backend) {
					assert.Equal(t, tc.backend[i], b.Name(), "split %d", i)
				}
			}
			assert.Equal(t, tc.inputs, n, "split inputs")
			byName := map[string]*graph.Tensor{}
			for _, list := range [][]*graph.Tensor{g.Nodes, g.Leafs} {
				for _, x := range list {
					byName[x.Name] = x
					b := s.TensorBackend(x)
					require.NotNil(t, b, "%s unassigned", x.Name)
					assert.True(t, b.Device().SupportsOp(x), "%s (%s) on %s, which does not run it", x.Name, x.Op, b.Name())
				}
			}
			for name, want := range tc.placed {
				x := byName[name]
				require.NotNil(t, x, name)
				assert.Equal(t, want, s.TensorBackend(x).Name(), name)
			}
			if slices.Contains(tc.backend, fake.Name()) {
				assert.NotEmpty(t, ran(fake), "the device computed nothing")
			}

			// The same network on the CPU alone gives the same bytes.
			_, host2 := fakeAndCPU(t)
			s1, _, want := run(t, []backend.Backend{host2}, backend.SchedulerOptions{}, buffer.CPU(), tc.net, nil)
			assert.Equal(t, 1, s1.NSplits())
			assert.Equal(t, want, got)
		})
	}
}

func TestSchedulerResetRestoresSources(t *testing.T) {
	fake, host := fakeAndCPU(t)
	s, g, _ := run(t, []backend.Backend{fake, host}, backend.SchedulerOptions{}, fake.Device().BufferType(), schedCases()[2].net, nil)
	d := g.Nodes[len(g.Nodes)-1]
	assert.Contains(t, d.Src[0].Name, "#", "the split reads b through a copy")
	s.Reset()
	assert.Equal(t, "b", d.Src[0].Name)
	assert.Nil(t, s.TensorBackend(d))
	assert.Equal(t, 0, s.NSplits())
}

func TestSchedulerEvalCallback(t *testing.T) {
	fake, host := fakeAndCPU(t)
	s, err := backend.NewScheduler([]backend.Backend{fake, host}, backend.SchedulerOptions{})
	require.NoError(t, err)
	defer s.Close()
	c := graph.NewContext(graph.ContextOptions{})
	x := graph.SetInput(c.NewTensor(quant.F32, 4))
	a := c.Add(x, x)
	b := c.Sqr(a)
	b.Name = "b"
	o := graph.SetOutput(c.Mul(b, b))
	g, err := c.Build(o)
	require.NoError(t, err)

	var asked, seen []string
	s.SetEvalCallback(func(t *graph.Tensor, ask bool) bool {
		if ask {
			asked = append(asked, t.Name)
			return t == b
		}
		seen = append(seen, t.Name)
		return true
	})
	require.NoError(t, s.AllocGraph(g))
	require.NoError(t, buffer.SetTensor(x, values(1, 4), 0))
	require.NoError(t, s.GraphCompute(g))
	assert.Equal(t, []string{a.Name, "b", o.Name}, asked)
	assert.Equal(t, []string{"b"}, seen)
	got := make([]byte, 4)
	require.NoError(t, buffer.GetTensor(b, got, 0))
	xv := math.Float32frombits(binary.LittleEndian.Uint32(values(1, 1)))
	assert.Equal(t, (2*xv)*(2*xv), math.Float32frombits(binary.LittleEndian.Uint32(got)))

	s.SetEvalCallback(func(t *graph.Tensor, ask bool) bool { return ask || t != b })
	err = s.GraphCompute(g)
	assert.True(t, errors.Is(err, backend.ErrAborted), "%v", err)
}

func TestNewSchedulerErrors(t *testing.T) {
	fake, host := fakeAndCPU(t)
	_, err := backend.NewScheduler(nil, backend.SchedulerOptions{})
	assert.ErrorIs(t, err, backend.ErrArgument)
	_, err = backend.NewScheduler([]backend.Backend{host, fake}, backend.SchedulerOptions{})
	assert.ErrorIs(t, err, backend.ErrArgument, "the CPU must come last")
	_, err = backend.NewScheduler([]backend.Backend{fake, host}, backend.SchedulerOptions{BufferTypes: []buffer.Type{buffer.CPU()}})
	assert.ErrorIs(t, err, backend.ErrArgument, "one buffer type per backend")
	_, err = backend.NewScheduler([]backend.Backend{fake, host}, backend.SchedulerOptions{BufferTypes: []buffer.Type{buffer.CPU(), buffer.CPU()}})
	assert.ErrorIs(t, err, backend.ErrArgument, "the device cannot use host memory")
}

func TestSchedulerReserve(t *testing.T) {
	fake, host := fakeAndCPU(t)
	s, err := backend.NewScheduler([]backend.Backend{fake, host}, backend.SchedulerOptions{})
	require.NoError(t, err)
	defer s.Close()
	build := func(n int64) (*graph.Graph, *graph.Tensor) {
		c := graph.NewContext(graph.ContextOptions{})
		w := c.NewTensor(quant.F32, n)
		b, err := fakeMem.Alloc(fakeMem.AllocSize(w))
		require.NoError(t, err)
		require.NoError(t, b.AllocTensor(w, 0))
		b.SetUsage(buffer.UsageWeights)
		x := graph.SetInput(c.NewTensor(quant.F32, n))
		o := graph.SetOutput(c.Sqr(c.Mul(c.Add(x, w), w)))
		g, err := c.Build(o)
		require.NoError(t, err)
		return g, x
	}
	big, _ := build(64)
	require.NoError(t, s.Reserve(big))
	assert.Equal(t, 0, s.NSplits(), "Reserve resets")
	fs, hs := s.BufferSize(fake), s.BufferSize(host)
	assert.NotZero(t, fs)
	assert.NotZero(t, hs)
	assert.Same(t, fakeMem, s.BufferType(fake))

	small, x := build(16)
	require.NoError(t, s.AllocGraph(small))
	assert.Equal(t, 2, s.NSplits())
	assert.Equal(t, fs, s.BufferSize(fake), "the reserved buffers hold the smaller graph")
	assert.Equal(t, hs, s.BufferSize(host))
	require.NoError(t, buffer.SetTensor(x, values(1, 16), 0))
	require.NoError(t, s.GraphCompute(small))
	assert.ErrorIs(t, s.AllocGraph(small), backend.ErrArgument, "a placed graph must be Reset first")
}

func TestSchedulerUnusableBuffer(t *testing.T) {
	_, host := fakeAndCPU(t)
	s, err := backend.NewScheduler([]backend.Backend{host}, backend.SchedulerOptions{})
	require.NoError(t, err)
	defer s.Close()
	c := graph.NewContext(graph.ContextOptions{})
	w := c.NewTensor(quant.F32, 4)
	b, err := fakeMem.Alloc(fakeMem.AllocSize(w))
	require.NoError(t, err)
	require.NoError(t, b.AllocTensor(w, 0))
	g, err := c.Build(c.Sqr(w))
	require.NoError(t, err)
	assert.ErrorIs(t, s.AllocGraph(g), backend.ErrUnsupported, "no backend of the scheduler can read w")
}

func TestSchedulerSplitTwice(t *testing.T) {
	fake, host := fakeAndCPU(t)
	s, g, want := run(t, []backend.Backend{fake, host}, backend.SchedulerOptions{}, fake.Device().BufferType(), chainWithWeight, nil)
	n := s.NSplits()
	// Splitting the graph again without Reset keeps the assignments and
	// makes the same splits, with fresh copies.
	require.NoError(t, s.SplitGraph(g))
	assert.Equal(t, n, s.NSplits())
	require.NoError(t, s.AllocGraph(g))
	assert.Equal(t, n, s.NSplits())
	// The graph was placed again: its input needs its values again.
	x := g.Leafs[slices.IndexFunc(g.Leafs, func(l *graph.Tensor) bool { return l.Name == "x1" })]
	require.NoError(t, buffer.SetTensor(x, values(1, x.NElements()), 0))
	require.NoError(t, s.GraphCompute(g))
	got := make([]byte, len(want))
	require.NoError(t, buffer.GetTensor(g.Nodes[len(g.Nodes)-1], got, 0))
	assert.Equal(t, want, got)
}

// TestSchedulerRandomGraphs places random graphs of ADD, MUL (the device
// runs both), SUB and SQR (CPU only) and reshapes over inputs and device
// weights: every node must land on a backend that runs it, no split may
// copy from its own backend, and the result must be the CPU's bytes.
func TestSchedulerRandomGraphs(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		nnodes := 2 + r.IntN(25)
		plan := make([][3]int, nnodes) // op, operand, operand
		for i := range plan {
			plan[i] = [3]int{r.IntN(5), r.IntN(i + 3), r.IntN(i + 3)}
		}
		weightFirst := r.IntN(2) == 0
		n := func(c *graph.Context, weight, input func(...int64) *graph.Tensor) *graph.Tensor {
			pool := []*graph.Tensor{input(6, 2), weight(6, 2), input(6, 2)}
			if weightFirst {
				pool[0], pool[1] = pool[1], pool[0]
			}
			for _, p := range plan {
				a, b := pool[p[1]], pool[p[2]]
				var x *graph.Tensor
				switch p[0] {
				case 0:
					x = c.Add(a, b)
				case 1:
					x = c.Mul(a, b)
				case 2:
					x = c.Sub(a, b)
				case 3:
					x = c.Sqr(a)
				default:
					x = c.Reshape(a, 6, 2)
				}
				pool = append(pool, x)
			}
			return c.Add(pool[len(pool)-1], pool[len(pool)-2])
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			fake, host := fakeAndCPU(t)
			s, g, got := run(t, []backend.Backend{fake, host}, backend.SchedulerOptions{}, fakeMem, n, nil)
			for _, x := range g.Nodes {
				b := s.TensorBackend(x)
				require.NotNil(t, b, x.Name)
				assert.True(t, b.Device().SupportsOp(x), "%s (%s) on %s", x.Name, x.Op, b.Name())
			}
			t.Logf("%d nodes, %d splits, %d run on the device", len(g.Nodes), s.NSplits(), len(ran(fake)))
			for i := range s.NSplits() {
				b, ins := s.SplitInputs(i)
				for _, in := range ins {
					assert.NotSame(t, b, s.TensorBackend(in), "split %d copies %s from its own backend", i, in.Name)
				}
			}
			_, host2 := fakeAndCPU(t)
			_, _, want := run(t, []backend.Backend{host2}, backend.SchedulerOptions{}, buffer.CPU(), n, nil)
			assert.Equal(t, want, got)
		})
	}
}

// Split inputs computed by another backend reach the device through its
// CopyTensorAsync; graph inputs are copied at once, synchronously.
func TestSchedulerCopiesAsync(t *testing.T) {
	fake, host := fakeAndCPU(t)
	s, _, _ := run(t, []backend.Backend{fake, host}, backend.SchedulerOptions{}, fakeMem, schedCases()[2].net, nil)
	require.Equal(t, 3, s.NSplits())
	assert.Equal(t, []string{"b"}, fake.(*devtest.Backend).Copied(), "x is a graph input, a goes to the CPU")
}

// computeAgain places g anew (the next copy, when parallel), sets its
// inputs for round r and computes it, returning the output's bytes.
func computeAgain(t *testing.T, s *backend.Scheduler, g *graph.Graph, r int) []byte {
	t.Helper()
	s.Reset()
	require.NoError(t, s.AllocGraph(g))
	for _, x := range g.Leafs {
		if k, ok := x.Extra.(int); ok && x.Flags&graph.FlagInput != 0 {
			require.NoError(t, buffer.SetTensor(x, values(k+1000*r, x.NElements()), 0))
		}
	}
	require.NoError(t, s.GraphCompute(g))
	out := g.Nodes[len(g.Nodes)-1]
	res := make([]byte, out.NBytes())
	require.NoError(t, buffer.GetTensor(out, res, 0))
	return res
}

// With Parallel, consecutive computations use the copies in turn, on an
// asynchronous device with events, and give the CPU's results.
func TestSchedulerParallel(t *testing.T) {
	for _, tc := range schedCases() {
		if tc.first != nil || tc.hostWeights {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			eventDev.ResetTrace()
			evt := initFake(t, eventDev)
			_, host := fakeAndCPU(t)
			var pre func(*backend.Scheduler, *graph.Graph)
			if tc.pre != nil {
				pre = func(s *backend.Scheduler, g *graph.Graph) { tc.pre(s, g, host) }
			}
			s, g, got := run(t, []backend.Backend{evt, host}, backend.SchedulerOptions{Parallel: true}, fakeMem, tc.net, pre)
			assert.Equal(t, backend.MaxCopies, s.NCopies())
			assert.Equal(t, 4, s.NCopies())
			assert.Equal(t, 4, eventDev.NEvents(), "one event per copy for the device, none for the CPU")
			assert.Equal(t, tc.splits, s.NSplits())
			_, host2 := fakeAndCPU(t)
			ref, rg, want := run(t, []backend.Backend{host2}, backend.SchedulerOptions{}, buffer.CPU(), tc.net, nil)
			assert.Equal(t, 1, ref.NCopies())
			assert.Equal(t, want, got)
			for r := 1; r <= 6; r++ {
				want := computeAgain(t, ref, rg, r)
				assert.Equal(t, want, computeAgain(t, s, g, r), "round %d", r)
				assert.Equal(t, r%4, s.CurrentCopy(), "round %d", r)
				assert.Equal(t, 0, ref.CurrentCopy())
			}
		})
	}
}

// The parallel scheduler records each device split's event and waits on
// it before refilling that copy: the host blocks for graph inputs and for
// copies through the host, the device waits for its own copies.
func TestSchedulerParallelEvents(t *testing.T) {
	eventDev.ResetTrace()
	evt := initFake(t, eventDev)
	_, host := fakeAndCPU(t)
	// Splits: EVENT0 (x+w, a*a), CPU (sqr), EVENT0 (c+c), reading the
	// graph input x, b and c through copies.
	s, g, _ := run(t, []backend.Backend{evt, host}, backend.SchedulerOptions{Parallel: true}, fakeMem, chainWithWeight, nil)
	require.Equal(t, 3, s.NSplits())
	round := func(c int) []string {
		return []string{
			fmt.Sprintf("sync %d", c), // before copying the graph input x
			fmt.Sprintf("record %d", c),
			fmt.Sprintf("wait %d", c), // before the device copies c
			"copy c",
			fmt.Sprintf("record %d", c),
		}
	}
	assert.Equal(t, round(0), eventDev.TakeTrace())
	for r := 1; r <= 5; r++ {
		computeAgain(t, s, g, r)
		assert.Equal(t, round(r%4), eventDev.TakeTrace(), "round %d", r)
	}
	// The graph input sits at another address in each of four
	// consecutive computations, then comes back.
	x := g.Leafs[slices.IndexFunc(g.Leafs, func(l *graph.Tensor) bool { return l.Name == "x1" })]
	var addrs []*byte
	for r := range 5 {
		computeAgain(t, s, g, r)
		addrs = append(addrs, &x.Data[0])
	}
	for i := range 4 {
		for j := range i {
			assert.NotSame(t, addrs[i], addrs[j], "copies %d and %d", i, j)
		}
	}
	assert.Same(t, addrs[0], addrs[4])
	eventDev.TakeTrace()
	require.NoError(t, s.Close())
	assert.Equal(t, []string(nil), eventDev.TakeTrace())
}

// Without Parallel there is one copy and no event, as in ggml.
func TestSchedulerNotParallelHasNoEvents(t *testing.T) {
	eventDev.ResetTrace()
	evt := initFake(t, eventDev)
	_, host := fakeAndCPU(t)
	s, g, want := run(t, []backend.Backend{evt, host}, backend.SchedulerOptions{}, fakeMem, chainWithWeight, nil)
	assert.Equal(t, 1, s.NCopies())
	assert.Equal(t, 0, eventDev.NEvents())
	assert.Equal(t, want, computeAgain(t, s, g, 0))
	assert.Equal(t, 0, s.CurrentCopy())
	assert.Equal(t, []string{"copy c", "copy c"}, eventDev.TakeTrace(), "the device's own copies only")
}

// A MUL_MAT_ID offloaded next to host experts gets only the experts its
// ids use, each run of neighbours with one expert of padding after it
// unless it ends the tensor.
func TestSchedulerCopiesUsedExperts(t *testing.T) {
	moe := func(backends []backend.Backend, opts backend.SchedulerOptions) (*backend.Scheduler, []byte) {
		s, err := backend.NewScheduler(backends, opts)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		c := graph.NewContext(graph.ContextOptions{})
		as := c.NewTensor(quant.F32, 8, 3, 4) // 4 experts of 96 bytes
		as.Name = "experts"
		wb, err := buffer.CPU().Alloc(buffer.CPU().AllocSize(as))
		require.NoError(t, err)
		require.NoError(t, wb.AllocTensor(as, 0))
		wb.SetUsage(buffer.UsageWeights)
		require.NoError(t, buffer.SetTensor(as, values(1, as.NElements()), 0))
		b := graph.SetInput(c.NewTensor(quant.F32, 8, 1, 2))
		b.Name = "b"
		ids := graph.SetInput(c.NewTensor(quant.I32, 2, 2))
		ids.Name = "ids"
		out := graph.SetOutput(c.MulMatID(as, b, ids))
		g, err := c.Build(out)
		require.NoError(t, err)
		require.NoError(t, s.AllocGraph(g))
		require.NoError(t, buffer.SetTensor(b, values(2, b.NElements()), 0))
		idv := make([]byte, 16)
		for i, e := range []uint32{2, 0, 2, 2} {
			binary.LittleEndian.PutUint32(idv[4*i:], e)
		}
		require.NoError(t, buffer.SetTensor(ids, idv, 0))
		require.NoError(t, s.GraphCompute(g))
		res := make([]byte, out.NBytes())
		require.NoError(t, buffer.GetTensor(out, res, 0))
		return s, res
	}
	dev := initFake(t, moeDev)
	_, host := fakeAndCPU(t)
	s, got := moe([]backend.Backend{dev, host}, backend.SchedulerOptions{OpOffload: true})
	require.Equal(t, 1, s.NSplits())
	b, ins := s.SplitInputs(0)
	require.Same(t, dev, b)
	require.Len(t, ins, 3)
	assert.Equal(t, [][2]uint64{{0, 192}, {192, 192}}, dev.(*devtest.Backend).Sets(), "experts 0 and 2, each with 96 bytes of padding")
	_, host2 := fakeAndCPU(t)
	_, want := moe([]backend.Backend{host2}, backend.SchedulerOptions{})
	assert.Equal(t, want, got)
}

// Profile counts each backend's nodes, splits and copies, and with
// SchedulerOptions.Profile times them.
func TestSchedulerProfile(t *testing.T) {
	for _, timed := range []bool{false, true} {
		fake, host := fakeAndCPU(t)
		// Splits: FAKE0 (x+w, a*a), CPU (sqr), FAKE0 (c+c).
		s, _, _ := run(t, []backend.Backend{fake, host}, backend.SchedulerOptions{Profile: timed}, fakeMem, chainWithWeight, nil)
		p := s.Profile()
		require.Len(t, p, 2)
		assert.Same(t, fake, p[0].Backend)
		assert.Equal(t, []int{3, 2, 2}, []int{p[0].Nodes, p[0].Splits, p[0].Copies})
		assert.Equal(t, []int{1, 1, 1}, []int{p[1].Nodes, p[1].Splits, p[1].Copies})
		assert.Equal(t, timed, p[0].Compute > 0 && p[1].Compute > 0)
		if !timed {
			assert.Zero(t, p[0].Compute+p[0].Copy+p[1].Compute+p[1].Copy)
		}
	}
}
