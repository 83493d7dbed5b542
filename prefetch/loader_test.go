package prefetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/internal/testgraph"
	"gnnrun/rank"
	"gnnrun/sampler"
	"gnnrun/shard"
)

// delivered is what a test keeps of a batch the loader gave the trainer.
type delivered struct {
	kind       string
	epoch      int
	number     int64
	endOfEpoch bool
	text       string // seeds, blocks (block 0 in node indices) and labels
	checkpoint string // the batch's Checkpoint, "" when none
}

// describe writes a batch's seeds, blocks and labels; src0 are block 0's
// sources as indices into its nodes.
func describe(b *sampler.Batch, src0 []int32) string {
	var s strings.Builder
	fmt.Fprintf(&s, "seeds %v\n", b.Seeds)
	for l, bl := range b.Blocks {
		src := bl.Src
		if l == 0 {
			src = src0
		}
		fmt.Fprintf(&s, "block %d: %v %d %v %v %v\n", l, bl.Nodes, bl.NumDst, src, bl.Dst, bl.EIDs)
	}
	if b.Labels != nil {
		fmt.Fprintf(&s, "labels %v\n", b.Labels.Data)
	}
	fmt.Fprintf(&s, "neg %v %v\n", b.NegSrc, b.NegDst)
	return s.String()
}

// checkRows checks a delivered batch's device rows against the input's
// feature rows (read plainly by testgraph) and its labels against the
// input's, and returns block 0's sources as node indices.
func checkRows(t *testing.T, g *testgraph.Graph, b *Batch) []int32 {
	nodes := b.Blocks[0].Nodes
	if b.Rows != len(nodes) || len(b.InputSlots) != len(nodes) {
		t.Errorf("batch %d: %d rows and %d slots for %d input nodes", b.Number, b.Rows, len(b.InputSlots), len(nodes))
		return nil
	}
	rows := b.Features.Host()
	inv := make([]int32, b.Rows)
	for i, s := range b.InputSlots {
		want := g.Feat[g.Orig[nodes[i]]]
		got := rows[int(s)*b.RowBytes : int(s+1)*b.RowBytes]
		if !bytes.Equal(got, want) {
			t.Errorf("batch %d: row %d of input node %d is not the input's row", b.Number, s, nodes[i])
			return nil
		}
		inv[s] = int32(i)
	}
	src0 := make([]int32, len(b.Blocks[0].Src))
	for k, s := range b.Blocks[0].Src {
		src0[k] = inv[s]
	}
	if b.Labels != nil {
		for i, v := range b.Seeds {
			if got := int64(binary.LittleEndian.Uint64(b.Labels.Row(int64(i)))); got != g.Label[g.Orig[v]] {
				t.Errorf("batch %d: seed %d has label %d, the input %d", b.Number, v, got, g.Label[g.Orig[v]])
			}
		}
	}
	return src0
}

// runOn runs a loader on p ranks over g's partitions, its trainer taking
// up to stop batches per rank (0: all), and returns what each rank's
// trainer got, in order, and each rank's stats. check, when set, runs
// against each batch's rows before its release.
func runOn(t *testing.T, g *testgraph.Graph, p int, o Options, task string, stop func(rank int) int) ([][]delivered, []Stats) {
	t.Helper()
	var mu sync.Mutex
	got := make([][]delivered, p)
	stats := make([]Stats, p)
	testgraph.World(t, p, func(c *collective.Comm) error {
		o := o // each rank's own: testPlan and New fill it in
		// Served and the device are closed only after a clean Close: after
		// an error the stages may still read them until the world ends.
		s, err := shard.Serve(c, g.Parts)
		if err != nil {
			return err
		}
		dev, err := cuda.Open(cuda.Host, 0)
		if err != nil {
			return err
		}
		pl, err := testPlan(c, s, task, &o)
		if err != nil {
			return err
		}
		o.Device = dev
		l, err := New(c, s, pl, o)
		if err != nil {
			return err
		}
		var mine []delivered
		limit := 0
		if stop != nil {
			limit = stop(c.Rank())
		}
		for n := 0; limit == 0 || n < limit; n++ {
			b, err := l.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if o.Verify {
				if err := l.Verify(b); err != nil {
					return err
				}
			}
			src0 := checkRows(t, g, b)
			mine = append(mine, delivered{b.Kind, b.Epoch, b.Number, b.EndOfEpoch, describe(b.Batch, src0), checkpointText(b.Checkpoint)})
			b.Release()
		}
		st := l.Stats()
		if err := l.Close(); err != nil {
			return err
		}
		if err := dev.Close(); err != nil {
			return err
		}
		if err := s.Close(); err != nil {
			return err
		}
		mu.Lock()
		got[c.Rank()], stats[c.Rank()] = mine, st
		mu.Unlock()
		return nil
	})
	return got, stats
}

