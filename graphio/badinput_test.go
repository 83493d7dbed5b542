package graphio

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
)

// smallChunked writes a valid two-chunk graph: 10 nodes, 6 edges in two CSV
// chunks, float32 features in two NumPy chunks. It returns the metadata
// path; edit can change the metadata text before it is written.
func smallChunked(t *testing.T, edit func(md string) string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "edges/e0.csv", "0 1\n1 2\n2 3\n")
	writeFile(t, dir, "edges/e1.csv", "3 4\n4 5\n9 0\n")
	feat := make([]float32, 10*3)
	for i := range feat {
		feat[i] = float32(i)
	}
	if err := WriteNpySlice(filepath.Join(dir, "feat0.npy"), feat[:18], 6, 3); err != nil {
		t.Fatal(err)
	}
	if err := WriteNpySlice(filepath.Join(dir, "feat1.npy"), feat[18:], 4, 3); err != nil {
		t.Fatal(err)
	}
	md := `{
  "graph_name": "small",
  "node_type": ["n"],
  "num_nodes_per_type": [10],
  "edge_type": ["n:r:n"],
  "num_edges_per_type": [6],
  "num_edges_per_chunk": [[3, 3]],
  "edges": {
    "n:r:n": {"format": {"name": "csv", "delimiter": " "}, "data": ["edges/e0.csv", "edges/e1.csv"]}
  },
  "node_data": {
    "n": {"feat": {"format": {"name": "numpy"}, "data": ["feat0.npy", "feat1.npy"]}}
  },
  "edge_data": {}
}
`
	if edit != nil {
		md = edit(md)
	}
	return writeFile(t, dir, "metadata.json", md)
}

func readErr(path string, p int, opts ...Option) error {
	return worldErr(p, func(c *collective.Comm) error {
		g, err := Read(c, path, opts...)
		if err == nil {
			g.Close()
		}
		return err
	})
}

func TestSmallChunkedReads(t *testing.T) {
	path := smallChunked(t, nil)
	for _, p := range []int{1, 2, 3, 4} {
		gs := readAll(t, p, path)
		var edges int
		for r, g := range gs {
			edges += g.Edges.Len()
			lo, hi := g.Nodes.Range(0)
			f := g.Nodes.Get(0, "feat")
			if f.Rows() != hi-lo {
				t.Fatalf("P=%d rank %d: %d feature rows for [%d,%d)", p, r, f.Rows(), lo, hi)
			}
			for i := range f.Rows() {
				if got := f.Float64At(i, 1); got != float64((lo+i)*3+1) {
					t.Fatalf("P=%d: feature of node %d = %v", p, lo+i, got)
				}
			}
			for i := range g.Edges.Src {
				// Edge IDs are file order: edge k is line k+1 of the chunks.
				want := [][2]int64{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {9, 0}}[g.Edges.ID[i]]
				if g.Edges.Src[i] != want[0] || g.Edges.Dst[i] != want[1] {
					t.Fatalf("P=%d: edge ID %d is (%d,%d), want %v", p, g.Edges.ID[i], g.Edges.Src[i], g.Edges.Dst[i], want)
				}
			}
			g.Close()
		}
		if edges != 6 {
			t.Fatalf("P=%d: %d edges", p, edges)
		}
	}
}

func TestBadChunkedInput(t *testing.T) {
	replace := func(old, new string) func(string) string {
		return func(md string) string {
			if !strings.Contains(md, old) {
				panic("test metadata lacks " + old)
			}
			return strings.Replace(md, old, new, 1)
		}
	}
	cases := []struct {
		name  string
		edit  func(string) string
		files map[string]string // overwritten after the metadata
		want  []string
	}{
		{"missing key", replace(`"edge_type": ["n:r:n"],`, ""), nil, []string{"metadata.json", `missing key "edge_type"`}},
		{"misspelt key", replace(`"num_nodes_per_type"`, `"num_node_per_type"`), nil,
			[]string{"metadata.json:4:", `unknown key "num_node_per_type"`, `did you mean "num_nodes_per_type"`}},
		{"misspelt spec key", replace(`"data": ["edges/e0.csv"`, `"dta": ["edges/e0.csv"`), nil,
			[]string{"metadata.json:9:", `unknown key "dta"`, `did you mean "data"`}},
		{"unknown format", replace(`"name": "csv"`, `"name": "tsv"`), nil, []string{"metadata.json:9:", `format "tsv" is not one of`}},
		{"bad edge type", replace(`"edge_type": ["n:r:n"]`, `"edge_type": ["r"]`), nil, []string{"metadata.json:5:", "not canonical"}},
		{"per-chunk vs per-type", replace(`"num_edges_per_type": [6]`, `"num_edges_per_type": [7]`), nil,
			[]string{"metadata.json:6:", "says 7", "sums to 6"}},
		{"count disagrees with file", replace(`"num_edges_per_chunk": [[3, 3]]`, `"num_edges_per_chunk": [[2, 4]]`), nil,
			[]string{"e0.csv", "holds 3 edges but num_edges_per_chunk says 2"}},
		{"type count disagrees", func(md string) string {
			return replace(`"num_edges_per_chunk": [[3, 3]],`, "")(replace(`"num_edges_per_type": [6]`, `"num_edges_per_type": [5]`)(md))
		}, nil, []string{"metadata.json", "chunk files hold 6 edges but num_edges_per_type says 5"}},
		{"missing chunk", replace(`"edges/e1.csv"]`, `"edges/e9.csv"]`), nil, []string{"metadata.json:9:", "e9.csv is missing"}},
		{"one column", nil, map[string]string{"edges/e1.csv": "3 4\n4\n9 0\n"}, []string{"e1.csv:2:", "1 columns, want 2"}},
		{"non-integer", nil, map[string]string{"edges/e1.csv": "3 4\n4 5\n9 x\n"}, []string{"e1.csv:3:", `destination node ID "x": not an integer`}},
		{"ID too large", nil, map[string]string{"edges/e1.csv": "3 4\n4 5\n10 0\n"}, []string{"e1.csv:3:", "source node ID 10 is out of range", "10 nodes"}},
		{"negative ID", nil, map[string]string{"edges/e0.csv": "0 1\n-1 2\n2 3\n"}, []string{"e0.csv:2:", "negative source node ID -1"}},
		{"broken npy header", nil, map[string]string{"feat1.npy": "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4', \n"}, []string{"feat1.npy", "broken .npy header"}},
		{"bad npy magic", nil, map[string]string{"feat1.npy": "not numpy at all"}, []string{"feat1.npy", "bad magic"}},
		{"feature rows", replace(`"num_nodes_per_type": [10]`, `"num_nodes_per_type": [11]`), map[string]string{"edges/e1.csv": "3 4\n4 5\n9 0\n"},
			[]string{"feat0.npy", `node_data "n"/"feat"`, "hold 10 rows", "the node type has 11 nodes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := smallChunked(t, tc.edit)
			for name, text := range tc.files {
				writeFile(t, filepath.Dir(path), name, text)
			}
			for _, p := range []int{1, 3} {
				wantErr(t, readErr(path, p), tc.want...)
			}
		})
	}
}

