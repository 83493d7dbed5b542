package shard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/rank"
)

// world runs fn on an in-process world of p ranks (two per host) with a
// small message limit, so collectives go in several rounds.
func world(t *testing.T, p int, fn func(c *collective.Comm) error) {
	t.Helper()
	if err := worldErr(p, fn); err != nil {
		t.Fatal(err)
	}
}

func worldErr(p int, fn func(c *collective.Comm) error) error {
	return rank.RunLocal(p, func(rc rank.Comm) error {
		return fn(collective.MustNew(rc, collective.MaxMessage(1<<12)))
	}, rank.Timeout(2*time.Minute), rank.RanksPerHost(2))
}

// genGraph writes an R-MAT graph with features, labels and masks, plus an
// edge array "w" (two float32 per edge, derived from the edge ID) on every
// edge type, and returns its directory.
func genGraph(t *testing.T, scale int, hetero bool) string {
	t.Helper()
	dir := genPlain(t, scale, hetero)
	addEdgeData(t, dir, graphMeta(scale, hetero))
	return dir
}

// genPlain writes an R-MAT graph with node arrays but no edge arrays.
func genPlain(t *testing.T, scale int, hetero bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "graph")
	spec := genSpec(scale, hetero)
	world(t, 1, func(c *collective.Comm) error {
		_, err := graphio.Generate(c, spec, dir, nil)
		return err
	})
	return dir
}

func genSpec(scale int, hetero bool) graphio.GenSpec {
	spec := graphio.GenSpec{Scale: scale, EdgeFactor: 4, FeatDim: 3, Classes: 3, Hetero: hetero, Seed: 7, Permute: true, Noise: 0.1}
	spec.SetDefaults(1)
	return spec
}

func graphMeta(scale int, hetero bool) graph.Meta {
	spec := genSpec(scale, hetero)
	return spec.Meta()
}

// addEdgeData adds edge array "w" to every edge type of the chunked graph
// in dir: row i of type t is (t, i).
func addEdgeData(t *testing.T, dir string, m graph.Meta) {
	t.Helper()
	mdPath := filepath.Join(dir, "metadata.json")
	raw, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	if err := json.Unmarshal(raw, &md); err != nil {
		t.Fatal(err)
	}
	ed := map[string]any{}
	for ty, et := range m.EdgeTypes {
		rows := make([]float32, 2*m.NumEdges[ty])
		for i := range m.NumEdges[ty] {
			rows[2*i], rows[2*i+1] = float32(ty), float32(i)
		}
		name := fmt.Sprintf("edata-%d.npy", ty)
		if err := graphio.WriteNpySlice(filepath.Join(dir, name), rows, m.NumEdges[ty], 2); err != nil {
			t.Fatal(err)
		}
		ed[et.String()] = map[string]any{"w": map[string]any{"format": map[string]any{"name": "numpy"}, "data": []string{name}}}
	}
	md["edge_data"] = ed
	out, _ := json.MarshalIndent(md, "", "  ")
	if err := os.WriteFile(mdPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// randomParts returns the part of every node: a hash of its type and ID.
func randomParts(m *graph.Meta, k int, seed uint64) func(t int, i int64) int32 {
	return func(t int, i int64) int32 {
		return int32(graph.Mix64(seed^uint64(t)<<40^uint64(i)) % uint64(k))
	}
}

// writeAssignment writes a DGL assignment of the graph into K parts and
// returns its directory.
func writeAssignment(t *testing.T, graphDir string, k int, seed uint64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "asg")
	world(t, 2, func(c *collective.Comm) error {
		md, err := graphio.ReadMetadata(filepath.Join(graphDir, "metadata.json"))
		if err != nil {
			return err
		}
		m := md.Meta()
		part := randomParts(&m, k, seed)
		lo, hi := graph.EvenBook(m.TotalNodes(), c.Size()).Range(c.Rank())
		parts := make([]int32, 0, hi-lo)
		for h := lo; h < hi; h++ {
			ty, i := m.NodeTypeOf(h)
			parts = append(parts, part(ty, i))
		}
		_, err = graphio.WriteAssignment(c, dir, &m, lo, parts, k)
		return err
	})
	return dir
}

// dispatch runs Dispatch on p ranks.
func dispatch(t *testing.T, p int, graphDir, asgDir, out string, opts ...Option) *Result {
	t.Helper()
	var res *Result
	world(t, p, func(c *collective.Comm) error {
		r, err := dispatchOn(c, graphDir, asgDir, out, opts...)
		if c.Rank() == 0 {
			res = r
		}
		return err
	})
	return res
}

func dispatchOn(c *collective.Comm, graphDir, asgDir, out string, opts ...Option) (*Result, error) {
	g, err := graphio.Read(c, graphDir)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	a, err := graphio.ReadAssignment(c, asgDir, &g.Meta, 0)
	if err != nil {
		return nil, err
	}
	return Dispatch(c, g, a, out, append([]Option{Budget(1 << 10)}, opts...)...)
}

// treeFiles returns every file under dir with its bytes.
func treeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails unless two directories hold the same files, byte for byte.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	fa, fb := treeFiles(t, a), treeFiles(t, b)
	var names []string
	for n := range fa {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := fb[n]; !ok {
			t.Errorf("%s only in %s", n, a)
		} else if !bytes.Equal(fa[n], fb[n]) {
			t.Errorf("%s differs between %s and %s", n, a, b)
		}
	}
	for n := range fb {
		if _, ok := fa[n]; !ok {
			t.Errorf("%s only in %s", n, b)
		}
	}
	if len(fa) == 0 {
		t.Errorf("%s is empty", a)
	}
}

