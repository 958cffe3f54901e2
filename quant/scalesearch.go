package quant

// Weighted searches for a block's scale (and minimum), shared by the legacy
// formats' importance-matrix paths and the K-quants. Every float operation is
// rounded to float32 in C's order; products that feed a sum are wrapped in
// float32() so the compiler cannot fuse them.

// groupMaxEps is ggml's GROUP_MAX_EPS: below this absolute maximum a group is
// treated as all zeros.
const groupMaxEps = 1e-15

// makeQxQuants is ggml's make_qx_quants with rmse_type 1: it picks levels
// L[i] in [0, 2*nmax) for a symmetric scale, trying 19 candidate scales
// around nmax/max and keeping the one with the least weighted squared error.
// The weights are qw, or x[i]^2 when qw is nil. It returns the scale.
func makeQxQuants(nmax int, x []float32, L []int8, qw []float32) float32 {
	L = L[:len(x)]
	var maxv, amax float32
	for _, v := range x {
		if a := absf(v); a > amax {
			amax, maxv = a, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	weight := func(i int) float32 {
		if qw != nil {
			return qw[i]
		}
		return x[i] * x[i]
	}
	level := func(iscale, v float32) int32 {
		return max(-int32(nmax), min(int32(nmax)-1, nearestInt(iscale*v)))
	}
	// sums returns sum(w*x*l) and sum(w*l*l) for the levels iscale gives.
	sums := func(iscale float32) (sumlx, suml2 float32) {
		for i, v := range x {
			l := float32(level(iscale, v))
			w := weight(i)
			sumlx += float32(w * v * l)
			suml2 += float32(w * l * l)
		}
		return sumlx, suml2
	}
	setLevels := func(iscale float32) {
		for i, v := range x {
			L[i] = int8(int32(nmax) + level(iscale, v))
		}
	}

	iscale := float32(-nmax) / maxv
	setLevels(iscale)
	sumlx, suml2 := sums(iscale)
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / maxv
		sumlx, suml2 = sums(iscale)
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			setLevels(iscale)
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQkx3Quants is ggml's make_qkx3_quants with explicit weights: it fits
// x[i] ~ scale*L[i] - min with L[i] in [0, nmax] and min >= 0, trying
// nstep+1 candidate scales from (nmax+rmin)/(max-min) in steps of rdelta and
// refining scale and min by weighted least squares. Errors are absolute when
// useMad is set, squared otherwise. laux is scratch space of len(x). It
// returns the scale and the min.
func makeQkx3Quants(nmax int, x, weights []float32, L, laux []uint8,
	rmin, rdelta float32, nstep int, useMad bool) (scale, negMin float32) {
	n := len(x)
	L, laux, weights = L[:n], laux[:n], weights[:n]
	minv, maxv := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		// Plain comparisons, not min/max, so the first of two signed zeros wins as in C.
		if x[i] < minv {
			minv = x[i]
		}
		if x[i] > maxv {
			maxv = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if minv > 0 {
		minv = 0
	}
	if maxv <= minv {
		clear(L)
		return 0, -minv
	}
	// weightedError is sum(w * err) for levels lv under scale s and offset m.
	weightedError := func(lv []uint8, s, m float32) float32 {
		var e float32
		for i, v := range x {
			diff := float32(float32(s*float32(lv[i]))+m) - v
			if useMad {
				diff = absf(diff)
			} else {
				diff *= diff
			}
			e += float32(weights[i] * diff)
		}
		return e
	}
	quantizeTo := func(lv []uint8, iscale float32) {
		for i, v := range x {
			lv[i] = uint8(max(0, min(int32(nmax), nearestInt(iscale*(v-minv)))))
		}
	}

	iscale := float32(nmax) / (maxv - minv)
	scale = 1 / iscale
	quantizeTo(L, iscale)
	bestErr := weightedError(L, scale, minv)
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + float32(nmax)) / (maxv - minv)
		quantizeTo(laux, iscale)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := float32(laux[i])
			w := weights[i]
			sumL += float32(w * l)
			sumL2 += float32(w * l * l)
			sumXL += float32(w * l * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if !(D > 0) {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		if e := weightedError(laux, thisScale, thisMin); e < bestErr {
			copy(L, laux)
			bestErr = e
			scale, minv = thisScale, thisMin
		}
	}
	return scale, -minv
}
