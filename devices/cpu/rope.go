package cpu

import (
	"math"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/ops"
	"github.com/ggml-go/ggml/quant"
)

// supportsRope: ROPE and ROPE_BACK on F32 or F16 tensors whose rows are
// contiguous (any row strides, in place or not), I32 positions and
// optional F32 frequency factors, with the parameters ggml's kernel
// accepts. Rows must have an even length: ggml copies the unrotated
// dimensions in pairs and would run past an odd row.
func supportsRope(t *graph.Tensor) bool {
	a, pos, freq := t.Src[0], t.Src[1], t.Src[2]
	if a == nil || pos == nil {
		return false
	}
	if a.Type != quant.F32 && a.Type != quant.F16 || t.Type != a.Type || t.Ne != a.Ne {
		return false
	}
	es := uint64(a.Type.TypeSize())
	if a.Nb[0] != es || t.Nb[0] != es || a.Ne[0]%2 != 0 {
		return false
	}
	rp := ops.RopeParamsOf(t.Params)
	ne0, nd, offs := a.Ne[0], int64(rp.NDims), int64(rp.NOffs)
	if nd <= 0 || nd%2 != 0 || offs < 0 || offs%2 != 0 || offs+nd > ne0 {
		return false
	}
	nPos := a.Ne[2]
	switch rp.Mode {
	case ops.RopeNormal, ops.RopeNeox:
	case ops.RopeMRope, ops.RopeIMRope, ops.RopeVision:
		nPos *= 4
		s := rp.Sections
		if s[0] < 0 || s[1] < 0 || s[2] < 0 || s[3] < 0 || s[0]+s[1]+s[2] == 0 || int64(s[0]+s[1]+s[2]+s[3]) > ne0 {
			return false
		}
	default:
		return false
	}
	// The positions are read as a packed vector.
	if pos.Type != quant.I32 || pos.Nb[0] != 4 || pos.Ne[0] < nPos || pos.Ne[1] != 1 || pos.Ne[2] != 1 || pos.Ne[3] != 1 {
		return false
	}
	nFreq := nd / 2
	if rp.Mode == ops.RopeVision {
		// Vision rotates the whole row: dimension i pairs with i + n_dims.
		if nd != ne0/2 || offs != 0 {
			return false
		}
		nFreq = ne0 / 2
	}
	return freq == nil || freq.Type == quant.F32 && freq.Nb[0] == 4 && freq.Ne[0] >= nFreq
}

// ropeCache holds, for each rotated pair, cos and sin of its angle for one
// token, as ggml's per-thread rope cache: entries 2i and 2i+1 of pair i.
// fill collects the pairs' angles first and takes cos and sin of all of
// them in one vector call.
type ropeCache struct {
	rp        ops.RopeParams
	corr      [2]float32
	thetaStep float32 // theta_scale = freq_base^(-2/n_dims)
	sinSign   float32 // -1 for ROPE_BACK: the inverse rotation
	mscale    float32 // YaRN's magnitude scaling
	freq      *graph.Tensor
	v         []float32
	// Per pair: its angle.
	theta []float64
}

// ropeCacheFloats is the size of a ropeCache's v: a value per rotated
// dimension.
func ropeCacheFloats(t *graph.Tensor) int {
	if rp := ops.RopeParamsOf(t.Params); rp.Mode != ops.RopeVision {
		return int(rp.NDims)
	}
	return int(t.Ne[0])
}

// ropeWorkSize is every thread's cache: v, then theta.
func ropeWorkSize(t *graph.Tensor, nth int) int {
	n := ropeCacheFloats(t)
	return nth * (n*4 + (n/2)*8)
}

