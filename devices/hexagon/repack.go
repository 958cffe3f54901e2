package hexagon

import (
	"fmt"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/quant"
)

// The tiled weight layout (hexagon.md §10, the public snapshot's
// repack_*_tiled): a matrix is cut into tiles of 32 rows by 32 K-elements
// (one quant block per row), with ne1 padded to 32; tiles are ordered
// column tile (32 output rows) major, K tile minor. Inside a tile the 32
// rows' quants are interleaved so the DSP reads them as vectors, followed
// by the 32 rows' scales. A tile has exactly the bytes of 32 ggml blocks, so
// a tiled matrix takes row_size(ne0) * round_up(ne1, 32) bytes.
// Verified on the double (which reads the same layout); not verified
// against a real DSP library.

const tileRows = 32

// isTiledType reports whether weights of type t are repacked (Q4_0, Q4_1,
// Q8_0, IQ4_NL, MXFP4: the types with a codec).
func isTiledType(t quant.Type) bool { _, ok := codecs[t]; return ok }

// isTiledWeight reports whether t, placed in a Hexagon buffer, is kept
// tiled: a tiled type, not a view, with standard (contiguous) strides.
// Whether a tensor is actually tiled depends on the buffer's usage
// (WEIGHTS) or on a run-time repack, and is recorded in its extra.
func isTiledWeight(t *graph.Tensor) bool {
	return isTiledType(t.Type) && t.ViewSrc == nil && t.IsContiguous() && t.Ne[0]%32 == 0
}

// tiledSize is the bytes a tiled tensor takes: the padded ggml row size
// times the padded rows, times ne2 and ne3.
func tiledSize(t *graph.Tensor) uint64 {
	rows := uint64(roundUp(t.Ne[1], tileRows))
	return uint64(t.Type.RowSize(roundUp(t.Ne[0], 32))) * rows * uint64(t.Ne[2]*t.Ne[3])
}

func roundUp(n, m int64) int64 { return (n + m - 1) / m * m }

// tiledStrides are the strides the DSP is told for a tiled tensor.
func tiledStrides(t *graph.Tensor) (nb [4]uint64, size uint64) {
	nb[0] = t.Nb[0]
	nb[1] = uint64(t.Type.RowSize(roundUp(t.Ne[0], 32)))
	nb[2] = nb[1] * uint64(roundUp(t.Ne[1], tileRows))
	nb[3] = nb[2] * uint64(t.Ne[2])
	return nb, nb[3] * uint64(t.Ne[3])
}

// tileCodec moves one row's block between the ggml layout and a tile.
type tileCodec struct {
	pack   func(tile, block []byte, row int)
	unpack func(block, tile []byte, row int)
	// padRow writes the values of a row past ne1.
	padRow func(tile []byte, row int)
}

func nibble(qs []byte, k int) byte {
	if k < 16 {
		return qs[k] & 0xf
	}
	return qs[k-16] >> 4
}

// pack4 interleaves a row's 32 nibbles: tile[cp*32+row] = q[2cp] | q[2cp+1]<<4.
func pack4(tile, qs []byte, row int) {
	for cp := range 16 {
		tile[cp*32+row] = nibble(qs, 2*cp) | nibble(qs, 2*cp+1)<<4
	}
}

func unpack4(qs, tile []byte, row int) {
	var q [32]byte
	for cp := range 16 {
		v := tile[cp*32+row]
		q[2*cp], q[2*cp+1] = v&0xf, v>>4
	}
	for j := range 16 {
		qs[j] = q[j] | q[j+16]<<4
	}
}

// q4Codec is the layout of Q4_0 and IQ4_NL blocks (fp16 d, 16 bytes of
// nibbles) with the given pad row.
func q4Codec(pad func(tile []byte, row int)) tileCodec {
	return tileCodec{
		pack:   func(tile, b []byte, r int) { pack4(tile, b[2:18], r); copy(tile[512+2*r:], b[0:2]) },
		unpack: func(b, tile []byte, r int) { unpack4(b[2:18], tile, r); copy(b[0:2], tile[512+2*r:]) },
		padRow: pad,
	}
}

