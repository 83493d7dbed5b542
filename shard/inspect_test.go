package shard

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gnnrun/collective"
	"gnnrun/graphio"
	"gnnrun/parteval"
)

// inspect runs Inspect on p ranks, with the input graph when graphDir is
// not empty.
func inspect(t *testing.T, p int, out, graphDir string) (*InspectReport, error) {
	t.Helper()
	var rep *InspectReport
	err := worldErr(p, func(c *collective.Comm) error {
		var g *graphio.Graph
		if graphDir != "" {
			var err error
			if g, err = graphio.Read(c, graphDir); err != nil {
				return err
			}
			defer g.Close()
		}
		r, err := Inspect(c, out, g, Budget(1<<10))
		if c.Rank() == 0 {
			rep = r
		}
		return err
	})
	return rep, err
}

func TestInspectSound(t *testing.T) {
	for _, hetero := range []bool{false, true} {
		g := genGraph(t, 7, hetero)
		for _, k := range []int{1, 3, 8} {
			out := filepath.Join(t.TempDir(), "parts")
			asg := writeAssignment(t, g, k, 11)
			res := dispatch(t, 2, g, asg, out)
			measured, err := parteval.EvaluateFiles(g, asg, parteval.Measure("nodes,edges,train"))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []int{1, 2, 4} {
				for _, withInput := range []string{"", g} {
					rep, err := inspect(t, p, out, withInput)
					if err != nil {
						t.Fatal(err)
					}
					if rep.NumViolations != 0 {
						t.Fatalf("hetero=%v K=%d P=%d: %d violations: %v", hetero, k, p, rep.NumViolations, rep.Violations)
					}
					for i, pr := range rep.Parts {
						if pr.Halo != res.Halo[i] || pr.Cut != res.Cut[i] || pr.Train < 0 {
							t.Errorf("partition %d: inspect %+v, dispatch halo %d cut %d", i, pr, res.Halo[i], res.Cut[i])
						}
					}
					checkInspectCounts(t, rep, measured)
				}
			}
		}
	}
}

// checkInspectCounts fails unless inspect's per-partition counts and
// balance are those parteval measures from the input and the assignment:
// a partition's inner nodes, its in-edges (the in-degrees of its nodes),
// its training nodes, and the cut (in-edges from a halo node, summed).
func checkInspectCounts(t *testing.T, rep *InspectReport, m *parteval.Result) {
	t.Helper()
	nodes, edges, train := m.Of("nodes"), m.Of("edges"), m.Of("train")
	var cut int64
	for i, pr := range rep.Parts {
		if pr.Inner != nodes.Parts[i] || pr.Edges != edges.Parts[i] || pr.Train != train.Parts[i] {
			t.Errorf("partition %d: inspect counts %d nodes, %d edges, %d training nodes; the assignment gives it %d, %d, %d",
				i, pr.Inner, pr.Edges, pr.Train, nodes.Parts[i], edges.Parts[i], train.Parts[i])
		}
		cut += pr.Cut
	}
	if cut != m.Cut {
		t.Errorf("inspect counts a cut of %d, the assignment's is %d", cut, m.Cut)
	}
	nb, eb, tb := rep.Balance()
	for _, c := range []struct {
		got  float64
		want *parteval.Balance
	}{{nb, nodes}, {eb, edges}, {tb, train}} {
		if math.Abs(c.got-c.want.Imbalance) > 1e-9 {
			t.Errorf("inspect's %s balance is %.6f, the assignment's %.6f", c.want.Name, c.got, c.want.Imbalance)
		}
	}
}

