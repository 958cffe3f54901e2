package gguf

import (
	"fmt"
	"io"
)

// Writer streams a GGUF file: NewWriter writes the header (metadata and
// tensor descriptions, with offsets it computes), then the tensors' data
// follows in order through Write or WriteTensor, each tensor padded to
// the alignment, so no tensor has to be in memory all at once. The
// output is byte for byte what ggml's gguf_write_to_file writes for the
// same pairs and tensors.
type Writer struct {
	w         io.Writer
	alignment uint64
	tensors   []TensorInfo
	sizes     []uint64
	index     map[string]int
	cur       int    // tensor whose data comes next
	done      uint64 // bytes of tensor cur written
	written   uint64 // bytes written to w
	err       error
}

// NewWriter checks kvs and tensors as gguf_init_from_file would check the
// file they make (non-empty unique keys, general.alignment a power-of-two
// u32, unique names of at most 63 bytes, at most 4 dimensions, a valid
// type whose block size divides the rows), assigns the tensors' offsets
// (ignoring the Offset fields given) and writes everything up to the data
// section to w. The tensors keep their shapes as given: ggml writes
// n_dims without trailing ones, so pass shapes that way for identical
// bytes.
func NewWriter(w io.Writer, kvs []KV, tensors []TensorInfo) (*Writer, error) {
	gw := &Writer{w: w, alignment: DefaultAlignment}
	seen := make(map[string]bool, len(kvs))
	alignSet := false
	for i, kv := range kvs {
		switch {
		case kv.Key == "":
			return nil, fmt.Errorf("%w: key %d is empty", ErrArgument, i)
		case seen[kv.Key]:
			return nil, fmt.Errorf("%w: duplicate key %q", ErrArgument, kv.Key)
		case !kv.Value.valid():
			return nil, fmt.Errorf("%w: key %q has no value", ErrArgument, kv.Key)
		case len(kv.Key) > MaxStringLen:
			return nil, fmt.Errorf("%w: key of %d bytes", ErrArgument, len(kv.Key))
		case kv.Value.Len() > MaxArrayLen:
			return nil, fmt.Errorf("%w: key %q: array of %d elements, at most %d allowed", ErrArgument, kv.Key, kv.Value.Len(), MaxArrayLen)
		}
		if s, ok := kv.Value.elems.([]string); ok {
			for _, e := range s {
				if len(e) > MaxStringLen {
					return nil, fmt.Errorf("%w: key %q: string of %d bytes, at most %d allowed", ErrArgument, kv.Key, len(e), MaxStringLen)
				}
			}
		}
		seen[kv.Key] = true
		// The alignment ggml reads is the first key it finds by strcmp.
		if cString(kv.Key) == KeyAlignment && !alignSet {
			a, err := alignmentOf(kv.Value, true)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrArgument, err)
			}
			gw.alignment, alignSet = a, true
		}
	}
	gw.index = make(map[string]int, len(tensors))
	var offset uint64
	for i, t := range tensors {
		size, err := t.check()
		if err != nil {
			return nil, fmt.Errorf("%w: tensor %d (%q): %w", ErrArgument, i, t.Name, err)
		}
		if _, dup := gw.index[t.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate tensor name %q", ErrArgument, t.Name)
		}
		gw.index[t.Name] = i
		t.Shape = append([]int64(nil), t.Shape...)
		t.Offset = offset
		gw.tensors = append(gw.tensors, t)
		gw.sizes = append(gw.sizes, size)
		offset += alignUp(size, gw.alignment)
	}
	if err := gw.writeHeader(kvs); err != nil {
		return nil, err
	}
	gw.advance()
	return gw, nil
}

// Tensors returns the tensor descriptions with the offsets the file gives
// them.
func (w *Writer) Tensors() []TensorInfo { return append([]TensorInfo(nil), w.tensors...) }

