package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gnnrun/graphio"
	"gnnrun/parteval"
)

// plantedGraph writes an edge list of k blocks of b nodes, each node linked
// to its ring neighbour and to three pseudo-random nodes of its block (so a
// block is an expander, expensive to cut), and `links` edges between blocks;
// node IDs are scrambled. It returns the path and the block of every node.
func plantedGraph(t *testing.T, dir string, k, b, links int) (string, []int) {
	t.Helper()
	n := k * b
	id := make([]int, n) // block-order index -> node ID
	for i := range id {
		id[i] = (i*7919 + 13) % n // 7919 is prime and does not divide n
	}
	block := make([]int, n)
	var sb strings.Builder
	for blk := range k {
		for v := range b {
			block[id[blk*b+v]] = blk
			for j, d := range []int{1, 0, 0, 0} {
				if j > 0 {
					d = 1 + (v*(2654435761+j*40503)>>7)%(b-1)
				}
				fmt.Fprintf(&sb, "%d %d\n", id[blk*b+v], id[blk*b+(v+d)%b])
			}
		}
	}
	for l := range links {
		blk := l % k
		fmt.Fprintf(&sb, "%d %d\n", id[blk*b+(l*31)%b], id[((blk+1)%k)*b+(l*17)%b])
	}
	path := filepath.Join(dir, "planted.txt")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, block
}

func readParts(t *testing.T, path string) []int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, p)
	}
	return out
}

// TestPartitionFindsPlantedBlocks runs the binary alone and on 1, 2 and 4
// ranks; every run must put each block in one part (the planted cut,
// measured from the files, as in the .part file), and reruns must write
// identical files.
func TestPartitionFindsPlantedBlocks(t *testing.T) {
	dir := t.TempDir()
	in, block := plantedGraph(t, dir, 4, 300, 20)
	for _, np := range []int{0, 1, 2, 4} {
		for _, method := range []string{"kway", "rb"} {
			out := filepath.Join(dir, fmt.Sprintf("out-%d-%s", np, method))
			res := partitionAndMeasure(t, np, in, out, "nodes", "--parts", "4", "--method", method, "--max-replicated", "3000")
			if res.Cut != 20 {
				t.Errorf("np=%d %s: cut %d, the planted cut is 20", np, method, res.Cut)
			}
			checkBalanced(t, out, res, "nodes")
			if gp := evaluate(t, in, filepath.Join(out, "planted.part"), parteval.Parts(4)); gp.Cut != res.Cut || !slices.Equal(gp.Balance[0].Parts, res.Balance[0].Parts) {
				t.Errorf("np=%d %s: planted.part (cut %d, %v) is not the assignment of _N.txt (cut %d, %v)", np, method, gp.Cut, gp.Balance[0].Parts, res.Cut, res.Balance[0].Parts)
			}
			parts := readParts(t, filepath.Join(out, "planted.part"))
			if len(parts) != len(block) {
				t.Fatalf("np=%d: %d lines for %d nodes", np, len(parts), len(block))
			}
			where := map[int]int{}
			for v, p := range parts {
				if q, ok := where[block[v]]; ok && q != p {
					t.Fatalf("np=%d %s: block %d split over parts %d and %d", np, method, block[v], q, p)
				}
				where[block[v]] = p
			}
			if len(where) != 4 {
				t.Fatalf("np=%d %s: blocks share parts: %v", np, method, where)
			}
		}
	}
	again := filepath.Join(dir, "again")
	mustRun(t, 2, "partition", "--in", in, "--parts", "4", "--out", again, "--method", "kway", "--max-replicated", "3000")
	a, _ := os.ReadFile(filepath.Join(dir, "out-2-kway", "planted.part"))
	b, _ := os.ReadFile(filepath.Join(again, "planted.part"))
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same seed and rank count wrote different partitions")
	}
}