// corrupt rewrites element i of a partition's .npy file with edit.
func corrupt(t *testing.T, path string, i int64, size int, edit func([]byte)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := graphio.ReadNpyHeader(strings.NewReader(string(raw)), path)
	if err != nil {
		t.Fatal(err)
	}
	at := h.Offset + i*int64(size)
	edit(raw[at : at+int64(size)])
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInspectFindsCorruption(t *testing.T) {
	g := genGraph(t, 7, true)
	asg := writeAssignment(t, g, 3, 2)
	put64 := func(v int64) func([]byte) { return func(b []byte) { binary.LittleEndian.PutUint64(b, uint64(v)) } }
	cases := []struct {
		name, file string
		elem       int64
		size       int
		edit       func([]byte)
		needInput  bool
		wants      string
	}{
		{"duplicate orig node", "part1/orig_nids.npy", 1, 8, put64(0), false, "partitions (orig_nids is not a permutation)"},
		{"feature row", "part0/node_feat/user/feat.npy", 5, 4, func(b []byte) { b[0] ^= 1 }, true, "rows differ from the input's"},
		{"feature byte, no input", "part0/node_feat/user/feat.npy", 5, 4, func(b []byte) { b[0] ^= 1 }, false, "part0/node_feat/user/feat.npy: checksum crc32c:"},
		{"edge row", "part2/edge_feat/user:follows:user/w.npy", 3, 4, func(b []byte) { b[1] ^= 1 }, true, "rows differ from the input's"},
		{"edge source", "part0/indices.npy", 7, 4, func(b []byte) { binary.LittleEndian.PutUint32(b, binary.LittleEndian.Uint32(b)^1) }, true, "endpoints differ from the input edge's"},
		{"orig edge ID", "part2/orig_eids.npy", 0, 8, put64(1 << 40), false, "outside"},
		{"local2global", "part1/local2global.npy", 0, 8, put64(-5), false, "local2global[0] = -5"},
		{"edge ID", "part0/edge_ids.npy", 2, 8, put64(0), false, "edge ID 0 appears twice"},
		{"inner flag", "part1/inner_node.npy", 0, 1, func(b []byte) { b[0] = 0 }, false, "inner_node[0] = false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "parts")
			dispatch(t, 1, g, asg, out)
			corrupt(t, filepath.Join(out, tc.file), tc.elem, tc.size, tc.edit)
			in := ""
			if tc.needInput {
				in = g
			}
			rep, err := inspect(t, 3, out, in)
			if err != nil {
				t.Fatal(err)
			}
			if rep.NumViolations == 0 || !strings.Contains(strings.Join(rep.Violations, "\n"), tc.wants) {
				t.Fatalf("want a violation %q, got %d: %v", tc.wants, rep.NumViolations, rep.Violations)
			}
		})
	}
	t.Run("compressed byte, no input", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "parts")
		dispatch(t, 1, g, asg, out, Compress(true))
		path := filepath.Join(out, "part1/edge_feat/user:follows:user/w.npy.zst")
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		raw[len(raw)/2] ^= 0x10
		os.WriteFile(path, raw, 0o644)
		rep, err := inspect(t, 2, out, "")
		// The flipped byte may break decompression (an error naming the
		// file) or not (a checksum violation naming it).
		msg := fmt.Sprint(err)
		if rep != nil {
			msg += strings.Join(rep.Violations, "\n")
		}
		if !strings.Contains(msg, "part1/edge_feat/user:follows:user/w.npy.zst") {
			t.Fatalf("the flipped byte was not traced to its file: err %v, report %+v", err, rep)
		}
	})
	t.Run("ranges", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "parts")
		dispatch(t, 1, g, asg, out)
		cfg := filepath.Join(out, "rmat7.json")
		raw, _ := os.ReadFile(cfg)
		var cfgText = strings.Replace(string(raw), `"user": [`+"\n      [\n        0,", `"user": [`+"\n      [\n        1,", 1)
		if cfgText == string(raw) {
			t.Fatal("could not edit the config")
		}
		os.WriteFile(cfg, []byte(cfgText), 0o644)
		_, err := inspect(t, 2, out, "")
		if err == nil || !strings.Contains(err.Error(), "do not tile") {
			t.Fatalf("want a tiling error, got %v", err)
		}
	})
}
