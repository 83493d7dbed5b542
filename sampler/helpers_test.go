package sampler

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/rank"
	"gnnrun/shard"
)

// The tests check the sampler against the input graph, read plainly: every
// sampled edge must be an input edge with the endpoints and original ID
// the batch says, with the counts the fanouts ask for. Node IDs are mapped
// from new to input IDs with the partition files' orig_nids and node_type,
// read with a plain .npy reader, not through the sampler.

// world runs fn on an in-process world of p ranks (two per host) with a
// small message limit, so the exchanges go in several rounds.
func world(t *testing.T, p int, fn func(c *collective.Comm) error) {
	t.Helper()
	if err := worldRun(p, fn); err != nil {
		t.Fatal(err)
	}
}

// worldRun is world returning the first rank's error.
func worldRun(p int, fn func(c *collective.Comm) error) error {
	return rank.RunLocal(p, func(rc rank.Comm) error {
		return fn(collective.MustNew(rc, collective.MaxMessage(1<<12)))
	}, rank.Timeout(2*time.Minute), rank.RanksPerHost(2))
}

// fixture is a generated graph, dispatched into partitions, with the input
// read back for checking.
type fixture struct {
	graphDir, parts string
	meta            graph.Meta
	// Input edges by type and type-wise ID: homogeneous endpoints.
	src, dst [][]int64
	// in[etype][dst] lists the type-wise IDs of dst's input in-edges.
	in []map[int64][]int64
	// New node ID -> homogeneous input ID.
	orig map[int64]int64
	// weight[etype][id] is the edge's "w".
	weight [][]float32
	// newEdge maps (etype, type-wise input ID) to the new edge ID.
	newEdge map[[2]int64]int64
	// train and label of every input node of type 0 (homogeneous ID).
	train map[int64]bool
	label map[int64]int64
}

var (
	fixtureMu    sync.Mutex
	fixtureCache = map[string]*fixture{}
)

// getFixture generates (once per test binary) an R-MAT graph of 2^8 users
// (and 64 items when hetero) with features, labels, masks and an edge
// array "w", dispatched into k partitions.
func getFixture(t *testing.T, hetero bool, k int) *fixture {
	t.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	name := fmt.Sprintf("%v-%d", hetero, k)
	if f, ok := fixtureCache[name]; ok {
		return f
	}
	dir, err := os.MkdirTemp("", "gnnrun-sampler-test")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{graphDir: filepath.Join(dir, "graph"), parts: filepath.Join(dir, "parts")}
	spec := graphio.GenSpec{Scale: 8, EdgeFactor: 4, FeatDim: 3, Classes: 3, Hetero: hetero, Seed: 11, Permute: true, Noise: 0.1}
	spec.SetDefaults(1)
	f.meta = spec.Meta()
	world(t, 1, func(c *collective.Comm) error {
		_, err := graphio.Generate(c, spec, f.graphDir, nil)
		return err
	})
	f.readInput(t)
	f.addWeights(t)
	asg := filepath.Join(dir, "asg")
	world(t, 2, func(c *collective.Comm) error {
		g, err := graphio.Read(c, f.graphDir)
		if err != nil {
			return err
		}
		defer g.Close()
		lo, hi := graph.EvenBook(f.meta.TotalNodes(), c.Size()).Range(c.Rank())
		part := make([]int32, 0, hi-lo)
		for h := lo; h < hi; h++ {
			part = append(part, int32(graph.Mix64(uint64(h)*7+3)%uint64(k)))
		}
		if _, err := graphio.WriteAssignment(c, asg, &f.meta, lo, part, k); err != nil {
			return err
		}
		a, err := graphio.ReadAssignment(c, asg, &g.Meta, 0)
		if err != nil {
			return err
		}
		_, err = shard.Dispatch(c, g, a, f.parts)
		return err
	})
	f.readNewIDs(t)
	fixtureCache[name] = f
	return f
}

