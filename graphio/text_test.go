package graphio

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// edgesOf reads path on p ranks and returns all edges as "id:src-dst"
// strings sorted by edge ID, and the meta data.
func edgesOf(t *testing.T, p int, path string, opts ...Option) ([]string, *Graph) {
	t.Helper()
	gs := readAll(t, p, path, opts...)
	type rec struct {
		id   int64
		text string
	}
	var all []rec
	for _, g := range gs {
		e := g.Edges
		for i := range e.Src {
			s := fmt.Sprintf("%d-%d", e.Src[i], e.Dst[i])
			if e.Weight != nil {
				s += fmt.Sprintf("/%g", e.Weight[i])
			}
			all = append(all, rec{e.ID[i], s})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	out := make([]string, len(all))
	for i, r := range all {
		if r.id != int64(i) {
			t.Fatalf("P=%d: edge IDs are not 0..M-1: position %d has ID %d", p, i, r.id)
		}
		out[i] = r.text
	}
	return out, gs[0]
}

func TestEdgeListVariants(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, text string
		want       string // edges in file order
		nodes      int64
	}{
		{"plain.txt", "0 1\n1 2\n2 0\n", "0-1 1-2 2-0", 3},
		{"crlf.txt", "# comment\r\n% other comment\r\n0\t1\r\n\r\n1\t2\r\n", "0-1 1-2", 3},
		{"header.txt", "5 2\n0 1\n3 2\n", "0-1 3-2", 5},
		{"notheader.txt", "5 2\n0 1\n", "5-2 0-1", 6}, // "5 2" is followed by 1 line, not 2
		{"names.csv", "id_1,id_2\n0,1\n2,1\n", "0-1 2-1", 3},
		{"weights.txt", "0 1 2.5\n1 2\n", "0-1/2.5 1-2/1", 3},
		{"networkx.txt", "1 2 {}\n2 3 {'weight': 1}\n", "1-2 2-3", 4},
		{"snap.txt", "# Nodes: 10 Edges: 2\n0 1\n1 2\n", "0-1 1-2", 10},
		{"spaces.txt", "  7   8  \n8 , 9\n", "7-8 8-9", 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, tc.name, tc.text)
			for _, p := range []int{1, 2, 4} {
				got, g := edgesOf(t, p, path)
				if strings.Join(got, " ") != tc.want || g.Meta.NumNodes[0] != tc.nodes {
					t.Fatalf("P=%d: edges %v nodes %d, want %s nodes %d", p, got, g.Meta.NumNodes[0], tc.want, tc.nodes)
				}
			}
		})
	}
}

func TestEdgeListGzipMatchesPlain(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("# a comment\n")
	for i := range 200000 { // several 64Ki-line blocks
		fmt.Fprintf(&b, "%d %d\n", i%977, (i*7+3)%1009)
	}
	plain := writeFile(t, dir, "g.txt", b.String())
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(b.String()))
	zw.Close()
	gz := filepath.Join(dir, "g.txt.gz")
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, _ := edgesOf(t, 1, plain)
	for _, p := range []int{1, 3} {
		got, _ := edgesOf(t, p, gz)
		if strings.Join(got, " ") != strings.Join(ref, " ") {
			t.Fatalf("P=%d: gzip edges differ from plain", p)
		}
	}
}

func TestBadEdgeLists(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, text string
		opts       []Option
		want       []string
	}{
		{"onecol.txt", "0 1\n1 2\n3\n", nil, []string{"onecol.txt:3:", "1 column"}},
		{"nonint.txt", "0 1\n1 x\n", nil, []string{"nonint.txt:2:", `destination node ID "x": not an integer`}},
		{"negative.txt", "0 1\n-4 2\n", nil, []string{"negative.txt:2:", "negative source node ID -4"}},
		{"badweight.txt", "0 1 w\n", nil, []string{"badweight.txt:1:", `weight "w" is not a number`}},
		{"toomany.txt", "0 1 2 3\n", nil, []string{"toomany.txt:1:", "4 columns"}},
		{"headerno.txt", "src dst\n0 1\n", []Option{Header("no")}, []string{"headerno.txt:1:", `source node ID "src"`}},
		{"empty.txt", "# nothing\n\n", nil, []string{"empty.txt", "no edges"}},
		{"badheader.txt", "3 2\n0 1\n1 7\n", []Option{Header("yes")}, []string{"badheader.txt", "node ID 7 is out of range: the header says 3 nodes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, tc.name, tc.text)
			for _, p := range []int{1, 3} {
				wantErr(t, readErr(path, p, tc.opts...), tc.want...)
			}
		})
	}
	// A bad line deep in a big file is reported with its line number by
	// whichever rank reads it.
	var b strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&b, "%d %d\n", i, i+1)
	}
	b.WriteString("12 zz\n")
	path := writeFile(t, dir, "deep.txt", b.String())
	for _, p := range []int{1, 4} {
		wantErr(t, readErr(path, p), "deep.txt:50001:", `"zz"`)
	}
}