// newRopeCache makes thread p.Ith's cache in its share of p.Work, or in
// new memory when p comes without it (a Params made outside an engine).
func newRopeCache(p *Params, t *graph.Tensor) *ropeCache {
	rp := ops.RopeParamsOf(t.Params)
	c := &ropeCache{
		rp:        rp,
		corr:      rp.YarnCorrDims(),
		thetaStep: float32(math.Pow(float64(rp.FreqBase), float64(-2/float32(rp.NDims)))),
		sinSign:   1,
		mscale:    rp.AttnFactor,
		freq:      t.Src[2],
	}
	if rp.ExtFactor != 0 {
		if vec.contracts {
			c.mscale *= fma32(logf(1/rp.FreqScale), 0.1, 1)
		} else {
			c.mscale *= 1 + float32(0.1*logf(1/rp.FreqScale))
		}
	}
	if t.Op == ops.RopeBack {
		c.sinSign = -1
	}
	n := ropeCacheFloats(t)
	b := p.threadWork(ropeWorkSize(t, 1))
	// v first: its n floats keep the float64 arrays after it 8-byte
	// aligned when n is even, as rope requires.
	c.v = carve[float32](b, n)
	c.theta = carve[float64](b[n*4:], n/2)
	return c
}

// angle is rope_yarn's angle of pair i0/2: interpolation and
// extrapolation blended over YaRN's ramp.
func (c *ropeCache) angle(thetaExtrap float32, i0 int) float32 {
	rp := &c.rp
	thetaInterp := rp.FreqScale * thetaExtrap
	if rp.ExtFactor == 0 {
		return thetaInterp
	}
	// The conversions round each product before the sums (1-rampMix too:
	// the compiler would fuse across statements).
	rampMix := float32(ops.RopeYarnRamp(c.corr[0], c.corr[1], i0) * rp.ExtFactor)
	if vec.contracts {
		// ggml's FMA builds fuse the first product.
		return fma32(thetaInterp, 1-rampMix, float32(thetaExtrap*rampMix))
	}
	return float32(thetaInterp*(1-rampMix)) + float32(thetaExtrap*rampMix)
}

// set records the angle of pair i0/2 for theta (before frequency
// factors).
func (c *ropeCache) set(i0 int, theta float32) {
	if c.freq != nil {
		theta /= getF(quant.F32, c.freq.Data, uint64(i0/2)*4)
	}
	c.theta[i0/2] = float64(c.angle(theta, i0))
}

// finish turns the recorded angles into the cache: cos and sin as
// glibc's sincosf gives them (libcSincosf: ggml's rope_yarn calls the C
// library's cosf and sinf, merged into one sincosf), scaled by YaRN's
// magnitude.
func (c *ropeCache) finish() {
	for i, th := range c.theta {
		sin, cos := libcSincosf(float32(th))
		c.v[2*i] = cos * c.mscale
		c.v[2*i+1] = sin * c.mscale * c.sinSign
	}
}

// fill computes the cache for token i2 of ne2 from the positions pos, as
// ggml_rope_cache_init or, for the multi-section modes, ggml_mrope_cache_init.
func (c *ropeCache) fill(pos *graph.Tensor, i2, ne2 int64) {
	at := func(stream int64) float32 { return float32(getI32(pos.Data, uint64(i2+stream*ne2)*4)) }
	if !c.rp.Mode.UsesSections() {
		theta := at(0)
		for i0 := 0; i0 < len(c.v); i0 += 2 {
			c.set(i0, theta)
			theta *= c.thetaStep
		}
		c.finish()
		return
	}
	s := c.rp.Sections
	secW := int(s[0] + s[1])
	secE := secW + int(s[2])
	sectDims := secE + int(s[3])
	imrope, vision := c.rp.Mode == ops.RopeIMRope, c.rp.Mode == ops.RopeVision
	var base, theta [4]float32 // t, h, w, e streams
	for k := range base {
		base[k] = at(int64(k))
		theta[k] = base[k]
	}
	for i0 := 0; i0 < len(c.v); i0 += 2 {
		sector := (i0 / 2) % sectDims
		if vision {
			// Each section restarts its stream's progression.
			switch sector {
			case 0:
				theta[0] = base[0]
			case int(s[0]):
				theta[1] = base[1]
			case secW:
				theta[2] = base[2]
			case secE:
				theta[3] = base[3]
			}
		}
		stream := 3
		if imrope {
			switch {
			case sector%3 == 1 && sector < 3*int(s[1]):
				stream = 1
			case sector%3 == 2 && sector < 3*int(s[2]):
				stream = 2
			case sector%3 == 0 && sector < 3*int(s[0]):
				stream = 0
			}
		} else {
			switch {
			case sector < int(s[0]):
				stream = 0
			case sector < secW:
				stream = 1
			case sector < secW+int(s[2]):
				stream = 2
			}
		}
		c.set(i0, theta[stream])
		for k := range theta {
			theta[k] *= c.thetaStep
		}
	}
	c.finish()
}

