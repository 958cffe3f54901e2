// Command oraclegen writes the fixed oracle data the tests compare against
// (testdata/oracle/ggml-0.25.1.tar.gz) by running the reference ggml
// (internal/testkit/ggmlref, CPU variant haswell) on the data set's inputs:
//
//	go generate ./internal/testkit/ggmlref/reftest
//	go run ./internal/testkit/ggmlref/oraclegen [-from DIR] [-verify DIR] [-out FILE]
//
// The inputs are carried in the archive and read back from it (or from an
// unpacked data set with -from): inputs/sin.f32, outlier.f32 and
// imatrix.f32, conv/f32_in.f32, matmul/w_src.f32 and x.f32, and
// cpu_support.csv (the output of ggml's test-backend-ops in support mode,
// which is not a library call, kept verbatim: tests compare its layout).
// Everything else is computed: quant/<set>/<type>.bin with .deq.f32,
// manifest.tsv, conv/*, matmul/<type>.w.bin and .y_n1/.y_n8.f32. The
// archive is deterministic (sorted names, zero times, fixed modes), so
// running the command again changes nothing unless ggml's results do.
// -verify compares every file with an unpacked data set (such as the one
// the project started from) and reports what differs.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ggml-go/ggml/graph"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/mirror"
	"github.com/ggml-go/ggml/internal/testkit/ggmlref/reftest"
	"github.com/ggml-go/ggml/quant"
)

// variant is the CPU build the data comes from: its SIMD paths decide the
// CPU conversions (F16C NaN payloads, Q8_K) and the matmul sums.
const variant = "haswell"

// The quantized sets: 4 rows of 1024 values.
const nrows, nPerRow = 4, 1024

// chunkTypes are the types ggml_quantize_chunk produces, in ggml's order.
var chunkTypes = []quant.Type{
	quant.F32, quant.F16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
	quant.IQ2_XXS, quant.IQ2_XS, quant.IQ3_XXS, quant.IQ1_S, quant.IQ4_NL, quant.IQ3_S, quant.IQ2_S, quant.IQ4_XS,
	quant.IQ1_M, quant.BF16, quant.TQ1_0, quant.TQ2_0, quant.MXFP4, quant.NVFP4, quant.Q1_0, quant.Q2_0,
}

// inputFiles are carried, not computed.
var inputFiles = []string{
	"inputs/sin.f32", "inputs/outlier.f32", "inputs/imatrix.f32",
	"conv/f32_in.f32", "matmul/w_src.f32", "matmul/x.f32", "cpu_support.csv",
}

func main() {
	from := flag.String("from", "", "read the inputs from this unpacked data set instead of the archive")
	out := flag.String("out", "", "the archive to write (default: the repository's "+reftest.OracleArchive+")")
	verify := flag.String("verify", "", "compare every file with this unpacked data set")
	flag.Parse()
	if err := run(*from, *out, *verify); err != nil {
		fmt.Fprintln(os.Stderr, "oraclegen:", err)
		os.Exit(1)
	}
}

func run(from, out, verify string) error {
	if out == "" {
		p, err := reftest.ArchivePath()
		if err != nil {
			return err
		}
		out = p
	}
	files := map[string][]byte{}
	for _, name := range inputFiles {
		var b []byte
		var err error
		if from != "" {
			b, err = os.ReadFile(filepath.Join(from, filepath.FromSlash(name)))
		} else {
			b, err = reftest.ArchiveFile(out, name)
		}
		if err != nil {
			return fmt.Errorf("input %s: %w", name, err)
		}
		files[name] = b
	}
	dir, err := ggmlref.LibDir()
	if err != nil {
		return err
	}
	lib, err := ggmlref.OpenVariant(dir, variant)
	if err != nil {
		return err
	}
	defer lib.Close()
	if err := genQuant(lib, files); err != nil {
		return err
	}
	genConv(lib, files)
	if err := genMatmul(lib, files); err != nil {
		return err
	}
	files["VERSION.txt"] = []byte(fmt.Sprintf("ggml_version=%s\nggml_commit=%s\nsource=npm %s\ncpu_variant=%s\ngenerator=go run ./internal/testkit/ggmlref/oraclegen\n",
		lib.Version(), lib.Commit(), ggmlref.PackageSpec, lib.Variant()))
	files["SHA256SUMS"] = sums(files)

	if err := writeArchive(out, files); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d files\n", out, len(files))
	if verify != "" {
		return compare(files, verify)
	}
	return nil
}