func TestBadDTypes(t *testing.T) {
	path := smallChunked(t, nil)
	dir := filepath.Dir(path)
	// A feature chunk of another dtype than its sibling.
	if err := WriteNpySlice(filepath.Join(dir, "feat1.npy"), make([]float64, 12), 4, 3); err != nil {
		t.Fatal(err)
	}
	wantErr(t, readErr(path, 2), "feat1.npy", "chunk 1 has dtype float64 but chunk 0", "has float32")
	// NumPy edges of a float dtype.
	if err := WriteNpySlice(filepath.Join(dir, "feat1.npy"), make([]float32, 12), 4, 3); err != nil {
		t.Fatal(err)
	}
	if err := WriteNpySlice(filepath.Join(dir, "e.npy"), make([]float32, 12), 6, 2); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(path)
	s := strings.Replace(string(md), `{"format": {"name": "csv", "delimiter": " "}, "data": ["edges/e0.csv", "edges/e1.csv"]}`, `{"format": {"name": "numpy"}, "data": ["e.npy"]}`, 1)
	s = strings.Replace(s, `"num_edges_per_chunk": [[3, 3]],`, "", 1)
	writeFile(t, dir, "metadata.json", s)
	wantErr(t, readErr(path, 1), "e.npy", "dtype float32: edge chunks must hold int32 or int64")
	if err := WriteNpySlice(filepath.Join(dir, "e.npy"), make([]int64, 18), 6, 3); err != nil {
		t.Fatal(err)
	}
	wantErr(t, readErr(path, 1), "e.npy", "shape (6, 3): edge chunks must be N×2")
}

func TestNpyHeaders(t *testing.T) {
	dir := t.TempDir()
	// Round trip, with the data 64-byte aligned.
	x := []int32{1, 2, 3, 4, 5, 6}
	p := filepath.Join(dir, "x.npy")
	if err := WriteNpySlice(p, x, 3, 2); err != nil {
		t.Fatal(err)
	}
	a, err := OpenNpy(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Header.Offset%64 != 0 || a.Header.DType != graph.Int32 || graph.ShapeString(a.Header.Shape) != "(3, 2)" {
		t.Fatalf("header %+v", a.Header)
	}
	rows, err := a.MapRows(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	v, err := graph.View[int32](rows)
	if err != nil || len(v) != 4 || v[0] != 3 || v[3] != 6 {
		t.Fatalf("mapped rows %v %v", v, err)
	}
	a.Close()
	// Headers NumPy writes that we must refuse, each with its reason.
	hdr := func(dict string) string {
		for (10+len(dict)+1)%64 != 0 {
			dict += " "
		}
		b := []byte("\x93NUMPY\x01\x00")
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)+1))
		return string(b) + dict + "\n" + strings.Repeat("\x00", 64)
	}
	cases := map[string][]string{
		hdr("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }"):     {"Fortran order"},
		hdr("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"):       {"object dtype"},
		hdr("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }"):      {"big-endian"},
		hdr("{'descr': '<U10', 'fortran_order': False, 'shape': (2,), }"):     {"unsupported dtype"},
		hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (9999,), }"):   {"truncated"},
		hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }")[:20]: {"broken .npy header"},
		hdr("{'descr': '<f4' 'shape': (2,), }"):                               {"broken .npy header"},
		"\x93NUMPY\x07\x00\x10\x00":                                           {"format version 7.0"},
	}
	for text, want := range cases {
		p := writeFile(t, dir, "bad.npy", text)
		_, err := OpenNpy(p)
		wantErr(t, err, append(want, "bad.npy")...)
	}
}
