package rpcref

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ggml-go/ggml/devices/cpu"
	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/dynlib"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/ops"
)

// api is the part of ggml's backend and RPC API the client uses.
type api struct {
	addServer      func(endpoint string) uintptr
	regDevCount    func(reg uintptr) uintptr
	rpcInit        func(endpoint string, device uint32) uintptr
	rpcBufferType  func(endpoint string, device uint32) uintptr
	buftAlloc      func(buft uintptr, size uintptr) uintptr
	buftAlignment  func(buft uintptr) uintptr
	buftAllocSize  func(buft uintptr, t *ggmlref.Tensor) uintptr
	bufferBase     func(buf uintptr) uintptr
	bufferFree     func(buf uintptr)
	tensorAlloc    func(buf uintptr, t *ggmlref.Tensor, addr uintptr) int32
	viewInit       func(t *ggmlref.Tensor) int32
	tensorSet      func(t *ggmlref.Tensor, data unsafe.Pointer, offset, size uintptr)
	tensorGet      func(t *ggmlref.Tensor, data unsafe.Pointer, offset, size uintptr)
	graphCompute   func(backend uintptr, g uintptr) int32
	backendFree    func(backend uintptr)
	backendDevName func(backend uintptr) uintptr
}

// Client is the real ggml's RPC client connected to one server device.
type Client struct {
	lib      *ggmlref.Lib
	fn       api
	endpoint string
	backend  uintptr
	buft     uintptr
	refCPU   *ggmlref.Backend
	ctx      *ggmlref.Context
	ggmlCPU  bool
	// Devices is how many devices the server reported.
	Devices int
}

// NewClient is Dial for a test: a missing peer skips it (fails it in
// CI), a failure to connect fails it, and the client is closed when it
// ends.
func NewClient(t testing.TB, endpoint string, ggmlServer bool) *Client {
	t.Helper()
	Need(t)
	c, err := Dial(endpoint, ggmlServer)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Dial loads the peer's libraries and connects ggml's RPC client to
// device 0 of the server at endpoint (host:port). ggml aborts the process
// when it cannot connect, so the caller checks the server is up first.
// ggmlServer says the server is ggml's own, computing with ggml's CPU
// backend.
func Dial(endpoint string, ggmlServer bool) (*Client, error) {
	dir, err := LibDir()
	if err != nil {
		return nil, err
	}
	lib, err := ggmlref.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("rpcref: %w", err)
	}
	c := &Client{lib: lib, endpoint: endpoint, ggmlCPU: ggmlServer}
	for _, name := range []string{"libggml.so", "libggml-rpc.so"} {
		l, err := dynlib.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("rpcref: %w", err)
		}
		c.bind(l)
	}
	reg := c.fn.addServer(endpoint)
	if reg == 0 {
		return nil, fmt.Errorf("rpcref: ggml_backend_rpc_add_server(%s) found no devices", endpoint)
	}
	c.Devices = int(c.fn.regDevCount(reg))
	c.backend = c.fn.rpcInit(endpoint, 0)
	c.buft = c.fn.rpcBufferType(endpoint, 0)
	if c.backend == 0 || c.buft == 0 {
		return nil, fmt.Errorf("rpcref: ggml_backend_rpc_init(%s, 0) failed", endpoint)
	}
	if c.refCPU, err = lib.NewCPUBackend(1); err != nil {
		c.fn.backendFree(c.backend)
		return nil, fmt.Errorf("rpcref: %w", err)
	}
	return c, nil
}

// bind fills the functions l has (libggml.so has the backend API,
// libggml-rpc.so the RPC one).
func (c *Client) bind(l *dynlib.Library) {
	fns := map[string]any{
		"ggml_backend_rpc_add_server":      &c.fn.addServer,
		"ggml_backend_rpc_init":            &c.fn.rpcInit,
		"ggml_backend_rpc_buffer_type":     &c.fn.rpcBufferType,
		"ggml_backend_reg_dev_count":       &c.fn.regDevCount,
		"ggml_backend_buft_alloc_buffer":   &c.fn.buftAlloc,
		"ggml_backend_buft_get_alignment":  &c.fn.buftAlignment,
		"ggml_backend_buft_get_alloc_size": &c.fn.buftAllocSize,
		"ggml_backend_buffer_get_base":     &c.fn.bufferBase,
		"ggml_backend_buffer_free":         &c.fn.bufferFree,
		"ggml_backend_tensor_alloc":        &c.fn.tensorAlloc,
		"ggml_backend_view_init":           &c.fn.viewInit,
		"ggml_backend_tensor_set":          &c.fn.tensorSet,
		"ggml_backend_tensor_get":          &c.fn.tensorGet,
		"ggml_backend_graph_compute":       &c.fn.graphCompute,
		"ggml_backend_free":                &c.fn.backendFree,
		"ggml_backend_name":                &c.fn.backendDevName,
	}
	for name, fn := range fns {
		p, err := l.Sym(name)
		if err != nil {
			continue // in the other library
		}
		purego.RegisterFunc(fn, p)
	}
}

// Close frees the client's backend and its context.
func (c *Client) Close() {
	if c.ctx != nil {
		c.ctx.Free()
	}
	c.refCPU.Free()
	c.fn.backendFree(c.backend)
}

