package parmetis

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
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
