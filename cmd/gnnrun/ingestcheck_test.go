package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gnnrun/graphio"
)

// smallGraph writes a valid chunked graph of 10 nodes and 6 edges in two
// CSV chunks with NumPy features, after applying edit to the metadata.
func smallGraph(t *testing.T, edit func(string) string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("edges/e0.csv", "0 1\n1 2\n2 3\n")
	write("edges/e1.csv", "3 4\n4 5\n9 0\n")
	feat := make([]float32, 30)
	if err := graphio.WriteNpySlice(filepath.Join(dir, "feat0.npy"), feat[:18], 6, 3); err != nil {
		t.Fatal(err)
	}
	if err := graphio.WriteNpySlice(filepath.Join(dir, "feat1.npy"), feat[18:], 4, 3); err != nil {
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
	write("metadata.json", md)
	for name, text := range files {
		write(name, text)
	}
	return dir
}

// TestIngestCheckBadInputUnderMPI runs every kind of bad input the issue
// lists on 4 ranks: each must fail within seconds, non-zero, naming the
// file, the line or row, and the reason.
func TestIngestCheckBadInputUnderMPI(t *testing.T) {
	sub := func(old, new string) func(string) string {
		return func(s string) string { return strings.Replace(s, old, new, 1) }
	}
	td, _ := filepath.Abs("../../graphio/testdata")
	cases := []struct {
		name string
		path func() string
		want []string
	}{
		{"missing key", func() string { return smallGraph(t, sub(`"edge_type": ["n:r:n"],`, ""), nil) }, []string{"metadata.json", `missing key "edge_type"`}},
		{"misspelt key", func() string { return smallGraph(t, sub(`"num_edges_per_type"`, `"num_edge_per_type"`), nil) }, []string{"metadata.json:6:", `unknown key "num_edge_per_type"`, `did you mean "num_edges_per_type"`}},
		{"count disagrees", func() string { return smallGraph(t, sub(`[[3, 3]]`, `[[3, 4]]`), nil) }, []string{"metadata.json:6:", "says 6 edges", "sums to 7"}},
		{"count vs file", func() string {
			return smallGraph(t, func(s string) string { return sub(`[[3, 3]]`, `[[2, 4]]`)(sub(`[6]`, `[6]`)(s)) }, nil)
		}, []string{"e0.csv", "holds 3 edges but num_edges_per_chunk says 2"}},
		{"missing chunk", func() string { return smallGraph(t, sub(`"edges/e1.csv"]`, `"edges/nope.csv"]`), nil) }, []string{"metadata.json:9:", "nope.csv is missing"}},
		{"one column", func() string { return smallGraph(t, nil, map[string]string{"edges/e1.csv": "3 4\n4\n9 0\n"}) }, []string{"e1.csv:2:", "1 columns, want 2"}},
		{"non-integer", func() string { return smallGraph(t, nil, map[string]string{"edges/e0.csv": "0 1\n1 2.5\n2 3\n"}) }, []string{"e0.csv:2:", `destination node ID "2.5": not an integer`}},
		{"ID too large", func() string { return smallGraph(t, nil, map[string]string{"edges/e1.csv": "3 4\n4 5\n9 10\n"}) }, []string{"e1.csv:3:", "destination node ID 10 is out of range"}},
		{"negative ID", func() string { return smallGraph(t, nil, map[string]string{"edges/e1.csv": "3 4\n-4 5\n9 0\n"}) }, []string{"e1.csv:2:", "negative source node ID -4"}},
		{"broken npy", func() string {
			return smallGraph(t, nil, map[string]string{"feat1.npy": "\x93NUMPY\x01\x00\x08\x00{'desc\n"})
		}, []string{"feat1.npy", "broken .npy header"}},
		{"dtype", func() string {
			dir := smallGraph(t, nil, nil)
			graphio.WriteNpySlice(filepath.Join(dir, "feat1.npy"), make([]int32, 12), 4, 3)
			return dir
		}, []string{"feat1.npy", "chunk 1 has dtype int32 but chunk 0", "float32"}},
		{"rows", func() string {
			dir := smallGraph(t, nil, nil)
			graphio.WriteNpySlice(filepath.Join(dir, "feat1.npy"), make([]float32, 9), 3, 3)
			return dir
		}, []string{"feat0.npy", "hold 9 rows", "the node type has 10 nodes"}},
		{"metis count", func() string { return filepath.Join(td, "badcount.graph") }, []string{"badcount.graph:1:", "header says 5 edges"}},
		{"metis symmetry", func() string { return filepath.Join(td, "asymmetric.graph") }, []string{"asymmetric.graph:3:", "vertex 1 lists 3, but vertex 3 does not list 1"}},
		{"edge list weight", func() string { return filepath.Join(td, "badweight.txt") }, []string{"badweight.txt:3:", "is not a number"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runGnnrun(t, 4, time.Minute, nil, "ingest-check", "--in", tc.path())
			if r.err == nil {
				t.Fatalf("bad input accepted: %v", r)
			}
			if r.elapsed > 10*time.Second {
				t.Fatalf("took %v to fail", r.elapsed)
			}
			for _, w := range append(tc.want, "gnnrun: rank ") {
				if !strings.Contains(r.stderr, w) {
					t.Fatalf("stderr lacks %q: %v", w, r)
				}
			}
		})
	}
}

func TestIngestCheckNormalisation(t *testing.T) {
	td, _ := filepath.Abs("../../graphio/testdata")
	r := mustRun(t, 2, "ingest-check", "--in", filepath.Join(td, "snap_crlf.txt"), "--drop-self-loops", "--undirected", "--dedup")
	for _, w := range []string{"dropped 1 self loops", "added 3 reverse edges", "dropped 0 duplicate edges", "edges:             6 "} {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("output lacks %q: %v", w, r)
		}
	}
	r = mustRun(t, 0, "ingest-check", "--in", filepath.Join(td, "triangle.graph"))
	if !strings.Contains(r.stdout, "read 3 undirected edges as 6 arcs") || !strings.Contains(r.stdout, "isolated nodes:    1") {
		t.Fatalf("METIS: %v", r)
	}
}
