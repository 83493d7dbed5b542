package pack

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadHistogramCSV(t *testing.T) {
	h, err := ReadHistogramCSV(strings.NewReader("nodes,edges,count\n# a comment\n3,4,2\n\n1,0,5\n"), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Bin{{Tuple{1, 0}, 5}, {Tuple{3, 4}, 2}}
	if got := h.Bins(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("bins %v, want %v", got, want)
	}
	if h.Graphs() != 7 || h.Nodes() != 11 || h.Edges() != 8 || h.MaxNodes() != 3 || h.MaxEdges() != 4 {
		t.Errorf("totals %d graphs %d nodes %d edges, max %d/%d", h.Graphs(), h.Nodes(), h.Edges(), h.MaxNodes(), h.MaxEdges())
	}
}

// Bad histograms: each must fail with an error naming the line and reason.
func TestReadHistogramCSVErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"negative count", "nodes,edges,count\n3,4,-2\n", `x.csv:2: count "-2" is not a non-negative integer`},
		{"negative edges", "3,-4,2\n", `x.csv:1: edges "-4" is not a non-negative integer`},
		{"non-integer", "nodes,edges,count\n3,4.5,2\n", `x.csv:2: edges "4.5" is not a non-negative integer`},
		{"word", "nodes,edges,count\nthree,4,2\n", `x.csv:2: nodes "three" is not a non-negative integer`},
		{"fields", "3,4\n", "x.csv:1: want 3 fields nodes,edges,count, got 2"},
		{"no nodes", "0,0,2\n", "x.csv:1: nodes must be at least 1"},
		{"duplicate", "3,4,2\n3,4,1\n", "x.csv:2: size (3 nodes, 4 edges) already listed on line 1"},
		{"empty", "nodes,edges,count\n", "x.csv: empty dataset"},
		{"zero counts", "3,4,0\n", "x.csv: empty dataset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHistogramCSV(strings.NewReader(tc.in), "x.csv")
			if err == nil || !strings.HasPrefix(err.Error(), "pack: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestHistogramOf(t *testing.T) {
	h, err := HistogramOf([]Tuple{{2, 2}, {1, 0}, {2, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != 2 || h.Graphs() != 3 || h.Bins()[1] != (Bin{Tuple{2, 2}, 2}) {
		t.Errorf("got %v", h.Bins())
	}
	if _, err := HistogramOf([]Tuple{{2, 2}, {0, 0}}); err == nil || !strings.Contains(err.Error(), "graph 1 (0 nodes, 0 edges)") {
		t.Errorf("graph without nodes: %v", err)
	}
	if _, err := HistogramOf(nil); err == nil || !strings.Contains(err.Error(), "empty dataset") {
		t.Errorf("no graphs: %v", err)
	}
}

// TINY: a triangle stored in both directions plus a duplicate and a
// self-loop, one edge in both directions, one isolated node.
func TestReadTU(t *testing.T) {
	sizes, err := ReadTU(filepath.Join("testdata", "tu", "TINY"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Tuple{{3, 6}, {2, 2}, {1, 0}}
	if !slices.Equal(sizes, want) {
		t.Errorf("sizes %v, want %v", sizes, want)
	}
}

func TestReadTUErrors(t *testing.T) {
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, a, ind, want string }{
		{"missing A", "", "1\n", "missing DS_A.txt"},
		{"missing indicator", "1, 2\n", "", "DS_graph_indicator.txt: no such file"},
		{"across graphs", "1, 2\n", "1\n2\n", "DS_A.txt:1: edge 1, 2 joins graphs 1 and 2"},
		{"out of range", "1, 3\n", "1\n1\n", "DS_A.txt:1: edge 1, 3: the graph indicator has 2 nodes"},
		{"bad id", "1, x\n", "1\n1\n", `DS_A.txt:1: "x" is not a non-negative integer`},
		{"graph without nodes", "1, 2\n", "1\n1\n3\n", "graph 2 has no nodes"},
		{"zero graph", "", "0\n", `DS_graph_indicator.txt:1: "0" is not a positive integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "DS")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.a != "" || tc.name != "missing A" {
				write(dir, "DS_A.txt", tc.a)
			}
			if tc.ind != "" {
				write(dir, "DS_graph_indicator.txt", tc.ind)
			}
			_, err := ReadTU(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestReadOGB(t *testing.T) {
	dir := filepath.Join("testdata", "ogb", "tiny")
	sizes, err := ReadOGB(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Tuple{{3, 6}, {2, 2}, {1, 0}, {4, 6}}; !slices.Equal(sizes, want) {
		t.Errorf("sizes %v, want %v", sizes, want)
	}
	once, err := ReadOGB(dir, false)
	if err != nil || once[0] != (Tuple{3, 3}) {
		t.Errorf("without inverse edges: %v, %v", once, err)
	}
	// The same counts gzipped, and a gzipped split with a header.
	gz := t.TempDir()
	for _, name := range []string{"num-node-list.csv", "num-edge-list.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, "raw", name))
		if err != nil {
			t.Fatal(err)
		}
		writeGzip(t, filepath.Join(gz, name+".gz"), string(b))
	}
	zipped, err := ReadOGB(gz, true)
	if err != nil || !slices.Equal(zipped, sizes) {
		t.Errorf("gzipped: %v, %v", zipped, err)
	}
	writeGzip(t, filepath.Join(gz, "train.csv.gz"), "idx\n3\n0\n")
	idx, err := ReadIntList(filepath.Join(gz, "train.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	split, err := Subset(sizes, idx)
	if err != nil || !slices.Equal(split, []Tuple{{4, 6}, {3, 6}}) {
		t.Errorf("split %v, %v", split, err)
	}
}

func TestReadOGBErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadOGB(dir, true); err == nil || !strings.Contains(err.Error(), "missing num-node-list.csv") {
		t.Errorf("missing files: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "num-node-list.csv"), []byte("3\n2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "num-edge-list.csv"), []byte("3\n"), 0o644)
	if _, err := ReadOGB(dir, true); err == nil || !strings.Contains(err.Error(), "2 node counts but 1 edge counts") {
		t.Errorf("lengths: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "num-edge-list.csv"), []byte("3\n-1\n"), 0o644)
	if _, err := ReadOGB(dir, true); err == nil || !strings.Contains(err.Error(), `num-edge-list.csv:2: "-1" is not a non-negative integer`) {
		t.Errorf("negative: %v", err)
	}
	if _, err := Subset([]Tuple{{1, 0}}, []int{0, 0}); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("split twice: %v", err)
	}
	if _, err := Subset([]Tuple{{1, 0}}, []int{1}); err == nil || !strings.Contains(err.Error(), "graph 1 of a dataset of 1") {
		t.Errorf("split out of range: %v", err)
	}
}

func writeGzip(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	z.Write([]byte(text))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}
