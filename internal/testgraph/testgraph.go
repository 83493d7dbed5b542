// Package testgraph makes the small partitioned graphs the tests of the
// packages above shard share: a generated R-MAT graph (one or two node and
// edge types, features, labels, masks, and an edge array "w"), dispatched
// into K partitions, with the input read back plainly, so a test checks
// results against the input rather than against the code under test: every
// input edge by type and type-wise ID, each node's in-edges, the new ID of
// every input node and edge (from the partition files' orig_nids,
// node_type, edge_ids and orig_eids, read with a plain .npy reader), and the
// input's feature rows, training mask and labels.
package testgraph

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/rank"
	"gnnrun/shard"
)

// World runs fn on an in-process world of p ranks (two per host) with a
// small message limit, so exchanges go in several rounds; it fails the test
// on an error.
func World(tb testing.TB, p int, fn func(c *collective.Comm) error) {
	tb.Helper()
	if err := WorldRun(p, fn); err != nil {
		tb.Fatal(err)
	}
}

// WorldRun is World returning the first rank's error.
func WorldRun(p int, fn func(c *collective.Comm) error) error {
	return rank.RunLocal(p, func(rc rank.Comm) error {
		return fn(collective.MustNew(rc, collective.MaxMessage(1<<12)))
	}, rank.Timeout(2*time.Minute), rank.RanksPerHost(2))
}

// Spec says which graph to make.
type Spec struct {
	Hetero  bool // users and items, follows and buys
	K       int  // partitions
	FeatDim int  // float32 features per node (default 3)
	// Reverse (with Hetero) adds edge type item:bought_by:user, whose edge
	// i is the reverse of buys edge i.
	Reverse bool
}

// Graph is a generated graph, dispatched into partitions, with the input
// read back for checking.
type Graph struct {
	GraphDir, Parts string
	Meta            graph.Meta
	// Src[t][id], Dst[t][id]: homogeneous endpoints of input edge id of
	// type t; In[t][dst] lists the type-wise IDs of dst's in-edges.
	Src, Dst [][]int64
	In       []map[int64][]int64
	// Orig maps a new node ID to its homogeneous input ID; NewEdge maps
	// (type, type-wise input ID) to the new edge ID.
	Orig    map[int64]int64
	NewEdge map[[2]int64]int64
	// Weight[t][id] is edge array "w": a quarter of the edges weigh 0, but
	// never all of a node's in-edges. Weight0 is edge array "w0": "w" but
	// with every in-edge of the input nodes h = 1 mod 4 weighing 0.
	Weight, Weight0 [][]float32
	// Train and Label of every input node of type 0; Feat the feature row
	// of every input node (homogeneous ID).
	Train   map[int64]bool
	Label   map[int64]int64
	Feat    map[int64][]byte
	RowSize int
}

var (
	mu    sync.Mutex
	cache = map[Spec]*Graph{}
)

// Get makes (once per test binary) an R-MAT graph of 2^8 users (and 64
// items when hetero), edge factor 4, with features, labels, masks and the
// edge array "w", dispatched into spec.K partitions by a hash of each node.
func Get(tb testing.TB, spec Spec) *Graph {
	tb.Helper()
	if spec.FeatDim == 0 {
		spec.FeatDim = 3
	}
	mu.Lock()
	defer mu.Unlock()
	if g, ok := cache[spec]; ok {
		return g
	}
	dir, err := os.MkdirTemp("", "gnnrun-testgraph")
	if err != nil {
		tb.Fatal(err)
	}
	g := &Graph{GraphDir: filepath.Join(dir, "graph"), Parts: filepath.Join(dir, "parts")}
	gen := graphio.GenSpec{Scale: 8, EdgeFactor: 4, FeatDim: spec.FeatDim, Classes: 3, Hetero: spec.Hetero, Seed: 11, Permute: true, Noise: 0.1}
	gen.SetDefaults(1)
	g.Meta = gen.Meta()
	World(tb, 1, func(c *collective.Comm) error {
		_, err := graphio.Generate(c, gen, g.GraphDir, nil)
		return err
	})
	if spec.Hetero && spec.Reverse {
		g.addReverse(tb)
	}
	g.readInput(tb)
	g.addWeights(tb)
	g.dispatch(tb, filepath.Join(dir, "asg"), spec.K)
	g.readNewIDs(tb)
	cache[spec] = g
	return g
}

