//go:build !(amd64 || arm64) || purego

package quant

// qxTrials has no assembly here; haveQXTrials stays false.
func qxTrials(x, w, wx []float32, scales *[24]float32, maxv float32, nmax int32, sumx, sum2 *[24]float32) {
	panic("quant: qxTrials without assembly")
}

// qkxSums and qkxErr have no assembly here; haveQKXTrials stays false.
func qkxSums(x, w, xm []float32, iscales *[8]float32, nmax int32, sumL, sumL2, sumXL *[8]float32) {
	panic("quant: qkxSums without assembly")
}

func qkxErr(x, w, xm []float32, iscales *[8]float32, nmax int32, scales, mins *[8]float32, mad int, errs *[8]float32) {
	panic("quant: qkxErr without assembly")
}
