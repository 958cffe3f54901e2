package openvino

import (
	"fmt"

	"github.com/ggml-go/ggml/quant"
)

// elemType is an OpenVINO element type by name, independent of the
// numbering a release of the C API gives it (ov_element_type_e shifted by
// one in 2025.1, when UNDEFINED was removed). irName is the IR v11
// spelling; bits the width of one element.
type elemType int

const (
	etDynamic elemType = iota
	etBoolean
	etBF16
	etF16
	etF32
	etF64
	etI4
	etI8
	etI16
	etI32
	etI64
	etU1
	etU2
	etU3
	etU4
	etU6
	etU8
	etU16
	etU32
	etU64
	etNF4
	etF8E4M3
	etF8E5M2
	etString
	etF4E2M1
	etF8E8M0
	etCount
)

var elemTypeInfo = [etCount]struct {
	irName string
	bits   int
}{
	etDynamic: {"dynamic", 0}, etBoolean: {"boolean", 8}, etBF16: {"bf16", 16}, etF16: {"f16", 16},
	etF32: {"f32", 32}, etF64: {"f64", 64}, etI4: {"i4", 4}, etI8: {"i8", 8}, etI16: {"i16", 16},
	etI32: {"i32", 32}, etI64: {"i64", 64}, etU1: {"u1", 1}, etU2: {"u2", 2}, etU3: {"u3", 3},
	etU4: {"u4", 4}, etU6: {"u6", 6}, etU8: {"u8", 8}, etU16: {"u16", 16}, etU32: {"u32", 32},
	etU64: {"u64", 64}, etNF4: {"nf4", 4}, etF8E4M3: {"f8e4m3", 8}, etF8E5M2: {"f8e5m2", 8},
	etString: {"string", 0}, etF4E2M1: {"f4e2m1", 4}, etF8E8M0: {"f8e8m0", 8},
}

func (e elemType) String() string {
	if e >= 0 && e < etCount {
		return elemTypeInfo[e].irName
	}
	return fmt.Sprintf("elemType(%d)", int(e))
}

// byteSize is the bytes of n elements, packed as OpenVINO packs sub-byte
// types (ceil(n*bits/8)).
func (e elemType) byteSize(n int64) int64 { return (n*int64(elemTypeInfo[e].bits) + 7) / 8 }

// numbering is one release family's ov_element_type_e values, indexed by
// elemType. Values are from testdata/facts/c-api-versions.txt (checked
// against it by TestNumberingFacts):
// 2025.0 (and 2024.2 on) has UNDEFINED 0, DYNAMIC 1, BOOLEAN 2 ... F8E8M0
// 26; 2025.1 and newer drop UNDEFINED and number every type one lower.
type numbering struct {
	name string
	// offset is what ov_element_type_e adds to the elemType index.
	offset int32
}

var (
	numbering2025_0 = &numbering{name: "2025.0 (UNDEFINED=0, DYNAMIC=1, F16=4)", offset: 1}
	numbering2025_1 = &numbering{name: "2025.1+ (DYNAMIC=0, F16=3)", offset: 0}
)

// c is the C value of e in this numbering.
func (n *numbering) c(e elemType) int32 { return int32(e) + n.offset }

// fromC is the element type of C value v, or false if v names none
// (UNDEFINED, or out of range).
func (n *numbering) fromC(v int32) (elemType, bool) {
	e := elemType(v - n.offset)
	if e < 0 || e >= etCount {
		return 0, false
	}
	return e, true
}

// numberingFor chooses the table for a release: 2025.0 and older, 2025.1
// and newer.
func numberingFor(v Version) *numbering {
	if v.Year > 2025 || (v.Year == 2025 && v.Minor >= 1) {
		return numbering2025_1
	}
	return numbering2025_0
}

// ggmlElem is the OpenVINO element type a non-quantized ggml type is
// bound as.
func ggmlElem(t quant.Type) (elemType, error) {
	switch t {
	case quant.F32:
		return etF32, nil
	case quant.F16:
		return etF16, nil
	case quant.BF16:
		return etBF16, nil
	case quant.I32:
		return etI32, nil
	case quant.I64:
		return etI64, nil
	case quant.I16:
		return etI16, nil
	case quant.I8:
		return etI8, nil
	case quant.F64:
		return etF64, nil
	}
	return 0, fmt.Errorf("%w: ggml type %v has no OpenVINO element type", ErrUnsupportedType, t)
}
