package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ggml-go/ggml/gguf"
)

func runGGUFInfo(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gguf-info", flag.ContinueOnError)
	maxElems := fs.Int("n", 6, "array elements to show per key")
	noTensors := fs.Bool("no-tensors", false, "leave out the tensor list")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ggml gguf-info [-n N] [-no-tensors] FILE\n\n"+
			"Prints a GGUF file's metadata (arrays cut to -n elements), its tensors (elements, shape,\n"+
			"type, offset in the data section, size) and the totals, in gguf-dump's layout.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("name one GGUF file")
	}
	if *maxElems < 0 {
		return usageErrorf("-n must be >= 0")
	}
	f, err := gguf.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	printGGUFInfo(stdout, fs.Arg(0), f, *maxElems, !*noTensors)
	return nil
}

// valueTypeNames are gguf-dump's names of the value types (GGUFValueType).
var valueTypeNames = map[gguf.ValueType]string{
	gguf.TypeUint8: "UINT8", gguf.TypeInt8: "INT8", gguf.TypeUint16: "UINT16", gguf.TypeInt16: "INT16",
	gguf.TypeUint32: "UINT32", gguf.TypeInt32: "INT32", gguf.TypeFloat32: "FLOAT32", gguf.TypeBool: "BOOL",
	gguf.TypeString: "STRING", gguf.TypeUint64: "UINT64", gguf.TypeInt64: "INT64", gguf.TypeFloat64: "FLOAT64",
}

// printGGUFInfo lays f out as gguf-dump does: the header's three values as
// pseudo-keys GGUF.*, then every pair with its type and element count,
// then one line per tensor; and adds offsets, sizes and totals.
func printGGUFInfo(w io.Writer, path string, f *gguf.File, maxElems int, tensors bool) {
	fmt.Fprintf(w, "* File %s: %d bytes, GGUF v%d, alignment %d, data section at %d (%d bytes)\n",
		path, len(f.Bytes()), f.Version, f.Alignment, f.DataOffset, f.DataSize)
	kvs := f.KVs()
	fmt.Fprintf(w, "* Dumping %d key/value pair(s)\n", len(kvs)+3)
	line := func(n int, typ string, count int, key, value string) {
		fmt.Fprintf(w, "  %5d: %-10s | %8d | %s = %s\n", n, typ, count, key, value)
	}
	line(1, "UINT32", 1, "GGUF.version", fmt.Sprint(f.Version))
	line(2, "UINT64", 1, "GGUF.tensor_count", fmt.Sprint(f.NumTensors()))
	line(3, "UINT64", 1, "GGUF.kv_count", fmt.Sprint(len(kvs)))
	for i, kv := range kvs {
		typ := valueTypeNames[kv.Value.ElemType()]
		if kv.Value.IsArray() {
			typ = "[" + typ + "]"
		}
		line(i+4, typ, kv.Value.Len(), kv.Key, kv.Value.Format(maxElems))
	}
	if !tensors {
		return
	}
	ts := f.Tensors()
	fmt.Fprintf(w, "* Dumping %d tensor(s)\n", len(ts))
	fmt.Fprintf(w, "  %5s  %10s | %-26s | %-7s | %12s | %12s | %s\n", "", "elements", "shape", "type", "offset", "bytes", "name")
	var elems int64
	var bytes uint64
	for i, t := range ts {
		ne := t.Ne()
		dims := make([]string, len(ne))
		for j, d := range ne {
			dims[j] = fmt.Sprintf("%5d", d)
		}
		fmt.Fprintf(w, "  %5d: %10d | %-26s | %-7s | %12d | %12d | %s\n",
			i+1, t.Elements(), strings.Join(dims, ", "), strings.ToUpper(t.Type.String()), t.Offset, t.Size(), t.Name)
		elems += t.Elements()
		bytes += t.Size()
	}
	bpw := 0.0
	if elems > 0 {
		bpw = float64(bytes) * 8 / float64(elems)
	}
	fmt.Fprintf(w, "* Totals: %d tensors, %d elements, %d bytes of tensor data (%.2f MiB, %.2f bits per element)\n",
		len(ts), elems, bytes, float64(bytes)/(1<<20), bpw)
}
