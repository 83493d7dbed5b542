package graph

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// DType is the element type of a Tensor: the NumPy dtypes graphs carry as
// features, labels and masks. Values are little-endian.
type DType uint8

// The element types.
const (
	InvalidDType DType = iota
	Bool
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float16
	Float32
	Float64
)

var dtypeInfo = [...]struct {
	name  string
	descr string // NumPy's little-endian type string
	size  int
}{
	InvalidDType: {"invalid", "", 0},
	Bool:         {"bool", "|b1", 1},
	Int8:         {"int8", "|i1", 1},
	Int16:        {"int16", "<i2", 2},
	Int32:        {"int32", "<i4", 4},
	Int64:        {"int64", "<i8", 8},
	Uint8:        {"uint8", "|u1", 1},
	Uint16:       {"uint16", "<u2", 2},
	Uint32:       {"uint32", "<u4", 4},
	Uint64:       {"uint64", "<u8", 8},
	Float16:      {"float16", "<f2", 2},
	Float32:      {"float32", "<f4", 4},
	Float64:      {"float64", "<f8", 8},
}

// Size returns the bytes of one element.
func (d DType) Size() int {
	if int(d) >= len(dtypeInfo) {
		return 0
	}
	return dtypeInfo[d].size
}

// String returns the NumPy name: "float32", "int64", "bool".
func (d DType) String() string {
	if int(d) >= len(dtypeInfo) {
		return fmt.Sprintf("DType(%d)", int(d))
	}
	return dtypeInfo[d].name
}

// Descr returns NumPy's little-endian type string: "<f4", "|b1".
func (d DType) Descr() string {
	if int(d) >= len(dtypeInfo) {
		return ""
	}
	return dtypeInfo[d].descr
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float16 || d == Float32 || d == Float64 }

// ParseDType parses a NumPy name ("float32") or a type string ("<f4",
// "|u1", "f8"). Big-endian type strings are refused: every reader and writer
// here works on little-endian data.
func ParseDType(s string) (DType, error) {
	for d := Bool; d <= Float64; d++ {
		if s == dtypeInfo[d].name {
			return d, nil
		}
	}
	t := s
	switch {
	case strings.HasPrefix(t, ">"):
		if len(t) == 3 && t[2] == '1' {
			t = t[1:] // one-byte types have no byte order
		} else {
			return InvalidDType, fmt.Errorf("graph: dtype %q is big-endian; only little-endian data is supported", s)
		}
	case strings.HasPrefix(t, "<"), strings.HasPrefix(t, "|"), strings.HasPrefix(t, "="):
		t = t[1:]
	}
	if t == "?" {
		return Bool, nil
	}
	for d := Bool; d <= Float64; d++ {
		if t == dtypeInfo[d].descr[1:] {
			return d, nil
		}
	}
	return InvalidDType, fmt.Errorf("graph: unsupported dtype %q (want bool, int8..64, uint8..64 or float16/32/64)", s)
}

// Tensor is an array of Shape[0] rows in C order: each row holds
// Shape[1]*Shape[2]*... elements of DType, little-endian, in Data. Data may
// be a view of a memory-mapped file; it must then not be written.
type Tensor struct {
	DType DType
	Shape []int64
	Data  []byte
}

// NewTensor returns a zeroed tensor of the given type and shape.
func NewTensor(d DType, shape ...int64) *Tensor {
	t := &Tensor{DType: d, Shape: append([]int64(nil), shape...)}
	t.Data = make([]byte, t.Rows()*int64(t.RowBytes()))
	return t
}

// Rows returns Shape[0] (1 for a scalar).
func (t *Tensor) Rows() int64 {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Shape[0]
}

// RowLen returns the number of elements in one row.
func (t *Tensor) RowLen() int64 {
	n := int64(1)
	for _, s := range t.Shape[min(1, len(t.Shape)):] {
		n *= s
	}
	return n
}

