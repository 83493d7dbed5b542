package prefetch

import (
	"sync"
	"time"
)

// The stages, as Stats names them.
const (
	stageSchedule = iota
	stageSample
	stageGather
	stageDevice
	stageCount
)

var stageNames = [stageCount]string{"schedule", "sample", "gather", "device"}

// StageStats is what one stage did: Busy is the time spent working (summed
// over its goroutines: the sample stage's workers run side by side), and
// MeanQueueFill the mean fill of its input queue when it took an item (1:
// always full, the stage is the bottleneck; 0: always empty, the stage
// before it is).
type StageStats struct {
	Name          string
	Workers       int
	Busy          time.Duration
	Items         int64
	MeanQueueFill float64
}

// Stats is what a Loader did so far.
type Stats struct {
	Stages []StageStats
	// TrainerWait is the time Next waited for batches after the first
	// (and for the end), StartupWait its wait for the first, while the
	// pipeline filled; Batches the batches it returned.
	TrainerWait, StartupWait time.Duration
	Batches                  int64
	// The input rows of every batch and where they came from.
	RowsInput, RowsReused, RowsHot, RowsFetched int64
	// RowsFeatureless are the input rows of node types without features:
	// zero rows, never copied from the host (those not held already are
	// zeroed on the device, the others are reused).
	RowsFeatureless int64
	// RowsMoved are reused rows moved within the device buffer (block 0's
	// destinations into its first rows, rows past a shrinking end), and
	// BytesMovedOnDevice the bytes those moves copied on the device (twice
	// a row's bytes for the moves that went through scratch memory).
	RowsMoved, BytesMovedOnDevice int64
	// The fetched rows, by where the gather found them; RowsHost are the
	// local rows of partitions other ranks of this host serve, copied from
	// their files (shard.StoreHostRows).
	RowsLocal, RowsRemote, RowsHost int64
	// Bytes copied to the device, and what copying every input row would
	// have taken.
	BytesToDevice, BytesWithoutCache int64
	// Memory in flight: the gather stage's host buffers and the device's
	// (batch buffers and hot cache), now and at their peak. The sampled
	// batches in the queues are bounded by the depths, not counted here.
	HostBytes, PeakHostBytes     int64
	DeviceBytes, PeakDeviceBytes int64
}

// statsRecorder collects Stats from the stages' goroutines.
type statsRecorder struct {
	mu      sync.Mutex
	s       Stats
	fillSum [stageCount]float64
	fillN   [stageCount]int64
}

func (r *statsRecorder) init(workers int) {
	r.s.Stages = make([]StageStats, stageCount)
	for i, n := range stageNames {
		r.s.Stages[i] = StageStats{Name: n, Workers: 1}
	}
	r.s.Stages[stageSample].Workers = workers
	r.s.Stages[stageGather].Workers = 2 // the classification and the pull
}

// busy adds work time to a stage.
func (r *statsRecorder) busy(stage int, d time.Duration) {
	r.mu.Lock()
	r.s.Stages[stage].Busy += d
	r.mu.Unlock()
}

// queued records a stage taking an item from a queue holding n of cap.
func (r *statsRecorder) queued(stage int, n, capacity int) {
	r.mu.Lock()
	r.s.Stages[stage].Items++
	if capacity > 0 {
		r.fillSum[stage] += float64(n) / float64(capacity)
		r.fillN[stage]++
	}
	r.mu.Unlock()
}

// trainerWait records the trainer's wait in Next, for a batch or for the
// end.
func (r *statsRecorder) trainerWait(d time.Duration, gotBatch bool) {
	r.mu.Lock()
	if r.s.Batches == 0 && gotBatch {
		r.s.StartupWait = d
	} else {
		r.s.TrainerWait += d
	}
	if gotBatch {
		r.s.Batches++
	}
	r.mu.Unlock()
}

// rows records a batch's input rows and where they came from; without
// the cache every input row with features would be copied.
func (r *statsRecorder) rows(input, reused, hot, fetched, featureless, moved, rowBytes int64) {
	r.mu.Lock()
	r.s.RowsFeatureless += featureless
	r.s.RowsMoved += moved
	r.s.RowsInput += input
	r.s.RowsReused += reused
	r.s.RowsHot += hot
	r.s.RowsFetched += fetched
	r.s.BytesWithoutCache += (input - featureless) * rowBytes
	r.mu.Unlock()
}

func (r *statsRecorder) pulled(local, remote, host int64) {
	r.mu.Lock()
	r.s.RowsLocal += local
	r.s.RowsRemote += remote
	r.s.RowsHost += host
	r.mu.Unlock()
}

// copied records bytes copied to the device, bytes moved on it and a
// change of the device memory held.
func (r *statsRecorder) copied(bytes, movedBytes, deviceDelta int64) {
	r.mu.Lock()
	r.s.BytesToDevice += bytes
	r.s.BytesMovedOnDevice += movedBytes
	r.s.DeviceBytes += deviceDelta
	r.s.PeakDeviceBytes = max(r.s.PeakDeviceBytes, r.s.DeviceBytes)
	r.mu.Unlock()
}

// hostAlloc records a change of the host memory the gather buffers hold.
func (r *statsRecorder) hostAlloc(delta int64) {
	r.mu.Lock()
	r.s.HostBytes += delta
	r.s.PeakHostBytes = max(r.s.PeakHostBytes, r.s.HostBytes)
	r.mu.Unlock()
}

// Stats returns what the loader did so far.
func (l *Loader) Stats() Stats {
	r := &l.stats
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	s.Stages = append([]StageStats(nil), r.s.Stages...)
	for i := range s.Stages {
		if r.fillN[i] > 0 {
			s.Stages[i].MeanQueueFill = r.fillSum[i] / float64(r.fillN[i])
		}
	}
	return s
}
