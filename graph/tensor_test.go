package graph

import (
	"math"
	"testing"
	"unsafe"
)

func TestParseDType(t *testing.T) {
	for s, want := range map[string]DType{"<f4": Float32, "f8": Float64, "|b1": Bool, "?": Bool, "<i8": Int64, "|u1": Uint8,
		"float16": Float16, "int32": Int32, "<f2": Float16, ">i1": Int8, "=u2": Uint16} {
		if got, err := ParseDType(s); err != nil || got != want {
			t.Errorf("ParseDType(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{">f4", "<U10", "|O", "<c8", ""} {
		if _, err := ParseDType(s); err == nil {
			t.Errorf("ParseDType(%q) accepted", s)
		}
	}
	if Float32.Descr() != "<f4" || Bool.Size() != 1 || Int16.String() != "int16" {
		t.Error("dtype names")
	}
}

func TestHalfToFloat32(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x3555: 0.333251953125, 0x0001: 5.960464477539063e-08, 0x7bff: 65504, 0x0000: 0} {
		if got := HalfToFloat32(h); got != want {
			t.Errorf("HalfToFloat32(%#x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsInf(float64(HalfToFloat32(0x7c00)), 1) || !math.IsNaN(float64(HalfToFloat32(0x7e00))) {
		t.Error("inf/nan")
	}
}

func TestTensorViews(t *testing.T) {
	x := TensorOf([]float32{1, 2, 3, 4, 5, 6}, 3)
	if x.Rows() != 2 || x.RowLen() != 3 || x.RowBytes() != 12 || x.String() != "float32(2, 3)" || x.Float64At(1, 2) != 6 {
		t.Fatalf("tensor %v", x)
	}
	if _, err := View[int32](x); err == nil {
		t.Error("float32 viewed as int32")
	}
	v, err := View[float32](x)
	if err != nil || v[4] != 5 {
		t.Fatal(v, err)
	}
	raw := make([]byte, 64)
	off := 1
	for uintptr(unsafe.Pointer(&raw[off]))%8 == 0 {
		off++
	}
	if _, err := ViewBytes[int64](raw[off : off+16]); err == nil {
		t.Error("misaligned view accepted")
	}
	if _, err := ViewBytes[int64](raw[:12]); err == nil {
		t.Error("partial element accepted")
	}
	if ShapeString([]int64{7}) != "(7,)" || ShapeString(nil) != "()" {
		t.Error("shape strings")
	}
	y := x.SelectRows([]int{1, 1, 0})
	if y.Rows() != 3 || y.Float64At(0, 0) != 4 || y.Float64At(2, 0) != 1 {
		t.Errorf("SelectRows: %v", y)
	}
}

func TestEdgesSelectAppend(t *testing.T) {
	et := EdgeType{"a", "r", "a"}
	e := &Edges{Src: []int64{0, 1, 2}, Dst: []int64{1, 2, 0}, ID: []int64{0, 1, 2},
		Data: map[string]*Tensor{EdgeDataKey(et, "w"): TensorOf([]int64{10, 11, 12}, 0)}}
	s := e.Select([]int{2, 0})
	if s.Src[0] != 2 || s.ID[1] != 0 || s.Data["a:r:a/w"].Float64At(0, 0) != 12 || s.Type != nil {
		t.Fatalf("Select: %+v", s)
	}
	o := &Edges{Src: []int64{5}, Dst: []int64{6}, Type: []int16{1}, Weight: []float32{0.5}}
	s.Append(o)
	if s.Len() != 3 || s.Type[2] != 1 || s.Type[0] != 0 || s.Weight[0] != 1 || s.Weight[2] != 0.5 || s.ID[2] != 0 {
		t.Fatalf("Append columns: %+v", s)
	}
	if w := s.Data["a:r:a/w"]; w.Rows() != 3 || w.Float64At(2, 0) != 0 {
		t.Fatalf("Append data: %v", w)
	}
	if keys := s.DataKeys(); len(keys) != 1 || keys[0] != "a:r:a/w" {
		t.Fatal(keys)
	}
}

func TestNodeData(t *testing.T) {
	m := Meta{Name: "g", NodeTypes: []string{"a", "b"}, NumNodes: []int64{10, 3}}
	nd := NewNodeData(&m, 1, 4)
	if lo, hi := nd.Range(0); lo != 3 || hi != 6 {
		t.Errorf("range %d %d", lo, hi)
	}
	if lo, hi := nd.Range(1); lo != 1 || hi != 2 {
		t.Errorf("range %d %d", lo, hi)
	}
	nd.Arrays[1]["z"] = NewTensor(Float32, 1, 2)
	nd.Arrays[1]["y"] = NewTensor(Bool, 1)
	if nd.Get(1, "z") == nil || nd.Get(0, "z") != nil || nd.Get(5, "z") != nil || nd.Names(1)[0] != "y" {
		t.Error("lookup")
	}
}