// computeRope rotates each row's pairs by its token's cached angles and
// copies the dimensions outside the rotated window.
func computeRope(p *Params, t *graph.Tensor) {
	a, pos := t.Src[0], t.Src[1]
	c := newRopeCache(p, t)
	rp := c.rp
	ne0, nd, offs := a.Ne[0], int64(rp.NDims), int64(rp.NOffs)
	lastI2 := int64(-1)
	forRows(p, t, func(i1, i2, i3 int64) {
		if i2 != lastI2 {
			c.fill(pos, i2, a.Ne[2])
			lastI2 = i2
		}
		if a.Type == quant.F32 {
			x := f32Row(a.Data, offset(a, 0, i1, i2, i3), ne0)
			y := f32Row(t.Data, offset(t, 0, i1, i2, i3), ne0)
			if x != nil && y != nil {
				ropeRowF32(y, x, c.v, rp.Mode, nd, offs)
				return
			}
		}
		rotate := func(i0, ia, ib int64) {
			x0 := getF(a.Type, a.Data, offset(a, ia, i1, i2, i3))
			x1 := getF(a.Type, a.Data, offset(a, ib, i1, i2, i3))
			y0, y1 := ropeRotate(x0, x1, c.v[i0], c.v[i0+1])
			setF(t.Type, t.Data, offset(t, ia, i1, i2, i3), y0)
			setF(t.Type, t.Data, offset(t, ib, i1, i2, i3), y1)
		}
		switch rp.Mode {
		case ops.RopeNormal:
			for i0 := int64(0); i0 < nd; i0 += 2 {
				rotate(i0, offs+i0, offs+i0+1)
			}
		case ops.RopeVision:
			for i0 := int64(0); i0 < ne0; i0 += 2 {
				rotate(i0, i0/2, i0/2+nd)
			}
			return
		default: // NeoX pairing
			for i0 := int64(0); i0 < nd; i0 += 2 {
				rotate(i0, offs+i0/2, offs+i0/2+nd/2)
			}
		}
		for i0 := int64(0); i0 < ne0; i0++ {
			if i0 == offs {
				i0 += nd - 1 // skip the rotated window
				continue
			}
			setF(t.Type, t.Data, offset(t, i0, i1, i2, i3), getF(a.Type, a.Data, offset(a, i0, i1, i2, i3)))
		}
	})
}

// ropeRowF32 is the row loop of computeRope on F32 rows viewed in place
// (y may be x): the same pairs, products and order as its element path,
// in the vector primitives.
func ropeRowF32(y, x, cs []float32, mode ops.RopeMode, nd, offs int64) {
	switch mode {
	case ops.RopeNormal:
		vec.ropeNormal(y[offs:offs+nd], x[offs:offs+nd], cs[:nd])
	case ops.RopeVision:
		// Dimension i pairs with i + n_dims = i + len/2: NeoX's pairing
		// over the whole row.
		vec.ropeNeox(y, x, cs[:len(x)])
		return
	default: // NeoX pairing
		vec.ropeNeox(y[offs:offs+nd], x[offs:offs+nd], cs[:nd])
	}
	copy(y[:offs], x[:offs])
	copy(y[offs+nd:], x[offs+nd:])
}
