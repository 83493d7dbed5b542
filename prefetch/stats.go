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
	// TrainerWait is the time Next waited for a batch; Batches the batches
	// it returned.
	TrainerWait time.Duration
	Batches     int64
	// The input rows of every batch and where they came from.
	RowsInput, RowsReused, RowsHot, RowsFetched int64
	// The fetched rows, by where the gather found them.
	RowsLocal, RowsRemote int64
	// Bytes copied to the device, and what copying every input row would
	// have taken.
	BytesToDevice, BytesWithoutCache int64
	// HostBytes is the host memory the gather buffers took.
	HostBytes int64
}

// statsRecorder collects Stats from the stages' goroutines.
type statsRecorder struct {
	mu       sync.Mutex
	s        Stats
	fillSum  [stageCount]float64
	fillN    [stageCount]int64
	trainerN int64
	trainerF float64
}

func (r *statsRecorder) init(workers int) {
	r.s.Stages = make([]StageStats, stageCount)
	for i, n := range stageNames {
		r.s.Stages[i] = StageStats{Name: n, Workers: 1}
	}
	r.s.Stages[stageSample].Workers = workers
}

// busy adds work time to a stage.
func (r *statsRecorder) busy(stage int, d time.Duration) {
	r.mu.Lock()
	r.s.Stages[stage].Busy += d
	r.mu.Unlock()
}

// waited records a stage taking an item from a queue holding n of cap.
func (r *statsRecorder) waited(stage int, _ time.Duration, n, capacity int) {
	r.mu.Lock()
	r.s.Stages[stage].Items++
	if capacity > 0 {
		r.fillSum[stage] += float64(n) / float64(capacity)
		r.fillN[stage]++
	}
	r.mu.Unlock()
}

// trainerWait records the trainer's wait in Next for a batch.
func (r *statsRecorder) trainerWait(d time.Duration, n, capacity int) {
	r.mu.Lock()
	r.s.TrainerWait += d
	r.s.Batches++
	if capacity > 0 {
		r.trainerF += float64(n) / float64(capacity)
		r.trainerN++
	}
	r.mu.Unlock()
}

// rows records a batch's input rows and where they came from.
func (r *statsRecorder) rows(input, reused, hot, fetched, rowBytes int64) {
	r.mu.Lock()
	r.s.RowsInput += input
	r.s.RowsReused += reused
	r.s.RowsHot += hot
	r.s.RowsFetched += fetched
	r.s.BytesWithoutCache += input * rowBytes
	r.mu.Unlock()
}

func (r *statsRecorder) pulled(local, remote int64) {
	r.mu.Lock()
	r.s.RowsLocal += local
	r.s.RowsRemote += remote
	r.mu.Unlock()
}

func (r *statsRecorder) copied(bytes int64) {
	r.mu.Lock()
	r.s.BytesToDevice += bytes
	r.mu.Unlock()
}

func (r *statsRecorder) hostAlloc(bytes int64) {
	r.mu.Lock()
	r.s.HostBytes += bytes
	r.mu.Unlock()
}

// Stats returns what the loader did so far. The trainer's queue is the
// "device" stage's output; its mean fill when the trainer asked is
// TrainerQueueFill.
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

// TrainerQueueFill returns the mean fill of the trainer's queue when it
// asked for a batch.
func (l *Loader) TrainerQueueFill() float64 {
	r := &l.stats
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trainerN == 0 {
		return 0
	}
	return r.trainerF / float64(r.trainerN)
}