// dispatch writes an assignment by a hash of each node and dispatches.
func (g *Graph) dispatch(tb testing.TB, asg string, k int) {
	World(tb, 2, func(c *collective.Comm) error {
		in, err := graphio.Read(c, g.GraphDir)
		if err != nil {
			return err
		}
		defer in.Close()
		lo, hi := graph.EvenBook(g.Meta.TotalNodes(), c.Size()).Range(c.Rank())
		part := make([]int32, 0, hi-lo)
		for h := lo; h < hi; h++ {
			part = append(part, int32(graph.Mix64(uint64(h)*7+3)%uint64(k)))
		}
		if _, err := graphio.WriteAssignment(c, asg, &g.Meta, lo, part, k); err != nil {
			return err
		}
		a, err := graphio.ReadAssignment(c, asg, &in.Meta, 0)
		if err != nil {
			return err
		}
		_, err = shard.Dispatch(c, in, a, g.Parts)
		return err
	})
}

// readInput reads every input edge and the node arrays on one rank.
func (g *Graph) readInput(tb testing.TB) {
	World(tb, 1, func(c *collective.Comm) error {
		in, err := graphio.Read(c, g.GraphDir)
		if err != nil {
			return err
		}
		defer in.Close()
		nt := len(g.Meta.EdgeTypes)
		g.Src, g.Dst, g.In = make([][]int64, nt), make([][]int64, nt), make([]map[int64][]int64, nt)
		for et := range nt {
			g.Src[et] = make([]int64, g.Meta.NumEdges[et])
			g.Dst[et] = make([]int64, g.Meta.NumEdges[et])
			g.In[et] = map[int64][]int64{}
		}
		e := in.Edges
		for i := range e.Len() {
			et, id := e.TypeOf(i), e.ID[i]
			g.Src[et][id], g.Dst[et][id] = e.Src[i], e.Dst[i]
		}
		for et := range nt {
			for id, d := range g.Dst[et] {
				g.In[et][d] = append(g.In[et][d], int64(id))
			}
		}
		g.Train, g.Label, g.Feat = map[int64]bool{}, map[int64]int64{}, map[int64][]byte{}
		mask, label := in.Nodes.Get(0, "train_mask"), in.Nodes.Get(0, "label")
		for i := range g.Meta.NumNodes[0] {
			g.Train[i] = mask.Float64At(i, 0) != 0
			g.Label[i] = int64(label.Float64At(i, 0))
		}
		for t := range g.Meta.NodeTypes {
			feat := in.Nodes.Get(t, "feat")
			g.RowSize = feat.RowBytes()
			for i := range g.Meta.NumNodes[t] {
				g.Feat[g.Meta.NodeOffset(t)+i] = append([]byte(nil), feat.Row(i)...)
			}
		}
		return nil
	})
}

// addReverse adds edge type item:bought_by:user to the input, its edge i
// the reverse of buys edge i.
func (g *Graph) addReverse(tb testing.TB) {
	mdPath := filepath.Join(g.GraphDir, "metadata.json")
	md, err := graphio.ReadMetadata(mdPath)
	if err != nil {
		tb.Fatal(err)
	}
	buys := md.Edges["user:buys:item"]
	rev := graphio.ChunkSpec{Format: buys.Format}
	for k, f := range buys.Data {
		pairs := readInt64s(tb, md.Resolve(f))
		for i := 0; i+1 < len(pairs); i += 2 {
			pairs[i], pairs[i+1] = pairs[i+1], pairs[i]
		}
		name := fmt.Sprintf("edges/item__bought_by__user-%d.npy", k)
		if err := graphio.WriteNpySlice(filepath.Join(g.GraphDir, name), pairs, int64(len(pairs)/2), 2); err != nil {
			tb.Fatal(err)
		}
		rev.Data = append(rev.Data, name)
	}
	bt := slices.Index(md.EdgeType, "user:buys:item")
	md.EdgeType = append(md.EdgeType, "item:bought_by:user")
	md.NumEdgesPerType = append(md.NumEdgesPerType, md.NumEdgesPerType[bt])
	md.NumEdgesPerChunk = append(md.NumEdgesPerChunk, md.NumEdgesPerChunk[bt])
	md.Edges["item:bought_by:user"] = rev
	if err := graphio.WriteMetadata(mdPath, md); err != nil {
		tb.Fatal(err)
	}
	if md, err = graphio.ReadMetadata(mdPath); err != nil {
		tb.Fatal(err)
	}
	g.Meta = md.Meta()
}

