package graphio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
)

// assignmentMeta is a two-type graph: 7 users, 3 items.
func assignmentMeta() *graph.Meta {
	return &graph.Meta{Name: "g", NodeTypes: []string{"user", "item"}, NumNodes: []int64{7, 3},
		EdgeTypes: []graph.EdgeType{{Src: "user", Rel: "buys", Dst: "item"}}, NumEdges: []int64{0}}
}

// readParts reads the assignment at path on p ranks and returns, per node
// type, the parts of all nodes gathered in type-wise order.
func readParts(t *testing.T, p int, path string, m *graph.Meta, k int) (int, [][]int32) {
	t.Helper()
	var mu sync.Mutex
	gotK := 0
	all := make([][]int32, len(m.NodeTypes))
	world(t, p, func(c *collective.Comm) error {
		a, err := ReadAssignment(c, path, m, k)
		if err != nil {
			return err
		}
		for ty := range m.NodeTypes {
			lo, hi := a.Books[ty].Range(c.Rank())
			if int64(len(a.Parts[ty])) != hi-lo {
				return fmt.Errorf("rank %d type %d holds %d parts for range [%d,%d)", c.Rank(), ty, len(a.Parts[ty]), lo, hi)
			}
			whole, _, err := collective.Allgatherv(c, a.Parts[ty])
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				mu.Lock()
				all[ty] = whole
				mu.Unlock()
			}
		}
		if c.Rank() == 0 {
			gotK = a.NumParts
		}
		return nil
	})
	return gotK, all
}

func TestAssignmentRoundTrip(t *testing.T) {
	m := assignmentMeta()
	want := []int32{0, 2, 1, 1, 0, 2, 2 /* users */, 1, 0, 2 /* items */}
	dir := filepath.Join(t.TempDir(), "asg")
	for _, wp := range []int{1, 3} {
		world(t, wp, func(c *collective.Comm) error {
			b := graph.EvenBook(m.TotalNodes(), c.Size())
			lo, hi := b.Range(c.Rank())
			_, err := WriteAssignment(c, dir, m, lo, want[lo:hi], 3)
			return err
		})
		for _, p := range []int{1, 2, 4} {
			k, got := readParts(t, p, dir, m, 0)
			if k != 3 {
				t.Errorf("written on %d, read on %d ranks: K = %d, want 3", wp, p, k)
			}
			flat := append(append([]int32(nil), got[0]...), got[1]...)
			if fmt.Sprint(flat) != fmt.Sprint(want) {
				t.Errorf("written on %d, read on %d ranks: parts %v, want %v", wp, p, flat, want)
			}
		}
	}
}

func TestAssignmentPartFile(t *testing.T) {
	m := &graph.Meta{Name: "h", NodeTypes: []string{"_N"}, NumNodes: []int64{5},
		EdgeTypes: []graph.EdgeType{{Src: "_N", Rel: "_E", Dst: "_N"}}, NumEdges: []int64{0}}
	path := filepath.Join(t.TempDir(), "h.part")
	// CRLF line ends and blanks around the numbers are accepted.
	if err := os.WriteFile(path, []byte("3\r\n 0\n1 \n3\n2"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2, 3} {
		k, got := readParts(t, p, path, m, 0)
		if k != 4 || fmt.Sprint(got[0]) != "[3 0 1 3 2]" {
			t.Errorf("%d ranks: K %d, parts %v", p, k, got[0])
		}
	}
	// With K stated, a part above it is caught.
	err := worldErr(2, func(c *collective.Comm) error {
		_, err := ReadAssignment(c, path, m, 3)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "h.part:1: part 3 is outside [0, 3)") {
		t.Errorf("part above K: %v", err)
	}
	// A single file cannot assign two node types.
	err = worldErr(1, func(c *collective.Comm) error {
		_, err := ReadAssignment(c, path, assignmentMeta(), 0)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "one node type") {
		t.Errorf("part file for a two-type graph: %v", err)
	}
}

func TestAssignmentBadInput(t *testing.T) {
	m := assignmentMeta()
	good := map[string]string{
		"user.txt":            "0\n1\n2\n0\n1\n2\n0\n",
		"item.txt":            "1\n1\n0\n",
		"partition_meta.json": `{"algo_name": "metis", "num_parts": 3, "version": "1.0.0"}`,
	}
	cases := []struct {
		name  string
		edit  map[string]string // file -> content; "" deletes it
		wants string
	}{
		{"part above K", map[string]string{"user.txt": "0\n1\n2\n0\n3\n2\n0\n"}, "user.txt:5: part 3 is outside [0, 3)"},
		{"negative part", map[string]string{"item.txt": "1\n-1\n0\n"}, "item.txt:2: part -1 is negative"},
		{"not a number", map[string]string{"item.txt": "1\nx\n0\n"}, `item.txt:2: "x" is not a part number`},
		{"empty line", map[string]string{"user.txt": "0\n1\n\n0\n1\n2\n0\n"}, "user.txt:3: empty line"},
		{"too few lines", map[string]string{"user.txt": "0\n1\n2\n0\n1\n2\n"}, `user.txt: has 6 lines, but node type "user" has 7 nodes`},
		{"too many lines", map[string]string{"item.txt": "1\n1\n0\n2\n"}, `item.txt: has 4 lines, but node type "item" has 3 nodes`},
		{"missing ntype file", map[string]string{"item.txt": ""}, "item.txt: partition assignment: open: no such file"},
		{"missing meta", map[string]string{"partition_meta.json": ""}, "partition_meta.json: open: no such file"},
		{"wrong version", map[string]string{"partition_meta.json": `{"algo_name": "metis", "num_parts": 3, "version": "2.0.0"}`}, `partition_meta.json: version "2.0.0" is not supported (want "1.0.0")`},
		{"bad json", map[string]string{"partition_meta.json": `{"num_parts": 3,`}, "partition_meta.json: not valid JSON"},
		{"zero parts", map[string]string{"partition_meta.json": `{"algo_name": "metis", "num_parts": 0, "version": "1.0.0"}`}, "num_parts is 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range good {
				if v, ok := tc.edit[name]; ok {
					if v == "" {
						continue
					}
					text = v
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []int{1, 3} {
				var mu sync.Mutex
				var msgs []string
				err := worldErr(p, func(c *collective.Comm) error {
					_, err := ReadAssignment(c, dir, m, 0)
					if err != nil {
						mu.Lock()
						msgs = append(msgs, err.Error())
						mu.Unlock()
					}
					return err
				})
				if err == nil {
					t.Fatalf("%d ranks: accepted", p)
				}
				if len(msgs) != p {
					t.Errorf("%d ranks: only %d of them failed: %v", p, len(msgs), msgs)
				}
				for _, msg := range msgs {
					if !strings.Contains(msg, tc.wants) {
						t.Errorf("%d ranks: error %q does not contain %q", p, msg, tc.wants)
					}
				}
			}
		})
	}
}