// writeHeader writes the magic, counts, pairs, tensor descriptions and the
// padding before the data section. ggml pads there even when the file has
// no tensors.
func (w *Writer) writeHeader(kvs []KV) error {
	b := append([]byte(Magic), 0, 0, 0, 0)
	le.PutUint32(b[4:], Version)
	b = le.AppendUint64(b, uint64(len(w.tensors)))
	b = le.AppendUint64(b, uint64(len(kvs)))
	for _, kv := range kvs {
		b = appendString(b, kv.Key)
		t := kv.Value.ElemType()
		if kv.Value.IsArray() {
			b = le.AppendUint32(b, uint32(TypeArray))
			b = le.AppendUint32(b, uint32(t))
			b = le.AppendUint64(b, uint64(kv.Value.Len()))
		} else {
			b = le.AppendUint32(b, uint32(t))
		}
		b = codecs[t].encode(b, kv.Value.elems)
	}
	for _, t := range w.tensors {
		b = appendString(b, t.Name)
		b = le.AppendUint32(b, uint32(len(t.Shape)))
		for _, d := range t.Shape {
			b = le.AppendUint64(b, uint64(d))
		}
		b = le.AppendUint32(b, uint32(t.Type))
		b = le.AppendUint64(b, t.Offset)
	}
	b = append(b, make([]byte, alignUp(uint64(len(b)), w.alignment)-uint64(len(b)))...)
	return w.emit(b)
}

func (w *Writer) emit(b []byte) error {
	if w.err != nil {
		return w.err
	}
	n, err := w.w.Write(b)
	w.written += uint64(n)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("gguf: write: %w", err)
	}
	return w.err
}

// advance pads after every completed tensor and moves past empty ones.
func (w *Writer) advance() {
	for w.cur < len(w.tensors) && w.done == w.sizes[w.cur] {
		pad := alignUp(w.written, w.alignment) - w.written
		if pad > 0 && w.emit(make([]byte, pad)) != nil {
			return
		}
		w.cur++
		w.done = 0
	}
}

// Write appends tensor data: the tensors' bytes back to back in their
// order, in chunks of any size; the padding between them is the Writer's.
// Bytes beyond the last tensor are an error.
func (w *Writer) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if w.err != nil {
			return n, w.err
		}
		if w.cur >= len(w.tensors) {
			return n, fmt.Errorf("%w: %d bytes past the last tensor's data", ErrArgument, len(p))
		}
		k := min(uint64(len(p)), w.sizes[w.cur]-w.done)
		if err := w.emit(p[:k]); err != nil {
			return n, err
		}
		n += int(k)
		p = p[k:]
		w.done += k
		w.advance()
	}
	return n, nil
}

// WriteTensor writes the whole data of the tensor named name, which must
// be the next one and must not have been started by Write.
func (w *Writer) WriteTensor(name string, data []byte) error {
	// Empty tensors are passed over as soon as they come next.
	if i, ok := w.index[name]; ok && i < w.cur && w.sizes[i] == 0 && len(data) == 0 {
		return nil
	}
	if w.cur >= len(w.tensors) {
		return fmt.Errorf("%w: tensor %q: all tensors are written", ErrArgument, name)
	}
	if t := w.tensors[w.cur]; t.Name != name || w.done != 0 {
		return fmt.Errorf("%w: tensor %q written when %q is next", ErrArgument, name, t.Name)
	}
	if uint64(len(data)) != w.sizes[w.cur] {
		return fmt.Errorf("%w: tensor %q has %d bytes, %d given", ErrArgument, name, w.sizes[w.cur], len(data))
	}
	_, err := w.Write(data)
	return err
}

// Close checks that every tensor's data was written. It does not close the
// underlying io.Writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.cur < len(w.tensors) {
		return fmt.Errorf("%w: tensor %q has %d of %d bytes written", ErrArgument, w.tensors[w.cur].Name, w.done, w.sizes[w.cur])
	}
	return nil
}