func TestMatrixMarket(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "m.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% comment\n3 3 4\n1 1 5.0\n2 1 1.5\n3 2 2\n3 3 1\n")
	got, g := edgesOf(t, 2, path)
	if strings.Join(got, " ") != "0-0/5 1-0/1.5 2-1/2 2-2/1" || g.Meta.NumNodes[0] != 3 {
		t.Fatalf("edges %v nodes %d", got, g.Meta.NumNodes[0])
	}
	bad := writeFile(t, dir, "bad.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n")
	wantErr(t, readErr(bad, 2), "bad.mtx:2:", "header says 2 edges but the file has 1")
	zero := writeFile(t, dir, "zero.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n0 2\n")
	wantErr(t, readErr(zero, 1), "zero.mtx:3:", "MatrixMarket indices start at 1")
	rect := writeFile(t, dir, "rect.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n")
	wantErr(t, readErr(rect, 1), "rect.mtx:2:", "must be square")
}

func TestMETIS(t *testing.T) {
	dir := t.TempDir()
	// 4 vertices, 2 edges (vertex 4 has weights but no neighbours), a
	// comment, leading and trailing spaces, edge weights and 2 vertex
	// weights.
	text := "% a comment\n 4 2 011 2\n1 2 2 5 3 6\n3 4 1 5\n5 6   1 6  \n0 0\n"
	path := writeFile(t, dir, "w.graph", text)
	for _, p := range []int{1, 3} {
		got, g := edgesOf(t, p, path)
		if strings.Join(got, " ") != "0-1/5 0-2/6 1-0/5 2-0/6" || g.Meta.NumNodes[0] != 4 || g.Meta.NumEdges[0] != 4 {
			t.Fatalf("P=%d: edges %v meta %+v", p, got, g.Meta)
		}
		s := statsOf(t, p, path)
		if s.Isolated != 1 || len(s.Arrays) != 1 || s.Arrays[0].Name != "vwgt" || fmt.Sprint(s.Arrays[0].Shape) != "[4 2]" {
			t.Fatalf("P=%d: stats %+v", p, s)
		}
	}
	blank := writeFile(t, dir, "blank.graph", "3 1\n2\n1\n\n")
	if s := statsOf(t, 2, blank); s.Meta.TotalNodes() != 3 || s.Isolated != 1 || s.Edges != 2 {
		t.Fatalf("blank line: %+v", s)
	}
	cases := []struct {
		name, text string
		want       []string
	}{
		{"count.graph", "3 1\n2\n1 3\n2\n", []string{"count.graph:1:", "header says 1 edges", "must hold 2 entries", "they hold 4"}},
		{"count2.graph", "3 3\n2\n1 3\n2\n", []string{"count2.graph:1:", "header says 3 edges", "must hold 6 entries", "they hold 4"}},
		{"asym.graph", "3 2\n2 3\n1\n2\n", []string{"asym.graph:2:", "vertex 1 lists 3, but vertex 3 does not list 1"}},
		{"weights.graph", "2 1 1\n2 4\n1 5\n", []string{"weights.graph:2:", "different weights"}},
		{"loop.graph", "2 1\n1\n\n", []string{"loop.graph:2:", "vertex 1 lists itself"}},
		{"range.graph", "2 1\n3\n1\n", []string{"range.graph:2:", "neighbour 3 is out of range"}},
		{"lines.graph", "2 1\n2\n1\n2\n", []string{"lines.graph:4:", "vertex line 3, but the header says 2 vertices"}},
		{"short.graph", "3 1\n2\n1\n", []string{"short.graph", "2 vertex lines, but the header (line 1) says 3"}},
		{"fmt.graph", "2 1 2\n2\n1\n", []string{"fmt.graph:1:", "fmt \"2\""}},
		{"nfields.graph", "2 1 1\n2\n1 1\n", []string{"nfields.graph:2:", "1 numbers"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, tc.name, tc.text)
			for _, p := range []int{1, 3} {
				wantErr(t, readErr(path, p), tc.want...)
			}
		})
	}
}
