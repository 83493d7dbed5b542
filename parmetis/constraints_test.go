package parmetis

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/parmetis/serial"
	"gnnrun/parteval"
)

func TestParseConstraints(t *testing.T) {
	got, err := ParseConstraints("nodes, train,edges,ntypes,val,test,vwgt")
	want := []Constraint{ConNodes, ConTrain, ConEdges, ConNTypes, ConVal, ConTest, ConVwgt}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	for _, c := range want {
		if back, err := ParseConstraints(c.String()); err != nil || back[0] != c {
			t.Errorf("%v does not parse back: %v %v", c, back, err)
		}
	}
	if got, err := ParseConstraints(""); got != nil || err != nil {
		t.Errorf("empty list: %v, %v; want nil (the default)", got, err)
	}
	for s, msg := range map[string]string{
		"nodes,colour": `parmetis: unknown constraint "colour"`,
		"train,train":  `parmetis: constraint "train" given twice`,
	} {
		if _, err := ParseConstraints(s); err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", s, err, msg)
		}
	}
}

// weightsGraph is a graph of 6 "user" and 4 "item" nodes: users 0, 2 and 3
// are training nodes (items have no mask), every node has METIS-style
// weights (id+1, 2*id) in two columns.
func weightsGraph(rank, np int) (*graph.Meta, *graph.NodeData) {
	m := &graph.Meta{NodeTypes: []string{"user", "item"}, NumNodes: []int64{6, 4}}
	nd := graph.NewNodeData(m, rank, np)
	for t := range m.NodeTypes {
		lo, hi := nd.Range(t)
		var mask []bool
		var vw []int64
		for id := lo; id < hi; id++ {
			mask = append(mask, id == 0 || id == 2 || id == 3)
			vw = append(vw, id+1, 2*id)
		}
		if t == 0 {
			nd.Arrays[t]["train_mask"] = graph.TensorOf(mask, 0)
		}
		nd.Arrays[t]["vwgt"] = graph.TensorOf(vw, 2)
	}
	return m, nd
}

// Every constraint weighs the vertices of any rank's range alike, the mask
// and METIS weights fetched from the ranks that read them.
func TestBalanceWeights(t *testing.T) {
	cons := []Constraint{ConNodes, ConEdges, ConNTypes, ConTrain, ConVwgt}
	wantNames := []string{"nodes", "edges", "ntype:user", "ntype:item", "train", "vwgt[0]", "vwgt[1]"}
	// Per homogeneous node ID 0..9 (items are 6..9, type-wise 0..3).
	want := func(id int64) []int64 {
		user, tid := int64(0), id-6
		if id < 6 {
			user, tid = 1, id
		}
		train := int64(0)
		if id == 0 || id == 2 || id == 3 {
			train = 1
		}
		return []int64{1, 10 + id, user, 1 - user, train, tid + 1, 2 * tid}
	}
	for _, np := range []int{1, 2, 3} {
		runWorld(t, np, func(c *collective.Comm) error {
			m, nd := weightsGraph(c.Rank(), np)
			// The ranks weigh other ranges than the ones they read.
			lo, hi := graph.EvenBook(10, np).Range(np - 1 - c.Rank())
			indeg := make([]int64, hi-lo)
			for v := range indeg {
				indeg[v] = 10 + lo + int64(v)
			}
			w, err := Balance{Constraints: cons, Meta: m, Nodes: nd}.Weights(c, lo, indeg)
			if err != nil {
				return err
			}
			if w.NCon != len(wantNames) || !slices.Equal(w.Names, wantNames) {
				return fmt.Errorf("np=%d: %d weights %v, want %v", np, w.NCon, w.Names, wantNames)
			}
			for v := range indeg {
				if got := w.Vwgt[v*w.NCon : (v+1)*w.NCon]; !slices.Equal(got, want(lo+int64(v))) {
					return fmt.Errorf("np=%d: node %d weighs %v, want %v", np, lo+int64(v), got, want(lo+int64(v)))
				}
			}
			def, err := Balance{Meta: m, Nodes: nd}.Weights(c, lo, indeg)
			if err != nil || !slices.Equal(def.Names, []string{"vwgt[0]", "vwgt[1]"}) {
				return fmt.Errorf("np=%d: default constraints %v (%v), want vwgt's columns", np, def.Names, err)
			}
			_, err = Balance{Constraints: []Constraint{ConVal}, Meta: m, Nodes: nd}.Weights(c, lo, indeg)
			if err == nil || !strings.Contains(err.Error(), `needs node array "val_mask"`) {
				return fmt.Errorf("np=%d: a missing mask gave error %v", np, err)
			}
			return nil
		})
	}
}

