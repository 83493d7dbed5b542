package prefetch

import (
	"fmt"

	"gnnrun/cuda"
	"gnnrun/sampler"
	"gnnrun/shard"
)

// CacheMode says whether the device keeps rows between batches.
type CacheMode int

// The cache modes.
const (
	// Reuse keeps each device buffer's rows and copies only the rows of
	// nodes it does not hold.
	Reuse CacheMode = iota
	// NoCache copies every input row of every batch.
	NoCache
)

// String returns the mode's flag name.
func (m CacheMode) String() string {
	if m == NoCache {
		return "none"
	}
	return "reuse"
}

// ParseCacheMode parses "reuse" or "none".
func ParseCacheMode(s string) (CacheMode, error) {
	switch s {
	case "reuse":
		return Reuse, nil
	case "none":
		return NoCache, nil
	}
	return 0, fmt.Errorf("prefetch: cache %q is not reuse or none", s)
}

// EvalSet is a set of evaluation batches: its plan (made with
// sampler.Complete, so every item is evaluated) and how to sample it.
type EvalSet struct {
	Name    string // Batch.Kind of its batches: "val", "test"
	Plan    *sampler.Plan
	Sampler sampler.Options // its fanouts; the transport is the loader's
}

// Options are the parameters of a Loader.
type Options struct {
	// Sampler draws the batches: its transport also fetches the remote
	// feature rows.
	Sampler sampler.Options
	// Epochs to run, and the seed of the split and the draws.
	Epochs int
	// Feature names the node array gathered for the input nodes: every
	// node type that has it, in one dtype, vectors of different widths
	// padded to the widest; the input nodes of types without it get zero
	// rows, set on the device.
	Feature string
	// Device receives the feature rows; the loader does not close it.
	Device cuda.Device
	// Cache: Reuse (default) or NoCache.
	Cache CacheMode
	// HotBytes is the device memory for a static cache of the rows of the
	// highest in-degree nodes (0: none).
	HotBytes int64

	// Depths of the stages: how many batches each may hold ahead of the
	// next. SampleWorkers samplers run side by side; 0: a quarter of the
	// rank's cores, at least 2 and at most SampleDepth.
	SampleWorkers int
	SampleDepth   int // batches sampled ahead of the gather, default 8
	GatherDepth   int // host buffers gathered ahead of the device copy, default 2
	DeviceDepth   int // batches on the device ahead of the trainer, default 1
	// GatherWorkers is the goroutines the gather's row copies are split
	// over (shard.StoreCopyWorkers); 0: a quarter of the rank's cores, 1
	// to maxGatherWorkers.
	GatherWorkers int

	// Eval are the sets the trainer evaluates on: after every EvalEvery
	// epochs (default 1) and after the last, the batches of every set, in
	// order, follow the epoch's training batches (Batch.Kind names the
	// set).
	Eval      []EvalSet
	EvalEvery int

	// Verify opens what Loader.Verify needs to check batches.
	Verify bool

	// StartEpoch is the first epoch to run (a resumed run's: its plan
	// resumed there, sampler.Plan.Resume).
	StartEpoch int
	// CheckpointDue, when set, is asked before each training task is
	// scheduled (in order, from the scheduler's goroutine) whether a
	// checkpoint is due: NoCheckpoint, Checkpoint, or FinalCheckpoint (the
	// run stops after it). The ranks agree on the most any of them says,
	// and every rank marks that task's batch (Batch.Checkpoint,
	// Batch.FinalCheckpoint): the trainers checkpoint after it. The
	// pipeline's depth of batches are already on their way then.
	CheckpointDue func() CheckpointLevel

	// Fault, when set, is called at every stage step with the stage's
	// name; an error it returns fails the stage (tests inject failures).
	Fault func(stage string) error
}

// CheckpointLevel says whether a checkpoint is due (Options.CheckpointDue).
type CheckpointLevel int64

// The checkpoint levels, in the order the ranks' agreement takes the most.
const (
	NoCheckpoint CheckpointLevel = iota
	Checkpoint
	FinalCheckpoint // a checkpoint, then the run stops
)

// TrainKind is the Kind of training batches.
const TrainKind = "train"

// evaluates reports whether the evaluation sets follow epoch e.
func (o *Options) evaluates(e int) bool {
	return len(o.Eval) > 0 && ((e+1)%o.EvalEvery == 0 || e == o.Epochs-1)
}

func (o *Options) setDefault() {
	if o.Feature == "" {
		o.Feature = "feat"
	}
	if o.Epochs == 0 {
		o.Epochs = 1
	}
	if o.SampleDepth == 0 {
		o.SampleDepth = 8
	}
	if o.GatherDepth == 0 {
		o.GatherDepth = 2
	}
	if o.DeviceDepth == 0 {
		o.DeviceDepth = 1
	}
	if o.EvalEvery == 0 {
		o.EvalEvery = 1
	}
}

// check validates the options after defaults.
func (o *Options) check() error {
	switch {
	case o.Device == nil:
		return fmt.Errorf("prefetch: no device")
	case o.Epochs < 1:
		return fmt.Errorf("prefetch: %d epochs; at least 1", o.Epochs)
	case o.SampleWorkers < 0 || o.SampleDepth < 1 || o.GatherDepth < 1 || o.DeviceDepth < 1:
		return fmt.Errorf("prefetch: sample workers %d, sample depth %d, gather depth %d, device depth %d: each must be at least 1",
			o.SampleWorkers, o.SampleDepth, o.GatherDepth, o.DeviceDepth)
	case o.SampleWorkers == 0:
		return fmt.Errorf("prefetch: sample workers not set from the rank's cores")
	case o.SampleDepth < o.SampleWorkers:
		return fmt.Errorf("prefetch: sample depth %d below the %d sample workers: each worker needs a batch in flight", o.SampleDepth, o.SampleWorkers)
	case o.StartEpoch < 0 || o.StartEpoch > o.Epochs:
		return fmt.Errorf("prefetch: starting at epoch %d of %d", o.StartEpoch, o.Epochs)
	case o.EvalEvery < 1:
		return fmt.Errorf("prefetch: evaluation every %d epochs; at least 1", o.EvalEvery)
	case o.GatherWorkers < 0:
		return fmt.Errorf("prefetch: %d gather workers; at least 1 (0: from the rank's cores)", o.GatherWorkers)
	case o.HotBytes < 0:
		return fmt.Errorf("prefetch: hot cache of %d bytes", o.HotBytes)
	case o.Cache != Reuse && o.Cache != NoCache:
		return fmt.Errorf("prefetch: unknown cache mode %d", int(o.Cache))
	}
	if o.Sampler.Transport != shard.Alltoall && o.Sampler.Transport != shard.RMA {
		return fmt.Errorf("prefetch: unknown transport %v", o.Sampler.Transport)
	}
	for _, e := range o.Eval {
		if e.Name == "" || e.Name == TrainKind || e.Plan == nil {
			return fmt.Errorf("prefetch: an evaluation set needs a plan and a name other than %q (got %q)", TrainKind, e.Name)
		}
	}
	return nil
}
