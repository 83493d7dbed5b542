package sampler

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"gnnrun/collective"
	"gnnrun/shard"
)

// planOn makes a plan on p ranks and returns every rank's tasks of epochs
// 0 and 1 and its stats.
func planOn(t *testing.T, f *fixture, p int, mk func(c *collective.Comm, s *shard.Served) (*Plan, error)) ([][]Task, []PlanStats) {
	t.Helper()
	var mu sync.Mutex
	tasks := make([][]Task, p)
	stats := make([]PlanStats, p)
	world(t, p, func(c *collective.Comm) error {
		s, err := shard.Serve(c, f.Parts)
		if err != nil {
			return err
		}
		defer s.Close()
		pl, err := mk(c, s)
		if err != nil {
			return err
		}
		got := append(pl.Epoch(9, 0), pl.Epoch(9, 1)...)
		mu.Lock()
		tasks[c.Rank()], stats[c.Rank()] = got, pl.Stats()
		mu.Unlock()
		return nil
	})
	return tasks, stats
}

// byNumber indexes tasks by (epoch, number), failing on a repeat.
func byNumber(t *testing.T, tasks [][]Task) map[[2]int64]Task {
	t.Helper()
	out := map[[2]int64]Task{}
	for _, ts := range tasks {
		for _, k := range ts {
			key := [2]int64{int64(k.Epoch), k.Number}
			if _, dup := out[key]; dup {
				t.Fatalf("batch %d of epoch %d given twice", k.Number, k.Epoch)
			}
			out[key] = k
		}
	}
	return out
}

// The split: at 1 rank an epoch's batches hold every training node once;
// at any rank count every rank runs as many batches, fewer than P are
// dropped, and batch b is the same as at 1 rank; at P = K most seeds are
// the rank's own; epochs differ.
func TestNodePlan(t *testing.T) {
	f := getFixture(t, true, 4)
	mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) {
		return NewNodePlan(c, s, "user", "train_mask", 10)
	}
	one, st := planOn(t, f, 1, mk)
	ref := byNumber(t, one)
	for e := range 2 {
		var seen []int64
		for b := range st[0].Batches {
			seen = append(seen, ref[[2]int64{int64(e), b}].Seeds...)
		}
		var want []int64
		for v, on := range f.Train {
			if on {
				want = append(want, v)
			}
		}
		var got []int64
		for _, v := range seen {
			got = append(got, f.InputNode(t, v))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d: the batches hold %d seeds, not the %d training nodes once each", e, len(got), len(want))
		}
	}
	if slices.Equal(ref[[2]int64{0, 0}].Seeds, ref[[2]int64{1, 0}].Seeds) {
		t.Error("batch 0 is the same in epochs 0 and 1")
	}
	for _, p := range []int{2, 4, 8} {
		tasks, stats := planOn(t, f, p, mk)
		got := byNumber(t, tasks)
		for r, ts := range tasks {
			if int64(len(ts)) != 2*stats[r].PerRank || stats[r].PerRank != stats[0].PerRank {
				t.Fatalf("P=%d: rank %d runs %d batches in 2 epochs, rank 0 %d per epoch", p, r, len(ts), stats[0].PerRank)
			}
		}
		if d := stats[0].Dropped; d >= int64(p) || d != stats[0].Batches-int64(p)*stats[0].PerRank {
			t.Fatalf("P=%d: %d batches dropped per epoch", p, d)
		}
		for key, task := range got {
			if !slices.Equal(task.Seeds, ref[key].Seeds) {
				t.Fatalf("P=%d: batch %d of epoch %d differs from P=1's", p, key[1], key[0])
			}
		}
		if p == 4 {
			for r, s := range stats {
				if s.LocalShare < 0.8 {
					t.Errorf("P=K=4: rank %d draws only %.2f of its seeds from its own partition", r, s.LocalShare)
				}
			}
		}
	}
}

