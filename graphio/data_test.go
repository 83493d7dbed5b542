package graphio

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"gnnrun/graph"
)

// TestGenIdenticalForAnyRankCount checks that the files gen writes do not
// depend on the number of ranks writing them.
func TestGenIdenticalForAnyRankCount(t *testing.T) {
	for _, format := range []string{FormatCSV, FormatNumPy, FormatParquet} {
		var ref map[string]string
		var refSum uint64
		for _, p := range []int{1, 2, 3} {
			dir := t.TempDir()
			res := generate(t, p, GenSpec{Scale: 7, Seed: 11, FeatDim: 3, Classes: 4, Hetero: true, Format: format, Chunks: 4}, dir)
			sums := map[string]string{}
			filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					b, _ := os.ReadFile(path)
					rel, _ := filepath.Rel(dir, path)
					sums[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
				}
				return nil
			})
			if ref == nil {
				ref, refSum = sums, res.Checksum
				continue
			}
			if fmt.Sprint(sums) != fmt.Sprint(ref) || res.Checksum != refSum {
				t.Fatalf("%s: files written by %d ranks differ from 1 rank's", format, p)
			}
		}
		if len(ref) != 1+4*2+4*(5+1) {
			t.Fatalf("%s: %d files", format, len(ref))
		}
	}
}

