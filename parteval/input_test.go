package parteval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gnnrun/graphio"
)

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// weightedMETIS is a METIS file with two vertex weights per vertex and edge
// weights: edges 1-2 (1), 1-3 (5), 2-3 (2), 3-4 (3); vertex weights
// (1,2), (3,0), (1,1), (2,5).
const weightedMETIS = `% n m fmt ncon
4 4 011 2
1 2  2 1  3 5
3 0  1 1  3 2
1 1  1 5  2 2  4 3
2 5  3 3
`

// TestMETISByHand measures parts {1,2} and {3,4} of weightedMETIS from a
// .part file and from an assignment directory.
func TestMETISByHand(t *testing.T) {
	dir := t.TempDir()
	g := writeFile(t, filepath.Join(dir, "w.graph"), weightedMETIS)
	part := writeFile(t, filepath.Join(dir, "w.part"), "0\n0\n1\n1\n")
	asg := filepath.Join(dir, "asg")
	writeFile(t, filepath.Join(asg, "_N.txt"), "0\n0\n1\n1\n")
	writeFile(t, filepath.Join(asg, "partition_meta.json"), `{"algo_name": "metis", "num_parts": 2, "version": "1.0.0"}`)
	want := []Balance{
		{Name: "vwgt[0]", Parts: []int64{1 + 3, 1 + 2}, Total: 7, Imbalance: 4 / 3.5},
		{Name: "vwgt[1]", Parts: []int64{2 + 0, 1 + 5}, Total: 8, Imbalance: 6 / 4.0},
		{Name: "edges", Parts: []int64{2 + 2, 3 + 1}, Total: 8, Imbalance: 1}, // degrees
		{Name: "nodes", Parts: []int64{2, 2}, Total: 4, Imbalance: 1},
	}
	for _, a := range []string{part, asg} {
		res, err := EvaluateFiles(g, a, Measure("vwgt,edges,nodes"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Cut != 5+2 || res.Parts != 2 {
			t.Errorf("%s: cut %d of %d parts, want 7 (edges 1-3 and 2-3, once each) of 2", a, res.Cut, res.Parts)
		}
		checkBalance(t, res, want)
	}
	// The default is the METIS vertex weights.
	res, err := EvaluateFiles(g, part)
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, res, want[:2])
	// Uneven targets and a larger K from the options.
	res, err = EvaluateFiles(g, part, Measure("nodes"), Parts(3), Targets(0.25, 0.5, 0.25))
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, res, []Balance{{Name: "nodes", Parts: []int64{2, 2, 0}, Total: 4, Imbalance: 2}})
}

