package quant

import "math"

// The weighted scale searches shared by the K-quants and the legacy
// formats' importance-matrix paths. Each one reproduces ggml's
// single-precision arithmetic operation for operation: every product that
// feeds a sum is converted to float32 explicitly so that Go cannot fuse it
// into an FMA, and every sum runs in ggml's loop order.

// groupMaxEps is the magnitude below which ggml treats a group as all zero.
const groupMaxEps = 1e-15

// kClamp limits l to [lo, hi].
func kClamp(l, lo, hi int32) int32 { return max(lo, min(hi, l)) }

// makeQXQuants finds a symmetric scale for x with quants in [-nmax, nmax-1],
// minimising the weighted squared error (ggml's make_qx_quants with
// rmse_type 1; a caller without an importance matrix passes w[i] = x[i]^2,
// which is what ggml computes in that case). L receives the quants offset by
// nmax. It returns the scale.
func makeQXQuants(nmax int32, x, w []float32, L []int8) float32 {
	// maxv is the first value of the largest magnitude, NaNs left out (a
	// group of sub-block scales can hold them when an importance matrix
	// overflowed). The magnitude is found on the bits, which order as the
	// magnitudes do, with a conditional move instead of an unpredictable
	// branch.
	var mbits uint32
	finite := true
	for _, v := range x {
		b := math.Float32bits(v) &^ (1 << 31)
		if b > mbits && b <= 0x7f800000 {
			mbits = b
		}
		if b >= 0x7f800000 {
			finite = false
		}
	}
	amax, maxv := math.Float32frombits(mbits), float32(0)
	for _, v := range x {
		if absf(v) == amax {
			maxv = v
			break
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	fnmax := float32(nmax)
	n := len(x)
	w, L = w[:n], L[:n]
	// w*x*l is (w*x)*l in C: the product w*x is the same for every trial.
	var wxBuf [maxSearchGroup]float32
	wx := wxBuf[:n]
	for i, v := range x {
		wx[i] = w[i] * v
	}
	// The first guess, -nmax/maxv, and the 18 trial scales around it have
	// sums that do not depend on one another, only the choice among them
	// does: the sums are computed together (the same operations in the
	// same order for each, but several in flight: two per pass in Go, all
	// in vector lanes with qxTrials), then the trials are judged in ggml's
	// order, and the levels computed once, for the winner. Entry 18 is the
	// first guess.
	var trialX, trial2, trialScale [24]float32
	for t := range 18 {
		is := int32(t - 9)
		if is >= 0 {
			is++
		}
		trialScale[t] = -(fnmax + float32(0.1*float32(is)))
	}
	trialScale[18] = -fnmax
	if haveQXTrials && n > 0 && finite {
		// The assembly divides the numerators by maxv itself, eight at a
		// time, and rounds as nearest_int does for finite values only.
		qxTrials(x, w, wx, &trialScale, maxv, nmax, &trialX, &trial2)
	} else {
		for t := range 19 {
			trialScale[t] /= maxv
		}
		for t := 0; t < 18; t += 2 {
			scaleA, scaleB := trialScale[t], trialScale[t+1]
			var xa, la, xb, lb float32
			for i, v := range x {
				fa := float32(kClamp(nearestInt(scaleA*v), -nmax, nmax-1))
				fb := float32(kClamp(nearestInt(scaleB*v), -nmax, nmax-1))
				xa += float32(wx[i] * fa)
				la += float32(w[i] * fa * fa)
				xb += float32(wx[i] * fb)
				lb += float32(w[i] * fb * fb)
			}
			trialX[t], trial2[t] = xa, la
			trialX[t+1], trial2[t+1] = xb, lb
		}
		var xa, la float32
		for i, v := range x {
			fa := float32(kClamp(nearestInt(trialScale[18]*v), -nmax, nmax-1))
			xa += float32(wx[i] * fa)
			la += float32(w[i] * fa * fa)
		}
		trialX[18], trial2[18] = xa, la
	}
	var scale float32
	if trial2[18] != 0 {
		scale = trialX[18] / trial2[18]
	}
	best := scale * trialX[18]
	winner := 18
	for t := range 18 {
		sumlx, suml2 := trialX[t], trial2[t]
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			winner = t
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	iscale := trialScale[winner]
	for i, v := range x {
		L[i] = int8(nmax + kClamp(nearestInt(iscale*v), -nmax, nmax-1))
	}
	return scale
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse: a symmetric scale for x
// weighted by x^2, refined by moving single quants while that improves the
// fit. L receives the quants offset by nmax (or zeros for an all-zero group).
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	var maxv, amax float32
	for _, v := range x {
		if ax := absf(v); ax > amax {
			amax, maxv = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	iscale := -float32(nmax) / maxv
	var sumlx, suml2 float32
	for i, v := range x {
		l := kClamp(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w := v * v
		fl := float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	for range 5 {
		changed := false
		for i, v := range x {
			w := v * v
			fl := float32(L[i])
			slx := sumlx - float32(w*v*fl)
			if !(slx > 0) {
				continue
			}
			sl2 := suml2 - float32(w*fl*fl)
			newL := kClamp(nearestInt(v*sl2/slx), -nmax, nmax-1)
			if newL == int32(L[i]) {
				continue
			}
			fn := float32(newL)
			slx += float32(w * v * fn)
			sl2 += float32(w * fn * fn)
			if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
				L[i] = int8(newL)
				sumlx, suml2 = slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKXQuants finds a scale and a minimum for x with quants in [0, nmax]
// by trying nstep+1 trial scales around nmax/(max-min) and fitting scale
// and minimum by weighted least squares for each. With useMAD the error is
// the weighted absolute deviation, otherwise the weighted squared error.
// It serves as both ggml's make_qkx2_quants and make_qkx3_quants with
// weights, which agree on every finite input. It returns the scale and the
// negated minimum.
func makeQKXQuants(nmax int32, x, weights []float32, L, Laux []uint8,
	rmin, rdelta float32, nstep int, useMAD bool) (scale, negMin float32) {
	minv, maxv := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < len(x); i++ {
		v := x[i]
		if v < minv {
			minv = v
		}
		if v > maxv {
			maxv = v
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * v)
	}
	if minv > 0 {
		minv = 0
	}
	if maxv == minv {
		clear(L[:len(x)])
		return 0, -minv
	}
	fnmax := float32(nmax)
	iscale := fnmax / (maxv - minv)
	scale = 1 / iscale
	// The loops below run once per trial scale: what does not depend on
	// the trial is computed once (the same float32 values ggml's
	// expressions produce), and the slices are cut to n so the compiler
	// drops the bounds checks.
	n := len(x)
	var xmBuf [maxSearchGroup]float32
	xm := xmBuf[:n]
	weights, L, Laux = weights[:n], L[:n], Laux[:n]
	for i, v := range x {
		xm[i] = v - minv
	}
	errOf := func(scale, minv float32, L []uint8) float32 {
		L = L[:n]
		var e float32
		for i, v := range x {
			diff := float32(scale*float32(L[i])) + minv - v
			if useMAD {
				diff = absf(diff)
			} else {
				diff *= diff
			}
			e += float32(weights[i] * diff)
		}
		return e
	}
	for i, d := range xm {
		L[i] = uint8(kClamp(nearestInt(iscale*d), 0, nmax))
	}
	bestErr := errOf(scale, minv, L)
	if haveQKXTrials {
		return qkxSearch(nmax, x, weights, xm, L, rmin, rdelta, nstep, useMAD, sumW, sumX, scale, minv, maxv, bestErr)
	}
	for is := 0; is <= nstep; is++ {
		iscale = (float32(rmin+float32(rdelta*float32(is))) + fnmax) / (maxv - minv)
		var sumL, sumL2, sumXL float32
		for i, d := range xm {
			l := kClamp(nearestInt(iscale*d), 0, nmax)
			Laux[i] = uint8(l)
			// w*l*l and w*l*x are (w*l)*l and (w*l)*x in C.
			wl := float32(weights[i] * float32(l))
			sumL += wl
			sumL2 += float32(wl * float32(l))
			sumXL += float32(wl * x[i])
		}
		d := float32(sumW*sumL2) - float32(sumL*sumL)
		if !(d > 0) {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / d
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / d
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		if e := errOf(thisScale, thisMin, Laux); e < bestErr {
			copy(L, Laux)
			bestErr, scale, minv = e, thisScale, thisMin
			// Later trials measure from the new minimum (and, as in
			// ggml, divide by max minus it).
			for i, v := range x {
				xm[i] = v - minv
			}
		}
	}
	return scale, -minv
}

// qkxSearch is the trial loop of makeQKXQuants with the trials' sums and
// errors computed eight at a time by the architecture's qkxSums and qkxErr.
// A trial that improves the fit moves the minimum, which changes every
// later trial's scale and levels; so eight trials are computed together
// from the current minimum and judged in order, and the next eight start
// after the first winner (most searches improve a few times, early: eight
// at a time wastes less than all the remaining trials at once). Every
// trial's arithmetic is the scalar loop's.
func qkxSearch(nmax int32, x, weights, xm []float32, L []uint8, rmin, rdelta float32, nstep int, useMAD bool,
	sumW, sumX, scale, minv, maxv, bestErr float32) (float32, float32) {
	fnmax := float32(nmax)
	var iscales, sumL, sumL2, sumXL, scales, mins, errs [8]float32
	var valid [8]bool
	mad := 0
	if useMAD {
		mad = 1
	}
	for first := 0; first <= nstep; {
		nt := min(8, nstep+1-first)
		for t := range iscales {
			iscales[t] = 0
			if t < nt {
				iscales[t] = (float32(rmin+float32(rdelta*float32(first+t))) + fnmax) / (maxv - minv)
			}
		}
		qkxSums(x, weights, xm, &iscales, nmax, &sumL, &sumL2, &sumXL)
		for t := range nt {
			sL, sL2, sXL := sumL[t], sumL2[t], sumXL[t]
			d := float32(sumW*sL2) - float32(sL*sL)
			valid[t] = d > 0
			if !valid[t] {
				continue
			}
			thisScale := (float32(sumW*sXL) - float32(sumX*sL)) / d
			thisMin := (float32(sL2*sumX) - float32(sL*sXL)) / d
			if thisMin > 0 {
				thisMin = 0
				thisScale = sXL / sL2
			}
			scales[t], mins[t] = thisScale, thisMin
		}
		qkxErr(x, weights, xm, &iscales, nmax, &scales, &mins, mad, &errs)
		winner := -1
		for t := range nt {
			if valid[t] && errs[t] < bestErr {
				winner = t
				break
			}
		}
		if winner < 0 {
			first += nt
			continue
		}
		iscale := iscales[winner]
		for i, d := range xm {
			L[i] = uint8(kClamp(nearestInt(iscale*d), 0, nmax))
		}
		bestErr, scale, minv = errs[winner], scales[winner], mins[winner]
		for i, v := range x {
			xm[i] = v - minv
		}
		first += winner + 1
	}
	return scale, -minv
}

// haveQXTrials says that the architecture's qxTrials computes, for
// finite x, makeQXQuants's trial sums for the 19 scales numerators[:19]/maxv
// (the rest are padding; it stores the quotients back): sumx[t] +=
// wx[i]*l and sum2[t] += (w[i]*l)*l in order of i, l the clamped level of
// scales[t]*x[i], exactly as the Go loop does. (A direct call, not a
// function value, keeps the arrays on the stack.)
var haveQXTrials bool

// haveQKXTrials says that the architecture's qkxSums and qkxErr compute,
// for eight trial inverse scales, the sums and errors of
// makeQKXQuants's trial loop, each lane exactly as the Go loop does
// (qkxSearch).
var haveQKXTrials bool

// maxSearchGroup is the most values the scale searches take at once (a
// K-quant sub-block or a legacy block).
const maxSearchGroup = 32

// makeQPQuants quantizes the non-negative values x (sub-block scales or
// minimums) to [0, nmax] with one scale, minimising the error weighted by w,
// as ggml's make_qp_quants. Like ggml it stores the quants in bytes, so a
// negative quant wraps around, and later steps read the wrapped value.
func makeQPQuants(nmax int32, x []float32, L []uint8, w []float32) float32 {
	var maxv float32
	for _, v := range x {
		if !(maxv > v) {
			maxv = v
		}
	}
	if maxv < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	fnmax := float32(nmax)
	iscale := fnmax / maxv
	for i, v := range x {
		L[i] = uint8(nearestInt(iscale * v))
	}
	scale := 1 / iscale
	var bestMSE float32
	for i, v := range x {
		diff := v - float32(scale*float32(L[i]))
		bestMSE += float32(w[i] * diff * diff)
	}
	for is := int32(-4); is <= 4; is++ {
		if is == 0 {
			continue
		}
		iscaleIs := (float32(0.1*float32(is)) + fnmax) / maxv
		scaleIs := 1 / iscaleIs
		var mse float32
		for i, v := range x {
			l := min(nmax, nearestInt(iscaleIs*v))
			diff := v - float32(scaleIs*float32(l))
			mse += float32(w[i] * diff * diff)
		}
		if mse < bestMSE {
			bestMSE, iscale = mse, iscaleIs
		}
	}
	var sumlx, suml2 float32
	for i, v := range x {
		l := min(nmax, nearestInt(iscale*v))
		L[i] = uint8(l)
		fl := float32(l)
		sumlx += float32(w[i] * v * fl)
		suml2 += float32(w[i] * fl * fl)
	}
	for range 5 {
		changed := false
		for i, v := range x {
			wi, fl := w[i], float32(L[i])
			slx := sumlx - float32(wi*v*fl)
			sl2 := suml2 - float32(wi*fl*fl)
			if !(slx > 0 && sl2 > 0) {
				continue
			}
			newL := min(nmax, nearestInt(v*sl2/slx))
			if newL == int32(L[i]) {
				continue
			}
			fn := float32(newL)
			slx += float32(wi * v * fn)
			sl2 += float32(wi * fn * fn)
			if slx*slx*suml2 > sumlx*sumlx*sl2 {
				L[i] = uint8(newL)
				sumlx, suml2 = slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}
