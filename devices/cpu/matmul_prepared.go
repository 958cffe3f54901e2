package cpu

import (
	"encoding/binary"
	"math"

	"github.com/ggml-go/ggml/graph"
)

// productPrepared is product for a kernel whose vecDotRows prepares its
// column on each call (typeTraits.rowsPrepare): rows are walked in runs
// of as many as fit in colTileBytes (at least productTile), and each
// column meets a whole run in one call. The weight rows of a run are read
// from memory once and from cache for the other columns, as product's
// tiles do, while each preparation serves the run rather than 16 rows.
// Every output element is still one vecDotRows result, whatever the run.
func productPrepared(tr *typeTraits, k int, t, src0 *graph.Tensor, lo0, hi0, lo1, hi1 int64, col func(ir1 int64) column, ps *productScratch) {
	run := max(productTile, int64(colTileBytes/max(src0.RowSize(), 1)))
	scratch := ps.floats(rowsScratch(k) + int(min(run, hi0-lo0)))
	nan := math.Float32bits(float32(math.NaN()))
	for t0 := lo0; t0 < hi0; t0 += run {
		e0 := min(t0+run, hi0)
		for ir1 := lo1; ir1 < hi1; ir1++ {
			c := col(ir1)
			if c.ok {
				productRows(tr.vecDotRows, k, t, src0, t0, e0, &c, scratch)
				continue
			}
			for ir0 := t0; ir0 < e0; ir0++ {
				binary.LittleEndian.PutUint32(t.Data[c.dst+4*uint64(ir0):], nan)
			}
		}
	}
}