// Name is "ggml" when ggml's server computes (so the suite skips the
// cases of ggml's known CPU bugs, as for any ggml reference), else "ggml
// RPC client".
func (c *Client) Name() string {
	if c.ggmlCPU {
		return "ggml"
	}
	return "ggml RPC client"
}

// Versions names the peer (optest.Versioner).
func (c *Client) Versions() map[string]string {
	return map[string]string{"ggml RPC client": fmt.Sprintf("%s (llama-cpp-python %s), server %s", c.lib.Version(), Version, c.endpoint)}
}

// Supports refuses what either our CPU device or ggml's does not compute:
// ggml's RPC client asks the server nothing before sending a graph, and a
// server that fails a graph closes the connection, which ggml's client
// answers by aborting the process.
func (c *Client) Supports(g *graph.Graph) error {
	m, err := c.mirror(g)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes {
		if !cpu.SupportsOp(n) || !c.refCPU.SupportsOp(m[n]) {
			return fmt.Errorf("rpcref: %s is not computed by both CPU devices", mirror.Describe(n))
		}
	}
	return nil
}

// mirror builds g's tensors in a ggml context, without memory.
func (c *Client) mirror(g *graph.Graph) (map[*graph.Tensor]*ggmlref.Tensor, error) {
	order := mirror.Reachable(g)
	need := uint64(len(order)+1)*c.lib.TensorOverhead() + c.lib.GraphOverhead(len(order)+1) + 1<<16
	if c.ctx == nil || c.ctx.Size() < need {
		if c.ctx != nil {
			c.ctx.Free()
		}
		ctx, err := c.lib.NewContext(max(need, 1<<20), true)
		if err != nil {
			return nil, err
		}
		c.ctx = ctx
	}
	c.ctx.Reset()
	m := make(map[*graph.Tensor]*ggmlref.Tensor, len(order))
	for _, t := range order {
		ct, err := c.ctx.NewTensor(uint32(t.Type), t.Ne)
		if err != nil {
			return nil, err
		}
		m[t] = ct
	}
	for _, t := range order {
		ct := m[t]
		ct.Nb, ct.Op, ct.OpParams, ct.Flags = t.Nb, int32(t.Op), t.Params, int32(t.Flags)
		if t.Op != ops.None {
			if g.Contains(t) {
				ct.Flags |= int32(graph.FlagCompute)
			} else {
				ct.Op = int32(ops.None) // computed by an earlier graph: an input here
			}
		}
		for i, s := range t.Src {
			if s != nil {
				ct.Src[i] = m[s]
			}
		}
		if t.ViewSrc != nil {
			ct.ViewSrc, ct.ViewOffs = m[t.ViewSrc], t.ViewOffs
		}
		ct.SetName(t.Name)
	}
	return m, nil
}

// Compute sends g through ggml's RPC client: its tensors in one buffer on
// the server, the inputs set, the graph computed there, the nodes read
// back into their Data.
func (c *Client) Compute(g *graph.Graph) error {
	m, err := c.mirror(g)
	if err != nil {
		return err
	}
	order := mirror.Reachable(g)
	align := uint64(c.fn.buftAlignment(c.buft))
	offs := map[*graph.Tensor]uint64{}
	var size uint64
	for _, t := range order {
		if t.ViewSrc == nil {
			offs[t] = size
			size += (uint64(c.fn.buftAllocSize(c.buft, m[t])) + align - 1) / align * align
		}
	}
	buf := c.fn.buftAlloc(c.buft, uintptr(max(size, align)))
	if buf == 0 {
		return errors.New("rpcref: ggml_backend_buft_alloc_buffer failed")
	}
	defer c.fn.bufferFree(buf)
	base := c.fn.bufferBase(buf)
	for _, t := range order {
		if t.ViewSrc == nil {
			if st := c.fn.tensorAlloc(buf, m[t], base+uintptr(offs[t])); st != 0 {
				return fmt.Errorf("rpcref: ggml_backend_tensor_alloc(%s): status %d", t.Name, st)
			}
		}
	}
	for _, t := range order {
		if t.ViewSrc != nil {
			if st := c.fn.viewInit(m[t]); st != 0 {
				return fmt.Errorf("rpcref: ggml_backend_view_init(%s): status %d", t.Name, st)
			}
		}
	}
	for _, t := range order {
		if n := t.NBytes(); t.ViewSrc == nil && n > 0 && uint64(len(t.Data)) >= n {
			c.fn.tensorSet(m[t], unsafe.Pointer(&t.Data[0]), 0, uintptr(n))
		}
	}
	cg, err := c.ctx.NewGraph(len(order) + 1)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes {
		if err := cg.BuildForwardExpand(m[n]); err != nil {
			return err
		}
	}
	if cg.NNodes() != len(g.Nodes) {
		return fmt.Errorf("rpcref: ggml built %d nodes from %d", cg.NNodes(), len(g.Nodes))
	}
	if st := c.fn.graphCompute(c.backend, cg.Handle()); st != 0 {
		return fmt.Errorf("rpcref: ggml_backend_graph_compute: status %d", st)
	}
	done := map[*graph.Tensor]bool{}
	for _, n := range g.Nodes {
		o := n
		if n.ViewSrc != nil {
			o = n.ViewSrc
		}
		if k := o.NBytes(); !done[o] && k > 0 && uint64(len(o.Data)) >= k {
			done[o] = true
			c.fn.tensorGet(m[o], unsafe.Pointer(&o.Data[0]), 0, uintptr(k))
		}
	}
	return nil
}