// trainingGrid is a w x h grid mesh (node x + w*y) whose training nodes
// fill one corner, x < w/3 and y < h/3: a region no compact part of a
// partition by nodes alone takes its share of.
type trainingGrid struct{ w, h int }

func (g trainingGrid) n() int64 { return int64(g.w * g.h) }

func (g trainingGrid) train(id int64) bool {
	x, y := int(id)%g.w, int(id)/g.w
	return x < g.w/3 && y < g.h/3
}

// input returns rank r's share (of np) of the edges, each listed once.
func (g trainingGrid) input(r, np int) Input {
	in := Input{N: g.n()}
	i := 0
	add := func(s, d int) {
		if i%np == r {
			in.Src, in.Dst = append(in.Src, int64(s)), append(in.Dst, int64(d))
		}
		i++
	}
	for y := range g.h {
		for x := range g.w {
			if x+1 < g.w {
				add(x+g.w*y, x+1+g.w*y)
			}
			if y+1 < g.h {
				add(x+g.w*y, x+g.w*(y+1))
			}
		}
	}
	return in
}

// nodeData returns the graph's one node type and rank r's rows (of np) of
// its train_mask.
func (g trainingGrid) nodeData(r, np int) (*graph.Meta, *graph.NodeData) {
	m := &graph.Meta{NodeTypes: []string{"_N"}, NumNodes: []int64{g.n()}}
	nd := graph.NewNodeData(m, r, np)
	lo, hi := nd.Range(0)
	mask := make([]uint8, 0, hi-lo)
	for id := lo; id < hi; id++ {
		mask = append(mask, uint8(b2i(g.train(id))))
	}
	nd.Arrays[0]["train_mask"] = graph.TensorOf(mask, 0)
	return m, nd
}

// The training nodes fill a corner of a mesh: balancing the nodes alone
// leaves most parts without their share of them, and the train constraint
// (the mask column Balance.Weights builds) brings every part within 1.03,
// as parteval measures it from the mask itself, at any rank count and with
// either method.
func TestTrainingRegionNeedsItsConstraint(t *testing.T) {
	grid := trainingGrid{48, 32}
	all := grid.input(0, 1)
	cons := []parteval.Constraint{nodes(grid.n()), column("train", grid.n(), func(v int64) int64 { return b2i(grid.train(v)) })}
	for _, run := range []struct {
		np     int
		method Method
	}{{1, MethodKway}, {2, MethodKway}, {3, MethodRB}} {
		for _, spec := range []string{"nodes", "nodes,train"} {
			what := fmt.Sprintf("np=%d %v --balance %s", run.np, run.method, spec)
			o := Options{Options: serial.Options{Parts: 4, Seed: 1}, MaxReplicated: 1500, Method: run.method}
			var names []string
			part, res := partitionOn(t, run.np, func(c *collective.Comm) (*Result, error) {
				dg, _, err := Build(c, grid.input(c.Rank(), run.np))
				if err != nil {
					return nil, err
				}
				meta, nd := grid.nodeData(c.Rank(), run.np)
				bc, err := ParseConstraints(spec)
				if err != nil {
					return nil, err
				}
				w, err := Balance{Constraints: bc, Meta: meta, Nodes: nd}.Weights(c, dg.Lo(), dg.InDeg)
				if err != nil {
					return nil, err
				}
				if err := dg.SetVertexWeights(w.NCon, w.Vwgt); err != nil {
					return nil, err
				}
				if c.Rank() == 0 {
					names = w.Names
				}
				return Partition(dg, o)
			})
			m := measure(t, all, part, o, cons...)
			checkReport(t, what, res, m, names...)
			for _, name := range strings.Split(spec, ",") {
				if b := m.Of(name); b.Imbalance > 1.03+1e-9 {
					t.Errorf("%s: %s imbalance %.4f above 1.03 (part weights %v)", what, name, b.Imbalance, b.Parts)
				}
			}
			train := m.Of("train")
			t.Logf("%s: cut %d, train imbalance %.3f %v", what, m.Cut, train.Imbalance, train.Parts)
			if spec == "nodes" && train.Imbalance < 2 {
				t.Errorf("%s: train imbalance %.4f; the test means a region that balancing the nodes alone leaves far out of balance", what, train.Imbalance)
			}
		}
	}
}
