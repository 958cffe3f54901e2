//go:build !amd64 || purego

package quant

// qxTrials has no assembly here; haveQXTrials stays false.
func qxTrials(x, w, wx []float32, scales *[24]float32, nmax int32, sumx, sum2 *[24]float32) {
	panic("quant: qxTrials without assembly")
}