// writeMaskedGraph writes a chunked graph whose training nodes all sit in
// the first quarter of a ring-with-chords, so balancing nodes alone would
// put most training nodes in one part.
func writeMaskedGraph(t *testing.T, dir string, n int, badMask bool) string {
	t.Helper()
	var src, dst []int64
	for v := range n {
		for _, d := range []int{1, 3, 17} {
			src, dst = append(src, int64(v)), append(dst, int64((v+d)%n))
		}
	}
	edges := make([]int64, 0, 2*len(src))
	for i := range src {
		edges = append(edges, src[i], dst[i])
	}
	if err := graphio.WriteNpySlice(filepath.Join(dir, "edges.npy"), edges, int64(len(src)), 2); err != nil {
		t.Fatal(err)
	}
	rows := n
	if badMask {
		rows = n - 3
	}
	mask := make([]bool, rows)
	for v := range n / 4 {
		mask[v] = true
	}
	if err := graphio.WriteNpySlice(filepath.Join(dir, "train_mask.npy"), mask, int64(rows)); err != nil {
		t.Fatal(err)
	}
	m := &graphio.Metadata{
		GraphName: "masked", NodeType: []string{"_N"}, NumNodesPerType: []int64{int64(n)},
		EdgeType: []string{"_N:_E:_N"}, NumEdgesPerType: []int64{int64(len(src))},
		Edges:    map[string]graphio.ChunkSpec{"_N:_E:_N": {Format: graphio.Format{Name: "numpy"}, Data: []string{"edges.npy"}}},
		NodeData: map[string]map[string]graphio.ChunkSpec{"_N": {"train_mask": {Format: graphio.Format{Name: "numpy"}, Data: []string{"train_mask.npy"}}}},
	}
	path := filepath.Join(dir, "metadata.json")
	if err := graphio.WriteMetadata(path, m); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPartitionMultiConstraint balances nodes, training nodes and edges at
// once; every constraint must end within 1.03 as measured from the files,
// and the cut is logged next to the cut of balancing nodes alone.
func TestPartitionMultiConstraint(t *testing.T) {
	dir := t.TempDir()
	in := writeMaskedGraph(t, dir, 4000, false)
	res := map[string]*parteval.Result{}
	for _, balance := range []string{"nodes", "nodes,train,edges"} {
		out := filepath.Join(dir, balance)
		res[balance] = partitionAndMeasure(t, 2, in, out, "nodes,train,edges", "--parts", "4", "--balance", balance)
		checkBalanced(t, out, res[balance], strings.Split(balance, ",")...)
	}
	alone, all := res["nodes"], res["nodes,train,edges"]
	t.Logf("balancing nodes only: cut %d, train imbalance %.4f; nodes + train + edges: cut %d, train imbalance %.4f",
		alone.Cut, imbalanceOf(t, alone, "train"), all.Cut, imbalanceOf(t, all, "train"))
}

// writeRegionMesh writes a side x side grid (node y*side+x linked to its
// right and lower neighbours) in the chunked format, whose training nodes
// fill one corner quarter (x, y < side/2): a min-cut partition balanced on
// nodes alone puts that corner in one or two parts.
func writeRegionMesh(t *testing.T, dir string, side int) string {
	t.Helper()
	var edges []int64
	mask := make([]bool, side*side)
	for y := range side {
		for x := range side {
			v := int64(y*side + x)
			if x+1 < side {
				edges = append(edges, v, v+1)
			}
			if y+1 < side {
				edges = append(edges, v, v+int64(side))
			}
			mask[v] = x < side/2 && y < side/2
		}
	}
	m := int64(len(edges) / 2)
	if err := graphio.WriteNpySlice(filepath.Join(dir, "edges.npy"), edges, m, 2); err != nil {
		t.Fatal(err)
	}
	if err := graphio.WriteNpySlice(filepath.Join(dir, "train_mask.npy"), mask, int64(len(mask))); err != nil {
		t.Fatal(err)
	}
	md := &graphio.Metadata{
		GraphName: "mesh", NodeType: []string{"_N"}, NumNodesPerType: []int64{int64(side * side)},
		EdgeType: []string{"_N:_E:_N"}, NumEdgesPerType: []int64{m},
		Edges:    map[string]graphio.ChunkSpec{"_N:_E:_N": {Format: graphio.Format{Name: "numpy"}, Data: []string{"edges.npy"}}},
		NodeData: map[string]map[string]graphio.ChunkSpec{"_N": {"train_mask": {Format: graphio.Format{Name: "numpy"}, Data: []string{"train_mask.npy"}}}},
	}
	path := filepath.Join(dir, "metadata.json")
	if err := graphio.WriteMetadata(path, md); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPartitionTrainRegion partitions a mesh whose training nodes fill one
// quarter into 4 parts on 1 and 2 ranks: balanced on nodes alone, the
// training nodes end far out of balance (measured by parteval from the
// files, not by what partition prints); --balance nodes,train must bring
// them within 1.03 without unbalancing the nodes.
func TestPartitionTrainRegion(t *testing.T) {
	dir := t.TempDir()
	in := writeRegionMesh(t, dir, 64)
	for _, np := range []int{1, 2} {
		out := filepath.Join(dir, fmt.Sprintf("nodes-%d", np))
		alone := partitionAndMeasure(t, np, in, out, "nodes,train", "--parts", "4", "--balance", "nodes")
		checkBalanced(t, out, alone, "nodes")
		if x := imbalanceOf(t, alone, "train"); x < 1.5 {
			t.Errorf("np=%d: balancing nodes alone left the training nodes at imbalance %.4f (%v); the test needs a partition that does not balance them by chance", np, x, alone.Of("train").Parts)
		}
		out = filepath.Join(dir, fmt.Sprintf("train-%d", np))
		both := partitionAndMeasure(t, np, in, out, "nodes,train", "--parts", "4", "--balance", "nodes,train")
		checkBalanced(t, out, both, "nodes", "train")
		t.Logf("np=%d: nodes only: cut %d, train imbalance %.4f %v; nodes,train: cut %d, train imbalance %.4f %v", np,
			alone.Cut, imbalanceOf(t, alone, "train"), alone.Of("train").Parts, both.Cut, imbalanceOf(t, both, "train"), both.Of("train").Parts)
	}
}

// TestPartitionBadInput checks that each bad input ends a 4-rank job with a
// clear message and a non-zero exit within seconds.
func TestPartitionBadInput(t *testing.T) {
	dir := t.TempDir()
	in, _ := plantedGraph(t, dir, 2, 10, 2)
	neg := filepath.Join(dir, "neg.txt")
	os.WriteFile(neg, []byte("0 1 1\n1 2 -3\n2 0 1\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "bad"), 0o755)
	badMask := writeMaskedGraph(t, filepath.Join(dir, "bad"), 100, true)
	aFile := filepath.Join(dir, "a-file")
	os.WriteFile(aFile, nil, 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"zero parts", []string{"--in", in, "--parts", "0"}, "--parts must be at least 1"},
		{"more parts than nodes", []string{"--in", in, "--parts", "21"}, "exceeds the 20 nodes"},
		{"imbalance not above 1", []string{"--in", in, "--parts", "2", "--imbalance", "1.0"}, "--imbalance must be above 1"},
		{"negative weight", []string{"--in", neg, "--parts", "2"}, "negative weight"},
		{"mask of wrong length", []string{"--in", badMask, "--parts", "2", "--balance", "nodes,train"}, "train_mask"},
		{"unknown constraint", []string{"--in", in, "--parts", "2", "--balance", "nodes,colour"}, `unknown constraint "colour"`},
		{"output under a file", []string{"--in", in, "--parts", "2", "--out", filepath.Join(aFile, "out")}, aFile + " is a file, not a directory"},
		{"report in a missing directory", []string{"--in", in, "--parts", "2", "--report", filepath.Join(dir, "missing", "r.json")}, "--report " + filepath.Join(dir, "missing", "r.json")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"partition", "--out", filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))}, c.args...)
			r := runGnnrun(t, 4, time.Minute, nil, args...)
			if r.err == nil {
				t.Fatalf("exit 0 for bad input: %v", r)
			}
			if r.elapsed > 15*time.Second {
				t.Errorf("took %v to fail", r.elapsed)
			}
			if !strings.Contains(r.stderr, c.want) {
				t.Fatalf("stderr lacks %q: %v", c.want, r)
			}
		})
	}
}