// addWeights adds edge arrays "w" and "w0" to every edge type. In "w",
// for each destination its first in-edge weighs 1 + id%3, the others
// (id*7)%4 / 2 — a quarter of them 0, but never all of a node's; "w0" is
// "w" with all in-edges of the nodes ZeroIn names weighing 0.
func (g *Graph) addWeights(tb testing.TB) {
	mdPath := filepath.Join(g.GraphDir, "metadata.json")
	raw, err := os.ReadFile(mdPath)
	if err != nil {
		tb.Fatal(err)
	}
	var md map[string]any
	if err := json.Unmarshal(raw, &md); err != nil {
		tb.Fatal(err)
	}
	ed := map[string]any{}
	g.Weight = make([][]float32, len(g.Meta.EdgeTypes))
	g.Weight0 = make([][]float32, len(g.Meta.EdgeTypes))
	for et, ty := range g.Meta.EdgeTypes {
		w := make([]float32, g.Meta.NumEdges[et])
		for id := range w {
			w[id] = float32((id*7)%4) / 2
		}
		for _, ids := range g.In[et] {
			w[ids[0]] = float32(1 + ids[0]%3)
		}
		w0 := slices.Clone(w)
		for dst, ids := range g.In[et] {
			if ZeroIn(dst) {
				for _, id := range ids {
					w0[id] = 0
				}
			}
		}
		g.Weight[et], g.Weight0[et] = w, w0
		arrays := map[string]any{}
		for name, a := range map[string][]float32{"w": w, "w0": w0} {
			file := fmt.Sprintf("%s-%d.npy", name, et)
			if err := graphio.WriteNpySlice(filepath.Join(g.GraphDir, file), a, int64(len(a))); err != nil {
				tb.Fatal(err)
			}
			arrays[name] = map[string]any{"format": map[string]any{"name": "numpy"}, "data": []string{file}}
		}
		ed[ty.String()] = arrays
	}
	md["edge_data"] = ed
	out, _ := json.MarshalIndent(md, "", "  ")
	if err := os.WriteFile(mdPath, out, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ZeroIn reports whether every in-edge of input node h (homogeneous ID)
// weighs 0 in edge array "w0".
func ZeroIn(h int64) bool { return h%4 == 1 }

// readNewIDs maps every new node ID to its homogeneous input ID, and every
// input edge to its new ID, from the partition files.
func (g *Graph) readNewIDs(tb testing.TB) {
	cfgPath, err := shard.FindConfig(g.Parts)
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := shard.ReadConfig(cfgPath)
	if err != nil {
		tb.Fatal(err)
	}
	g.Orig, g.NewEdge = map[int64]int64{}, map[[2]int64]int64{}
	book := cfg.Book()
	for q, pf := range cfg.Parts {
		origs := readInt64s(tb, filepath.Join(g.Parts, pf.OrigNIDs))
		types := readInt16s(tb, filepath.Join(g.Parts, pf.NodeType))
		lo, _ := book.PartRange(q)
		for i, o := range origs {
			g.Orig[lo+int64(i)] = g.Meta.NodeOffset(int(types[i])) + o
		}
		ids := readInt64s(tb, filepath.Join(g.Parts, pf.EdgeIDs))
		eorig := readInt64s(tb, filepath.Join(g.Parts, pf.OrigEIDs))
		etypes := readInt16s(tb, filepath.Join(g.Parts, pf.EdgeType))
		for k := range ids {
			g.NewEdge[[2]int64{int64(etypes[k]), eorig[k]}] = ids[k]
		}
	}
}

func readNpy(tb testing.TB, path string) *graph.Tensor {
	a, err := graphio.ReadNpy(path)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func readInt64s(tb testing.TB, path string) []int64 {
	v, err := graph.View[int64](readNpy(tb, path))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func readInt16s(tb testing.TB, path string) []int16 {
	v, err := graph.View[int16](readNpy(tb, path))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// InputNode returns the homogeneous input ID of new node v.
func (g *Graph) InputNode(tb testing.TB, v int64) int64 {
	tb.Helper()
	o, ok := g.Orig[v]
	if !ok {
		tb.Fatalf("new node ID %d is not in the partitions", v)
	}
	return o
}

// NewIDs returns the new ID of every homogeneous input ID.
func (g *Graph) NewIDs() map[int64]int64 {
	out := make(map[int64]int64, len(g.Orig))
	for n, o := range g.Orig {
		out[o] = n
	}
	return out
}

// EdgeNewID returns the new ID of input edge (et, id).
func (g *Graph) EdgeNewID(tb testing.TB, et int, id int64) int64 {
	tb.Helper()
	n, ok := g.NewEdge[[2]int64{int64(et), id}]
	if !ok {
		tb.Fatalf("input edge %d of type %d is in no partition", id, et)
	}
	return n
}
