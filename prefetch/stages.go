package prefetch

import (
	"fmt"
	"time"

	"gnnrun/collective"
	"gnnrun/rank"
	"gnnrun/sampler"
)

// The stages run as goroutines joined by bounded channels; each runs ahead
// of the next by its channel's capacity. Batch k of the run (counting over
// epochs) is sampled by worker k mod W, so on every rank worker w samples
// the same batches' turns in the same order, and the collective exchanges
// of its sampler (alltoall) meet their partners; the gather stage reads
// worker k mod W's channel for batch k, so batches leave in order without
// a reorder buffer. The gather stage is two goroutines a batch apart, the
// classification and the pull, each in order (the pulls are collective
// too); the device stage is one: each batch's device update depends on the
// previous one's.

// item is a task on its way: its turn in the run.
type item struct {
	seq        int64
	task       sampler.Task
	kind       int // 0: training; k: evaluation set k-1
	endOfEpoch bool
	// lastOfEpoch marks the epoch's last batch of any kind: its last
	// evaluation batch after an epoch that evaluates.
	lastOfEpoch bool
	// index is a training batch's place among its epoch's on this rank.
	index int64
	// checkpoint, on the training batch after which the trainers
	// checkpoint, is how far its epoch got then (sampler.Plan.Progress).
	checkpoint []sampler.Segment
}

// sampled is a task's batch.
type sampled struct {
	item
	batch *sampler.Batch
}

func (l *Loader) start() {
	w := l.o.SampleWorkers
	per := (l.o.SampleDepth + w - 1) / w
	toWorker := make([]chan item, w)
	fromWorker := make([]chan sampled, w)
	for k := range w {
		toWorker[k] = make(chan item, per)
		fromWorker[k] = make(chan sampled, per)
	}
	gathered := make(chan *gatheredBatch, l.o.GatherDepth)
	l.stats.init(w)
	l.run(func() { l.schedule(toWorker) })
	for k := range w {
		l.run(func() { l.sampleWorker(k, toWorker[k], fromWorker[k]) })
	}
	planned := make(chan *gatheredBatch, 1)
	l.run(func() { l.classify(fromWorker, planned) })
	l.run(func() { l.gather(planned, gathered) })
	l.run(func() { l.device(gathered) })
}

// run starts a stage; a panic in it fails the pipeline like an error.
func (l *Loader) run(stage func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() {
			if p := recover(); p != nil {
				l.fail(fmt.Errorf("prefetch: panic in a stage: %v", p))
			}
		}()
		stage()
	}()
}

// fault runs the test hook of a stage.
func (l *Loader) fault(stage string) error {
	if l.o.Fault == nil {
		return nil
	}
	return l.o.Fault(stage)
}

// schedule sends the tasks of every epoch, one epoch after the other
// without a pause between them, each to its sampling worker, with the
// evaluation sets' tasks after the epochs that evaluate. Before each task
// the ranks agree whether all their trainers have stopped (Close), on the
// scheduler's own communicator; if so, every rank stops there.
func (l *Loader) schedule(to []chan item) {
	closeAll := func() {
		for _, ch := range to {
			close(ch)
		}
	}
	var seq int64
	send := func(it item) bool {
		due := NoCheckpoint
		if it.kind == 0 && l.o.CheckpointDue != nil {
			due = l.o.CheckpointDue()
		}
		stop, due, err := l.agree(due)
		if err != nil {
			l.fail(err)
			return false
		}
		if stop {
			return false
		}
		if due == Checkpoint {
			it.checkpoint = l.plan.Progress(it.task.Epoch, it.index+1)
			l.marked.Add(1)
		}
		it.seq = seq
		select {
		case to[seq%int64(len(to))] <- it:
		case <-l.ctx.Done():
			return false
		}
		seq++
		return true
	}
	for e := l.o.StartEpoch; e < l.o.Epochs; e++ {
		t0 := time.Now()
		items := l.epochItems(e)
		l.stats.busy(stageSchedule, time.Since(t0))
		for _, it := range items {
			if !send(it) {
				closeAll()
				return
			}
		}
	}
	closeAll()
	if l.o.CheckpointDue != nil {
		l.agreeUntilStopped()
	}
}