// inputGraph is the whole input graph on one rank: the reference the
// partitions are checked against in tests.
type inputGraph struct {
	m     graph.Meta
	edges map[[2]int64][2]int64 // (type, type-wise ID) -> (src, dst) homogeneous
	erows map[string]map[int64][]byte
	nodes []map[string]*graph.Tensor
}

func readInput(t *testing.T, graphDir string) *inputGraph {
	t.Helper()
	in := &inputGraph{edges: map[[2]int64][2]int64{}, erows: map[string]map[int64][]byte{}}
	world(t, 1, func(c *collective.Comm) error {
		g, err := graphio.Read(c, graphDir)
		if err != nil {
			return err
		}
		in.m = g.Meta
		e := g.Edges
		for i := range e.Src {
			key := [2]int64{int64(e.TypeOf(i)), e.ID[i]}
			if _, dup := in.edges[key]; dup {
				return fmt.Errorf("input edge %v twice", key)
			}
			in.edges[key] = [2]int64{e.Src[i], e.Dst[i]}
			for k, ten := range e.Data {
				ets, _, _ := strings.Cut(k, "/")
				if ets != g.Meta.EdgeTypes[e.TypeOf(i)].String() {
					continue
				}
				if in.erows[k] == nil {
					in.erows[k] = map[int64][]byte{}
				}
				in.erows[k][e.ID[i]] = append([]byte(nil), ten.Row(int64(i))...)
			}
		}
		for ty := range g.Meta.NodeTypes {
			cp := map[string]*graph.Tensor{}
			for name, ten := range g.Nodes.Arrays[ty] {
				cp[name] = &graph.Tensor{DType: ten.DType, Shape: ten.Shape, Data: append([]byte(nil), ten.Data...)}
			}
			in.nodes = append(in.nodes, cp)
		}
		return g.Close()
	})
	return in
}

// idOrder is the reference new-ID order of an assignment, derived from
// the assignment alone by the order the README documents, independent of
// Dispatch, Open, Book and Store: partition 0's nodes first, then
// partition 1's, ...; inside a partition node type 0's nodes, then type
// 1's, ...; inside a (partition, type) increasing type-wise input ID.
type idOrder struct {
	orig  [][2]int64 // new ID -> (node type, type-wise input ID)
	start []int64    // partition p holds the new IDs [start[p], start[p+1])
}

// newIDOrder returns the reference order of the assignment part of the
// nodes of m into k partitions.
func newIDOrder(m *graph.Meta, k int, part func(t int, i int64) int32) idOrder {
	byPart := make([][][2]int64, k)
	for t := range m.NodeTypes {
		for i := range m.NumNodes[t] {
			p := part(t, i)
			byPart[p] = append(byPart[p], [2]int64{int64(t), i})
		}
	}
	o := idOrder{start: make([]int64, k+1)}
	for p, nodes := range byPart {
		o.orig = append(o.orig, nodes...)
		o.start[p+1] = int64(len(o.orig))
	}
	return o
}

