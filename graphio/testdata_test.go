package graphio

import "testing"

func TestTestdataFiles(t *testing.T) {
	for _, p := range []int{1, 2} {
		if s := statsOf(t, p, "testdata/triangle.graph"); s.Meta.TotalNodes() != 4 || s.Edges != 6 || s.Isolated != 1 {
			t.Fatalf("triangle.graph: %+v", s)
		}
		if s := statsOf(t, p, "testdata/snap_crlf.txt"); s.Meta.TotalNodes() != 5 || s.Edges != 4 || s.SelfLoops != 1 {
			t.Fatalf("snap_crlf.txt: %+v", s)
		}
		if s := statsOf(t, p, "testdata/triangle.mtx", Undirected(true)); s.Meta.TotalNodes() != 3 || s.Edges != 6 || s.Duplicates != 0 {
			t.Fatalf("triangle.mtx: %+v", s)
		}
		wantErr(t, readErr("testdata/asymmetric.graph", p), "asymmetric.graph:3:", "vertex 1 lists 3, but vertex 3 does not list 1")
		wantErr(t, readErr("testdata/badcount.graph", p), "badcount.graph:1:", "header says 5 edges")
		wantErr(t, readErr("testdata/badweight.txt", p), "badweight.txt:3:", `weight "3.5x" is not a number`)
	}
}
