package graph

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// builders calls every builder of this package on a and b (both [4 3 2]
// F32 tensors, or nil), for tests of the sticky error.
func builders(c *Context, a, b *Tensor) map[string]func() *Tensor {
	return map[string]func() *Tensor{
		"NewTensor":  func() *Tensor { return c.NewTensor(quant.F32, 4) },
		"NewOp":      func() *Tensor { return c.NewOp(ops.Add, quant.F32, [MaxDims]int64{4, 3, 2, 1}, ops.Params{}, a, b) },
		"ViewTensor": func() *Tensor { return c.ViewTensor(a) },
		"View1D":     func() *Tensor { return c.View1D(a, 2, 4) },
		"View2D":     func() *Tensor { return c.View2D(a, 2, 2, 16, 4) },
		"View3D":     func() *Tensor { return c.View3D(a, 2, 2, 2, 16, 48, 0) },
		"View4D":     func() *Tensor { return c.View4D(a, 2, 2, 1, 2, 16, 48, 48, 0) },
		"Reshape":    func() *Tensor { return c.Reshape(a, 24) },
		"ReshapeAs":  func() *Tensor { return c.ReshapeAs(a, b) },
		"Permute":    func() *Tensor { return c.Permute(a, 1, 0, 2, 3) },
		"Transpose":  func() *Tensor { return c.Transpose(a) },
		"Cont":       func() *Tensor { return c.Cont(a) },
		"Cont2D":     func() *Tensor { return c.Cont(a, 6, 4) },
		"Cpy":        func() *Tensor { return c.Cpy(a, b) },
		"Dup":        func() *Tensor { return c.Dup(a) },
		"Add":        func() *Tensor { return c.Add(a, b) },
		"AddInplace": func() *Tensor { return c.AddInplace(a, b) },
		"Sub":        func() *Tensor { return c.Sub(a, b) },
		"SubInplace": func() *Tensor { return c.SubInplace(a, b) },
		"Mul":        func() *Tensor { return c.Mul(a, b) },
		"MulInplace": func() *Tensor { return c.MulInplace(a, b) },
		"Div":        func() *Tensor { return c.Div(a, b) },
		"DivInplace": func() *Tensor { return c.DivInplace(a, b) },
		"Roll":       func() *Tensor { return c.Roll(a, 3, -2, 1, 0) },
		"SetName":    func() *Tensor { return c.SetName(a, "x") },
		"SetInput":   func() *Tensor { return SetInput(a) },
		"SetOutput":  func() *Tensor { return SetOutput(a) },
	}
}

// TestBuildersValid: every builder succeeds on valid arguments (so the
// sticky-error test below really tests the error).
func TestBuildersValid(t *testing.T) {
	for name := range builders(nil, nil, nil) {
		t.Run(name, func(t *testing.T) {
			c := NewContext(ContextOptions{Alloc: true})
			a, b := c.NewTensor(quant.F32, 4, 3, 2), c.NewTensor(quant.F32, 4, 3, 2)
			got := builders(c, a, b)[name]()
			require.NoError(t, c.Err())
			require.NotNil(t, got)
			g, err := c.Build(got)
			require.NoError(t, err)
			require.True(t, g.Contains(got))
		})
	}
}

// TestStickyError: after the first error every builder returns nil without
// panicking, on valid, nil or failed arguments, and Err and Build keep
// reporting the first error.
func TestStickyError(t *testing.T) {
	c := NewContext(ContextOptions{Alloc: true})
	a, b := c.NewTensor(quant.F32, 4, 3, 2), c.NewTensor(quant.F32, 4, 3, 2)
	require.Nil(t, c.Reshape(c.Transpose(a), 24)) // not contiguous
	first := c.Err()
	require.ErrorIs(t, first, ErrShape)
	require.Contains(t, first.Error(), "Reshape")
	made := len(c.Tensors())
	for _, args := range [][2]*Tensor{{a, b}, {nil, nil}, {a, nil}} {
		for name, f := range builders(c, args[0], args[1]) {
			got := f()
			switch name {
			case "SetName", "SetInput", "SetOutput":
				require.Same(t, args[0], got, name) // not builders: they mark what they are given
			default:
				require.Nil(t, got, name)
			}
			require.Same(t, first, c.Err(), name)
		}
	}
	require.Len(t, c.Tensors(), made)
	g, err := c.Build(a)
	require.Nil(t, g)
	require.Same(t, first, err)
	// A chain of builders on a failed result reads as one expression.
	require.Nil(t, c.Add(c.Cont(c.Permute(c.View1D(nil, 3, 0), 0, 1, 2, 3)), b))
	require.Same(t, first, c.Err())
}

