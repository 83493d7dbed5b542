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
	return planEpochs(t, f, p, 2, mk)
}

// planEpochs is planOn over the first epochs epochs.
func planEpochs(t *testing.T, f *fixture, p, epochs int, mk func(c *collective.Comm, s *shard.Served) (*Plan, error)) ([][]Task, []PlanStats) {
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
		var got []Task
		for e := range epochs {
			got = append(got, pl.Epoch(9, e)...)
		}
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
// at any rank count every rank runs as many batches, fewer than P of them
// empty, and batch b is the same as at 1 rank; at P = K most seeds are
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
		if e := stats[0].Empty; e >= int64(p) || e != int64(p)*stats[0].PerRank-stats[0].Batches {
			t.Fatalf("P=%d: %d empty batches per epoch", p, e)
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
// training edge (here: weight "w" set) exactly once per epoch.
func TestEdgePlan(t *testing.T) {
	f := getFixture(t, true, 4)
	mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) { return NewEdgePlan(c, s, "follows", "w", 16) }
	tasks, _ := planOn(t, f, 2, mk)
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
	if len(seen) != marked {
		t.Fatalf("epoch 0 covers %d of the %d training edges", len(seen), marked)
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

// planCase is a split to check: a node plan of mask's nodes (or, with
// edges, an edge plan of every edge) in batches of batch.
type planCase struct {
	mask  string
	edges bool
	batch int
}

func (pc planCase) String() string {
	if pc.edges {
		return fmt.Sprintf("edges/batch %d", pc.batch)
	}
	return fmt.Sprintf("nodes %q/batch %d", pc.mask, pc.batch)
}

func (pc planCase) make(c *collective.Comm, s *shard.Served) (*Plan, error) {
	if pc.edges {
		return NewEdgePlan(c, s, "", "", pc.batch)
	}
	return NewNodePlan(c, s, s.Config.NodeTypes[0], pc.mask, pc.batch)
}

// items lists what the case trains on, from the input: the new IDs of
// its nodes, or the new IDs of every edge.
func (pc planCase) items(f *fixture) []int64 {
	var out []int64
	if pc.edges {
		for key, id := range f.NewEdge {
			if key[0] == 0 {
				out = append(out, id)
			}
		}
	} else {
		for v, o := range f.Orig {
			if pc.mask == "" || f.Train[o] {
				out = append(out, v)
			}
		}
	}
	slices.Sort(out)
	return out
}

// taskItems returns a task's items: its seeds, or its positives' edge IDs.
func taskItems(k Task) []int64 {
	out := slices.Clone(k.Seeds)
	for _, p := range k.Pos {
		out = append(out, p.EID)
	}
	return out
}

// checkCovers fails unless the tasks of epoch e hold every one of want
// (sorted) exactly once.
func checkCovers(t *testing.T, what string, tasks [][]Task, e int, want []int64) {
	t.Helper()
	var got []int64
	for _, ts := range tasks {
		for _, k := range ts {
			if k.Epoch == e {
				got = append(got, taskItems(k)...)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: epoch %d's batches hold %d items (%d distinct), not the %d training items once each",
			what, e, len(got), len(slices.Compact(got)), len(want))
	}
}

// Every training item is in exactly one batch every epoch, at any rank
// count, whether or not the batches divide among the ranks (8 batches at
// P = 6; one batch at P = 8): every rank runs as many batches, the P*n - NB
// past the last are empty, and every batch that holds items is the one
// P = 1 gives under its number.
func TestPlanTrainsEveryItem(t *testing.T) {
	f := getFixture(t, false, 2)
	cases := []planCase{{"train_mask", false, 8}, {"train_mask", false, 13}, {"train_mask", false, 1000},
		{"", false, 32}, {"", true, 50}}
	for _, pc := range cases {
		want := pc.items(f)
		one, st1 := planOn(t, f, 1, pc.make)
		ref := byNumber(t, one)
		for _, p := range []int{1, 2, 4, 6, 8} {
			what := fmt.Sprintf("%s, P=%d", pc, p)
			tasks, stats := planOn(t, f, p, pc.make)
			st := stats[0]
			if st.Items != int64(len(want)) || st.Batches != st1[0].Batches || st.Empty != int64(p)*st.PerRank-st.Batches || st.Empty < 0 || st.Empty >= int64(p) {
				t.Fatalf("%s: %d items in %d batches, %d per rank, %d empty; P=1 cuts %d batches", what, st.Items, st.Batches, st.PerRank, st.Empty, st1[0].Batches)
			}
			for r, ts := range tasks {
				if int64(len(ts)) != 2*st.PerRank {
					t.Fatalf("%s: rank %d runs %d batches in 2 epochs, want %d", what, r, len(ts), 2*st.PerRank)
				}
			}
			for e := range 2 {
				checkCovers(t, what, tasks, e, want)
			}
			for key, k := range byNumber(t, tasks) {
				if key[1] >= st.Batches {
					if len(k.Seeds)+len(k.Pos) != 0 {
						t.Fatalf("%s: batch %d of epoch %d, past the last, holds items", what, key[1], key[0])
					}
					continue
				}
				if r := ref[key]; !slices.Equal(k.Seeds, r.Seeds) || !slices.Equal(k.Pos, r.Pos) {
					t.Fatalf("%s: batch %d of epoch %d differs from P=1's", what, key[1], key[0])
				}
			}
		}
	}
}

// Every epoch reshuffles: a batch's items and a rank's order of its
// batches differ from one epoch to the next, while every epoch still holds
// every training node once.
func TestPlanReshufflesEachEpoch(t *testing.T) {
	f := getFixture(t, false, 2)
	pc := planCase{"train_mask", false, 8}
	const epochs = 4
	tasks, stats := planEpochs(t, f, 2, epochs, pc.make)
	if stats[0].PerRank < 4 {
		t.Fatalf("%d batches per rank; the test needs 4", stats[0].PerRank)
	}
	want := pc.items(f)
	for e := range epochs {
		checkCovers(t, pc.String(), tasks, e, want)
	}
	for r, ts := range tasks {
		order := make([][]int64, epochs)
		for _, k := range ts {
			order[k.Epoch] = append(order[k.Epoch], k.Number)
		}
		for e := 1; e < epochs; e++ {
			for d := range e {
				if slices.Equal(order[e], order[d]) {
					t.Errorf("rank %d runs its batches in the same order in epochs %d and %d: %v", r, d, e, order[e])
				}
			}
		}
	}
	got := byNumber(t, tasks)
	for b := range stats[0].Batches {
		for e := 1; e < epochs; e++ {
			for d := range e {
				x, y := slices.Sorted(slices.Values(got[[2]int64{int64(e), b}].Seeds)), slices.Sorted(slices.Values(got[[2]int64{int64(d), b}].Seeds))
				if slices.Equal(x, y) {
					t.Errorf("batch %d holds the same seeds in epochs %d and %d", b, d, e)
				}
			}
		}
	}
}

// An empty batch (one with no items, on a rank the batches left over do not
// reach) samples to empty blocks, for
// node and link tasks, over both transports.
func TestEmptyBatches(t *testing.T) {
	f := getFixture(t, false, 4)
	for _, tr := range []shard.Transport{shard.Alltoall, shard.RMA} {
		for _, link := range []bool{false, true} {
			world(t, 4, func(c *collective.Comm) error {
				s, err := shard.Serve(c, f.Parts)
				if err != nil {
					return err
				}
				defer s.Close()
				o := Options{Fanouts: []int{3, 2}, Transport: tr}
				pc := planCase{"train_mask", false, 1000}
				if link {
					o = linkOptions(Degree, ExcludeReverse)
					o.Transport = tr
					pc = planCase{edges: true, batch: 10000}
				}
				pl, err := pc.make(c, s)
				if err != nil {
					return err
				}
				sm, err := New(c, s, o)
				if err != nil {
					return err
				}
				defer sm.Close()
				empty := 0
				for _, task := range pl.Epoch(1, 0) {
					b, err := sm.SampleTask(task)
					if err != nil {
						return err
					}
					if len(task.Seeds)+len(task.Pos) > 0 {
						continue
					}
					empty++
					if len(b.Blocks) != 2 || len(b.Blocks[0].Nodes) != 0 || b.Blocks[0].NumEdges() != 0 || len(b.Seeds) != 0 || len(b.NegDst) != 0 || b.Items() != 0 {
						return fmt.Errorf("%s link=%v: an empty task sampled to %d blocks, %d input nodes, %d seeds, %d negatives", tr, link, len(b.Blocks), len(b.Blocks[0].Nodes), len(b.Seeds), len(b.NegDst))
					}
				}
				if (c.Rank() < c.Size()-1) != (empty == 1) { // the last rank runs the one batch
					return fmt.Errorf("%s link=%v: rank %d ran %d empty batches of one batch in all", tr, link, c.Rank(), empty)
				}
				return nil
			})
		}
	}
}

// A padded plan (Pad, as DistributedSampler pads): at P = 2, 4, 8 no rank
// runs an empty batch; the epoch's NB batches are P=1's, so every
// training node is in each epoch; and padding batch j holds the items at
// positions [j*B, (j+1)*B) of P=1's joined list, modulo its length, with
// no item twice (also when the batch is larger than the list).
func TestPaddedPlan(t *testing.T) {
	f := getFixture(t, true, 4)
	allPadding := 0
	for _, batch := range []int{10, 7, 1000} {
		mk := func(c *collective.Comm, s *shard.Served) (*Plan, error) {
			return NewNodePlan(c, s, "user", "train_mask", batch)
		}
		one, st1 := planOn(t, f, 1, mk)
		ref := byNumber(t, one)
		joined := map[int][]int64{} // per epoch: P=1's batches, in number order
		for e := range 2 {
			for b := range st1[0].Batches {
				joined[e] = append(joined[e], ref[[2]int64{int64(e), b}].Seeds...)
			}
		}
		total := len(joined[0])
		for _, p := range []int{2, 4, 8} {
			padded := func(c *collective.Comm, s *shard.Served) (*Plan, error) {
				pl, err := mk(c, s)
				if err == nil {
					err = pl.Pad(c, s)
				}
				return pl, err
			}
			tasks, stats := planOn(t, f, p, padded)
			what := fmt.Sprintf("batch %d P=%d", batch, p)
			if st := stats[0]; st.Empty != 0 || st.Padded != int64(p)*st.PerRank-st.Batches {
				t.Fatalf("%s: %d empty and %d padding batches an epoch, %d per rank, %d in all", what, st.Empty, st.Padded, st.PerRank, st.Batches)
			}
			padding := 0
			for key, task := range byNumber(t, tasks) {
				e, b := int(key[0]), key[1]
				if b < st1[0].Batches {
					if !slices.Equal(task.Seeds, ref[key].Seeds) {
						t.Fatalf("%s: batch %d of epoch %d differs from P=1's", what, b, e)
					}
					continue
				}
				padding++
				j := int(b - st1[0].Batches)
				var want []int64
				for i := range min(batch, total) {
					want = append(want, joined[e][(j*batch+i)%total])
				}
				if !slices.Equal(task.Seeds, want) {
					t.Fatalf("%s: padding batch %d of epoch %d holds %v, want %v", what, b, e, task.Seeds, want)
				}
				if u := slices.Compact(slices.Sorted(slices.Values(task.Seeds))); len(u) != len(task.Seeds) {
					t.Fatalf("%s: padding batch %d holds an item twice", what, b)
				}
			}
			allPadding += padding
			if int64(padding) != 2*stats[0].Padded {
				t.Fatalf("%s: %d padding batches in 2 epochs, the stats say %d an epoch", what, padding, stats[0].Padded)
			}
			for r, ts := range tasks {
				for _, task := range ts {
					if len(task.Seeds) == 0 {
						t.Fatalf("%s: rank %d runs an empty batch", what, r)
					}
				}
			}
		}
	}
	if allPadding == 0 {
		t.Fatal("no case had a padding batch to check")
	}
	t.Logf("%d padding batches checked", allPadding)
}
