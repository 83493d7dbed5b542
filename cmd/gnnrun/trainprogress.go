package main

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"gnnrun/collective"
	"gnnrun/prefetch"
	"gnnrun/train"
)

// trainProgress is train's Monitor. It follows its trainer through the
// stream: the training epoch it is in, the batches it is done with, its
// time waiting for data and the figures it logs (gnnrun.log). Rank 0
// prints a line every --progress-every while training and one at every
// epoch's end, with the trainers' figures averaged over the ranks; the
// epochs' lines are kept for --report.
//
// An epoch ends, on a rank, when its trainer is done with a training
// batch of a later epoch, or when the run ends: a trainer logs an epoch's
// figures before it begins the next (the stream cannot give the next
// epoch's batches before the evaluation that follows). Every rank ends
// epochs 0..E-1 in order, so each epoch's gather (on a communicator of
// its own, off the hand-off's goroutine) meets on every rank, whatever
// the trainers do, and no rank waits for another to hand out batches.
type trainProgress struct {
	e        *env
	c        *collective.Comm
	epochs   int
	perEpoch int64 // training batches per epoch on this rank
	every    time.Duration

	mu        sync.Mutex
	start     time.Time // of the run
	firstDone time.Time // the trainer's first training batch done
	epoch     int       // the epoch the trainer trains in; -1 before the first
	done      int64     // its training batches done in that epoch
	trained   int64     // in all epochs
	wait      float64   // the trainer's seconds waiting for data so far
	first     int       // the run's first epoch (a resumed run's)
	ended     int       // epochs ended: first..ended-1
	endedAt   time.Time // when the last one ended (the run's start before)
	waitAt    float64   // the trainer's wait then
	logs      map[int]map[string]*runningMean

	queue    chan epochSummary
	finished chan struct{}
	series   []map[string]any // rank 0: the epochs' lines, for --report
	outMu    sync.Mutex
	stop     chan struct{}
}

// runningMean is the mean of the values a name was logged with.
type runningMean struct {
	sum float64
	n   int
}

// epochSummary is one rank's epoch, as its gather sends it.
type epochSummary struct {
	Epoch   int
	Batches int64
	Seconds float64
	Wait    float64 // seconds the trainer waited for data in the epoch
	Values  map[string]float64
}

// newTrainProgress starts following the trainer from epoch start (a
// resumed run's) to epochs, of perEpoch training batches each; every is
// the time between rank 0's lines (0: epoch lines only). It is collective
// (it makes its communicator).
func newTrainProgress(e *env, start, epochs int, perEpoch int64, every time.Duration) (*trainProgress, error) {
	c, err := e.comm.Dup()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	p := &trainProgress{e: e, c: c, epochs: epochs, perEpoch: perEpoch, every: every, start: now, epoch: start - 1, endedAt: now,
		ended: start, first: start, logs: map[int]map[string]*runningMean{}, queue: make(chan epochSummary, max(epochs-start, 1)),
		finished: make(chan struct{}), stop: make(chan struct{})}
	go p.gather()
	if e.comm.Rank() == 0 && every > 0 {
		go p.tick()
	}
	return p, nil
}

// Done counts a training batch the trainer is done with (handed or
// skipped), ending the epochs before its epoch.
func (p *trainProgress) Done(b train.BatchInfo, wait float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wait = max(p.wait, wait)
	if b.Kind != prefetch.TrainKind {
		return
	}
	if b.Epoch != p.epoch {
		p.endThrough(b.Epoch - 1)
		p.epoch, p.done = b.Epoch, 0
	}
	if p.firstDone.IsZero() {
		p.firstDone = time.Now()
	}
	p.done++
	p.trained++
}

// Logged adds the trainer's figures to its epoch's.
func (p *trainProgress) Logged(epoch int, values map[string]float64, wait float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wait = max(p.wait, wait)
	epoch = max(epoch, 0)
	if epoch < p.ended {
		p.e.log.Warn("gnnrun.log after the epoch ended (its next epoch's batches had begun): counted in the next", "epoch", epoch)
		epoch = p.ended
	}
	m := p.logs[epoch]
	if m == nil {
		m = map[string]*runningMean{}
		p.logs[epoch] = m
	}
	for k, v := range values {
		r := m[k]
		if r == nil {
			r = &runningMean{}
			m[k] = r
		}
		r.sum += v
		r.n++
	}
}

// endThrough ends the epochs up to last (with p.mu held), queueing their
// summaries for the gather.
func (p *trainProgress) endThrough(last int) {
	last = min(last, p.epochs-1)
	for ; p.ended <= last; p.ended++ {
		now := time.Now()
		s := epochSummary{Epoch: p.ended, Seconds: now.Sub(p.endedAt).Seconds(), Wait: p.wait - p.waitAt, Values: map[string]float64{}}
		if p.ended == p.epoch {
			s.Batches = p.done
		}
		for k, r := range p.logs[p.ended] {
			s.Values[k] = r.sum / float64(r.n)
		}
		delete(p.logs, p.ended)
		p.endedAt, p.waitAt = now, p.wait
		p.queue <- s
	}
}

// end ends the epochs not ended yet and waits for their gathers; it
// returns rank 0's epoch lines for the report. Every rank must call it
// once the hand-off is over: it is collective.
func (p *trainProgress) end() ([]map[string]any, error) {
	close(p.stop)
	p.mu.Lock()
	p.endThrough(p.epochs - 1)
	p.mu.Unlock()
	close(p.queue)
	<-p.finished
	return p.series, p.c.Free()
}