// checkPartitions checks the partition directory out against the input
// graph and the reference order of its assignment, one partition at a
// time, on one goroutine: every partition holds the range of new IDs and
// the inner nodes the reference gives it, every input edge is exactly once
// in its destination's partition with its endpoints, rows equal the
// input's.
func checkPartitions(t *testing.T, in *inputGraph, ref idOrder, out string) {
	t.Helper()
	cfgPath, err := FindConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ReadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NumNodes != in.m.TotalNodes() || cfg.NumEdges != in.m.TotalEdges() || cfg.NumParts != len(ref.start)-1 {
		t.Fatalf("config counts %d nodes %d edges %d partitions, input %d %d, assignment %d", cfg.NumNodes, cfg.NumEdges, cfg.NumParts, in.m.TotalNodes(), in.m.TotalEdges(), len(ref.start)-1)
	}
	seen := map[[2]int64]bool{}
	var parts []*Partition
	for p := range cfg.NumParts {
		pt, err := loadPartition(cfgPath, cfg, p, func(rel string) (*graph.Tensor, mapping, error) {
			if isZstd(rel) {
				ten, err := readCompressed(resolve(cfgPath, rel))
				return ten, nil, err
			}
			return mapArray(resolve(cfgPath, rel))
		})
		if err != nil {
			t.Fatal(err)
		}
		defer pt.Close()
		parts = append(parts, pt)
		checkInnerNodes(t, in, ref, pt)
		for j := pt.NumInner; j < pt.NumLocal(); j++ {
			if id := pt.Local2Global[j]; pt.InnerNode[j] || (id >= ref.start[p] && id < ref.start[p+1]) {
				t.Fatalf("partition %d: halo node %d (global %d) is inner", p, j, id)
			}
		}
	}
	for p, pt := range parts {
		elo, _ := pt.Book.EdgePartRange(p)
		rowAt := map[string]int64{}
		for i := range pt.NumInner {
			for q := pt.Indptr[i]; q < pt.Indptr[i+1]; q++ {
				src := pt.Local2Global[pt.Index(q)]
				dst := pt.Lo + i
				ty := int64(pt.EdgeType[q])
				key := [2]int64{ty, pt.OrigEIDs[q]}
				if seen[key] {
					t.Fatalf("edge %v twice", key)
				}
				seen[key] = true
				want, ok := in.edges[key]
				if !ok {
					t.Fatalf("partition %d holds edge %v not in the input", p, key)
				}
				if src < 0 || src >= int64(len(ref.orig)) {
					t.Fatalf("partition %d: edge %v has source %d outside the new IDs", p, key, src)
				}
				so, do := ref.orig[src], ref.orig[dst]
				gotSrc := in.m.NodeOffset(int(so[0])) + so[1]
				gotDst := in.m.NodeOffset(int(do[0])) + do[1]
				if gotSrc != want[0] || gotDst != want[1] {
					t.Fatalf("partition %d: edge %v is %d -> %d, input %d -> %d", p, key, gotSrc, gotDst, want[0], want[1])
				}
				if pt.EdgeIDs[q] < elo || pt.Book.NodeType(src) != int(so[0]) {
					t.Fatalf("partition %d: edge %v has new ID %d", p, key, pt.EdgeIDs[q])
				}
				ets := in.m.EdgeTypes[ty].String()
				for k, rows := range in.erows {
					if !strings.HasPrefix(k, ets+"/") {
						continue
					}
					ten := pt.EdgeFeats[k]
					if ten == nil || !bytes.Equal(ten.Row(rowAt[k]), rows[key[1]]) {
						t.Fatalf("partition %d: edge %v array %s differs", p, key, k)
					}
					rowAt[k]++
				}
			}
		}
	}
	if int64(len(seen)) != in.m.TotalEdges() {
		t.Fatalf("%d edges in partitions, %d in the input", len(seen), in.m.TotalEdges())
	}
}

// checkInnerNodes checks partition pt's range of new IDs, its inner nodes
// and their rows against the reference order.
func checkInnerNodes(t *testing.T, in *inputGraph, ref idOrder, pt *Partition) {
	t.Helper()
	p := pt.ID
	if pt.Lo != ref.start[p] || pt.NumInner != ref.start[p+1]-ref.start[p] {
		t.Fatalf("partition %d holds new IDs [%d,%d), the assignment gives it [%d,%d)", p, pt.Lo, pt.Lo+pt.NumInner, ref.start[p], ref.start[p+1])
	}
	row := make([]int64, len(in.m.NodeTypes)) // next row of each type's arrays
	for i := range pt.NumInner {
		want := ref.orig[pt.Lo+i]
		if got := [2]int64{int64(pt.NodeType[i]), pt.OrigNIDs[i]}; got != want {
			t.Fatalf("partition %d: inner node %d (new ID %d) is (type, input ID) %v, the assignment's order gives %v", p, i, pt.Lo+i, got, want)
		}
		if pt.Local2Global[i] != pt.Lo+i || !pt.InnerNode[i] {
			t.Fatalf("partition %d: inner node %d maps to %d", p, i, pt.Local2Global[i])
		}
		ty := want[0]
		for name, ten := range in.nodes[ty] {
			got := pt.NodeFeat(in.m.NodeTypes[ty], name)
			if got == nil || !bytes.Equal(got.Row(row[ty]), ten.Row(want[1])) {
				t.Fatalf("partition %d: node %v array %s differs", p, want, name)
			}
		}
		row[ty]++
	}
}