func TestNilArgument(t *testing.T) {
	for name, f := range map[string]func(c *Context, a *Tensor) *Tensor{
		"Add a":      func(c *Context, a *Tensor) *Tensor { return c.Add(nil, a) },
		"Add b":      func(c *Context, a *Tensor) *Tensor { return c.Add(a, nil) },
		"Cpy":        func(c *Context, a *Tensor) *Tensor { return c.Cpy(a, nil) },
		"View2D":     func(c *Context, a *Tensor) *Tensor { return c.View2D(nil, 1, 1, 4, 0) },
		"View3D":     func(c *Context, a *Tensor) *Tensor { return c.View3D(nil, 1, 1, 1, 4, 4, 0) },
		"View4D":     func(c *Context, a *Tensor) *Tensor { return c.View4D(nil, 1, 1, 1, 1, 4, 4, 4, 0) },
		"Reshape":    func(c *Context, a *Tensor) *Tensor { return c.Reshape(nil, 1) },
		"ReshapeAs":  func(c *Context, a *Tensor) *Tensor { return c.ReshapeAs(a, nil) },
		"Cont":       func(c *Context, a *Tensor) *Tensor { return c.Cont(nil) },
		"Dup":        func(c *Context, a *Tensor) *Tensor { return c.Dup(nil) },
		"ViewTensor": func(c *Context, a *Tensor) *Tensor { return c.ViewTensor(nil) },
		"Permute":    func(c *Context, a *Tensor) *Tensor { return c.Permute(nil, 0, 1, 2, 3) },
		"Transpose":  func(c *Context, a *Tensor) *Tensor { return c.Transpose(nil) },
		"NewOp":      func(c *Context, a *Tensor) *Tensor { return c.NewOp(ops.Dup, quant.F32, a.Ne, ops.Params{}, nil) },
		"NewOp mid":  func(c *Context, a *Tensor) *Tensor { return c.NewOp(ops.Add, quant.F32, a.Ne, ops.Params{}, a, nil, a) },
	} {
		t.Run(name, func(t *testing.T) {
			c := NewContext(ContextOptions{})
			a := c.NewTensor(quant.F32, 4)
			require.Nil(t, f(c, a))
			require.ErrorIs(t, c.Err(), ErrNil)
		})
	}
}

func TestBuilderErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		f    func(c *Context, a *Tensor) *Tensor // a is F32 [4 3 2] (96 bytes)
		want error
	}{
		"view1d past end":                 {func(c *Context, a *Tensor) *Tensor { return c.View1D(a, 4, 84) }, ErrShape},
		"roll shift of a whole dimension": {func(c *Context, a *Tensor) *Tensor { return c.Roll(a, 0, -3, 0, 0) }, ErrArgument},
		"roll strided rows":               {func(c *Context, a *Tensor) *Tensor { return c.Roll(c.Transpose(a), 1, 0, 0, 0) }, ErrShape},
		"view1d too long":                 {func(c *Context, a *Tensor) *Tensor { return c.View1D(a, 25, 0) }, ErrShape},
		"view1d offset overflow":          {func(c *Context, a *Tensor) *Tensor { return c.View1D(a, 4, math.MaxUint64-3) }, ErrShape},
		"view1d negative":                 {func(c *Context, a *Tensor) *Tensor { return c.View1D(a, -1, 0) }, ErrShape},
		"view of view overflow": {func(c *Context, a *Tensor) *Tensor {
			return c.View1D(c.View1D(a, 4, 16), 1, math.MaxUint64-7)
		}, ErrShape},
		"view of view past end":   {func(c *Context, a *Tensor) *Tensor { return c.View1D(c.View1D(a, 20, 16), 4, 68) }, ErrShape},
		"view2d strided past end": {func(c *Context, a *Tensor) *Tensor { return c.View2D(a, 4, 3, 44, 0) }, ErrShape},
		"view2d stride overflow": {func(c *Context, a *Tensor) *Tensor {
			return c.View2D(a, 1, 3, 1<<63, 0) // 2 strides of 2^63 wrap to 0
		}, ErrShape},
		"view3d stride overflow": {func(c *Context, a *Tensor) *Tensor {
			return c.View3D(a, 1, 1, 5, 4, math.MaxUint64/4+1, 0)
		}, ErrShape},
		"view4d past end":      {func(c *Context, a *Tensor) *Tensor { return c.View4D(a, 4, 3, 2, 2, 16, 48, 48, 0) }, ErrShape},
		"view4d partial block": {func(c *Context, a *Tensor) *Tensor { return c.View1D(c.NewTensor(quant.Q8_0, 64), 3, 0) }, ErrShape},
		"reshape count":        {func(c *Context, a *Tensor) *Tensor { return c.Reshape(a, 5, 5) }, ErrShape},
		"reshape no dims":      {func(c *Context, a *Tensor) *Tensor { return c.Reshape(a) }, ErrShape},
		"reshape five dims":    {func(c *Context, a *Tensor) *Tensor { return c.Reshape(a, 24, 1, 1, 1, 1) }, ErrShape},
		"reshape negative":     {func(c *Context, a *Tensor) *Tensor { return c.Reshape(a, -4, -6) }, ErrShape},
		"reshape transposed":   {func(c *Context, a *Tensor) *Tensor { return c.Reshape(c.Transpose(a), 24) }, ErrShape},
		"reshape view gaps":    {func(c *Context, a *Tensor) *Tensor { return c.Reshape(c.View2D(a, 2, 3, 16, 0), 6) }, ErrShape},
		"reshape as":           {func(c *Context, a *Tensor) *Tensor { return c.ReshapeAs(a, c.NewTensor(quant.F32, 5)) }, ErrShape},
		"permute repeated":     {func(c *Context, a *Tensor) *Tensor { return c.Permute(a, 0, 1, 1, 3) }, ErrArgument},
		"permute range":        {func(c *Context, a *Tensor) *Tensor { return c.Permute(a, 0, 1, 2, 4) }, ErrArgument},
		"permute negative":     {func(c *Context, a *Tensor) *Tensor { return c.Permute(a, -1, 1, 2, 3) }, ErrArgument},
		"cont count":           {func(c *Context, a *Tensor) *Tensor { return c.Cont(a, 25) }, ErrShape},
		"cont five dims":       {func(c *Context, a *Tensor) *Tensor { return c.Cont(a, 24, 1, 1, 1, 1) }, ErrShape},
		"cont transposed q":    {func(c *Context, a *Tensor) *Tensor { return c.Cont(c.Transpose(c.NewTensor(quant.Q8_0, 32, 3))) }, ErrShape},
		"cpy count":            {func(c *Context, a *Tensor) *Tensor { return c.Cpy(a, c.NewTensor(quant.F16, 25)) }, ErrShape},
		"add shape":            {func(c *Context, a *Tensor) *Tensor { return c.Add(a, c.NewTensor(quant.F32, 3)) }, ErrShape},
		"sub reversed":         {func(c *Context, a *Tensor) *Tensor { return c.Sub(c.NewTensor(quant.F32, 4), a) }, ErrShape},
		"mul empty":            {func(c *Context, a *Tensor) *Tensor { return c.Mul(a, c.NewTensor(quant.F32, 0)) }, ErrShape},
		"div inplace":          {func(c *Context, a *Tensor) *Tensor { return c.DivInplace(a, c.NewTensor(quant.F32, 4, 2)) }, ErrShape},
		"newop invalid":        {func(c *Context, a *Tensor) *Tensor { return c.NewOp(ops.OpCount, quant.F32, a.Ne, ops.Params{}) }, ErrArgument},
		"newop negative":       {func(c *Context, a *Tensor) *Tensor { return c.NewOp(-1, quant.F32, a.Ne, ops.Params{}) }, ErrArgument},
		"newop sources": {func(c *Context, a *Tensor) *Tensor {
			return c.NewOp(ops.Custom, quant.F32, a.Ne, ops.Params{}, a, a, a, a, a, a, a, a, a, a, a)
		}, ErrArgument},
		"newop type": {func(c *Context, a *Tensor) *Tensor { return c.NewOp(ops.Dup, quant.Type(99), a.Ne, ops.Params{}, a) }, ErrType},
		"newop shape": {func(c *Context, a *Tensor) *Tensor {
			return c.NewOp(ops.Dup, quant.F32, [4]int64{-1, 1, 1, 1}, ops.Params{}, a)
		}, ErrShape},
	} {
		t.Run(name, func(t *testing.T) {
			c := NewContext(ContextOptions{Alloc: true})
			a := c.NewTensor(quant.F32, 4, 3, 2)
			require.NoError(t, c.Err())
			require.Nil(t, tc.f(c, a))
			require.ErrorIs(t, c.Err(), tc.want)
			// Nothing half-made is left behind.
			for _, x := range c.Tensors() {
				if x.Ne[0]%int64(x.Type.BlockSize()) != 0 {
					continue // partial blocks: NBytes means nothing
				}
				require.Len(t, x.Data, int(x.NBytes()), "%s", x)
				if x.ViewSrc != nil {
					require.LessOrEqual(t, x.ViewOffs+x.NBytes(), x.ViewSrc.NBytes(), "%s", x)
				}
			}
		})
	}
}

