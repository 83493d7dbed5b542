package parmetis

import (
	"fmt"
	"strings"

	"gnnrun/collective"
	"gnnrun/graph"
)

// Constraint is a kind of balance constraint: what a vertex weighs in it.
type Constraint int

// The constraints.
const (
	// ConNodes: every vertex weighs 1.
	ConNodes Constraint = iota
	// ConEdges: a vertex weighs its in-degree in the input.
	ConEdges
	// ConNTypes: one constraint per node type, in which the vertices of
	// the type weigh 1 and the others 0.
	ConNTypes
	// ConTrain, ConVal, ConTest: a vertex weighs 1 where its node array
	// train_mask, val_mask or test_mask is set (0 for node types without
	// the array).
	ConTrain
	ConVal
	ConTest
	// ConVwgt: the vertex weights of a METIS file (node array "vwgt"), one
	// constraint per column.
	ConVwgt
)

var constraintNames = []string{"nodes", "edges", "ntypes", "train", "val", "test", "vwgt"}

// String returns the constraint's name, as ParseConstraints reads it.
func (c Constraint) String() string {
	if int(c) < len(constraintNames) {
		return constraintNames[c]
	}
	return fmt.Sprintf("Constraint(%d)", int(c))
}

// maskArrays are the node arrays the mask constraints read.
var maskArrays = map[Constraint]string{ConTrain: "train_mask", ConVal: "val_mask", ConTest: "test_mask"}

// ParseConstraints parses a comma-separated list of constraint names
// ("nodes,train,edges"). The empty string gives nil, the default (see
// Balance.Constraints). It fails on an unknown name or one given twice.
func ParseConstraints(s string) ([]Constraint, error) {
	if s == "" {
		return nil, nil
	}
	var out []Constraint
	seen := map[Constraint]bool{}
	for _, f := range strings.Split(s, ",") {
		name := strings.TrimSpace(f)
		c := Constraint(-1)
		for i, n := range constraintNames {
			if n == name {
				c = Constraint(i)
			}
		}
		if c < 0 {
			return nil, fmt.Errorf("parmetis: unknown constraint %q (want %s)", name, strings.Join(constraintNames, ", "))
		}
		if seen[c] {
			return nil, fmt.Errorf("parmetis: constraint %q given twice", name)
		}
		seen[c] = true
		out = append(out, c)
	}
	return out, nil
}

// Balance says what the vertices of a graph read by the ranks weigh: the
// constraints, and the graph's node types and counts and node data rows,
// which some constraints read.
type Balance struct {
	// Constraints lists the constraints in order; nil means ConVwgt when
	// the nodes have METIS vertex weights, else ConNodes.
	Constraints []Constraint
	Meta        *graph.Meta
	// Nodes holds this rank's rows of the node arrays (see graph.NodeData);
	// it may be nil when no constraint reads them.
	Nodes *graph.NodeData
}

// Weights are the vertex weights of a range of vertices.
type Weights struct {
	// NCon is the number of weights per vertex: one per constraint, and
	// per node type or per column for ConNTypes and ConVwgt.
	NCon int
	// Vwgt holds the NCon weights of each vertex, vertex by vertex.
	Vwgt []int64
	// Names names each weight: "nodes", "ntype:user", "vwgt[1]", ...
	Names []string
}

// Weights returns the weights of the len(indeg) vertices from homogeneous
// node ID lo, whose in-degrees in the input are indeg. It is collective:
// mask and METIS weight rows are fetched from the ranks that hold them. It
// fails when a constraint needs a node array the graph does not have, or
// one of different widths for different node types.
func (b Balance) Weights(c *collective.Comm, lo int64, indeg []int64) (*Weights, error) {
	n := len(indeg)
	var cols [][]int64
	var names []string
	for _, con := range b.constraints() {
		switch con {
		case ConNodes:
			cols, names = append(cols, constant(n, 1)), append(names, "nodes")
		case ConEdges:
			cols, names = append(cols, indeg), append(names, "edges")
		case ConNTypes:
			for t, name := range b.Meta.NodeTypes {
				cols, names = append(cols, b.typeColumn(t, lo, n)), append(names, "ntype:"+name)
			}
		default:
			fetched, fnames, err := b.fetchColumns(c, lo, n, con)
			if err != nil {
				return nil, err
			}
			cols, names = append(cols, fetched...), append(names, fnames...)
		}
	}
	w := &Weights{NCon: len(cols), Vwgt: make([]int64, n*len(cols)), Names: names}
	for k, col := range cols {
		for v := range n {
			w.Vwgt[v*w.NCon+k] = col[v]
		}
	}
	return w, nil
}

// constraints returns b.Constraints, or the default for the graph.
func (b Balance) constraints() []Constraint {
	switch {
	case b.Constraints != nil:
		return b.Constraints
	case b.Nodes != nil && len(b.Nodes.Arrays) > 0 && b.Nodes.Arrays[0]["vwgt"] != nil:
		return []Constraint{ConVwgt}
	default:
		return []Constraint{ConNodes}
	}
}

func constant(n int, x int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// typeColumn is 1 for the vertices of node type t among the n from lo.
func (b Balance) typeColumn(t int, lo int64, n int) []int64 {
	col := make([]int64, n)
	off := b.Meta.NodeOffset(t)
	for v := range col {
		if id := lo + int64(v); id >= off && id < off+b.Meta.NumNodes[t] {
			col[v] = 1
		}
	}
	return col
}

// fetchColumns returns, for the n homogeneous node IDs from lo, the
// columns of the node array con reads: a mask (1 where set, 0 also for
// node types without the mask) or METIS vertex weights (one column per
// constraint).
func (b Balance) fetchColumns(c *collective.Comm, lo int64, n int, con Constraint) ([][]int64, []string, error) {
	name := maskArrays[con]
	if con == ConVwgt {
		name = "vwgt"
	}
	width, err := b.arrayWidth(con, name)
	if err != nil {
		return nil, nil, err
	}
	type key struct{ T, ID int64 }
	keys := make([]key, n)
	for v := range n {
		t, id := b.Meta.NodeTypeOf(lo + int64(v))
		keys[v] = key{int64(t), id}
	}
	owner := func(k key) int { return b.Nodes.Books[k.T].Owner(k.ID) }
	var cols [][]int64
	var names []string
	for j := range width {
		col, err := collective.Request(c, keys, owner, func(_ int, ks []key) ([]int64, error) {
			out := make([]int64, len(ks))
			for i, k := range ks {
				arr := b.Nodes.Get(int(k.T), name)
				if arr == nil {
					continue // this node type has no such array: weight 0
				}
				from, _ := b.Nodes.Range(int(k.T))
				x := arr.Float64At(k.ID-from, int64(j))
				if con != ConVwgt && x != 0 {
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
			names = append(names, con.String())
		}
	}
	return cols, names, nil
}

// arrayWidth returns the number of columns of the named node array, which
// must exist for at least one node type and have the same width for all.
func (b Balance) arrayWidth(con Constraint, name string) (int, error) {
	width := -1
	for t := range b.Meta.NodeTypes {
		if b.Nodes == nil {
			break
		}
		if a := b.Nodes.Get(t, name); a != nil {
			w := int(a.RowLen())
			if width >= 0 && w != width {
				return 0, fmt.Errorf("parmetis: node array %s has %d columns for one node type and %d for another", name, width, w)
			}
			width = w
		}
	}
	if width < 0 {
		return 0, fmt.Errorf("parmetis: constraint %s needs node array %q, which the graph does not have", con, name)
	}
	return width, nil
}