// TestPartitionRandomAndHierarchy checks the baseline and the two-level
// mode, measured from the files: the random cut must be far above the
// planted one, a 2x2 hierarchy must find the planted cut, and both must
// balance the nodes.
func TestPartitionRandomAndHierarchy(t *testing.T) {
	dir := t.TempDir()
	in, _ := plantedGraph(t, dir, 4, 200, 12)
	const edges = 4*200*4 + 12
	rnd := partitionAndMeasure(t, 2, in, filepath.Join(dir, "rand"), "nodes", "--parts", "4", "--algo", "random")
	// A random part for each end cuts about 3/4 of the edges.
	if rnd.Cut < edges/2 {
		t.Errorf("random partition cuts %d of %d edges", rnd.Cut, edges)
	}
	checkBalanced(t, "random", rnd, "nodes")
	hier := partitionAndMeasure(t, 4, in, filepath.Join(dir, "hier"), "nodes", "--parts", "4", "--hierarchy", "2x2")
	if hier.Cut != 12 {
		t.Errorf("hierarchical partition cuts %d, the planted cut is 12", hier.Cut)
	}
	checkBalanced(t, "hierarchy", hier, "nodes")
	r := runGnnrun(t, 0, time.Minute, nil, "partition", "--in", in, "--parts", "4", "--out", filepath.Join(dir, "hier"), "--hierarchy", "2x2")
	if r.err == nil || !strings.Contains(r.stderr, "--overwrite") {
		t.Fatalf("an existing assignment was overwritten without --overwrite: %v", r)
	}
}