// RowBytes returns the bytes of one row.
func (t *Tensor) RowBytes() int { return int(t.RowLen()) * t.DType.Size() }

// Row returns the bytes of row i.
func (t *Tensor) Row(i int64) []byte {
	rb := int64(t.RowBytes())
	return t.Data[i*rb : (i+1)*rb]
}

// RowShape returns Shape[1:], the shape of one row.
func (t *Tensor) RowShape() []int64 { return t.Shape[min(1, len(t.Shape)):] }

// ShapeString returns the shape as NumPy prints it: "(5, 3)", "(7,)".
func ShapeString(shape []int64) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, s := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, s)
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// String describes the tensor's type and shape, e.g. "float32(100, 16)".
func (t *Tensor) String() string { return t.DType.String() + ShapeString(t.Shape) }

// Float64At returns element j of row i converted to float64, whatever the
// dtype: for summaries and tests, not for bulk work.
func (t *Tensor) Float64At(i, j int64) float64 {
	sz := int64(t.DType.Size())
	b := t.Data[(i*t.RowLen()+j)*sz:]
	switch t.DType {
	case Bool, Uint8:
		return float64(b[0])
	case Int8:
		return float64(int8(b[0]))
	case Int16:
		return float64(int16(binary.LittleEndian.Uint16(b)))
	case Uint16:
		return float64(binary.LittleEndian.Uint16(b))
	case Int32:
		return float64(int32(binary.LittleEndian.Uint32(b)))
	case Uint32:
		return float64(binary.LittleEndian.Uint32(b))
	case Int64:
		return float64(int64(binary.LittleEndian.Uint64(b)))
	case Uint64:
		return float64(binary.LittleEndian.Uint64(b))
	case Float16:
		return float64(HalfToFloat32(binary.LittleEndian.Uint16(b)))
	case Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return math.NaN()
}

// HalfToFloat32 converts IEEE 754 half-precision bits to float32.
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		frac &= 0x3ff
		return math.Float32frombits(sign | e<<23 | frac<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// elemDType is the DType of the Go element type T, or InvalidDType.
func elemDType[T any]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Bool
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case float32:
		return Float32
	case float64:
		return Float64
	}
	return InvalidDType
}

// View returns t's data as a []T without copying. It fails when T does not
// match the dtype (uint16 also views float16) or the data is not aligned
// for T.
func View[T any](t *Tensor) ([]T, error) {
	want := elemDType[T]()
	if want != t.DType && !(want == Uint16 && t.DType == Float16) && !(want == Uint8 && t.DType == Bool) {
		return nil, fmt.Errorf("graph: cannot view %s tensor as %T elements", t.DType, *new(T))
	}
	return ViewBytes[T](t.Data)
}

// ViewBytes reinterprets b as a []T without copying; it fails when b's
// length is not a multiple of T's size or b is not aligned for T.
func ViewBytes[T any](b []byte) ([]T, error) {
	var z T
	size := int(unsafe.Sizeof(z))
	if len(b)%size != 0 {
		return nil, fmt.Errorf("graph: %d bytes are not a whole number of %d-byte elements", len(b), size)
	}
	if len(b) == 0 {
		return []T{}, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%unsafe.Alignof(z) != 0 {
		return nil, fmt.Errorf("graph: data is not aligned for %T", z)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size), nil
}

// AsBytes views s's memory as bytes without copying.
func AsBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// TensorOf wraps s as a tensor of shape (len(s)/rowLen, rowLen), or
// (len(s),) when rowLen is 0, sharing its memory.
func TensorOf[T any](s []T, rowLen int) *Tensor {
	d := elemDType[T]()
	if d == InvalidDType {
		panic(fmt.Sprintf("graph: %T is not a tensor element type", *new(T)))
	}
	t := &Tensor{DType: d, Data: AsBytes(s)}
	if rowLen == 0 {
		t.Shape = []int64{int64(len(s))}
	} else {
		t.Shape = []int64{int64(len(s) / rowLen), int64(rowLen)}
	}
	return t
}
