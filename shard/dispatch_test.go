package shard

import (
	"fmt"
	"path/filepath"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
)

// TestDispatchMatchesInput dispatches small homogeneous and two-type
// graphs into K = 1, 2, 3, 4, 8 partitions on 1, 2 and 4 ranks (K
// independent of the rank count), checks every partition against the
// input, and checks that every rank count writes the same bytes.
func TestDispatchMatchesInput(t *testing.T) {
	for _, hetero := range []bool{false, true} {
		g := genGraph(t, 6, hetero) // 64 users (and 16 items: some partitions have none)
		in := readInput(t, g)
		for _, k := range []int{1, 2, 3, 4, 8} {
			asg := writeAssignment(t, g, k, uint64(k))
			ref := newIDOrder(&in.m, k, randomParts(&in.m, k, uint64(k)))
			var first string
			root := t.TempDir()
			for _, p := range []int{1, 2, 4} {
				name := fmt.Sprintf("hetero=%v/K=%d/P=%d", hetero, k, p)
				t.Run(name, func(t *testing.T) {
					out := filepath.Join(root, fmt.Sprintf("parts%d", p))
					res := dispatch(t, p, g, asg, out)
					checkPartitions(t, in, ref, out)
					var cut int64
					for _, c := range res.Cut {
						cut += c
					}
					if k == 1 && cut != 0 {
						t.Errorf("one partition has an edge cut of %d", cut)
					}
					if first == "" {
						first = out
					} else {
						sameTree(t, first, out)
					}
				})
			}
		}
	}
}

// TestDispatchWithoutEdgeArrays covers graphs with node arrays only, in
// many rounds: the shuffles share buffers, and none may leak between them.
func TestDispatchWithoutEdgeArrays(t *testing.T) {
	g := genPlain(t, 7, true)
	in := readInput(t, g)
	asg := writeAssignment(t, g, 3, 4)
	root := t.TempDir()
	for _, p := range []int{1, 3} {
		out := filepath.Join(root, fmt.Sprintf("parts%d", p))
		dispatch(t, p, g, asg, out, Budget(256))
		checkPartitions(t, in, newIDOrder(&in.m, 3, randomParts(&in.m, 3, 4)), out)
		if p > 1 {
			sameTree(t, filepath.Join(root, "parts1"), out)
		}
	}
}

// TestDispatchEmptyPartitions uses an assignment that leaves partitions
// without nodes (K = 5, parts 1 and 3 unused): their files are empty
// arrays, and serving and inspecting them works.
func TestDispatchEmptyPartitions(t *testing.T) {
	g := genGraph(t, 6, true)
	in := readInput(t, g)
	part := func(ty int, i int64) int32 { return []int32{0, 2, 4}[graph.Mix64(uint64(ty)<<40^uint64(i))%3] }
	dir := filepath.Join(t.TempDir(), "asg")
	m := in.m
	world(t, 1, func(c *collective.Comm) error {
		parts := make([]int32, 0, m.TotalNodes())
		for h := range m.TotalNodes() {
			ty, i := m.NodeTypeOf(h)
			parts = append(parts, part(ty, i))
		}
		_, err := graphio.WriteAssignment(c, dir, &m, 0, parts, 5)
		return err
	})
	out := filepath.Join(t.TempDir(), "parts")
	res := dispatch(t, 2, g, dir, out)
	if res.Config.Parts[1].InnerNodes != 0 || res.Config.Parts[3].Edges != 0 {
		t.Fatalf("partitions 1 and 3 are not empty: %+v", res.Config.Parts)
	}
	ref := newIDOrder(&in.m, 5, part)
	checkPartitions(t, in, ref, out)
	rep, err := inspect(t, 2, out, g)
	if err != nil || rep.NumViolations != 0 {
		t.Fatalf("inspect: %v %v", err, rep.Violations)
	}
	pullAll(t, 5, out, in, ref, "user", "feat", randomIDs(50))
}