var codecs = map[quant.Type]tileCodec{
	quant.Q4_0: q4Codec(func(tile []byte, r int) {
		for cp := range 16 {
			tile[cp*32+r] = 0x88 // quant 8 is zero after Q4_0's -8 offset
		}
	}),
	// IQ4_NL's nibbles index a codebook: its pad rows keep zero scales.
	quant.IQ4_NL: q4Codec(nil),
	quant.Q4_1: {
		pack:   func(tile, b []byte, r int) { pack4(tile, b[4:20], r); copy(tile[512+4*r:], b[0:4]) },
		unpack: func(b, tile []byte, r int) { unpack4(b[4:20], tile, r); copy(b[0:4], tile[512+4*r:512+4*r+4]) },
	},
	quant.Q8_0: {
		pack: func(tile, b []byte, r int) {
			for cp := range 16 {
				tile[cp*64+2*r], tile[cp*64+2*r+1] = b[2+2*cp], b[2+2*cp+1]
			}
			copy(tile[1024+2*r:], b[0:2])
		},
		unpack: func(b, tile []byte, r int) {
			for cp := range 16 {
				b[2+2*cp], b[2+2*cp+1] = tile[cp*64+2*r], tile[cp*64+2*r+1]
			}
			copy(b[0:2], tile[1024+2*r:1024+2*r+2])
		},
	},
	quant.MXFP4: {
		pack:   func(tile, b []byte, r int) { pack4(tile, b[1:17], r); tile[512+r] = b[0] },
		unpack: func(b, tile []byte, r int) { unpack4(b[1:17], tile, r); b[0] = tile[512+r] },
	},
}

// tiling is the geometry of one tiled tensor.
type tiling struct {
	codec                  tileCodec
	blockBytes, tileBytes  int
	rowBytes               int // ggml row bytes (ne0 is a multiple of 32)
	nKT, ne1, ne1Pad, nMat int
}

func newTiling(t *graph.Tensor) (tiling, error) {
	c, ok := codecs[t.Type]
	if !ok || t.Ne[0]%32 != 0 {
		return tiling{}, fmt.Errorf("hexagon: %s cannot be tiled", t)
	}
	bb := int(t.Type.TypeSize())
	return tiling{codec: c, blockBytes: bb, tileBytes: bb * tileRows, rowBytes: int(t.Type.RowSize(t.Ne[0])),
		nKT: int(t.Ne[0] / 32), ne1: int(t.Ne[1]), ne1Pad: int(roundUp(t.Ne[1], tileRows)),
		nMat: int(t.Ne[2] * t.Ne[3])}, nil
}

// tile returns the tile of row r (within its matrix m) and K tile kt.
func (g tiling) tile(dst []byte, m, r, kt int) []byte {
	off := m*g.ne1Pad*g.rowBytes + ((r/tileRows)*g.nKT+kt)*g.tileBytes
	return dst[off : off+g.tileBytes]
}

// repack writes src (ggml layout, the whole tensor) tiled into dst (at
// least tiledSize bytes), pad rows included.
func repack(t *graph.Tensor, dst, src []byte) error {
	g, err := newTiling(t)
	if err != nil {
		return err
	}
	if len(src) < g.rowBytes*g.ne1*g.nMat || len(dst) < g.rowBytes*g.ne1Pad*g.nMat {
		return fmt.Errorf("hexagon: repacking %s: %d bytes in, %d out", t, len(src), len(dst))
	}
	for m := range g.nMat {
		for r := range g.ne1Pad {
			for kt := range g.nKT {
				tile := g.tile(dst, m, r, kt)
				if r >= g.ne1 {
					padRow(g, tile, r%tileRows)
					continue
				}
				o := (m*g.ne1+r)*g.rowBytes + kt*g.blockBytes
				g.codec.pack(tile, src[o:o+g.blockBytes], r%tileRows)
			}
		}
	}
	return nil
}

func padRow(g tiling, tile []byte, r int) {
	// Zero the row's quants and scales, then let the type set its zero
	// quant value.
	var zero [64]byte
	g.codec.pack(tile, zero[:g.blockBytes], r)
	if g.codec.padRow != nil {
		g.codec.padRow(tile, r)
	}
}

// unpackRows writes rows [r0, r1) (global row numbers over all matrices,
// ggml layout) of a tiled tensor into dst.
func unpackRows(t *graph.Tensor, dst, tiled []byte, r0, r1 int) error {
	g, err := newTiling(t)
	if err != nil {
		return err
	}
	if r0 < 0 || r1 > g.ne1*g.nMat || r0 > r1 || len(dst) < (r1-r0)*g.rowBytes {
		return fmt.Errorf("hexagon: unpacking rows %d..%d of %s into %d bytes", r0, r1, t, len(dst))
	}
	for gr := r0; gr < r1; gr++ {
		m, r := gr/g.ne1, gr%g.ne1
		for kt := range g.nKT {
			o := (gr-r0)*g.rowBytes + kt*g.blockBytes
			g.codec.unpack(dst[o:o+g.blockBytes], g.tile(tiled, m, r, kt), r%tileRows)
		}
	}
	return nil
}