// gather meets the other ranks over each epoch's summary, in epoch
// order, and prints the epoch's line on rank 0.
func (p *trainProgress) gather() {
	defer close(p.finished)
	for s := range p.queue {
		var buf bytes.Buffer
		gob.NewEncoder(&buf).Encode(s) // gob, not JSON: a logged figure may be NaN
		all, counts, err := collective.Allgatherv(p.c, buf.Bytes())
		if err != nil {
			p.e.log.Warn("the epoch's progress line", "epoch", s.Epoch, "err", err)
			continue
		}
		if p.c.Rank() != 0 {
			continue
		}
		var ranks []epochSummary
		off := 0
		for _, n := range counts {
			var r epochSummary
			if gob.NewDecoder(bytes.NewReader(all[off:off+n])).Decode(&r) == nil {
				ranks = append(ranks, r)
			}
			off += n
		}
		p.epochLine(ranks)
	}
}

// epochLine prints an epoch's line from every rank's summary and keeps it.
func (p *trainProgress) epochLine(ranks []epochSummary) {
	if len(ranks) == 0 {
		return
	}
	e := ranks[0].Epoch
	var secs, wait float64
	var batches int64
	sums, counts := map[string]float64{}, map[string]int{}
	for _, r := range ranks {
		secs, wait, batches = max(secs, r.Seconds), wait+r.Wait, max(batches, r.Batches)
		for k, v := range r.Values {
			sums[k] += v
			counts[k]++
		}
	}
	if batches == 0 && len(sums) == 0 {
		return // an epoch the run never reached (it stopped early)
	}
	waitFrac := wait / float64(len(ranks)) / math.Max(secs, 1e-9)
	means := map[string]float64{}
	var figs []string
	for _, k := range slices.Sorted(maps.Keys(sums)) {
		means[k] = sums[k] / float64(counts[k])
		fig := fmt.Sprintf("%s %.4g", k, means[k])
		if counts[k] < len(ranks) {
			fig += fmt.Sprintf(" (%d of %d ranks)", counts[k], len(ranks))
		}
		figs = append(figs, fig)
	}
	line := fmt.Sprintf("train: epoch %d/%d done: %d batches in %s (%.3g batches/s), data wait %.1f%%",
		e+1, p.epochs, batches, roundDuration(secs), float64(batches)/math.Max(secs, 1e-9), 100*waitFrac)
	if len(figs) > 0 {
		line += "; " + strings.Join(figs, ", ") + " (mean over ranks)"
	}
	if left := p.epochs - 1 - e; left > 0 {
		line += fmt.Sprintf("; run ETA %s", roundDuration(time.Since(p.start).Seconds()/float64(e+1-p.first)*float64(left)))
	}
	p.outMu.Lock()
	p.e.printf("%s\n", line)
	p.outMu.Unlock()
	values := map[string]any{} // JSON has no NaN or infinity: those as strings
	for k, v := range means {
		values[k] = v
		if math.IsNaN(v) || math.IsInf(v, 0) {
			values[k] = fmt.Sprint(v)
		}
	}
	p.series = append(p.series, map[string]any{"epoch": e, "batches": batches, "seconds": secs, "data_wait_fraction": waitFrac,
		"values": values})
}

// tick prints rank 0's line every p.every until the end.
func (p *trainProgress) tick() {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			line := p.line()
			p.outMu.Lock()
			p.e.printf("%s\n", line)
			p.outMu.Unlock()
		}
	}
}

// line is rank 0's progress line now: its trainer's epoch and batches,
// the rate, the epoch's and the run's time left, its data wait.
func (p *trainProgress) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.firstDone.IsZero() {
		return fmt.Sprintf("train: waiting for the trainer's first batch (%s since the start)", roundDuration(now.Sub(p.start).Seconds()))
	}
	rate := float64(p.trained) / math.Max(now.Sub(p.firstDone).Seconds(), 1e-9)
	epochLeft := float64(p.perEpoch-p.done) / math.Max(rate, 1e-9)
	// The run's time left: from the epochs ended where there are (their
	// evaluation included), else from the training rate alone.
	var runLeft float64
	if p.ended > p.first {
		perEpoch := p.endedAt.Sub(p.start).Seconds() / float64(p.ended-p.first)
		runLeft = perEpoch*float64(p.epochs-p.ended) - now.Sub(p.endedAt).Seconds()
	} else {
		runLeft = float64(int64(p.epochs-p.epoch)*p.perEpoch-p.done) / math.Max(rate, 1e-9)
	}
	waitFrac := p.wait / math.Max(now.Sub(p.start).Seconds(), 1e-9)
	return fmt.Sprintf("train: epoch %d/%d: %d/%d batches (%.0f%%), %.3g batches/s, epoch ETA %s, run ETA %s, data wait %.1f%% (rank 0)",
		p.epoch+1, p.epochs, p.done, p.perEpoch, 100*float64(p.done)/math.Max(float64(p.perEpoch), 1), rate,
		roundDuration(epochLeft), roundDuration(max(runLeft, 0)), 100*waitFrac)
}

// roundDuration writes seconds as a duration a reader takes in at once.
func roundDuration(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= 10*time.Second:
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