// readInput reads every input edge on one rank.
func (f *fixture) readInput(t *testing.T) {
	t.Helper()
	world(t, 1, func(c *collective.Comm) error {
		g, err := graphio.Read(c, f.graphDir)
		if err != nil {
			return err
		}
		defer g.Close()
		nt := len(f.meta.EdgeTypes)
		f.src, f.dst, f.in = make([][]int64, nt), make([][]int64, nt), make([]map[int64][]int64, nt)
		for et := range nt {
			f.src[et] = make([]int64, f.meta.NumEdges[et])
			f.dst[et] = make([]int64, f.meta.NumEdges[et])
			f.in[et] = map[int64][]int64{}
		}
		e := g.Edges
		for i := range e.Len() {
			et, id := e.TypeOf(i), e.ID[i]
			f.src[et][id], f.dst[et][id] = e.Src[i], e.Dst[i]
		}
		for et := range nt {
			for id, d := range f.dst[et] {
				f.in[et][d] = append(f.in[et][d], int64(id))
			}
		}
		f.train, f.label = map[int64]bool{}, map[int64]int64{}
		mask, label := g.Nodes.Get(0, "train_mask"), g.Nodes.Get(0, "label")
		for i := range f.meta.NumNodes[0] {
			f.train[i] = mask.Float64At(i, 0) != 0
			f.label[i] = int64(label.Float64At(i, 0))
		}
		return nil
	})
}

// addWeights adds edge array "w" to every edge type: for each destination
// its first in-edge weighs 1 + id%3, the others (id*7)%4 / 2 — a quarter
// of them 0, but never all of a node's.
func (f *fixture) addWeights(t *testing.T) {
	t.Helper()
	mdPath := filepath.Join(f.graphDir, "metadata.json")
	raw, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	if err := json.Unmarshal(raw, &md); err != nil {
		t.Fatal(err)
	}
	ed := map[string]any{}
	f.weight = make([][]float32, len(f.meta.EdgeTypes))
	for et, ty := range f.meta.EdgeTypes {
		w := make([]float32, f.meta.NumEdges[et])
		for id := range w {
			w[id] = float32((id*7)%4) / 2
		}
		for _, ids := range f.in[et] {
			w[ids[0]] = float32(1 + ids[0]%3)
		}
		f.weight[et] = w
		name := fmt.Sprintf("w-%d.npy", et)
		if err := graphio.WriteNpySlice(filepath.Join(f.graphDir, name), w, int64(len(w))); err != nil {
			t.Fatal(err)
		}
		ed[ty.String()] = map[string]any{"w": map[string]any{"format": map[string]any{"name": "numpy"}, "data": []string{name}}}
	}
	md["edge_data"] = ed
	out, _ := json.MarshalIndent(md, "", "  ")
	if err := os.WriteFile(mdPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readNewIDs maps every new node ID to its homogeneous input ID, and every
// input edge to its new ID, from the partition files.
func (f *fixture) readNewIDs(t *testing.T) {
	t.Helper()
	cfgPath, err := shard.FindConfig(f.parts)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := shard.ReadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	f.orig = map[int64]int64{}
	book := cfg.Book()
	for q, pf := range cfg.Parts {
		origs := readInt64s(t, filepath.Join(f.parts, pf.OrigNIDs))
		types, err := graph.View[int16](readNpy(t, filepath.Join(f.parts, pf.NodeType)))
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := book.PartRange(q)
		for i, o := range origs {
			f.orig[lo+int64(i)] = f.meta.NodeOffset(int(types[i])) + o
		}
	}
	// Edges: (type, type-wise input ID) -> new ID.
	f.newEdge = map[[2]int64]int64{}
	for _, pf := range cfg.Parts {
		ids := readInt64s(t, filepath.Join(f.parts, pf.EdgeIDs))
		origs := readInt64s(t, filepath.Join(f.parts, pf.OrigEIDs))
		types, err := graph.View[int16](readNpy(t, filepath.Join(f.parts, pf.EdgeType)))
		if err != nil {
			t.Fatal(err)
		}
		for q := range ids {
			f.newEdge[[2]int64{int64(types[q]), origs[q]}] = ids[q]
		}
	}
}

func readNpy(t *testing.T, path string) *graph.Tensor {
	t.Helper()
	a, err := graphio.ReadNpy(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func readInt64s(t *testing.T, path string) []int64 {
	t.Helper()
	v, err := graph.View[int64](readNpy(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// inputNode returns the homogeneous input ID of new node v.
func (f *fixture) inputNode(t *testing.T, v int64) int64 {
	t.Helper()
	o, ok := f.orig[v]
	if !ok {
		t.Fatalf("new node ID %d is not in the partitions", v)
	}
	return o
}

// newIDs returns the new ID of every homogeneous input ID.
func (f *fixture) newIDs() map[int64]int64 {
	out := make(map[int64]int64, len(f.orig))
	for n, o := range f.orig {
		out[o] = n
	}
	return out
}