// same reports whether two slices start at the same address.
func same(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// TestViewData: views, reshapes, permutes and in-place results share their
// source's memory from their first element, covering exactly NBytes.
func TestViewData(t *testing.T) {
	c := NewContext(ContextOptions{Alloc: true})
	a := c.NewTensor(quant.F32, 4, 3, 2) // 96 bytes
	b := c.NewTensor(quant.F32, 4, 3, 2)
	for _, tc := range []struct {
		v    *Tensor
		offs uint64
	}{
		{c.View1D(a, 5, 8), 8},
		{c.View2D(a, 2, 3, 16, 4), 4},
		{c.View3D(a, 2, 2, 2, 16, 48, 8), 8},
		{c.View4D(a, 1, 2, 2, 2, 8, 24, 48, 0), 0},
		{c.View1D(c.View1D(a, 20, 16), 4, 40), 56}, // offsets add up
		{c.View2D(c.View1D(a, 20, 16), 2, 2, 8, 4), 20},
		{c.ViewTensor(c.View1D(a, 20, 16)), 16},
		{c.Reshape(a, 6, 4), 0},
		{c.Reshape(c.View1D(a, 12, 48), 3, 4), 48},
		{c.Permute(a, 2, 0, 1, 3), 0},
		{c.Transpose(c.View2D(a, 4, 2, 16, 16)), 16},
		{c.AddInplace(a, b), 0},
		{c.Cpy(a, c.View1D(b, 24, 0)), 0},
	} {
		require.NoError(t, c.Err())
		v := tc.v
		require.NotNil(t, v)
		require.Same(t, a.ViewSrc, (*Tensor)(nil))
		if v.Op == ops.Cpy {
			require.Same(t, b, v.ViewSrc)
			require.True(t, same(v.Data, b.Data[tc.offs:]), "%s", v)
		} else {
			require.Same(t, a, v.ViewSrc, "%s", v)
			require.True(t, same(v.Data, a.Data[tc.offs:]), "%s", v)
		}
		require.Equal(t, tc.offs, v.ViewOffs, "%s", v)
		require.Len(t, v.Data, int(v.NBytes()), "%s", v)
		require.Equal(t, len(v.Data), cap(v.Data), "%s", v)
	}
	// Writing through a view writes the source.
	v := c.View1D(a, 1, 92)
	v.Data[0] = 7
	require.EqualValues(t, 7, a.Data[92])
	// Empty views anywhere inside are fine; so is one at the very end.
	e := c.View1D(a, 0, 96)
	require.NoError(t, c.Err())
	require.Empty(t, e.Data)
	// The view op parameter is the 64-bit offset.
	big := NewContext(ContextOptions{})
	h := big.NewTensor(quant.I8, 1<<33)
	hv := big.View1D(h, 4, 1<<32+5)
	require.NoError(t, big.Err())
	require.EqualValues(t, 5, hv.Params[0])
	require.EqualValues(t, 1, hv.Params[1])
	require.Nil(t, hv.Data)
}

// TestViewTensorPartialBlocks: a transposed quantized tensor (rows of
// partial blocks) can still be viewed, permuted and transposed back, as in
// ggml.
func TestViewTensorPartialBlocks(t *testing.T) {
	c := NewContext(ContextOptions{Alloc: true})
	q := c.NewTensor(quant.Q8_0, 64, 3)
	tq := c.Transpose(q)
	back := c.Transpose(tq)
	p := c.Permute(tq, 1, 0, 2, 3)
	v := c.ViewTensor(tq)
	require.NoError(t, c.Err())
	require.Equal(t, q.Ne, back.Ne)
	require.Equal(t, q.Nb, back.Nb)
	require.Equal(t, q.Nb, p.Nb)
	require.True(t, back.IsContiguous())
	for _, x := range []*Tensor{tq, back, p, v} {
		require.Same(t, q, x.ViewSrc)
		require.True(t, same(x.Data, q.Data))
	}
}

func TestCpyAndDup(t *testing.T) {
	c := NewContext(ContextOptions{Alloc: true})
	a := c.SetName(c.NewTensor(quant.F32, 4, 3), "a")
	b := c.NewTensor(quant.F16, 12)
	cp := c.Cpy(a, b)
	require.Equal(t, "a (copy)", cp.Name)
	c.SetName(b, "b")
	require.Equal(t, "b (copy of a)", c.Cpy(a, b).Name)
	require.Equal(t, b.Ne, cp.Ne)
	require.Equal(t, quant.F16, cp.Type)
	require.Equal(t, [MaxSrc]*Tensor{a, b}, cp.Src)
	d := c.Dup(a)
	require.Equal(t, ops.Dup, d.Op)
	require.Nil(t, d.ViewSrc)
	require.Len(t, d.Data, 48)
	require.False(t, same(d.Data, a.Data))
	ct := c.Cont(c.Transpose(a), 12)
	require.Equal(t, [MaxDims]int64{12, 1, 1, 1}, ct.Ne)
	require.Equal(t, "a (transposed) (cont)", ct.Name)
	require.NoError(t, c.Err())
}

// TestBuildersOnRawNodes: builders that look at their argument's sources
// must not assume them; NewOp makes any node without sources.
func TestBuildersOnRawNodes(t *testing.T) {
	c := NewContext(ContextOptions{})
	x := c.NewOp(ops.SoftMax, quant.F32, [MaxDims]int64{4, 1, 1, 1}, ops.Params{})
	require.Nil(t, c.SoftMaxAddSinks(x, c.NewTensor(quant.F32, 1)))
	require.ErrorIs(t, c.Err(), ErrArgument)
}

// TestArgsortTopKNegative: a negative k is refused before anything is made.
func TestArgsortTopKNegative(t *testing.T) {
	c := NewContext(ContextOptions{})
	a := c.NewTensor(quant.F32, 4, 2)
	require.Nil(t, c.ArgsortTopK(a, -1))
	require.ErrorIs(t, c.Err(), ErrShape)
	require.Len(t, c.Tensors(), 1)
}