// Edge plans: the positives are input edges with the IDs they say, every
// training edge (here: weight "w" set) once per epoch.
func TestEdgePlan(t *testing.T) {
	f := getFixture(t, true, 4)
	mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) { return NewEdgePlan(c, s, "follows", "w", 16) }
	tasks, stats := planOn(t, f, 2, mk)
	seen := map[int64]int{}
	for _, ts := range tasks {
		for _, task := range ts {
			if task.Epoch != 0 {
				continue
			}
			for _, p := range task.Pos {
				src, dst := f.InputNode(t, p.Src), f.InputNode(t, p.Dst)
				var id int64 = -1
				for _, cand := range f.In[p.EType][dst] {
					if f.EdgeNewID(t, p.EType, cand) == p.EID {
						id = cand
					}
				}
				if id < 0 || f.Src[p.EType][id] != src || p.EType != 0 {
					t.Fatalf("positive %d -> %d (edge %d, type %d) is not an input edge", src, dst, p.EID, p.EType)
				}
				if f.Weight[0][id] == 0 {
					t.Fatalf("edge %d has no training mark (w = 0) but is a positive", id)
				}
				seen[id]++
			}
		}
	}
	marked := 0
	for _, w := range f.Weight[0] {
		if w != 0 {
			marked++
		}
	}
	kept := stats[0].PerRank * 2 * 16
	if int64(len(seen)) < min(kept, int64(marked))-16 || len(seen) > marked {
		t.Fatalf("epoch 0 covers %d of the %d training edges (%d batches of 16 kept)", len(seen), marked, stats[0].PerRank*2)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("edge %d is a positive %d times in one epoch", id, n)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	f := getFixture(t, true, 4)
	cases := []struct {
		name string
		mk   func(c *collective.Comm, s *shard.Served) (*Plan, error)
		want string
	}{
		{"batch 0", func(c *collective.Comm, s *shard.Served) (*Plan, error) {
			return NewNodePlan(c, s, "user", "train_mask", 0)
		}, "batch size 0"},
		{"too few", func(c *collective.Comm, s *shard.Served) (*Plan, error) {
			return NewNodePlan(c, s, "user", "train_mask", 1000)
		}, "fewer than the 2 ranks"},
		{"no mask", func(c *collective.Comm, s *shard.Served) (*Plan, error) {
			return NewNodePlan(c, s, "item", "train_mask", 5)
		}, "no node array item/train_mask"},
		{"no type", func(c *collective.Comm, s *shard.Served) (*Plan, error) { return NewNodePlan(c, s, "paper", "", 5) }, `no node type "paper"`},
		{"which etype", func(c *collective.Comm, s *shard.Served) (*Plan, error) { return NewEdgePlan(c, s, "", "", 5) }, "name the one to train on"},
		{"no edge mask", func(c *collective.Comm, s *shard.Served) (*Plan, error) {
			return NewEdgePlan(c, s, "buys", "train_mask", 5)
		}, "no edge array user:buys:item/train_mask"},
	}
	for _, tc := range cases {
		err := worldRun(2, func(c *collective.Comm) error {
			s, err := shard.Serve(c, f.Parts)
			if err != nil {
				return err
			}
			defer s.Close()
			_, err = tc.mk(c, s)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// Truncate: every rank runs the first n tasks of its epoch's order, so
// each epoch's tasks are a prefix of the untruncated epoch's, and n above
// the rank's count changes nothing.
func TestPlanTruncate(t *testing.T) {
	f := getFixture(t, false, 4)
	mk := func(n int64) func(c *collective.Comm, s *shard.Served) (*Plan, error) {
		return func(c *collective.Comm, s *shard.Served) (*Plan, error) {
			pl, err := NewNodePlan(c, s, s.Config.NodeTypes[0], "train_mask", 8)
			if err == nil && n > 0 {
				err = pl.Truncate(n)
			}
			return pl, err
		}
	}
	full, stats := planOn(t, f, 2, mk(0))
	per := stats[0].PerRank
	if per < 3 {
		t.Fatalf("the fixture gives %d batches per rank; the test needs 3", per)
	}
	for _, n := range []int64{1, per - 1, per + 5} {
		cut, _ := planOn(t, f, 2, mk(n))
		keep := min(n, per)
		for r := range full {
			want := append(slices.Clone(full[r][:keep]), full[r][per:per+keep]...)
			if len(cut[r]) != len(want) {
				t.Fatalf("n=%d: rank %d runs %d tasks in 2 epochs, want %d", n, r, len(cut[r]), len(want))
			}
			for i := range want {
				if cut[r][i].Epoch != want[i].Epoch || cut[r][i].Number != want[i].Number {
					t.Fatalf("n=%d: rank %d task %d is batch %d of epoch %d, want %d of %d", n, r, i, cut[r][i].Number, cut[r][i].Epoch, want[i].Number, want[i].Epoch)
				}
			}
		}
	}
	var pl Plan
	if err := pl.Truncate(0); err == nil {
		t.Error("Truncate(0) accepted")
	}
}

// A complete plan puts every training node in exactly one batch at any
// rank count, even with fewer batches than ranks, every rank running as
// many (the last ones empty); empty batches sample to empty blocks over
// both transports.
func TestPlanComplete(t *testing.T) {
	f := getFixture(t, false, 4)
	for _, bs := range []int{8, 1000} {
		for _, p := range []int{1, 3, 4} {
			mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) {
				return NewNodePlan(c, s, s.Config.NodeTypes[0], "train_mask", bs, Complete())
			}
			tasks, stats := planOn(t, f, p, mk)
			var seeds []int64
			for r, ts := range tasks {
				if len(ts) != len(tasks[0]) {
					t.Fatalf("batch %d, P=%d: rank %d runs %d tasks, rank 0 %d", bs, p, r, len(ts), len(tasks[0]))
				}
				for _, k := range ts {
					if k.Epoch == 0 {
						seeds = append(seeds, k.Seeds...)
					}
				}
			}
			var want []int64
			for v := range f.Orig {
				if f.Train[f.Orig[v]] {
					want = append(want, v)
				}
			}
			slices.Sort(seeds)
			slices.Sort(want)
			if !slices.Equal(seeds, want) || stats[0].Dropped != 0 {
				t.Fatalf("batch %d, P=%d: epoch 0 holds %d seeds, the training nodes are %d (%d batches dropped)", bs, p, len(seeds), len(want), stats[0].Dropped)
			}
		}
	}
	for _, tr := range []shard.Transport{shard.Alltoall, shard.RMA} {
		world(t, 4, func(c *collective.Comm) error {
			s, err := shard.Serve(c, f.Parts)
			if err != nil {
				return err
			}
			defer s.Close()
			pl, err := NewNodePlan(c, s, s.Config.NodeTypes[0], "train_mask", 1000, Complete())
			if err != nil {
				return err
			}
			sm, err := New(c, s, Options{Fanouts: []int{3, 2}, Transport: tr})
			if err != nil {
				return err
			}
			defer sm.Close()
			for _, task := range pl.Epoch(1, 0) {
				b, err := sm.SampleTask(task)
				if err != nil {
					return err
				}
				if len(task.Seeds) == 0 && (len(b.Blocks) != 2 || len(b.Blocks[0].Nodes) != 0 || b.Blocks[0].NumEdges() != 0) {
					return fmt.Errorf("an empty task sampled to %d blocks, %d input nodes", len(b.Blocks), len(b.Blocks[0].Nodes))
				}
			}
			return nil
		})
	}
}
