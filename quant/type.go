// Package quant defines ggml's element types and block formats: the type
// numbering, per-type traits, fp16/bf16 conversion, quantization,
// dequantization and the reference dot products the CPU backend builds on.
//
// Every format is bit-exact with ggml 0.25.1: Quantize produces the same bytes
// as ggml_quantize_chunk and Dequantize the same floats as the type's
// to_float. The tests check this against the real library.
package quant

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ggml-go/ggml/internal/sentinel"
)

// Type is a tensor element type. Its numeric values are exactly those of
// ggml 0.25.1's enum ggml_type, so tensors and files interoperate with ggml.
type Type uint32

// The element types, numbered as in ggml. Slots 4, 5, 31-33 and 36-38 were
// removed from ggml and are not valid types here.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
	NVFP4   Type = 40
	Q1_0    Type = 41
	Q2_0    Type = 42

	// TypeCount is one past the largest type value (GGML_TYPE_COUNT).
	TypeCount Type = 43
)

// Errors returned by this package. Callers test for them with errors.Is.
var (
	// ErrInvalidType reports a type value that is out of range or a removed slot.
	ErrInvalidType = errors.New("quant: invalid type")
	// ErrUnsupported reports an operation a valid type does not offer here.
	// errors.Is also matches it to errors.ErrUnsupported
	// (backend.ErrUnsupported).
	ErrUnsupported error = sentinel.New("quant: unsupported", errors.ErrUnsupported)
	// ErrBadLength reports a size or length that does not fit the type's layout.
	ErrBadLength = errors.New("quant: bad length")
)

type traits struct {
	name      string
	blockSize int
	typeSize  int
	quantized bool
}

// typeTraits mirrors ggml's type_traits table; a zero blockSize marks a removed slot.
var typeTraits = [TypeCount]traits{
	F32:     {"f32", 1, 4, false},
	F16:     {"f16", 1, 2, false},
	Q4_0:    {"q4_0", 32, 18, true},
	Q4_1:    {"q4_1", 32, 20, true},
	Q5_0:    {"q5_0", 32, 22, true},
	Q5_1:    {"q5_1", 32, 24, true},
	Q8_0:    {"q8_0", 32, 34, true},
	Q8_1:    {"q8_1", 32, 36, true},
	Q2_K:    {"q2_K", 256, 84, true},
	Q3_K:    {"q3_K", 256, 110, true},
	Q4_K:    {"q4_K", 256, 144, true},
	Q5_K:    {"q5_K", 256, 176, true},
	Q6_K:    {"q6_K", 256, 210, true},
	Q8_K:    {"q8_K", 256, 292, true},
	IQ2_XXS: {"iq2_xxs", 256, 66, true},
	IQ2_XS:  {"iq2_xs", 256, 74, true},
	IQ3_XXS: {"iq3_xxs", 256, 98, true},
	IQ1_S:   {"iq1_s", 256, 50, true},
	IQ4_NL:  {"iq4_nl", 32, 18, true},
	IQ3_S:   {"iq3_s", 256, 110, true},
	IQ2_S:   {"iq2_s", 256, 82, true},
	IQ4_XS:  {"iq4_xs", 256, 136, true},
	I8:      {"i8", 1, 1, false},
	I16:     {"i16", 1, 2, false},
	I32:     {"i32", 1, 4, false},
	I64:     {"i64", 1, 8, false},
	F64:     {"f64", 1, 8, false},
	IQ1_M:   {"iq1_m", 256, 56, true},
	BF16:    {"bf16", 1, 2, false},
	TQ1_0:   {"tq1_0", 256, 54, true},
	TQ2_0:   {"tq2_0", 256, 66, true},
	MXFP4:   {"mxfp4", 32, 17, true},
	NVFP4:   {"nvfp4", 64, 36, true},
	Q1_0:    {"q1_0", 128, 18, true},
	Q2_0:    {"q2_0", 64, 18, true},
}

// Types returns every valid type in numeric order.
func Types() []Type {
	out := make([]Type, 0, TypeCount)
	for t := Type(0); t < TypeCount; t++ {
		if t.Valid() {
			out = append(out, t)
		}
	}
	return out
}

// Valid reports whether t names a type ggml 0.25.1 defines.
func (t Type) Valid() bool { return t < TypeCount && typeTraits[t].blockSize != 0 }

// Check returns nil for a valid type and an ErrInvalidType-wrapped error otherwise.
func (t Type) Check() error {
	if !t.Valid() {
		return fmt.Errorf("%w: %d", ErrInvalidType, uint32(t))
	}
	return nil
}

// String returns ggml's name for the type ("q4_0", "q4_K", "bf16"), or
// "Type(N)" for a value that is not a valid type.
func (t Type) String() string {
	if !t.Valid() {
		return fmt.Sprintf("Type(%d)", uint32(t))
	}
	return typeTraits[t].name
}

// BlockSize is the number of elements in one block (1 for plain types), or 0
// for an invalid type.
func (t Type) BlockSize() int {
	if !t.Valid() {
		return 0
	}
	return typeTraits[t].blockSize
}

// TypeSize is the number of bytes in one block, or 0 for an invalid type.
func (t Type) TypeSize() int {
	if !t.Valid() {
		return 0
	}
	return typeTraits[t].typeSize
}

// IsQuantized reports whether t is a block-quantized type.
func (t Type) IsQuantized() bool { return t.Valid() && typeTraits[t].quantized }

// RowSize is the number of bytes n elements of type t occupy, as
// ggml_row_size. It returns -1 when t is invalid, n is negative or not a
// multiple of the block size, or the size overflows int64.
func (t Type) RowSize(n int64) int64 {
	if !t.Valid() || n < 0 {
		return -1
	}
	bs, ts := int64(t.BlockSize()), int64(t.TypeSize())
	if n%bs != 0 {
		return -1
	}
	blocks := n / bs
	if blocks > (1<<63-1)/ts {
		return -1
	}
	return blocks * ts
}

// ParseType returns the type named name. It accepts ggml's names in any case
// ("q4_K", "Q4_K", "iq2_xxs") and the constant names used here.
func ParseType(name string) (Type, error) {
	for t := Type(0); t < TypeCount; t++ {
		if t.Valid() && strings.EqualFold(typeTraits[t].name, name) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown type name %q", ErrInvalidType, name)
}