// TestEdgeListByHand: an edge list is taken as given, direction by
// direction, with its weights; a self loop costs nothing but counts in the
// in-degree.
func TestEdgeListByHand(t *testing.T) {
	dir := t.TempDir()
	g := writeFile(t, filepath.Join(dir, "e.txt"), "0 1 2\n1 0 1\n1 2 3\n2 2 7\n2 3 1\n")
	part := writeFile(t, filepath.Join(dir, "e.part"), "0\n1\n1\n1\n")
	res, err := EvaluateFiles(g, part, Measure("edges"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cut != 2+1 {
		t.Errorf("cut %d, want 3 (0->1 and 1->0)", res.Cut)
	}
	// In-degrees 1, 1, 2, 1.
	checkBalance(t, res, []Balance{{Name: "edges", Parts: []int64{1, 4}, Total: 5, Imbalance: 4 / 2.5}})
	frac := writeFile(t, filepath.Join(dir, "f.txt"), "0 1 1.5\n")
	if _, err := ReadInput(frac, ""); err == nil || !strings.Contains(err.Error(), "not a whole number") {
		t.Errorf("fractional weight: %v", err)
	}
}

// writeHetero writes a chunked graph of users 0..3 and items 0..1:
// follows 0->1, 1->0, 2->3, 3->3, 1->2; buys 0->i0, 3->i1, 2->i1. Users
// have a train_mask (0, 2 and 3 set), items a test_mask (item 1 set);
// nobody has a val_mask.
func writeHetero(t *testing.T, dir string) string {
	t.Helper()
	write := func(name string, s any, shape ...int64) {
		var err error
		switch v := s.(type) {
		case []int64:
			err = graphio.WriteNpySlice(filepath.Join(dir, name), v, shape...)
		case []bool:
			err = graphio.WriteNpySlice(filepath.Join(dir, name), v, shape...)
		case []int32:
			err = graphio.WriteNpySlice(filepath.Join(dir, name), v, shape...)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	write("follows.npy", []int64{0, 1, 1, 0, 2, 3, 3, 3, 1, 2}, 5, 2)
	write("buys.npy", []int64{0, 0, 3, 1, 2, 1}, 3, 2)
	write("train.npy", []bool{true, false, true, true}, 4)
	write("test.npy", []int32{0, 5}, 2)
	np := func(f string) graphio.ChunkSpec {
		return graphio.ChunkSpec{Format: graphio.Format{Name: "numpy"}, Data: []string{f}}
	}
	m := &graphio.Metadata{
		GraphName: "shop", NodeType: []string{"user", "item"}, NumNodesPerType: []int64{4, 2},
		EdgeType: []string{"user:follows:user", "user:buys:item"}, NumEdgesPerType: []int64{5, 3},
		Edges: map[string]graphio.ChunkSpec{"user:follows:user": np("follows.npy"), "user:buys:item": np("buys.npy")},
		NodeData: map[string]map[string]graphio.ChunkSpec{
			"user": {"train_mask": np("train.npy")},
			"item": {"test_mask": np("test.npy")},
		},
	}
	path := filepath.Join(dir, "metadata.json")
	if err := graphio.WriteMetadata(path, m); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestChunkedByHand puts users 0, 3 in part 0 and users 1, 2 and both
// items in part 1 (homogeneous parts 0 1 1 0 1 1).
func TestChunkedByHand(t *testing.T) {
	dir := t.TempDir()
	g := writeHetero(t, dir)
	asg := filepath.Join(dir, "asg")
	writeFile(t, filepath.Join(asg, "user.txt"), "0\n1\n1\n0\n")
	writeFile(t, filepath.Join(asg, "item.txt"), "1\n1\n")
	writeFile(t, filepath.Join(asg, "partition_meta.json"), `{"num_parts": 2}`)
	res, err := EvaluateFiles(g, asg, Measure("nodes,edges,ntypes,train,test"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cut != 3+2 {
		t.Errorf("cut %d, want 5 (follows 0->1, 1->0, 2->3; buys 0->i0, 3->i1)", res.Cut)
	}
	checkBalance(t, res, []Balance{
		{Name: "nodes", Parts: []int64{2, 4}, Total: 6, Imbalance: 4 / 3.0},
		// In-degrees: users 1, 1, 1, 2 (3->3 included), items 1, 2.
		{Name: "edges", Parts: []int64{1 + 2, 1 + 1 + 1 + 2}, Total: 8, Imbalance: 5 / 4.0},
		{Name: "ntype:user", Parts: []int64{2, 2}, Total: 4, Imbalance: 1},
		{Name: "ntype:item", Parts: []int64{0, 2}, Total: 2, Imbalance: 2},
		{Name: "train", Parts: []int64{2, 1}, Total: 3, Imbalance: 2 / 1.5},
		{Name: "test", Parts: []int64{0, 1}, Total: 1, Imbalance: 2}, // the mask is 5: set
	})
	in, err := ReadInput(g, "")
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"val":         `needs node array "val_mask"`,
		"nodes,color": `unknown constraint "color"`,
		"train,train": `"train" given twice`,
		"vwgt":        `needs node array "vwgt"`,
	} {
		if _, err := in.Constraints(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--balance %s: error %v, want %q", spec, err, want)
		}
	}
	if cons, err := in.Constraints(""); err != nil || len(cons) != 1 || cons[0].Name != "nodes" {
		t.Errorf("default constraints %v (%v), want nodes", cons, err)
	}
}

func TestReadAssignmentRejects(t *testing.T) {
	dir := t.TempDir()
	g := writeFile(t, filepath.Join(dir, "w.graph"), weightedMETIS)
	in, err := ReadInput(g, "")
	if err != nil {
		t.Fatal(err)
	}
	meta := `{"num_parts": 2}`
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"short", map[string]string{"_N.txt": "0\n1\n1\n", "partition_meta.json": meta}, "3 lines for 4 nodes"},
		{"long", map[string]string{"_N.txt": "0\n1\n1\n0\n1\n", "partition_meta.json": meta}, "5 lines for 4 nodes"},
		{"part outside K", map[string]string{"_N.txt": "0\n1\n2\n0\n", "partition_meta.json": meta}, "line 3: part 2 is outside [0,2)"},
		{"not a number", map[string]string{"_N.txt": "0\n1\nx\n0\n", "partition_meta.json": meta}, `line 3: "x" is not a part number`},
		{"negative", map[string]string{"_N.txt": "0\n-1\n1\n0\n", "partition_meta.json": meta}, `line 2: "-1" is not a part number`},
		{"no meta", map[string]string{"_N.txt": "0\n1\n1\n0\n"}, "partition_meta.json: no such file"},
		{"zero parts", map[string]string{"_N.txt": "0\n1\n1\n0\n", "partition_meta.json": `{"num_parts": 0}`}, "num_parts is 0"},
		{"no type file", map[string]string{"partition_meta.json": meta}, "_N.txt: no such file"},
	}
	for _, c := range cases {
		asg := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		os.MkdirAll(asg, 0o755)
		for name, text := range c.files {
			writeFile(t, filepath.Join(asg, name), text)
		}
		if _, _, err := ReadAssignment(asg, &in.Meta); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	part := writeFile(t, filepath.Join(dir, "w.part"), "0\n3\n1\n0\n")
	if p, k, err := ReadAssignment(part, &in.Meta); err != nil || k != 4 || len(p) != 4 || p[1] != 3 {
		t.Errorf(".part file: parts %v, K %d, %v; want K = 4 (largest part + 1)", p, k, err)
	}
}
