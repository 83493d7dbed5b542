package prefetch

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"gnnrun/collective"
	"gnnrun/internal/proc"
	"gnnrun/sampler"
	"gnnrun/shard"
)

// StagesAlone is the time per batch of each stage run alone, with nothing
// else running on the rank: what the pipeline's throughput is measured
// against. The pipeline at best runs at its slowest stage's rate, and no
// faster than its stages' CPU time over the cores it has (Bound).
type StagesAlone struct {
	Batches                int
	Sample, Gather, Device time.Duration // per batch
	// SampleCPU, GatherCPU and DeviceCPU are the CPU time per batch the
	// rank's process took in each stage alone (all its threads, user and
	// system), and Cores the CPUs the rank has: its machine's over the
	// ranks on it. Both are the slowest rank's.
	SampleCPU, GatherCPU, DeviceCPU time.Duration
	Cores                           float64
}

// CPU returns the stages' CPU time per batch added up.
func (a StagesAlone) CPU() time.Duration { return a.SampleCPU + a.GatherCPU + a.DeviceCPU }

// Bound returns the least time per batch the pipeline can take on the
// rank's cores, and what sets it: the slowest stage alone ("sample",
// "gather", "device"), or "cores" where the stages' CPU time over the
// rank's cores is longer (stages that share the cores cannot all run at
// their rate alone).
func (a StagesAlone) Bound() (time.Duration, string) {
	slowest, name := a.slowest()
	if a.Cores > 0 {
		if c := time.Duration(float64(a.CPU()) / a.Cores); c > slowest {
			return c, "cores"
		}
	}
	return slowest, name
}

// Slowest returns the longest time per batch of a stage.
func (a StagesAlone) Slowest() time.Duration {
	t, _ := a.slowest()
	return t
}

// slowest returns the longest time per batch of a stage, and the stage.
func (a StagesAlone) slowest() (time.Duration, string) {
	t, name := a.Sample, "sample"
	if a.Gather > t {
		t, name = a.Gather, "gather"
	}
	if a.Device > t {
		t, name = a.Device, "device"
	}
	return t, name
}

// Sum returns the stages' times per batch added up.
func (a StagesAlone) Sum() time.Duration { return a.Sample + a.Gather + a.Device }

// MeasureStagesAlone runs the first batches of epoch 0 through each stage
// in turn, one stage at a time, as the pipeline would (the sample stage
// with its workers side by side), keeping each stage's output in memory
// for the next, and returns each stage's time per batch over n batches,
// the slowest rank's. aloneWarm batches (at least one per device buffer;
// fewer where the epoch is short) go first, untimed, so the timed ones
// meet buffers in their steady state: grown to size, rows kept from the
// batch before. The batches' memory is held at once: keep n small. It is
// collective; every rank must pass the same n.
func MeasureStagesAlone(c *collective.Comm, s *shard.Served, plan *sampler.Plan, o Options, n int) (StagesAlone, error) {
	l, err := newLoader(c, s, plan, o)
	if err != nil {
		return StagesAlone{}, err
	}
	a, err := l.measureAlone(n)
	if err != nil {
		return a, err // the job ends: see Next
	}
	return a, l.closeResources()
}

// aloneWarm is how many batches go through the stages untimed before the
// timed ones, where the epoch has that many besides: the device buffers
// grow to their steady size over the first batches (R-MAT 20, 128
// features, one rank: the device stage alone took 50 ms a batch after 2
// such batches, 34-37 after 8, 13-15 after 16, as in the pipeline).
const aloneWarm = 16