func f32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func u16Bytes(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], x)
	}
	return b
}

// genQuant writes the quantized sets and their manifest: for sin and
// outlier, every chunk type without an importance matrix (but for those
// that require one) and with one (the _imat sets, types that use it);
// Q8_1 by the reference quantizer and Q8_K by the CPU's.
func genQuant(lib *ggmlref.Lib, files map[string][]byte) error {
	inputs := map[string][]float32{"sin": f32s(files["inputs/sin.f32"]), "outlier": f32s(files["inputs/outlier.f32"])}
	imatrix := f32s(files["inputs/imatrix.f32"])
	var manifest strings.Builder
	manifest.WriteString("set\ttype_id\ttype\tmethod\timatrix\tnrows\tn_per_row\tblck_size\ttype_size\thas_deq\n")
	add := func(set string, typ quant.Type, method string, useImatrix bool, q []byte) error {
		base := "quant/" + set + "/" + typ.String()
		files[base+".bin"] = q
		tr, err := lib.Traits(uint32(typ))
		if err != nil {
			return err
		}
		deq := tr.HasToFloat() && typ != quant.F32
		if deq {
			d, err := lib.ToFloat(uint32(typ), q, nrows*nPerRow)
			if err != nil {
				return err
			}
			files[base+".deq.f32"] = quant.F32Bytes(d)
		}
		fmt.Fprintf(&manifest, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", set, typ, typ, method, b2i(useImatrix),
			nrows, nPerRow, typ.BlockSize(), typ.TypeSize(), b2i(deq))
		return nil
	}
	for _, set := range []string{"sin", "outlier", "sin_imat", "outlier_imat"} {
		in := inputs[strings.TrimSuffix(set, "_imat")]
		withImatrix := strings.HasSuffix(set, "_imat")
		for _, typ := range chunkTypes {
			useImatrix := withImatrix || lib.RequiresImatrix(uint32(typ))
			if withImatrix && (typ == quant.F32 || typ == quant.F16 || typ == quant.BF16) {
				continue // an importance matrix changes nothing for them
			}
			var im []float32
			if useImatrix {
				im = imatrix
			}
			q, err := lib.QuantizeChunk(uint32(typ), in, nrows, nPerRow, im)
			if err != nil {
				return fmt.Errorf("%s %s: %w", set, typ, err)
			}
			if err := add(set, typ, "ggml_quantize_chunk", useImatrix, q); err != nil {
				return err
			}
		}
	}
	q, err := lib.FromFloatRef(uint32(quant.Q8_1), inputs["sin"])
	if err != nil {
		return err
	}
	if err := add("sin_ref", quant.Q8_1, "from_float_ref", false, q); err != nil {
		return err
	}
	for _, set := range []string{"sin", "outlier"} {
		q, err := lib.FromFloatCPU(uint32(quant.Q8_K), inputs[set])
		if err != nil {
			return err
		}
		if err := add(set+"_cpu", quant.Q8_K, "cpu_from_float", false, q); err != nil {
			return err
		}
	}
	files["manifest.tsv"] = []byte(manifest.String())
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// genConv writes ggml's half and bfloat16 conversions: all 65,536 patterns
// to float32, and the float32 inputs (specials and NaNs included) by the
// scalar conversions and the CPU's F16C row conversion.
func genConv(lib *ggmlref.Lib, files map[string][]byte) {
	f16, all := make([]float32, 1<<16), make([]uint16, 1<<16)
	for h := range 1 << 16 {
		f16[h], all[h] = lib.FP16ToFP32(uint16(h)), uint16(h)
	}
	files["conv/f16_to_f32_all.f32"] = quant.F32Bytes(f16)
	// The row conversion: the scalar one's float result would quiet the
	// signalling NaNs on the way through purego.
	files["conv/bf16_to_f32_all.f32"] = quant.F32Bytes(lib.BF16ToFP32Row(all))
	in := f32s(files["conv/f32_in.f32"])
	toF16, toBF16 := make([]uint16, len(in)), make([]uint16, len(in))
	for i, v := range in {
		toF16[i], toBF16[i] = lib.FP32ToFP16(v), lib.FP32ToBF16(v)
	}
	files["conv/f32_to_f16_scalar.u16"] = u16Bytes(toF16)
	files["conv/f32_to_bf16_scalar.u16"] = u16Bytes(toBF16)
	files["conv/f32_to_f16_cpu.u16"] = u16Bytes(lib.CPUFP32ToFP16(in))
}

// genMatmul quantizes W (16 rows of 256) to every chunk type (with the
// first 256 importance weights where the type requires them) and has
// ggml's CPU backend, on one thread, multiply it with the first 1 and 8
// rows of X.
func genMatmul(lib *ggmlref.Lib, files map[string][]byte) error {
	const k, m = 256, 16
	w, x := f32s(files["matmul/w_src.f32"]), f32s(files["matmul/x.f32"])
	imatrix := f32s(files["inputs/imatrix.f32"])[:k]
	e, err := mirror.New(lib, 1)
	if err != nil {
		return err
	}
	defer e.Close()
	for _, typ := range chunkTypes {
		var im []float32
		if lib.RequiresImatrix(uint32(typ)) {
			im = imatrix
		}
		wq, err := lib.QuantizeChunk(uint32(typ), w, m, k, im)
		if err != nil {
			return fmt.Errorf("matmul %s: %w", typ, err)
		}
		files["matmul/"+typ.String()+".w.bin"] = wq
		for _, n := range []int64{1, 8} {
			c := graph.NewContext(graph.ContextOptions{Alloc: true})
			a := c.NewTensor(typ, k, m)
			b := c.NewTensor(quant.F32, k, n)
			y := c.MulMat(a, b)
			g, err := c.Build(y)
			if err != nil {
				return err
			}
			copy(a.Data, wq)
			copy(b.Data, quant.F32Bytes(x[:k*n]))
			if err := e.Compute(g); err != nil {
				return fmt.Errorf("matmul %s n=%d: %w", typ, n, err)
			}
			files[fmt.Sprintf("matmul/%s.y_n%d.f32", typ, n)] = slices.Clone(y.Data)
		}
	}
	return nil
}

// maskZeroQ8KSums returns got with the block sums of all-zero Q8_K blocks
// taken from want: ggml's quantizer returns early on such a block without
// writing its sums, so a data set holds whatever memory was there (ours
// zeros, from a cleared buffer).
func maskZeroQ8KSums(want, got []byte) []byte {
	const ts, sums = 292, 4 + 256
	out := slices.Clone(got)
	for b := 0; b+ts <= len(want) && b+ts <= len(out); b += ts {
		if !slices.ContainsFunc(want[b:b+sums], isNonZero) && !slices.ContainsFunc(out[b:b+sums], isNonZero) {
			copy(out[b+sums:b+ts], want[b+sums:b+ts])
		}
	}
	return out
}

func isNonZero(v byte) bool { return v != 0 }

func sums(files map[string][]byte) []byte {
	var b strings.Builder
	for _, name := range sortedNames(files) {
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(files[name]), name)
	}
	return []byte(b.String())
}

