package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gnnrun/graphio"
)

// maskedNodes returns the input IDs of graph g's first node type whose
// node array mask is non-zero, read from the input's files.
func maskedNodes(t *testing.T, g, mask string) map[int64]bool {
	t.Helper()
	md, err := graphio.ReadMetadata(filepath.Join(g, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]bool{}
	var at int64
	for _, f := range md.NodeData[md.NodeType[0]][mask].Data {
		m, err := graphio.ReadNpy(filepath.Join(g, f))
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.Rows() {
			if m.Float64At(i, 0) != 0 {
				out[at+i] = true
			}
		}
		at += m.Rows()
	}
	return out
}

// splitRun is what testdata/split_trainer.py wrote for one rank.
type splitRun struct {
	Passes []struct {
		Split   string
		Epoch   int
		Batches []struct {
			Kind          string
			Epoch, Number int
			Padding       bool
			Seeds         []int64
		}
	}
	LenTrain int               `json:"len_train"`
	LenVal   int               `json:"len_val"`
	Refused  map[string]string `json:"refused"`
}

// TestTrainerSplitLoadersUnderMPI: a trainer holding loader("train") and
// loader("val") as DGL and PyG scripts do, breaking out of every training
// epoch after 2 batches and evaluating every other epoch, at 1 and 2
// ranks: every pass of the training loader is the next epoch (0..E-1 in
// order), with no batch from the broken epoch's rest; no training batch
// holds a val or test node and every batch holds only training nodes
// (checked against the input's masks); len() is the split's batches per
// epoch per rank; each evaluation pass holds every val node exactly once
// over the ranks and no other; misuses are refused with the reason.
func TestTrainerSplitLoadersUnderMPI(t *testing.T) {
	needPython(t, false)
	g := genSmall(t, false)
	parts := partsOf(t, g)
	train, val, test := maskedNodes(t, g, "train_mask"), maskedNodes(t, g, "val_mask"), maskedNodes(t, g, "test_mask")
	script, _ := filepath.Abs(filepath.Join("testdata", "split_trainer.py"))
	const epochs, batch, breakAfter = 4, 16, 2
	for _, np := range []int{1, 2} {
		out := t.TempDir()
		r := runGnnrun(t, np, 2*time.Minute, []string{"OUT_DIR=" + out, "BREAK_AFTER=2", "EVAL_EVERY=2"},
			"train", parts, "--fanouts", "4,3", "--batch-size", fmt.Sprint(batch), "--epochs", fmt.Sprint(epochs),
			"--eval", "val_mask,test_mask", "--eval-every", "2", "--ids", "--", pythonBin, script)
		if r.err != nil {
			t.Fatalf("P=%d: %v", np, r)
		}
		nb := (len(train) + batch - 1) / batch
		perRank := (nb + np - 1) / np
		valSeen := map[int]map[int64]int{} // epoch -> val node -> times
		for rk := range np {
			what := fmt.Sprintf("P=%d rank %d", np, rk)
			var run splitRun
			blob, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.json", rk)))
			if err == nil {
				err = json.Unmarshal(blob, &run)
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if run.LenTrain != perRank {
				t.Errorf("%s: len(train_loader) %d, want %d (%d training nodes in batches of %d over %d ranks)", what, run.LenTrain, perRank, len(train), batch, np)
			}
			for _, misuse := range []string{"unknown split", "eval before training", "eval inside training", "eval twice"} {
				if run.Refused[misuse] == "" || !strings.HasPrefix(run.Refused[misuse], "gnnrun: ") {
					t.Errorf("%s: %s was not refused with a gnnrun error: %q", what, misuse, run.Refused[misuse])
				}
			}
			trainEpoch := 0
			for _, p := range run.Passes {
				switch p.Split {
				case "train":
					if p.Epoch != trainEpoch {
						t.Fatalf("%s: training pass %d is epoch %d", what, trainEpoch, p.Epoch)
					}
					want := min(breakAfter, perRank)
					if p.Epoch == 0 {
						want = perRank - 1 // its first batch was taken before the recorded loop
					}
					if len(p.Batches) != want {
						t.Errorf("%s: training pass of epoch %d gave %d batches, want %d", what, p.Epoch, len(p.Batches), want)
					}
					trainEpoch++
				case "val":
					if p.Epoch != trainEpoch-1 || p.Epoch%2 != 1 {
						t.Errorf("%s: a val pass after training epoch %d is of epoch %d", what, trainEpoch-1, p.Epoch)
					}
					if valSeen[p.Epoch] == nil {
						valSeen[p.Epoch] = map[int64]int{}
					}
				}
				for _, b := range p.Batches {
					if b.Kind != p.Split || b.Epoch != p.Epoch {
						t.Fatalf("%s: the %s pass of epoch %d gave a %s batch of epoch %d", what, p.Split, p.Epoch, b.Kind, b.Epoch)
					}
					if len(b.Seeds) == 0 {
						t.Errorf("%s: an empty %s batch", what, b.Kind)
					}
					for _, v := range b.Seeds {
						switch {
						case b.Kind == "train" && (val[v] || test[v] || !train[v]):
							t.Fatalf("%s: training batch %d of epoch %d holds node %d (train %v, val %v, test %v)", what, b.Number, b.Epoch, v, train[v], val[v], test[v])
						case b.Kind == "val" && !val[v]:
							t.Fatalf("%s: val batch %d holds node %d, not a val node", what, b.Number, v)
						case b.Kind == "val":
							valSeen[b.Epoch][v]++
						}
					}
				}
			}
			if trainEpoch != epochs {
				t.Errorf("%s: %d training passes, want %d", what, trainEpoch, epochs)
			}
		}
		if len(valSeen) != epochs/2 {
			t.Errorf("P=%d: val passes after epochs %v, want every other", np, slices.Sorted(maps.Keys(valSeen)))
		}
		for e, seen := range valSeen {
			for v := range val {
				if seen[v] != 1 {
					t.Fatalf("P=%d: epoch %d's val passes hold node %d %d times over the ranks", np, e, v, seen[v])
				}
			}
		}
	}
}