// testPlan makes the node task's split (train_mask, batches of 16, with
// labels) or the link task's (every edge of type 0, batches of 64). With
// o.EvalEvery set, the node task also gets an evaluation set "val" (every
// val_mask node, batches of 24, fanouts -1,4, its own seed).
func testPlan(c *collective.Comm, s *shard.Served, task string, o *Options) (*sampler.Plan, error) {
	if task == "link" {
		o.Sampler.Link = &sampler.LinkOptions{Negatives: 2, Exclude: sampler.ExcludeSelf}
		return sampler.NewEdgePlan(c, s, s.Config.EdgeTypes[0].String(), "", 64)
	}
	nt := s.Config.NodeTypes[0]
	o.Sampler.Labels = sampler.LabelSpec{NType: nt, Name: "label"}
	if o.EvalEvery > 0 {
		val, err := sampler.NewNodePlan(c, s, nt, "val_mask", 24)
		if err != nil {
			return nil, err
		}
		vo := o.Sampler
		vo.Fanouts, vo.Seed = []int{-1, 4}, o.Sampler.Seed+1
		o.Eval = []EvalSet{{Name: "val", Plan: val, Sampler: vo}}
	}
	return sampler.NewNodePlan(c, s, nt, "train_mask", 16)
}

// reference samples the same tasks directly, in the plan's order, on p
// ranks: what the loader must deliver.
func reference(t *testing.T, g *testgraph.Graph, p int, o Options, task string) [][]delivered {
	t.Helper()
	var mu sync.Mutex
	out := make([][]delivered, p)
	testgraph.World(t, p, func(c *collective.Comm) error {
		o := o // each rank's own: testPlan fills it in
		s, err := shard.Serve(c, g.Parts)
		if err != nil {
			return err
		}
		defer s.Close()
		pl, err := testPlan(c, s, task, &o)
		if err != nil {
			return err
		}
		sm, err := sampler.New(c, s, o.Sampler)
		if err != nil {
			return err
		}
		var mine []delivered
		for e := range o.Epochs {
			tasks := pl.Epoch(o.Sampler.Seed, e)
			for i, tk := range tasks {
				b, err := sm.SampleTask(tk)
				if err != nil {
					return err
				}
				mine = append(mine, delivered{TrainKind, b.Epoch, b.Number, i == len(tasks)-1, describe(b, b.Blocks[0].Src), ""})
			}
			if len(o.Eval) == 0 || ((e+1)%o.EvalEvery != 0 && e != o.Epochs-1) {
				continue
			}
			set := o.Eval[0]
			vs, err := sampler.New(c, s, set.Sampler)
			if err != nil {
				return err
			}
			for _, tk := range set.Plan.Epoch(set.Sampler.Seed, e) {
				b, err := vs.SampleTask(tk)
				if err != nil {
					return err
				}
				mine = append(mine, delivered{set.Name, b.Epoch, b.Number, false, describe(b, b.Blocks[0].Src), ""})
			}
			if err := vs.Close(); err != nil {
				return err
			}
		}
		mu.Lock()
		out[c.Rank()] = mine
		mu.Unlock()
		return sm.Close()
	})
	return out
}

func testOptions() Options {
	return Options{Sampler: sampler.Options{Fanouts: []int{3, 2}, Seed: 5}, Epochs: 2, Verify: true,
		SampleWorkers: 2, SampleDepth: 4, GatherDepth: 2, DeviceDepth: 1}
}

