package graphio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gnnrun/graph"
)

// WriteNpz writes what OpenNpz reads back, and the same bytes every time.
func TestWriteNpzRoundTrip(t *testing.T) {
	dir := t.TempDir()
	arrays := []NpzArray{
		{"seeds", graph.TensorOf([]int64{5, 3, 9}, 0)},
		{"src_0", graph.TensorOf([]int64{}, 0)},
		{"w", graph.TensorOf([]float32{1, 2, 3, 4}, 2)},
	}
	a, b := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz")
	for _, p := range []string{a, b} {
		if err := WriteNpz(p, arrays); err != nil {
			t.Fatal(err)
		}
	}
	ra, _ := os.ReadFile(a)
	rb, _ := os.ReadFile(b)
	if !bytes.Equal(ra, rb) {
		t.Fatal("two writes of the same arrays differ")
	}
	z, err := OpenNpz(a)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, arr := range arrays {
		e := z.Entry(arr.Name)
		if e == nil {
			t.Fatalf("no entry %s", arr.Name)
		}
		got, err := z.ReadRows(e, 0, arr.Data.Rows())
		if err != nil {
			t.Fatal(err)
		}
		if got.DType != arr.Data.DType || graph.ShapeString(got.Shape) != graph.ShapeString(arr.Data.Shape) || !bytes.Equal(got.Data, arr.Data.Data) {
			t.Fatalf("%s: read %v, wrote %v", arr.Name, got, arr.Data)
		}
	}
}
