package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// heteroGraph generates a two-type graph with gen's flags added to
// --hetero --reverse (users, items; follows, buys, bought_by), partitions
// it into K = 4 and dispatches it; it returns the graph and the
// partitions.
func heteroGraph(t *testing.T, flags ...string) (g, parts string) {
	t.Helper()
	g = filepath.Join(t.TempDir(), "graph")
	mustRun(t, 2, append([]string{"gen", "--hetero", "--reverse", "--out", g}, flags...)...)
	return g, partsOf(t, g)
}

// heteroRun is what testdata/hetero_trainer.py wrote for one rank.
type heteroRun struct {
	Batches       int
	CheckedEdges  int `json:"checked_edges"`
	BadETypes     int `json:"bad_etypes"`
	CheckedRows   int `json:"checked_rows"`
	BadNTypes     int `json:"bad_ntypes"`
	UnreachedRows int `json:"unreached_rows"`
	BadRows       int `json:"bad_rows"`
	Errors        []string
	TypeIDs       [][3]int64 `json:"type_ids"`
}

// TestTrainHeteroBatchesUnderMPI: on two-type graphs whose items have
// features of another width than the users' (3 and 4 columns) or none,
// at P = 1 and 2, every batch's edge types, rows' node types and rows'
// features equal the input's (testdata/hetero_trainer.py checks each
// edge against the input's edge files through --ids), every row is
// reached from the seeds or an edge, and input_type_id gives every node
// one ID below its type's count, a different one for each node of a type,
// on every rank.
func TestTrainHeteroBatchesUnderMPI(t *testing.T) {
	needPython(t, true)
	script, _ := filepath.Abs(filepath.Join("testdata", "hetero_trainer.py"))
	common := []string{"--scale", "8", "--edge-factor", "8", "--feat-dim", "4", "--classes", "3", "--seed", "4"}
	for _, c := range []struct {
		item string
		nps  []int
	}{{"3", []int{1, 2}}, {"-1", []int{2}}} {
		g, parts := heteroGraph(t, append(common, "--item-feat-dim", c.item)...)
		for _, np := range c.nps {
			what := fmt.Sprintf("item features %s P=%d", c.item, np)
			out := t.TempDir()
			r := runGnnrun(t, np, 2*time.Minute, []string{"OUT_DIR=" + out, "GRAPH=" + g}, "train", parts,
				"--fanouts", "4,3", "--batch-size", "16", "--epochs", "2", "--seed", "5", "--ids", "--", pythonBin, script)
			if r.err != nil {
				t.Fatalf("%s: %v", what, r)
			}
			ids := map[[2]int64]int64{}   // (type, input ID) -> type ID
			owner := map[[2]int64]int64{} // (type, type ID) -> input ID
			for rk := range np {
				blob, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.json", rk)))
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				var h heteroRun
				if err := json.Unmarshal(blob, &h); err != nil {
					t.Fatal(err)
				}
				if len(h.Errors) > 0 || h.Batches == 0 || h.CheckedEdges == 0 || h.BadETypes+h.BadNTypes+h.BadRows+h.UnreachedRows != 0 {
					t.Fatalf("%s rank %d: %+v", what, rk, h)
				}
				for _, x := range h.TypeIDs {
					typ, v, id := x[0], x[1], x[2]
					count := []int64{256, 64}[typ]
					if was, ok := ids[[2]int64{typ, v}]; (ok && was != id) || id < 0 || id >= count {
						t.Fatalf("%s: node %d of type %d has type ID %d (and %d; %d nodes)", what, v, typ, id, was, count)
					}
					if was, ok := owner[[2]int64{typ, id}]; ok && was != v {
						t.Fatalf("%s: type ID %d of type %d is nodes %d and %d", what, id, typ, v, was)
					}
					ids[[2]int64{typ, v}], owner[[2]int64{typ, id}] = id, v
				}
			}
		}
	}
}

// TestTrainRGCNLearnsUnderMPI trains examples/rgcn.py on a two-type graph
// whose users' 4 classes are planted in both relations into users
// (follows, and bought_by from items of the user's class) and whose items
// have no features (the model learns their embeddings), at P = 1 and 2.
// Chance is 0.25; at P = 2 the features alone give 0.42 (every edge
// type's fanouts 0), bought_by alone 0.49, follows alone 0.76, both 0.87
// (0.88 at P = 1): a test accuracy above 0.8 means both relations reach
// the model, typed, and the items' embeddings learn. At P = 2 it also
// runs on the GPU's code path (--device cpu --mirror: the features in a
// persistent tensor each batch's update keeps current), which must score
// exactly as the host views do.
func TestTrainRGCNLearnsUnderMPI(t *testing.T) {
	needPython(t, true)
	_, parts := heteroGraph(t, "--scale", "12", "--edge-factor", "8", "--feat-dim", "16", "--item-feat-dim", "-1",
		"--classes", "4", "--planted", "0.6", "--seed", "3")
	example, _ := filepath.Abs(filepath.Join("..", "..", "examples", "rgcn.py"))
	var host float64
	for _, c := range []struct {
		np     int
		mirror bool
	}{{1, false}, {2, false}, {2, true}} {
		np := c.np
		args := []string{"train", parts, "--fanouts", "10,10", "--batch-size", "128", "--epochs", "6", "--seed", "2",
			"--", pythonBin, example, "--lr", "0.02"}
		if c.mirror {
			args = append(args, "--device", "cpu", "--mirror")
		}
		r := mustRun(t, np, args...)
		var res struct {
			TestAcc float64 `json:"test_acc"`
			Epochs  int     `json:"epochs"`
			Ranks   int     `json:"ranks"`
		}
		lastJSON(t, r.stdout, &res)
		t.Logf("P=%d: %+v", np, res)
		if res.Epochs != 6 || res.Ranks != np || res.TestAcc < 0.8 {
			t.Errorf("P=%d: %+v; want 6 epochs on %d ranks and a test accuracy above 0.8\n%s", np, res, np, r.stdout)
		}
		if c.mirror && res.TestAcc != host {
			t.Errorf("P=%d --mirror: test accuracy %v, the host views' %v", np, res.TestAcc, host)
		}
		host = res.TestAcc
	}
}