// The loader delivers exactly the sampler's batches, in the plan's order,
// across the epoch boundary, with an end-of-epoch mark on each epoch's last
// batch, every device row its node's input row and every label its seed's,
// at 1, 2 and 4 ranks and over both transports; with an evaluation set,
// its batches follow the epochs that evaluate.
func TestLoaderDeliversSamplerBatches(t *testing.T) {
	for _, hetero := range []bool{false, true} {
		g := testgraph.Get(t, testgraph.Spec{Hetero: hetero, K: 4, FeatDim: 5})
		for _, task := range []string{"node", "link"} {
			for _, tr := range []shard.Transport{shard.Alltoall, shard.RMA} {
				for _, p := range []int{1, 2, 4} {
					if task == "link" && (hetero || p == 4) {
						continue // one link case per transport keeps the test short
					}
					o := testOptions()
					o.Sampler.Transport = tr
					if task == "node" && !hetero && p > 1 {
						o.EvalEvery, o.Epochs = 2, 3 // evaluations after epochs 1 and 2
					}
					t.Run(fmt.Sprintf("hetero=%v/%s/%s/P=%d/eval=%d", hetero, task, tr, p, o.EvalEvery), func(t *testing.T) {
						got, _ := runOn(t, g, p, o, task, nil)
						want := reference(t, g, p, o, task)
						for r := range p {
							if len(got[r]) != len(want[r]) || len(got[r]) == 0 {
								t.Fatalf("rank %d: %d batches, the sampler gives %d", r, len(got[r]), len(want[r]))
							}
							for i := range got[r] {
								if got[r][i] != want[r][i] {
									t.Fatalf("rank %d: batch %d of the run is %s epoch %d batch %d (end %v), the sampler's is %s epoch %d batch %d (end %v), or their contents differ",
										r, i, got[r][i].kind, got[r][i].epoch, got[r][i].number, got[r][i].endOfEpoch, want[r][i].kind, want[r][i].epoch, want[r][i].number, want[r][i].endOfEpoch)
								}
							}
						}
					})
				}
			}
		}
	}
}

// The cache's accounting is exact: every input row is reused, from the hot
// cache or copied, and the bytes saved are the reused and hot rows' bytes;
// without the cache every row is copied.
func TestLoaderCacheModes(t *testing.T) {
	g := testgraph.Get(t, testgraph.Spec{K: 4, FeatDim: 5})
	rb := int64(g.RowSize)
	for _, c := range []struct {
		name  string
		cache CacheMode
		hot   int64
	}{{"reuse", Reuse, 0}, {"none", NoCache, 0}, {"reuse+hot", Reuse, 40 * rb}, {"none+hot", NoCache, 40 * rb}} {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions()
			o.Cache, o.HotBytes = c.cache, c.hot
			_, stats := runOn(t, g, 2, o, "node", nil)
			for r, st := range stats {
				if st.RowsReused+st.RowsHot+st.RowsFetched != st.RowsInput {
					t.Errorf("rank %d: %d reused + %d hot + %d copied != %d input rows", r, st.RowsReused, st.RowsHot, st.RowsFetched, st.RowsInput)
				}
				if st.BytesWithoutCache != st.RowsInput*rb || st.BytesWithoutCache-st.BytesToDevice != (st.RowsReused+st.RowsHot)*rb {
					t.Errorf("rank %d: %d bytes to the device, %d without the cache, %d rows reused, %d hot", r, st.BytesToDevice, st.BytesWithoutCache, st.RowsReused, st.RowsHot)
				}
				if (c.cache == NoCache) != (st.RowsReused == 0) {
					t.Errorf("rank %d: cache %s reused %d rows", r, c.cache, st.RowsReused)
				}
				if (c.hot > 0) != (st.RowsHot > 0) {
					t.Errorf("rank %d: hot cache of %d bytes served %d rows", r, c.hot, st.RowsHot)
				}
			}
		})
	}
}

