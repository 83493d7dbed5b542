package prefetch

import (
	"slices"
	"strings"
	"testing"

	"gnnrun/graph"
	"gnnrun/shard"
)

// Node types' feature rows share a device row: one dtype, vectors padded
// to the widest, featureless types zero; anything else fails naming the
// types.
func TestRowLayout(t *testing.T) {
	f4, i8 := graph.Float32, graph.Int64
	types := []string{"user", "item", "tag"}
	for _, c := range []struct {
		name      string
		dtypes    []graph.DType
		shapes    [][]int64
		shape     []int64
		bytes     int
		typeBytes []int
		want      string // error
	}{
		{name: "alike", dtypes: []graph.DType{f4, f4, f4}, shapes: [][]int64{{8}, {8}, {8}}, shape: []int64{8}, bytes: 32, typeBytes: []int{32, 32, 32}},
		{name: "widths", dtypes: []graph.DType{f4, f4, f4}, shapes: [][]int64{{3}, {8}, {5}}, shape: []int64{8}, bytes: 32, typeBytes: []int{12, 32, 20}},
		{name: "featureless", dtypes: []graph.DType{f4, 0, f4}, shapes: [][]int64{{3}, nil, {5}}, shape: []int64{5}, bytes: 20, typeBytes: []int{12, 0, 20}},
		{name: "matrices alike", dtypes: []graph.DType{f4, f4, 0}, shapes: [][]int64{{2, 3}, {2, 3}, nil}, shape: []int64{2, 3}, bytes: 24, typeBytes: []int{24, 24, 0}},
		{name: "dtypes", dtypes: []graph.DType{f4, i8, f4}, shapes: [][]int64{{3}, {3}, {3}}, want: "for user but int64 for item"},
		{name: "matrices", dtypes: []graph.DType{f4, f4, f4}, shapes: [][]int64{{2, 3}, {3}, {3}}, want: "must be vectors"},
		{name: "none", dtypes: []graph.DType{0, 0, 0}, shapes: [][]int64{nil, nil, nil}, want: "no node type"},
	} {
		lay, err := newRowLayout("feat", types, c.dtypes, c.shapes)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(lay.shape, c.shape) || lay.bytes != c.bytes || !slices.Equal(lay.typeBytes, c.typeBytes) || lay.dtype != f4 {
			t.Errorf("%s: rows %s%v of %d bytes, types' %v; want %v of %d, %v", c.name, lay.dtype, lay.shape, lay.bytes, lay.typeBytes, c.shape, c.bytes, c.typeBytes)
		}
		if blank := slices.ContainsFunc(c.shapes, func(s []int64) bool { return s == nil }); lay.anyBlank != blank {
			t.Errorf("%s: anyBlank %v", c.name, lay.anyBlank)
		}
		if c.shapes[0][0] = 99; lay.shape[0] == 99 { // the layout keeps its own shape
			t.Errorf("%s: the layout's shape changed with the input's", c.name)
		}
	}
}

// A node's type ID is its rank among its type's nodes in new-ID order,
// from the book alone: every type's IDs are 0..n-1, each once, ascending
// with the node ID.
func TestTypeIndex(t *testing.T) {
	counts := [][]int64{{3, 1}, {0, 2}, {4, 0}, {2, 3}} // per partition, per type
	b := shard.NewBook(counts, [][]int64{{0}, {0}, {0}, {0}})
	x := newTypeIndex(b, 2)
	if !slices.Equal(x.count, []int64{9, 6}) {
		t.Fatalf("type counts %v, want [9 6]", x.count)
	}
	nodes := make([]int64, b.NumNodes())
	for v := range nodes {
		nodes[v] = int64(v)
	}
	types, ids := x.rowTypes(nodes)
	next := []int64{0, 0}
	for v := range nodes {
		if want := int16(b.NodeType(int64(v))); types[v] != want || ids[v] != next[want] {
			t.Fatalf("node %d: type %d ID %d, want type %d ID %d", v, types[v], ids[v], want, next[want])
		}
		next[types[v]]++
	}
}

// Classify's copies of featureless nodes become zero rows; the nodes
// held already keep theirs.
func TestZeroFeatureless(t *testing.T) {
	b := shard.NewBook([][]int64{{4, 4}}, [][]int64{{0}}) // nodes 0..3 users, 4..7 items
	lay, err := newRowLayout("feat", []string{"user", "item"}, []graph.DType{graph.Float32, 0}, [][]int64{{2}, nil})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []int64{0, 5, 1, 6, 7}
	up, err := newClassifier().Classify(Slots{6, 3}, nodes, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	blank := lay.zeroFeatureless(up, nodes, b)
	var fetched []int64
	for _, i := range up.Fetch {
		fetched = append(fetched, nodes[i])
	}
	if blank != 3 || !slices.Equal(fetched, []int64{0, 1}) || up.Fetched != 2 || up.Zero != 2 || len(up.ZeroSlots) != 2 ||
		up.Reused+up.Hot+up.Fetched+up.Zero != up.Size {
		t.Errorf("featureless %d, fetched %v (%d), zeroed %d at %v, reused %d of %d; want 3, [0 1], 2 zeroed (5, 7), 1 reused (6)",
			blank, fetched, up.Fetched, up.Zero, up.ZeroSlots, up.Reused, up.Size)
	}
	for k, i := range up.Fetch {
		if up.FetchSlots[k] != up.SlotOf[i] {
			t.Errorf("fetch %d: slot %d, node's slot %d", k, up.FetchSlots[k], up.SlotOf[i])
		}
	}
}
