package parteval

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/rank"
)

// Input is a whole graph read into this process as gnnrun partition reads
// it (graphio, no normalisation), with the node arrays the constraints are
// built from. It is meant for graphs a test can hold: O(N + M) memory.
type Input struct {
	Meta   graph.Meta
	Format string // graphio's name of the format read: "chunked", "metis", ...
	Graph  Graph
	// arrays[t] holds node type t's arrays, every row.
	arrays []map[string]*graph.Tensor
}

// ReadInput reads the graph at path whole, on an in-process world of one
// rank; format "" guesses it from the path as gnnrun's --format does. Edge
// weights must be whole numbers, as the partitioner requires.
func ReadInput(path, format string) (*Input, error) {
	var in *Input
	err := rank.RunLocal(1, func(rc rank.Comm) error {
		g, err := graphio.Read(collective.MustNew(rc), path, graphio.InputFormat(format))
		if err != nil {
			return err
		}
		in, err = copyInput(g)
		if cerr := g.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("parteval: %w", err)
	}
	return in, nil
}

// copyInput copies what it needs out of g, whose node arrays may be memory
// maps that Close releases.
func copyInput(g *graphio.Graph) (*Input, error) {
	e := g.Edges
	in := &Input{Meta: g.Meta, Format: g.Format, Graph: Graph{
		N: g.Meta.TotalNodes(), Src: slices.Clone(e.Src), Dst: slices.Clone(e.Dst), Symmetric: g.Format == graphio.InMETIS,
	}}
	if e.Weight != nil {
		in.Graph.Weight = make([]int64, len(e.Weight))
		for i, w := range e.Weight {
			if float64(w) != math.Round(float64(w)) {
				return nil, fmt.Errorf("%s: edge %d (%d -> %d) has weight %v, not a whole number", g.Path, i, e.Src[i], e.Dst[i], w)
			}
			in.Graph.Weight[i] = int64(w)
		}
	}
	for t := range g.Meta.NodeTypes {
		arrays := map[string]*graph.Tensor{}
		if g.Nodes != nil {
			for name, ten := range g.Nodes.Arrays[t] {
				arrays[name] = &graph.Tensor{DType: ten.DType, Shape: slices.Clone(ten.Shape), Data: slices.Clone(ten.Data)}
			}
		}
		in.arrays = append(in.arrays, arrays)
	}
	return in, nil
}

// Constraints returns the weight columns of the balance constraints that
// spec lists, comma-separated, in gnnrun partition's --balance words and
// with its names:
//
//   - nodes: every node weighs 1;
//   - edges: a node weighs its in-degree, the number of edges listed into
//     it (self loops and repeats included; for a METIS file, whose arcs
//     list both ends, its degree);
//   - ntypes: one column per node type, 1 for the nodes of that type,
//     named "ntype:<type>";
//   - train, val, test: 1 where the node's train_mask, val_mask or
//     test_mask is non-zero, 0 for node types without that array;
//   - vwgt: the METIS vertex weights.
//
// A node array of several columns gives one constraint per column, named
// "<word>[j]". An empty spec means vwgt when the graph has METIS vertex
// weights, else nodes. It fails on an unknown or repeated word and on a
// missing array.
func (in *Input) Constraints(spec string) ([]Constraint, error) {
	words, err := in.words(spec)
	if err != nil {
		return nil, err
	}
	var out []Constraint
	for _, w := range words {
		var cs []Constraint
		switch w {
		case "nodes":
			cs = []Constraint{{Name: w, Weight: in.constant(1)}}
		case "edges":
			cs = []Constraint{{Name: w, Weight: in.inDegrees()}}
		case "ntypes":
			cs = in.typeColumns()
		case "train", "val", "test":
			cs, err = in.arrayColumns(w, w+"_mask", true)
		case "vwgt":
			cs, err = in.arrayColumns(w, "vwgt", false)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// words splits spec into constraint words, applying the default.
func (in *Input) words(spec string) ([]string, error) {
	if spec == "" {
		if len(in.arrays) > 0 && in.arrays[0]["vwgt"] != nil {
			return []string{"vwgt"}, nil
		}
		return []string{"nodes"}, nil
	}
	var out []string
	for _, f := range strings.Split(spec, ",") {
		w := strings.TrimSpace(f)
		switch w {
		case "nodes", "edges", "ntypes", "train", "val", "test", "vwgt":
		default:
			return nil, fmt.Errorf("parteval: unknown constraint %q (want nodes, edges, ntypes, train, val, test, vwgt)", w)
		}
		if slices.Contains(out, w) {
			return nil, fmt.Errorf("parteval: constraint %q given twice", w)
		}
		out = append(out, w)
	}
	return out, nil
}

func (in *Input) constant(x int64) []int64 {
	out := make([]int64, in.Graph.N)
	for v := range out {
		out[v] = x
	}
	return out
}

func (in *Input) inDegrees() []int64 {
	deg := make([]int64, in.Graph.N)
	for _, d := range in.Graph.Dst {
		deg[d]++
	}
	return deg
}

func (in *Input) typeColumns() []Constraint {
	var out []Constraint
	for t, name := range in.Meta.NodeTypes {
		col := make([]int64, in.Graph.N)
		off := in.Meta.NodeOffset(t)
		for i := range in.Meta.NumNodes[t] {
			col[off+i] = 1
		}
		out = append(out, Constraint{Name: "ntype:" + name, Weight: col})
	}
	return out
}

// arrayColumns turns the node array name into one constraint per column:
// the values themselves, or 1 where non-zero when mask is set. Node types
// without the array weigh 0; those with it must agree on its width.
func (in *Input) arrayColumns(word, name string, mask bool) ([]Constraint, error) {
	width := int64(-1)
	for t, arrays := range in.arrays {
		if a := arrays[name]; a != nil {
			if width >= 0 && a.RowLen() != width {
				return nil, fmt.Errorf("parteval: node array %s has %d columns for one node type and %d for another", name, width, a.RowLen())
			}
			if a.Rows() != in.Meta.NumNodes[t] {
				return nil, fmt.Errorf("parteval: node array %s of type %s has %d rows for %d nodes", name, in.Meta.NodeTypes[t], a.Rows(), in.Meta.NumNodes[t])
			}
			width = a.RowLen()
		}
	}
	if width < 0 {
		return nil, fmt.Errorf("parteval: constraint %s needs node array %q, which the graph does not have", word, name)
	}
	out := make([]Constraint, width)
	for j := range out {
		out[j] = Constraint{Name: word, Weight: make([]int64, in.Graph.N)}
		if width > 1 {
			out[j].Name = fmt.Sprintf("%s[%d]", word, j)
		}
		for t, arrays := range in.arrays {
			if a := arrays[name]; a != nil {
				fillColumn(out[j].Weight[in.Meta.NodeOffset(t):], a, int64(j), mask)
			}
		}
	}
	return out, nil
}

// fillColumn writes column j of a into col, row by row.
func fillColumn(col []int64, a *graph.Tensor, j int64, mask bool) {
	for i := range a.Rows() {
		x := a.Float64At(i, j)
		switch {
		case mask && x != 0:
			col[i] = 1
		case !mask:
			col[i] = int64(x)
		}
	}
}