// A trainer that stops early, on every rank after its own number of
// batches, shuts the pipeline down without hanging.
func TestLoaderStopsEarly(t *testing.T) {
	g := testgraph.Get(t, testgraph.Spec{K: 4, FeatDim: 5})
	for _, tr := range []shard.Transport{shard.Alltoall, shard.RMA} {
		o := testOptions()
		o.Sampler.Transport = tr
		o.Epochs = 5
		o.Verify = false // collective: the ranks take different numbers of batches
		got, _ := runOn(t, g, 4, o, "node", func(r int) int { return 1 + 2*r })
		for r, ds := range got {
			if len(ds) != 1+2*r {
				t.Errorf("%s: rank %d took %d batches, want %d", tr, r, len(ds), 1+2*r)
			}
		}
	}
}

// A stage failing on one rank ends every rank's run, with its error,
// within seconds.
func TestLoaderStageFailure(t *testing.T) {
	g := testgraph.Get(t, testgraph.Spec{K: 4, FeatDim: 5})
	for _, stage := range []string{"sample", "gather", "device"} {
		t.Run(stage, func(t *testing.T) {
			t0 := time.Now()
			err := rank.RunLocal(3, func(rc rank.Comm) error {
				c := collective.MustNew(rc)
				s, err := shard.Serve(c, g.Parts) // not closed: see Loader.Next
				if err != nil {
					return err
				}
				dev, err := cuda.Open(cuda.Host, 0)
				if err != nil {
					return err
				}
				o := testOptions()
				o.Device = dev
				var calls atomic.Int32 // the sample stage's workers call it side by side
				o.Fault = func(st string) error {
					if st == stage && c.Rank() == 1 {
						if calls.Add(1) == 3 {
							return fmt.Errorf("injected %s failure", stage)
						}
					}
					return nil
				}
				pl, err := testPlan(c, s, "node", &o)
				if err != nil {
					return err
				}
				l, err := New(c, s, pl, o)
				if err != nil {
					return err
				}
				for {
					b, err := l.Next()
					if errors.Is(err, io.EOF) {
						// A rank that took all its batches before another
						// failed (on one host the ranks exchange nothing
						// while they sample) learns of the failure in
						// Close's collectives, as gnnrun's ranks do.
						return l.Close()
					}
					if err != nil {
						return err
					}
					b.Release()
				}
			}, rank.Timeout(30*time.Second))
			if err == nil || !strings.Contains(err.Error(), "injected "+stage) {
				t.Fatalf("want the injected %s failure, got %v", stage, err)
			}
			if d := time.Since(t0); d > 10*time.Second {
				t.Errorf("the job took %v to end", d)
			}
		})
	}
}

func TestOptionsChecked(t *testing.T) {
	dev, err := cuda.Open(cuda.Host, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.SampleDepth = -1 }, "must be at least 1"},
		{func(o *Options) { o.DeviceDepth = -3 }, "must be at least 1"},
		{func(o *Options) { o.SampleWorkers, o.SampleDepth = 4, 2 }, "sample depth 2 below the 4 sample workers"},
		{func(o *Options) { o.HotBytes = -1 }, "hot cache"},
		{func(o *Options) { o.GatherWorkers = -2 }, "-2 gather workers"},
		{func(o *Options) { o.SampleWorkers = -1 }, "sample workers -1"},
		{func(o *Options) { o.Device = nil }, "no device"},
	} {
		o := testOptions()
		o.Device = dev
		c.edit(&o)
		o.setDefault()
		if err := o.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	if !slices.Contains([]string{"reuse", "none"}, Reuse.String()) {
		t.Error("cache mode names")
	}
}

// The gather's copy workers default to a quarter of the rank's cores, one
// at least and maxGatherWorkers at most.
func TestGatherWorkersFromCores(t *testing.T) {
	for _, c := range []struct {
		cores float64
		want  int
	}{{1, 1}, {2, 1}, {7.5, 1}, {8, 2}, {16, 4}, {64, 8}, {192, 8}} {
		if got := gatherWorkersFor(c.cores); got != c.want {
			t.Errorf("%v cores: %d gather workers, want %d", c.cores, got, c.want)
		}
	}
}

