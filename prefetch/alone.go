package prefetch

import (
	"fmt"
	"sync"
	"time"

	"gnnrun/collective"
	"gnnrun/sampler"
	"gnnrun/shard"
)

// StagesAlone is the time per batch of each stage run alone, with nothing
// else running on the rank: what the pipeline's throughput is measured
// against. The pipeline at best runs at its slowest stage's rate; where
// the stages share the same cores it runs nearer the sum of their times.
type StagesAlone struct {
	Batches                int
	Sample, Gather, Device time.Duration // per batch
}

// Slowest returns the longest time per batch of a stage.
func (a StagesAlone) Slowest() time.Duration { return max(a.Sample, a.Gather, a.Device) }

// Sum returns the stages' times per batch added up.
func (a StagesAlone) Sum() time.Duration { return a.Sample + a.Gather + a.Device }

// MeasureStagesAlone runs the first batches of epoch 0 through each stage
// in turn, one stage at a time, as the pipeline would (the sample stage
// with its workers side by side), keeping each stage's output in memory
// for the next, and returns each stage's time per batch over n batches,
// the slowest rank's. As many batches as there are device buffers go
// first, untimed, so the timed ones meet buffers in their steady state
// (rows kept from the batch before). The batches' memory is held at once:
// keep n small. It is collective; every rank must pass the same n.
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

func (l *Loader) measureAlone(n int) (StagesAlone, error) {
	tasks := l.plan.Epoch(l.o.Sampler.Seed, 0)
	warm := min(len(l.devs), len(tasks))
	n = min(n, len(tasks)-warm)
	a := StagesAlone{Batches: n}
	if n <= 0 {
		return a, fmt.Errorf("prefetch: the stages alone need more than %d batches per epoch", warm)
	}
	l.stats.init(len(l.samplers))
	sampled := make([]sampled, warm+n)
	if err := l.sampleAlone(tasks, sampled, 0, warm); err != nil {
		return a, err
	}
	var err error
	if a.Sample, err = l.onSlowest(n, func() error { return l.sampleAlone(tasks, sampled, warm, warm+n) }); err != nil {
		return a, err
	}
	gathered := make([]*gatheredBatch, warm+n)
	cls := newClassifier()
	pred := make([]Slots, len(l.devs))
	gather := func(from, to int) error {
		for k := from; k < to; k++ {
			if gathered[k], err = l.gatherOne(cls, pred, sampled[k]); err != nil {
				return err
			}
		}
		return nil
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
	if a.Gather, err = l.onSlowest(n, func() error { return gather(warm, warm+n) }); err != nil {
		return a, err
	}
	if err := device(0, warm); err != nil {
		return a, err
	}
	a.Device, err = l.onSlowest(n, func() error { return device(warm, warm+n) })
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
func (l *Loader) onSlowest(n int, fn func() error) (time.Duration, error) {
	if err := l.c.Barrier(); err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := fn(); err != nil {
		return 0, fmt.Errorf("prefetch: a stage alone: %w", err)
	}
	ns, err := collective.Max(l.c, int64(time.Since(t0)))
	return time.Duration(ns / int64(n)), err
}