// agreeUntilStopped goes on agreeing, every tailPoll, once every task is
// scheduled, until the trainers of all ranks have stopped: a signal's
// final checkpoint may still come while the pipeline's last batches are
// on their way. Every rank leaves at the same round, the one that finds
// all stopped.
func (l *Loader) agreeUntilStopped() {
	for {
		due := l.o.CheckpointDue()
		if due != FinalCheckpoint {
			due = NoCheckpoint // periodic ones mark scheduled tasks alone
		}
		stop, _, err := l.agree(due)
		if err != nil {
			l.fail(err)
			return
		}
		if stop {
			return
		}
		select {
		case <-time.After(tailPoll):
		case <-l.ctx.Done():
			return
		}
	}
}

// tailPoll is how often the ranks agree once every task is scheduled.
const tailPoll = 50 * time.Millisecond

// epochItems lists epoch e's tasks in the order they run: its training
// batches, then, after an epoch that evaluates, each evaluation set's.
func (l *Loader) epochItems(e int) []item {
	var items []item
	tasks := l.plan.Epoch(l.o.Sampler.Seed, e)
	for i, t := range tasks {
		items = append(items, item{task: t, endOfEpoch: i == len(tasks)-1, index: int64(i)})
	}
	if l.o.evaluates(e) {
		for k, set := range l.o.Eval {
			for _, t := range set.Plan.Epoch(set.Sampler.Seed, e) {
				items = append(items, item{task: t, kind: k + 1})
			}
		}
	}
	if len(items) > 0 {
		items[len(items)-1].lastOfEpoch = true
	}
	return items
}

// agree is the ranks' agreement before each task, on the scheduler's
// communicator: whether the trainers of all ranks have stopped, and the
// most any rank says of a checkpoint (due: this one's). A final
// checkpoint is not this task's: it is the first training batch at or
// past finalMargin batches beyond the most any rank's Next has returned,
// so that the trainers stop within a few batches of the signal rather
// than after the pipeline's depth; Next marks it, the same batch on every
// rank unless one ran that far ahead in the moment of the agreement (the
// checkpoint then holds parts of different places, and is not written).
func (l *Loader) agree(due CheckpointLevel) (stop bool, most CheckpointLevel, err error) {
	v := []int64{1, int64(due), l.nexted.Load()} // max over ranks: some trainer runs; the checkpoint; the furthest rank
	if l.stopping.Load() {
		v[0] = 0
	}
	got, err := collective.Allreduce(l.sc, v, rank.Max)
	if err != nil {
		return false, NoCheckpoint, err
	}
	most = CheckpointLevel(got[1])
	if most == FinalCheckpoint && l.finalAt.Load() < 0 {
		l.finalAt.Store(got[2] + finalMargin)
	}
	return got[0] == 0, most, nil
}

// finalMargin is how many batches past the furthest rank's the final
// checkpoint goes: more than the hand-off takes from Next while the
// agreement runs (a batch or two).
const finalMargin = 3

// sampleWorker samples its turns of the tasks.
func (l *Loader) sampleWorker(w int, in chan item, out chan sampled) {
	defer close(out)
	for {
		it, ok := receive(l, stageSample, in)
		if !ok {
			return
		}
		if !step(l, stageSample, out, func() (sampled, error) {
			err := l.fault("sample")
			var b *sampler.Batch
			if err == nil {
				b, err = l.samplers[w][it.kind].SampleTask(it.task)
			}
			if err != nil {
				return sampled{}, fmt.Errorf("prefetch: sampling batch %d of epoch %d: %w", it.task.Number, it.task.Epoch, err)
			}
			return sampled{it, b}, nil
		}) {
			return
		}
	}
}

// receive takes a stage's next item from in, recording how full in was;
// false once in is closed or the pipeline stopped.
func receive[T any](l *Loader, stage int, in chan T) (T, bool) {
	var v T
	var ok bool
	select {
	case v, ok = <-in:
	case <-l.ctx.Done():
		return v, false
	}
	l.stats.queued(stage, len(in), cap(in))
	return v, ok
}

// step does one batch's work of a stage, counted as its busy time, and
// hands the result on; false when the stage must stop (the work failed,
// failing the loader, or the pipeline stopped).
func step[T any](l *Loader, stage int, out chan T, work func() (T, error)) bool {
	t1 := time.Now()
	v, err := work()
	l.stats.busy(stage, time.Since(t1))
	if err != nil {
		l.fail(err)
		return false
	}
	return send(l, out, v)
}

// send hands v to the next stage; false if the pipeline stopped first.
func send[T any](l *Loader, out chan T, v T) bool {
	select {
	case out <- v:
		return true
	case <-l.ctx.Done():
		return false
	}
}