// The sample workers default to a quarter of the rank's cores, at least 2
// and at most the sample depth.
func TestSampleWorkersFromCores(t *testing.T) {
	for _, c := range []struct {
		cores float64
		depth int
		want  int
	}{{1, 8, 2}, {2, 8, 2}, {8, 8, 2}, {16, 8, 4}, {64, 8, 8}, {64, 4, 4}, {16, 1, 1}} {
		if got := sampleWorkersFor(c.cores, c.depth); got != c.want {
			t.Errorf("%v cores, depth %d: %d sample workers, want %d", c.cores, c.depth, got, c.want)
		}
	}
}

// Each stage alone runs the batches asked for on every rank, over both
// transports, and takes time; the loader's resources are all released.
func TestMeasureStagesAlone(t *testing.T) {
	g := testgraph.Get(t, testgraph.Spec{K: 4, FeatDim: 5})
	for _, tr := range []shard.Transport{shard.Alltoall, shard.RMA} {
		testgraph.World(t, 2, func(c *collective.Comm) error {
			s, err := shard.Serve(c, g.Parts)
			if err != nil {
				return err
			}
			dev, err := cuda.Open(cuda.Host, 0)
			if err != nil {
				return err
			}
			o := testOptions()
			o.Sampler.Transport, o.Device = tr, dev
			pl, err := testPlan(c, s, "node", &o)
			if err != nil {
				return err
			}
			a, err := MeasureStagesAlone(c, s, pl, o, 3)
			if err != nil {
				return err
			}
			if a.Batches != 3 || a.Sample <= 0 || a.Gather <= 0 || a.Device <= 0 || a.Slowest() > a.Sum() {
				return fmt.Errorf("%s: stages alone %+v", tr, a)
			}
			// The in-process world's two ranks share one process's CPUs.
			if want := min(float64(runtime.NumCPU()), float64(machineCPUs())/2); a.CPU() <= 0 || a.Cores != want {
				return fmt.Errorf("%s: CPU %v on %v cores per rank, want more than 0 on %v", tr, a.CPU(), a.Cores, want)
			}
			if bound, by := a.Bound(); bound < a.Slowest() || (by == "cores") != (float64(a.CPU())/a.Cores > float64(a.Slowest())) {
				return fmt.Errorf("%s: bound %v set by %s, the slowest stage %v, CPU %v on %v cores", tr, bound, by, a.Slowest(), a.CPU(), a.Cores)
			}
			if err := dev.Close(); err != nil { // fails while buffers or streams are open
				return err
			}
			return s.Close()
		})
	}
}

// Every training node reaches the trainers exactly once per epoch when the
// batches do not divide among the ranks (some ranks run an empty batch),
// and Trained counts them so.
func TestLoaderTrainsEveryNode(t *testing.T) {
	g := testgraph.Get(t, testgraph.Spec{K: 4, FeatDim: 5})
	const p = 4
	o := testOptions()
	var mu sync.Mutex
	seeds := make([][]int64, o.Epochs) // per epoch, the seeds of every rank's training batches
	trained := make([]int64, o.Epochs)
	var items, empty int64
	testgraph.World(t, p, func(c *collective.Comm) error {
		o := o
		s, err := shard.Serve(c, g.Parts)
		if err != nil {
			return err
		}
		dev, err := cuda.Open(cuda.Host, 0)
		if err != nil {
			return err
		}
		pl, err := testPlan(c, s, "node", &o)
		if err != nil {
			return err
		}
		o.Device = dev
		l, err := New(c, s, pl, o)
		if err != nil {
			return err
		}
		for {
			b, err := l.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			mu.Lock()
			seeds[b.Epoch] = append(seeds[b.Epoch], b.Seeds...)
			mu.Unlock()
			b.Release()
		}
		got, n := l.Trained()
		mu.Lock()
		for e, k := range got {
			trained[e] += k
		}
		items, empty = n, pl.Stats().Empty
		mu.Unlock()
		if err := l.Close(); err != nil {
			return err
		}
		if err := dev.Close(); err != nil {
			return err
		}
		return s.Close()
	})
	var want []int64
	for v, o := range g.Orig {
		if g.Train[o] {
			want = append(want, v)
		}
	}
	slices.Sort(want)
	if empty == 0 || items != int64(len(want)) {
		t.Fatalf("the split has %d empty batches and %d items; the test wants some empty and the %d training nodes", empty, items, len(want))
	}
	for e := range o.Epochs {
		slices.Sort(seeds[e])
		if !slices.Equal(seeds[e], want) || trained[e] != items {
			t.Errorf("epoch %d: the trainers got %d seeds (Trained says %d), not the %d training nodes once each", e, len(seeds[e]), trained[e], len(want))
		}
	}
}