func (l *Loader) measureAlone(n int) (StagesAlone, error) {
	tasks := l.plan.Epoch(l.o.Sampler.Seed, 0)
	warm := min(max(len(l.devs), min(aloneWarm, len(tasks)-n)), len(tasks))
	n = min(n, len(tasks)-warm)
	a := StagesAlone{Batches: n}
	if n <= 0 {
		return a, fmt.Errorf("prefetch: the stages alone need more than %d batches per epoch", warm)
	}
	l.stats.init(len(l.samplers))
	a.Cores = l.cores
	var err error
	sampled := make([]sampled, warm+n)
	if err := l.sampleAlone(tasks, sampled, 0, warm); err != nil {
		return a, err
	}
	if a.Sample, a.SampleCPU, err = l.onSlowest(n, func() error { return l.sampleAlone(tasks, sampled, warm, warm+n) }); err != nil {
		return a, err
	}
	gathered := make([]*gatheredBatch, warm+n)
	cls := newClassifier()
	pred := make([]Slots, len(l.devs))
	// As in the pipeline: the classification a batch ahead of the pull.
	gather := func(from, to int) error {
		planned := make(chan *gatheredBatch, 1)
		var planErr, pullErr error
		go func() {
			defer close(planned)
			for k := from; k < to; k++ {
				g, err := l.planOne(cls, pred, sampled[k])
				if err != nil {
					planErr = err
					return
				}
				planned <- g
			}
		}()
		k := from
		for g := range planned {
			if pullErr == nil {
				pullErr = l.pull(g)
			}
			gathered[k] = g
			k++
		}
		if planErr != nil {
			return planErr
		}
		return pullErr
	}
	device := func(from, to int) error {
		for _, g := range gathered[from:to] {
			<-l.free[g.dev]
			b, err := l.copyOne(g)
			if err != nil {
				return err
			}
			b.Release()
		}
		return nil
	}
	if err := gather(0, warm); err != nil {
		return a, err
	}
	// The stores' rows are touched first, as a pipeline that has run a
	// while finds them mapped; so are the timed batches' host buffers: the
	// pipeline's buffers go round a pool, so its gathers do not wait for
	// the system to map fresh pages (which, here, would be most of the
	// stage's time).
	for _, st := range l.stores {
		if st != nil {
			l.touched ^= st.Touch()
		}
	}
	for _, s := range sampled[warm : warm+n] {
		size := len(s.batch.Blocks[0].Nodes) * l.rowBytes // at least the rows it fetches
		h := &hostBuffer{rows: make([]byte, size)}
		for i := 0; i < len(h.rows); i += 4096 {
			h.rows[i] = 1
		}
		l.stats.hostAlloc(int64(cap(h.rows)))
		l.spare = append(l.spare, h)
	}
	if a.Gather, a.GatherCPU, err = l.onSlowest(n, func() error { return gather(warm, warm+n) }); err != nil {
		return a, err
	}
	if err := device(0, warm); err != nil {
		return a, err
	}
	a.Device, a.DeviceCPU, err = l.onSlowest(n, func() error { return device(warm, warm+n) })
	return a, err
}

// sampleAlone samples tasks[from:to] into out with the loader's workers
// side by side, task i by worker i mod W, as the pipeline does.
func (l *Loader) sampleAlone(tasks []sampler.Task, out []sampled, from, to int) error {
	w := len(l.samplers)
	errs := make([]error, w)
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() {
			for i := from + (k-from%w+w)%w; i < to; i += w {
				b, err := l.samplers[k][0].SampleTask(tasks[i])
				if err != nil {
					errs[k] = err
					return
				}
				out[i] = sampled{item{seq: int64(i), task: tasks[i]}, b}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// onSlowest times fn on every rank after a barrier and returns the slowest
// rank's time per batch of n batches.
func (l *Loader) onSlowest(n int, fn func() error) (wall, cpu time.Duration, err error) {
	if err := l.c.Barrier(); err != nil {
		return 0, 0, err
	}
	t0, c0 := time.Now(), proc.CPU()
	if err := fn(); err != nil {
		return 0, 0, fmt.Errorf("prefetch: a stage alone: %w", err)
	}
	ns, err := collective.Max(l.c, int64(time.Since(t0)))
	if err != nil {
		return 0, 0, err
	}
	cns, err := collective.Max(l.c, int64(proc.CPU()-c0))
	return time.Duration(ns / int64(n)), time.Duration(cns / int64(n)), err
}

// machineCPUs returns the machine's online CPUs (runtime.NumCPU, which
// counts those the process may run on, where the system will not say).
func machineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, errA := strconv.Atoi(lo)
		z := a
		var errZ error
		if isRange {
			z, errZ = strconv.Atoi(hi)
		}
		if errA != nil || errZ != nil || z < a {
			return runtime.NumCPU()
		}
		n += z - a + 1
	}
	return max(n, 1)
}