// TestEdgeDataTravelsWithEdges reads edge data chunked differently from
// the edges and checks each edge's row by its edge ID.
func TestEdgeDataTravelsWithEdges(t *testing.T) {
	path := smallChunked(t, func(md string) string {
		return strings.Replace(md, `"edge_data": {}`, `"edge_data": {"n:r:n": {"w": {"format": {"name": "numpy"}, "data": ["w0.npy", "w1.npy", "w2.npy"]}}}`, 1)
	})
	dir := filepath.Dir(path)
	w := []int64{100, 101, 102, 103, 104, 105}
	for k, r := range [][2]int{{0, 1}, {1, 4}, {4, 6}} {
		if err := WriteNpySlice(filepath.Join(dir, fmt.Sprintf("w%d.npy", k)), w[r[0]:r[1]]); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []int{1, 2, 4} {
		for _, g := range readAll(t, p, path, Dedup(true)) {
			d := g.Edges.Data["n:r:n/w"]
			if d == nil || d.Rows() != int64(g.Edges.Len()) {
				t.Fatalf("P=%d: edge data %v for %d edges", p, d, g.Edges.Len())
			}
			for i := range g.Edges.Len() {
				if got := int64(d.Float64At(int64(i), 0)); got != 100+g.Edges.ID[i] {
					t.Fatalf("P=%d: edge %d has data %d", p, g.Edges.ID[i], got)
				}
			}
		}
	}
	// Too few rows for the edges.
	if err := WriteNpySlice(filepath.Join(dir, "w2.npy"), w[4:5]); err != nil {
		t.Fatal(err)
	}
	wantErr(t, readErr(path, 2), `edge_data "n:r:n"/"w"`, "hold 5 rows", "the edge type has 6 edges")
}

// TestFeatureFormatsAgree writes the same features as NumPy, Parquet (one
// column per element, and one list column) and CSV and reads them back.
func TestFeatureFormatsAgree(t *testing.T) {
	feat := make([]float64, 10*3)
	for i := range feat {
		feat[i] = float64(i) / 4
	}
	variants := map[string]func(dir string) string{
		"numpy": func(dir string) string {
			WriteNpySlice(filepath.Join(dir, "f0.npy"), feat[:15], 5, 3)
			WriteNpySlice(filepath.Join(dir, "f1.npy"), feat[15:], 5, 3)
			return `{"format": {"name": "numpy"}, "data": ["f0.npy", "f1.npy"]}`
		},
		"parquet": func(dir string) string {
			WriteParquet(filepath.Join(dir, "f0.parquet"), graph.TensorOf(feat[:21], 3))
			WriteParquet(filepath.Join(dir, "f1.parquet"), graph.TensorOf(feat[21:], 3))
			return `{"format": {"name": "parquet"}, "data": ["f0.parquet", "f1.parquet"]}`
		},
		"parquet-list": func(dir string) string {
			type row struct {
				Feat []float64 `parquet:"feat,list"`
			}
			var rows []row
			for i := range 10 {
				rows = append(rows, row{feat[3*i : 3*i+3]})
			}
			var b bytes.Buffer
			if err := parquet.Write(&b, rows); err != nil {
				panic(err)
			}
			os.WriteFile(filepath.Join(dir, "f.parquet"), b.Bytes(), 0o644)
			return `{"format": {"name": "parquet"}, "data": ["f.parquet"]}`
		},
		"csv": func(dir string) string {
			var b strings.Builder
			for i := range 10 {
				fmt.Fprintf(&b, "%g,%g,%g\n", feat[3*i], feat[3*i+1], feat[3*i+2])
			}
			writeFile(t, dir, "f.csv", b.String())
			return `{"format": {"name": "csv"}, "data": ["f.csv"]}`
		},
	}
	var ref []ArrayStats
	for name, write := range variants {
		var spec string
		path := smallChunked(t, func(md string) string {
			return strings.Replace(md, `{"format": {"name": "numpy"}, "data": ["feat0.npy", "feat1.npy"]}`, "SPEC", 1)
		})
		spec = write(filepath.Dir(path))
		md, _ := os.ReadFile(path)
		os.WriteFile(path, bytes.Replace(md, []byte("SPEC"), []byte(spec), 1), 0o644)
		for _, p := range []int{1, 3} {
			s := statsOf(t, p, path)
			if ref == nil {
				ref = s.Arrays
			}
			if fmt.Sprint(s.Arrays) != fmt.Sprint(ref) {
				t.Fatalf("%s P=%d: %+v, want %+v", name, p, s.Arrays, ref)
			}
		}
	}
}

// TestNpz reads an archive with a stored and a deflated entry, an object
// entry to skip, a CSR adjacency and masks stored splits×N.
func TestNpz(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.npz")
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	add := func(name string, method uint16, data []byte) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	npy := func(d graph.DType, data []byte, shape ...int64) []byte {
		return append(EncodeNpyHeader(d, shape), data...)
	}
	// CSR of 4 nodes: 0->1, 0->2, 2->3, 3->0.
	add("adj_indptr.npy", zip.Store, npy(graph.Int32, graph.AsBytes([]int32{0, 2, 2, 3, 4}), 5))
	add("adj_indices.npy", zip.Deflate, npy(graph.Int32, graph.AsBytes([]int32{1, 2, 3, 0}), 4))
	add("adj_shape.npy", zip.Store, npy(graph.Int64, graph.AsBytes([]int64{4, 4}), 2))
	add("labels.npy", zip.Deflate, npy(graph.Int8, []byte{1, 0, 1, 2}, 4))
	add("masks.npy", zip.Store, npy(graph.Bool, []byte{1, 0, 0, 1, 0, 1, 1, 0}, 2, 4))
	obj := "{'descr': '|O', 'fortran_order': False, 'shape': (), }"
	add("meta.npy", zip.Store, append([]byte("\x93NUMPY\x01\x00"+string(rune(len(obj)+1))+"\x00"+obj+"\n"), 0x80))
	zw.Close()
	os.WriteFile(path, b.Bytes(), 0o644)
	for _, p := range []int{1, 2, 3} {
		got, _ := edgesOf(t, p, path)
		if strings.Join(got, " ") != "0-1 0-2 2-3 3-0" {
			t.Fatalf("P=%d: %v", p, got)
		}
		var masks, labels []string
		for _, g := range readAll(t, p, path) {
			m, l := g.Nodes.Get(0, "masks"), g.Nodes.Get(0, "labels")
			for i := range m.Rows() {
				masks = append(masks, fmt.Sprint(m.Row(i)))
				labels = append(labels, fmt.Sprint(l.Float64At(i, 0)))
			}
		}
		if strings.Join(masks, "") != "[1 0][0 1][0 1][1 0]" || strings.Join(labels, " ") != "1 0 1 2" {
			t.Fatalf("P=%d: masks %v labels %v", p, masks, labels)
		}
	}
	wantErr(t, readErr(writeFile(t, dir, "x.npz", "not a zip"), 1), "x.npz", "not an .npz")
}

// TestFeatureDTypes reads features of every dtype the issue lists, from
// NumPy and (where Parquet has the type) Parquet chunks.
func TestFeatureDTypes(t *testing.T) {
	half := []uint16{0x3c00, 0xc000, 0x3800, 0, 0x4000, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00} // 1, -2, 0.5, 0, 2, 1...
	tensors := map[string]*graph.Tensor{
		"f16": {DType: graph.Float16, Shape: []int64{10}, Data: graph.AsBytes(half)},
		"f32": graph.TensorOf([]float32{1, -2, .5, 0, 2, 1, 1, 1, 1, 1}, 0),
		"f64": graph.TensorOf([]float64{1, -2, .5, 0, 2, 1, 1, 1, 1, 1, 1, -2, .5, 0, 2, 1, 1, 1, 1, 1}, 2),
		"i8":  graph.TensorOf([]int8{1, -2, 0, 0, 2, 1, 1, 1, 1, 1}, 0),
		"i16": graph.TensorOf([]int16{1, -2, 0, 0, 2, 1, 1, 1, 1, 1}, 0),
		"i32": graph.TensorOf([]int32{1, -2, 0, 0, 2, 1, 1, 1, 1, 1}, 0),
		"i64": graph.TensorOf([]int64{1, -2, 0, 0, 2, 1, 1, 1, 1, 1}, 0),
		"u8":  graph.TensorOf([]uint8{1, 2, 0, 0, 2, 1, 1, 1, 1, 1}, 0),
		"b":   graph.TensorOf([]bool{true, false, false, false, true, true, true, true, true, true}, 0),
	}
	for _, format := range []string{FormatNumPy, FormatParquet} {
		var specs []string
		path := smallChunked(t, nil)
		dir := filepath.Dir(path)
		for name, ten := range tensors {
			if format == FormatParquet && ten.DType == graph.Float16 {
				continue
			}
			file := name + "." + fileExt(format)
			var err error
			if format == FormatNumPy {
				err = WriteNpy(filepath.Join(dir, file), ten)
			} else {
				err = WriteParquet(filepath.Join(dir, file), ten)
			}
			if err != nil {
				t.Fatal(err)
			}
			specs = append(specs, fmt.Sprintf(`"%s": {"format": {"name": "%s"}, "data": ["%s"]}`, name, format, file))
		}
		md, _ := os.ReadFile(path)
		s := strings.Replace(string(md), `"feat": {"format": {"name": "numpy"}, "data": ["feat0.npy", "feat1.npy"]}`, strings.Join(specs, ",\n"), 1)
		os.WriteFile(path, []byte(s), 0o644)
		for _, g := range readAll(t, 3, path) {
			lo, _ := g.Nodes.Range(0)
			for name, want := range tensors {
				got := g.Nodes.Get(0, name)
				if got == nil {
					if format == FormatParquet && want.DType == graph.Float16 {
						continue
					}
					t.Fatalf("%s: no %s", format, name)
				}
				if got.DType != want.DType || fmt.Sprint(got.RowShape()) != fmt.Sprint(want.RowShape()) {
					t.Fatalf("%s %s: %v, want %v", format, name, got, want)
				}
				for i := range got.Rows() {
					for j := range got.RowLen() {
						if a, b := got.Float64At(i, j), want.Float64At(lo+i, j); a != b {
							t.Fatalf("%s %s[%d][%d] = %v, want %v", format, name, lo+i, j, a, b)
						}
					}
				}
			}
			g.Close()
		}
	}
}
