package main

import (
	"fmt"
	"math"
	"strings"

	"gnnrun/collective"
	"gnnrun/graphio"
	"gnnrun/parmetis"
)

// buildForPartition turns the edges read into the partitioner's
// distributed graph; edge weights must be whole numbers.
func buildForPartition(e *env, g *graphio.Graph) (*parmetis.DistGraph, parmetis.BuildStats, error) {
	in := parmetis.Input{N: g.Meta.TotalNodes(), Src: g.Edges.Src, Dst: g.Edges.Dst, Symmetric: g.Format == graphio.InMETIS}
	w := g.Edges.Weight
	g.Edges = nil // Build frees the edges as it ships them
	if w != nil {
		in.Weight = make([]int64, len(w))
		for i, x := range w {
			if x != float32(math.Round(float64(x))) {
				return nil, parmetis.BuildStats{}, fmt.Errorf("%s: edge %d -> %d has weight %v; the partitioner needs whole-number weights", g.Path, in.Src[i], in.Dst[i], x)
			}
			in.Weight[i] = int64(x)
		}
	}
	return parmetis.Build(e.comm, in)
}

// constraint names a balance constraint of --balance.
type constraint string

const (
	conNodes  constraint = "nodes"
	conEdges  constraint = "edges"
	conNTypes constraint = "ntypes"
	conTrain  constraint = "train"
	conVal    constraint = "val"
	conTest   constraint = "test"
	conVwgt   constraint = "vwgt"
)

// maskArray is the node array a mask constraint reads.
var maskArray = map[constraint]string{conTrain: "train_mask", conVal: "val_mask", conTest: "test_mask"}

// parseBalance parses --balance; empty means vwgt when the input has METIS
// vertex weights, else nodes.
func parseBalance(s string, g *graphio.Graph) ([]constraint, error) {
	if s == "" {
		if g.Nodes != nil && len(g.Nodes.Arrays) > 0 && g.Nodes.Arrays[0]["vwgt"] != nil {
			return []constraint{conVwgt}, nil
		}
		return []constraint{conNodes}, nil
	}
	var out []constraint
	seen := map[constraint]bool{}
	for _, f := range strings.Split(s, ",") {
		c := constraint(strings.TrimSpace(f))
		switch c {
		case conNodes, conEdges, conNTypes, conTrain, conVal, conTest, conVwgt:
		default:
			return nil, fmt.Errorf("--balance: unknown constraint %q (want nodes, edges, ntypes, train, val, test, vwgt)", c)
		}
		if seen[c] {
			return nil, fmt.Errorf("--balance: %q given twice", c)
		}
		seen[c] = true
		out = append(out, c)
	}
	return out, nil
}

// vertexWeights computes the weights of the constraints for the n vertices
// from lo (whose in-degrees are indeg), fetching mask and vwgt rows from the ranks that
// read them. It returns the number of weights per vertex, the weights, and
// a name for each.
func vertexWeights(e *env, g *graphio.Graph, lo int64, n int, indeg []int64, spec string) (int, []int64, []string, error) {
	cons, err := parseBalance(spec, g)
	if err != nil {
		return 0, nil, nil, err
	}
	var cols [][]int64
	var names []string
	for _, c := range cons {
		switch c {
		case conNodes:
			cols, names = append(cols, constant(n, 1)), append(names, "nodes")
		case conEdges:
			cols, names = append(cols, indeg), append(names, "edges")
		case conNTypes:
			for t, name := range g.Meta.NodeTypes {
				col := make([]int64, n)
				off := g.Meta.NodeOffset(t)
				for v := range col {
					if id := lo + int64(v); id >= off && id < off+g.Meta.NumNodes[t] {
						col[v] = 1
					}
				}
				cols, names = append(cols, col), append(names, "ntype:"+name)
			}
		default:
			fetched, fnames, err := fetchNodeColumns(e.comm, g, lo, n, c)
			if err != nil {
				return 0, nil, nil, err
			}
			cols, names = append(cols, fetched...), append(names, fnames...)
		}
	}
	ncon := len(cols)
	vw := make([]int64, n*ncon)
	for k, col := range cols {
		for v := range n {
			vw[v*ncon+k] = col[v]
		}
	}
	return ncon, vw, names, nil
}

func constant(n int, x int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// fetchNodeColumns returns, for the n homogeneous node IDs from lo, the
// columns of a node array: a mask (1 where set, 0 also for node types
// without the mask) or METIS vertex weights (one column per constraint).
func fetchNodeColumns(c *collective.Comm, g *graphio.Graph, lo int64, n int, con constraint) ([][]int64, []string, error) {
	name := maskArray[con]
	if con == conVwgt {
		name = "vwgt"
	}
	width, err := arrayWidth(g, name)
	if err != nil {
		return nil, nil, err
	}
	type key struct{ T, ID int64 }
	keys := make([]key, n)
	for v := range n {
		t, id := g.Meta.NodeTypeOf(lo + int64(v))
		keys[v] = key{int64(t), id}
	}
	owner := func(k key) int { return g.Nodes.Books[k.T].Owner(k.ID) }
	var cols [][]int64
	var names []string
	for j := range width {
		col, err := collective.Request(c, keys, owner, func(_ int, ks []key) ([]int64, error) {
			out := make([]int64, len(ks))
			for i, k := range ks {
				arr := g.Nodes.Get(int(k.T), name)
				if arr == nil {
					continue // this node type has no such array: weight 0
				}
				from, _ := g.Nodes.Range(int(k.T))
				x := arr.Float64At(k.ID-from, int64(j))
				if con != conVwgt && x != 0 {
					x = 1
				}
				out[i] = int64(x)
			}
			return out, nil
		})
		if err != nil {
			return nil, nil, err
		}
		cols = append(cols, col)
		if width > 1 {
			names = append(names, fmt.Sprintf("%s[%d]", con, j))
		} else {
			names = append(names, string(con))
		}
	}
	return cols, names, nil
}

// arrayWidth returns the number of columns of the named node array, which
// must exist for at least one node type and have the same width for all.
func arrayWidth(g *graphio.Graph, name string) (int, error) {
	width := -1
	for t := range g.Meta.NodeTypes {
		if a := g.Nodes.Get(t, name); a != nil {
			w := int(a.RowLen())
			if width >= 0 && w != width {
				return 0, fmt.Errorf("node array %s has %d columns for one node type and %d for another", name, width, w)
			}
			width = w
		}
	}
	if width < 0 {
		return 0, fmt.Errorf("--balance needs node array %q, which %s does not have", name, g.Path)
	}
	return width, nil
}