func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// writeArchive writes files as a gzipped tar with nothing that varies
// from run to run: sorted names, zero times, mode 0644, no owner.
func writeArchive(path string, files map[string][]byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, name := range sortedNames(files) {
		hdr := &tar.Header{Name: reftest.OracleVersion + "/" + name, Mode: 0o644, Size: int64(len(files[name])), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(files[name]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// compare reports every file that differs from the data set in dir (or is
// missing there), with the number of differing bytes, and fails if any
// computed file differs.
func compare(files map[string][]byte, dir string) error {
	var differ []string
	for _, name := range sortedNames(files) {
		if name == "SHA256SUMS" || name == "VERSION.txt" || name == "manifest.tsv" {
			continue // formats of our own
		}
		want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if errors.Is(err, os.ErrNotExist) {
			fmt.Printf("verify: %s: not in %s\n", name, dir)
			continue
		}
		if err != nil {
			return err
		}
		got := files[name]
		if strings.HasSuffix(name, "/q8_K.bin") {
			got = maskZeroQ8KSums(want, got)
		}
		if !bytes.Equal(want, got) {
			n := 0
			for i := range min(len(want), len(files[name])) {
				if want[i] != files[name][i] {
					n++
				}
			}
			fmt.Printf("verify: %s differs: %d of %d bytes (sizes %d, %d)\n", name, n, len(want), len(want), len(files[name]))
			differ = append(differ, name)
		}
	}
	fmt.Printf("verify: %d files compared with %s, %d differ\n", len(files), dir, len(differ))
	if len(differ) > 0 {
		return fmt.Errorf("%d files differ from %s", len(differ), dir)
	}
	return nil
}