// The bound is the slowest stage alone, or the stages' CPU time over the
// rank's cores where that is longer.
func TestStagesAloneBound(t *testing.T) {
	ms := time.Millisecond
	a := StagesAlone{Sample: 10 * ms, Gather: 6 * ms, Device: 1 * ms, SampleCPU: 20 * ms, GatherCPU: 6 * ms, DeviceCPU: 1 * ms}
	for _, c := range []struct {
		cores float64
		want  time.Duration
		by    string
	}{{1, 27 * ms, "cores"}, {2, 13500 * time.Microsecond, "cores"}, {4, 10 * ms, "sample"}, {0, 10 * ms, "sample"}} {
		a.Cores = c.cores
		if got, by := a.Bound(); got != c.want || by != c.by {
			t.Errorf("%v cores: bound %v set by %s, want %v by %s", c.cores, got, by, c.want, c.by)
		}
	}
	a.Gather, a.Cores = 12*ms, 4
	if got, by := a.Bound(); got != 12*ms || by != "gather" {
		t.Errorf("bound %v set by %s, want 12ms by gather", got, by)
	}
}

func checkpointText(segs []sampler.Segment) string {
	if segs == nil {
		return ""
	}
	return fmt.Sprint(segs)
}

// Checkpoints are agreed: whichever rank finds one due, every rank marks
// the same training batch, with how far its epoch got (every rank's
// batches of the epoch up to it). A loader started at epoch 1 delivers
// epochs 1 and 2 alone, as the full run does.
func TestLoaderCheckpointMarks(t *testing.T) {
	g := testgraph.Get(t, testgraph.Spec{K: 4})
	o := testOptions()
	o.Epochs = 3
	var calls atomic.Int64
	o.CheckpointDue = func() CheckpointLevel { // some rank's call, some task
		if calls.Add(1)%7 == 0 {
			return Checkpoint
		}
		return NoCheckpoint
	}
	got, _ := runOn(t, g, 2, o, "node", nil)
	marks := 0
	for i := range got[0] {
		var k int64 // training batches of the epoch up to this one
		for j := i; j >= 0 && got[0][j].epoch == got[0][i].epoch; j-- {
			if got[0][j].kind == TrainKind {
				k++
			}
		}
		for r := range got {
			if got[r][i].checkpoint != got[0][i].checkpoint {
				t.Fatalf("batch %d of the stream: rank %d marks %v, rank 0 %v", i, r, got[r][i].checkpoint, got[0][i].checkpoint)
			}
		}
		if c := got[0][i].checkpoint; c != "" {
			marks++
			if want := checkpointText([]sampler.Segment{{Ranks: 2, Done: k}}); c != want {
				t.Fatalf("batch %d (epoch %d): checkpoint at %v, want %v", i, got[0][i].epoch, c, want)
			}
		}
	}
	if marks < 2 {
		t.Fatalf("%d checkpoints marked in %d batches", marks, len(got[0]))
	}
	o.CheckpointDue, o.StartEpoch = nil, 1
	from1, _ := runOn(t, g, 2, o, "node", nil)
	for r := range got {
		var want []delivered
		for _, d := range got[r] {
			if d.epoch >= 1 {
				d.checkpoint = ""
				want = append(want, d)
			}
		}
		if !slices.EqualFunc(from1[r], want, func(a, b delivered) bool { return a.text == b.text && a.epoch == b.epoch && a.number == b.number }) {
			t.Fatalf("rank %d: started at epoch 1, %d batches, not the full run's %d of epochs 1 and 2", r, len(from1[r]), len(want))
		}
	}
}
