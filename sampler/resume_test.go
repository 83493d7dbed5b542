package sampler

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"gnnrun/collective"
	"gnnrun/shard"
)

// resumeRun makes the padded node plan of batch 7 on p ranks, resumes it
// at epoch 1 after segs (none: a fresh plan), and returns every rank's
// tasks of epochs 1 and 2 and the segments after each rank ran its first
// k tasks of epoch 1 (Progress).
func resumeRun(t *testing.T, f *fixture, p int, segs []Segment, k int64) (e1, e2 [][]Task, next [][]Segment) {
	t.Helper()
	var mu sync.Mutex
	e1, e2, next = make([][]Task, p), make([][]Task, p), make([][]Segment, p)
	world(t, p, func(c *collective.Comm) error {
		s, err := shard.Serve(c, f.Parts)
		if err != nil {
			return err
		}
		defer s.Close()
		pl, err := NewNodePlan(c, s, "user", "train_mask", 7)
		if err == nil {
			err = pl.Pad(c, s)
		}
		if err == nil && segs != nil {
			err = pl.Resume(c, s, 9, 1, segs)
		}
		if err != nil {
			return err
		}
		a, b := pl.Epoch(9, 1), pl.Epoch(9, 2)
		if int64(len(a)) != pl.BatchesIn(1) {
			return fmt.Errorf("rank %d: %d tasks in the resumed epoch, BatchesIn says %d", c.Rank(), len(a), pl.BatchesIn(1))
		}
		mu.Lock()
		e1[c.Rank()], e2[c.Rank()], next[c.Rank()] = a, b, pl.Progress(1, min(k, int64(len(a))))
		mu.Unlock()
		return nil
	})
	return e1, e2, next
}

// seedsOf counts the training seeds of the tasks, as input IDs (not the
// padding ones, numbered past the epoch's batches).
func (f *fixture) seedsOf(t *testing.T, tasks [][]Task, nb int64, into map[int64]int) {
	for _, ts := range tasks {
		for _, task := range ts {
			if task.Number < nb {
				for _, v := range task.Seeds {
					into[f.InputNode(t, v)]++
				}
			}
		}
	}
}

// An epoch stopped after k batches a rank and resumed: at the same rank
// count the tasks that follow are exactly the uninterrupted run's; at
// another, every training node not yet trained is trained exactly once,
// every rank runs as many batches, none empty; a second stop and resume
// (two segments) holds the same; the next epoch is untouched.
func TestResumeEpoch(t *testing.T) {
	f := getFixture(t, true, 4)
	var want []int64
	for v, on := range f.Train {
		if on {
			want = append(want, int64(v))
		}
	}
	nb := (int64(len(want)) + 6) / 7
	for _, p0 := range []int{2, 4} {
		ref1, ref2, progress := resumeRun(t, f, p0, nil, 3)
		segs := progress[0]
		for r := range p0 {
			if !slices.Equal(progress[r], segs) || len(segs) != 1 || segs[0] != (Segment{Ranks: p0, Done: 3}) {
				t.Fatalf("P=%d: rank %d's progress %v, rank 0's %v", p0, r, progress[r], segs)
			}
		}
		done := map[int64]int{}
		f.seedsOf(t, firsts(ref1, 3), nb, done)
		for _, p1 := range []int{p0, 1, 3, 8} {
			what := fmt.Sprintf("P=%d then %d", p0, p1)
			got1, got2, next := resumeRun(t, f, p1, segs, 2)
			if p1 == p0 {
				for r := range p0 {
					if !tasksEqual(got1[r], ref1[r][3:]) {
						t.Fatalf("%s: rank %d's resumed tasks are not the uninterrupted run's", what, r)
					}
				}
			}
			for r := range p1 {
				if len(got1[r]) != len(got1[0]) {
					t.Fatalf("%s: rank %d runs %d batches, rank 0 %d", what, r, len(got1[r]), len(got1[0]))
				}
				for _, task := range got1[r] {
					if len(task.Seeds) == 0 {
						t.Fatalf("%s: rank %d runs an empty batch", what, r)
					}
				}
				if p1 == p0 && !tasksEqual(got2[r], ref2[r]) {
					t.Fatalf("%s: epoch 2 differs from the uninterrupted run's", what)
				}
			}
			all := map[int64]int{}
			for v, n := range done {
				all[v] = n
			}
			f.seedsOf(t, got1, nb, all)
			onceEach(t, what, all, want)
			// Stopped again after 2 batches, resumed at 2 ranks.
			all2 := map[int64]int{}
			for v, n := range done {
				all2[v] = n
			}
			f.seedsOf(t, firsts(got1, 2), nb, all2)
			got3, _, _ := resumeRun(t, f, 2, next[0], 0)
			f.seedsOf(t, got3, nb, all2)
			onceEach(t, what+" then 2", all2, want)
		}
	}
}

func firsts(tasks [][]Task, k int) [][]Task {
	out := make([][]Task, len(tasks))
	for r, ts := range tasks {
		out[r] = ts[:min(k, len(ts))]
	}
	return out
}

func tasksEqual(a, b []Task) bool {
	return slices.EqualFunc(a, b, func(x, y Task) bool { return x.Number == y.Number && slices.Equal(x.Seeds, y.Seeds) })
}

// onceEach fails unless every node of want was counted exactly once and
// no other node was.
func onceEach(t *testing.T, what string, got map[int64]int, want []int64) {
	t.Helper()
	for _, v := range want {
		if got[v] != 1 {
			t.Fatalf("%s: training node %d trained %d times in the epoch", what, v, got[v])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d nodes trained, %d training nodes", what, len(got), len(want))
	}
}
