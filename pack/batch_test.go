package pack

import (
	"reflect"
	"strings"
	"testing"
)

func testGraphs() []Graph {
	return []Graph{
		{Nodes: 3, Features: []float32{1, 1, 2, 2, 3, 3}, Src: []int32{0, 1, 2}, Dst: []int32{1, 2, 0}},
		{Nodes: 1, Features: []float32{4, 4}},
		{Nodes: 2, Features: []float32{5, 5, 6, 6}, Src: []int32{1}, Dst: []int32{0}},
	}
}

func TestBatchRoundTrip(t *testing.T) {
	s := ShapeOf(Limits{Nodes: 8, Edges: 6, Graphs: 4}, 2)
	in := testGraphs()
	b, err := NewBatch(s, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Features) != 9*2 || len(b.Src) != 6 || len(b.NodeGraph) != 9 || len(b.GraphMask) != 5 {
		t.Fatalf("static shape broken: %d features, %d edges, %d nodes, %d graphs", len(b.Features), len(b.Src), len(b.NodeGraph), len(b.GraphMask))
	}
	wantSrc := []int32{0, 1, 2, 5, 8, 8}
	wantDst := []int32{1, 2, 0, 4, 8, 8}
	wantGraph := []int32{0, 0, 0, 1, 2, 2, 4, 4, 4}
	if !reflect.DeepEqual(b.Src, wantSrc) || !reflect.DeepEqual(b.Dst, wantDst) || !reflect.DeepEqual(b.NodeGraph, wantGraph) {
		t.Errorf("src %v dst %v graph %v", b.Src, b.Dst, b.NodeGraph)
	}
	if got := countTrue(b.NodeMask); got != 6 || countTrue(b.EdgeMask) != 4 || countTrue(b.GraphMask) != 3 {
		t.Errorf("masks: %d nodes, %d edges, %d graphs real", got, countTrue(b.EdgeMask), countTrue(b.GraphMask))
	}
	for _, f := range b.Features[12:] {
		if f != 0 {
			t.Fatalf("padding features not zero: %v", b.Features)
		}
	}
	out := b.Unbatch()
	if !reflect.DeepEqual(out, in) {
		t.Errorf("unbatch:\n got %+v\nwant %+v", out, in)
	}
}

func TestBatchErrors(t *testing.T) {
	s := ShapeOf(Limits{Nodes: 5, Edges: 3, Graphs: 2}, 2)
	for _, tc := range []struct {
		name   string
		graphs []Graph
		want   string
	}{
		{"too many nodes", testGraphs()[:3], "3 graphs of 6 nodes and 4 edges do not fit"},
		{"features", []Graph{{Nodes: 2, Features: []float32{1}}}, "graph 0 has 2 nodes but 1 feature values, want 2 per node"},
		{"edge outside", []Graph{{Nodes: 1, Features: []float32{1, 1}, Src: []int32{0}, Dst: []int32{1}}}, "graph 0: edge 0 (0→1) leaves its 1 nodes"},
		{"no nodes", []Graph{{}}, "graph 0 has no nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewBatch(s, tc.graphs); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func countTrue(m []bool) int {
	n := 0
	for _, b := range m {
		if b {
			n++
		}
	}
	return n
}
