package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gnnrun/atomicfile"
	"gnnrun/collective"
	"gnnrun/prefetch"
	"gnnrun/report"
	"gnnrun/sampler"
	"gnnrun/train"
)

// Checkpoints of train (--checkpoint DIR). Each is a directory
// DIR/ckpt-NNNNNN holding every rank's trainer state (trainer-rankR.pt,
// written by gnnrun.save), every rank's part (gnnrun-rankR.json) and
// manifest.json: what the run was (fingerprint), how far the stream got
// (the epoch and its segments, sampler.Segment), the ranks. A checkpoint
// is written into DIR/ckpt-NNNNNN.staging and renamed to its name by rank
// 0 once every rank's part is durable and the manifest written: a
// directory of that name is complete, and a crash mid-way leaves the
// previous checkpoint the newest. DIR must be one directory to every rank
// (a shared file system across hosts).

// checkpointExit is train's exit status after the checkpoint a signal
// asked for: the job is to be resumed (launch/gnnrun.sbatch requeues it).
const checkpointExit = 75

// errCheckpointExit ends train with checkpointExit.
var errCheckpointExit = errors.New("train: stopped after the checkpoint a signal asked for; the same command resumes from it")

// manifest is a checkpoint's manifest.json.
type manifest struct {
	Name        string            `json:"name"`
	Number      int               `json:"number"`
	Fingerprint map[string]string `json:"fingerprint"`
	Epoch       int               `json:"epoch"`
	Segments    []sampler.Segment `json:"segments"`
	Ranks       int               `json:"ranks"`
	Parts       []checkpointPart  `json:"parts"`
	Written     string            `json:"written"`
}

// checkpointPart is one rank's part of a checkpoint (gnnrun-rankR.json).
type checkpointPart struct {
	Rank     int               `json:"rank"`
	File     string            `json:"file"` // the trainer's state, "" when it saved none
	Bytes    int64             `json:"bytes"`
	Seconds  float64           `json:"save_seconds"` // the trainer's
	Epoch    int               `json:"epoch"`
	Segments []sampler.Segment `json:"segments"`
}

// checkpointer is train's checkpoints (train.Checkpoints): it decides when
// one is due, names them, and commits each once every rank's trainer
// saved its part, on a communicator of its own off the hand-off's
// goroutine; every rank commits the checkpoints the scheduler marked, in
// order, whatever its trainer did (a part it did not save fails that
// checkpoint).
type checkpointer struct {
	e      *env
	c      *collective.Comm
	dir    string
	every  time.Duration // 0: by batches
	nEvery int64         // every this many training batches a rank (0: by time)
	keep   int
	fp     map[string]string
	first  int // the number of this run's first checkpoint

	calls    atomic.Int64 // training tasks the scheduler asked about
	last     atomic.Int64 // unix nanos of the last checkpoint due
	signaled atomic.Bool  // a signal asks for a final checkpoint
	askedFin atomic.Bool  // the final checkpoint was asked of the scheduler

	mu      sync.Mutex
	named   int               // checkpoints named (Name)
	final   map[string]bool   // names of final checkpoints
	pending map[int]namedPart // named, not answered yet

	parts    chan namedPart
	finished chan struct{}
	stop     chan struct{}
	stopped  bool             // stop is closed: the checkpoints after it go unwritten, unsaid
	written  []map[string]any // rank 0: the checkpoints written, for --report
}

// namedPart is a trainer's word on checkpoint number n (file "": it
// saved nothing); end marks the number past the last.
type namedPart struct {
	n     int
	file  string
	bytes int64
	epoch int
	segs  []sampler.Segment
	end   bool
	save  float64 // the trainer's seconds saving it
}

// parseCheckpointEvery reads --checkpoint-every: a duration ("30m") or a
// count of training batches a rank ("500b").
func parseCheckpointEvery(s string) (time.Duration, int64, error) {
	if n, ok := strings.CutSuffix(s, "b"); ok {
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil || v < 1 {
			return 0, 0, fmt.Errorf("--checkpoint-every %q: want a duration (30m) or a count of batches (500b) of at least 1", s)
		}
		return 0, v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, 0, fmt.Errorf("--checkpoint-every %q: want a duration (30m) or a count of batches (500b)", s)
	}
	return d, 0, nil
}

// newCheckpointer opens DIR for checkpoints (created; checked to be the
// same directory on every rank) and finds the newest complete checkpoint
// to resume from (nil: none). It is collective.
func newCheckpointer(e *env, dir, every string, keep int, fp map[string]string) (*checkpointer, *manifest, error) {
	d, n, err := parseCheckpointEvery(every)
	if err == nil && keep < 1 {
		err = fmt.Errorf("--checkpoint-keep %d: must be at least 1", keep)
	}
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err = collective.Agree(e.comm, err); err != nil {
		return nil, nil, err
	}
	if err := sharedDir(e.comm, dir); err != nil {
		return nil, nil, err
	}
	m, err := newestCheckpoint(e.comm, dir)
	if err != nil {
		return nil, nil, err
	}
	c, err := e.comm.Dup()
	if err != nil {
		return nil, nil, err
	}
	cp := &checkpointer{e: e, c: c, dir: dir, every: d, nEvery: n, keep: keep, fp: fp, final: map[string]bool{},
		parts: make(chan namedPart, 64), finished: make(chan struct{}), stop: make(chan struct{}), pending: map[int]namedPart{}}
	if m != nil {
		cp.first = m.Number + 1
	}
	cp.last.Store(time.Now().UnixNano())
	go cp.commitLoop()
	return cp, m, nil
}

// sharedDir makes dir on rank 0 and checks that every rank sees it, with
// a file rank 0 wrote in it: checkpoints need one directory for all. It
// is collective.
func sharedDir(c *collective.Comm, dir string) error {
	probe := filepath.Join(dir, fmt.Sprintf(".gnnrun-probe-%d-%d", os.Getpid(), time.Now().UnixNano()))
	err := checkOnRoot(c, func() error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--checkpoint %s: %w", dir, err)
		}
		return os.WriteFile(probe, nil, 0o644)
	})
	if err != nil {
		return err
	}
	name, err := collective.Bcast(c, []byte(probe), 0)
	if err != nil {
		return err
	}
	if _, serr := os.Stat(string(name)); serr != nil {
		err = fmt.Errorf("--checkpoint %s: rank %d (%s) does not see the file rank 0 wrote there (%v): the directory must be one to every rank (a shared file system)", dir, c.Rank(), c.Host(), serr)
	}
	err = collective.Agree(c, err)
	if c.Rank() == 0 {
		os.Remove(probe)
	}
	return err
}

// newestCheckpoint returns the manifest of the newest complete checkpoint
// in dir, or nil; rank 0 reads it and removes stale staging directories,
// and every rank gets the same. It is collective.
func newestCheckpoint(c *collective.Comm, dir string) (*manifest, error) {
	var blob []byte
	err := checkOnRoot(c, func() error {
		names, err := checkpointNames(dir, true)
		if err != nil {
			return err
		}
		if len(names) > 0 {
			blob, err = os.ReadFile(filepath.Join(dir, names[len(names)-1], "manifest.json"))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	got, err := collective.Bcast(c, blob, 0)
	if err != nil || len(got) == 0 {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(got, &m); err != nil {
		return nil, fmt.Errorf("--checkpoint %s: the manifest of its newest checkpoint: %w", dir, err)
	}
	return &m, nil
}

// checkpointNames lists dir's complete checkpoints, oldest first; with
// clean, it removes the staging directories of checkpoints never
// committed (at the start of a run, before any is being written).
func checkpointNames(dir string, clean bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--checkpoint %s: %w", dir, err)
	}
	var out []string
	for _, ent := range ents {
		n := ent.Name()
		switch {
		case !ent.IsDir() || !strings.HasPrefix(n, "ckpt-"):
		case strings.HasSuffix(n, ".staging"):
			if clean {
				os.RemoveAll(filepath.Join(dir, n))
			}
		default:
			if _, err := os.Stat(filepath.Join(dir, n, "manifest.json")); err == nil {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// checkResume refuses a checkpoint of another run: it names what differs.
func (cp *checkpointer) checkResume(m *manifest, epochs int) error {
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(cp.fp)) {
		if m.Fingerprint[k] != cp.fp[k] {
			diffs = append(diffs, fmt.Sprintf("%s %q (the checkpoint's %q)", k, cp.fp[k], m.Fingerprint[k]))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("--checkpoint %s: its newest checkpoint, %s, is of another run: %s; resume with the flags and partitions it was written with, or give another --checkpoint directory",
			cp.dir, m.Name, strings.Join(diffs, "; "))
	}
	if m.Epoch >= epochs {
		return fmt.Errorf("--checkpoint %s: its newest checkpoint, %s, is in epoch %d of a run of --epochs %d: nothing is left to train (raise --epochs to go on)", cp.dir, m.Name, m.Epoch+1, epochs)
	}
	return nil
}

// due is the scheduler's question before each training task
// (prefetch.Options.CheckpointDue).
func (cp *checkpointer) due() prefetch.CheckpointLevel {
	n := cp.calls.Add(1)
	if cp.signaled.Load() && !cp.askedFin.Swap(true) {
		return prefetch.FinalCheckpoint
	}
	now := time.Now().UnixNano()
	if (cp.nEvery > 0 && n%cp.nEvery == 0) || (cp.every > 0 && time.Duration(now-cp.last.Load()) >= cp.every) {
		cp.last.Store(now)
		return prefetch.Checkpoint
	}
	return prefetch.NoCheckpoint
}

// Name names the checkpoint marked on b: the run's next number.
func (cp *checkpointer) Name(b *prefetch.Batch) string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	n := cp.first + cp.named
	cp.named++
	name := checkpointName(n)
	if b.FinalCheckpoint {
		cp.final[name] = true
	}
	cp.pending[n] = namedPart{n: n, epoch: b.Epoch, segs: b.Checkpoint}
	return name
}

func checkpointName(n int) string { return fmt.Sprintf("ckpt-%06d", n) }

// Part hears the trainer's part of a checkpoint.
func (cp *checkpointer) Part(name, file string, size int64, seconds float64) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "ckpt-"))
	cp.mu.Lock()
	p, ok := cp.pending[n]
	delete(cp.pending, n)
	cp.mu.Unlock()
	if err != nil || !ok {
		cp.e.log.Warn("the trainer's part of a checkpoint gnnrun did not ask for", "name", name)
		return
	}
	p.file, p.bytes, p.save = file, size, seconds
	cp.parts <- p
}

// Signal takes the first SIGTERM or SIGUSR1: a final checkpoint, then the
// run stops.
func (cp *checkpointer) Signal(s os.Signal) bool {
	cp.e.printf("train: %v: checkpointing after the batches already on their way, then stopping (exit status %d)\n", s, checkpointExit)
	cp.signaled.Store(true)
	return true
}

// Stop closes once the final checkpoint is committed (or failed).
func (cp *checkpointer) Stop() <-chan struct{} { return cp.stop }

// end commits or fails every checkpoint the scheduler marked (marked:
// the loader's count, the same on every rank once it is closed) and
// returns rank 0's record of those written. It is collective.
func (cp *checkpointer) end(marked int64) ([]map[string]any, error) {
	cp.parts <- namedPart{n: cp.first + int(marked), end: true} // every earlier one not heard of fails
	close(cp.parts)
	<-cp.finished
	return cp.written, cp.c.Free()
}

// commitLoop commits the checkpoints in order: a part for a later one
// fails those before it that the trainer never answered (it skipped the
// batch they follow, or stopped).
func (cp *checkpointer) commitLoop() {
	defer close(cp.finished)
	next := cp.first
	for p := range cp.parts {
		if p.n < next {
			continue
		}
		for ; next < p.n; next++ {
			cp.commit(namedPart{n: next})
		}
		if !p.end {
			cp.commit(p)
			next++
		}
	}
}

// commit writes this rank's part of checkpoint p, and on rank 0 the
// manifest and the rename once every rank's part is in; it is collective
// (on the checkpointer's communicator).
func (cp *checkpointer) commit(p namedPart) {
	t0 := time.Now()
	name := checkpointName(p.n)
	staging := filepath.Join(cp.dir, name+".staging")
	part := checkpointPart{Rank: cp.c.Rank(), File: p.file, Bytes: p.bytes, Seconds: p.save, Epoch: p.epoch, Segments: p.segs}
	var err error
	if p.file != "" {
		var blob []byte
		if blob, err = json.Marshal(part); err == nil {
			if err = os.MkdirAll(staging, 0o755); err == nil {
				err = atomicfile.WriteFile(filepath.Join(staging, fmt.Sprintf("gnnrun-rank%d.json", part.Rank)), blob)
			}
		}
	}
	if err != nil {
		cp.e.log.Warn("writing this rank's part of a checkpoint", "name", name, "err", err)
		part.File = ""
	}
	blob, _ := json.Marshal(part)
	all, counts, err := collective.Allgatherv(cp.c, blob)
	var ok int64
	if err == nil && cp.c.Rank() == 0 {
		ok = cp.writeManifest(name, p, all, counts, t0)
	}
	if err == nil {
		ok, err = collective.Max(cp.c, ok)
	}
	if err != nil {
		cp.e.log.Warn("checkpoint", "name", name, "err", err)
	}
	if cp.finalName(name) && !cp.stopped {
		if ok == 0 {
			cp.e.printf("train: the final checkpoint %s was not written: stopping anyway; a resume starts from the newest one written\n", name)
		}
		cp.stopped = true
		close(cp.stop)
	}
}

func (cp *checkpointer) finalName(name string) bool {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.final[name]
}

// writeManifest completes checkpoint name on rank 0 from every rank's
// part: 1 when written, 0 when a part is missing (the staging directory
// goes).
func (cp *checkpointer) writeManifest(name string, p namedPart, all []byte, counts []int, t0 time.Time) int64 {
	staging := filepath.Join(cp.dir, name+".staging")
	m := manifest{Name: name, Number: p.n, Fingerprint: cp.fp, Ranks: cp.c.Size(), Written: time.Now().UTC().Format(time.RFC3339)}
	var missing []int
	var bytes int64
	var save float64 // the slowest trainer's
	off := 0
	for r, n := range counts {
		var part checkpointPart
		if json.Unmarshal(all[off:off+n], &part) != nil || part.File == "" {
			missing = append(missing, r)
		}
		off += n
		m.Parts = append(m.Parts, part)
		bytes, save = bytes+part.Bytes, max(save, part.Seconds)
	}
	if len(missing) > 0 {
		os.RemoveAll(staging)
		if cp.stopped {
			return 0 // marked after the final one: the trainers stopped before it
		}
		cp.e.printf("train: checkpoint %s not written: the trainers of ranks %v did not save their part (gnnrun.save when gnnrun.checkpoint_due())\n", name, missing)
		return 0
	}
	m.Epoch, m.Segments = m.Parts[0].Epoch, m.Parts[0].Segments
	for _, part := range m.Parts {
		if part.Epoch != m.Epoch || !slices.Equal(part.Segments, m.Segments) {
			os.RemoveAll(staging)
			cp.e.printf("train: checkpoint %s not written: rank %d's trainer saved after another batch than rank 0's (epoch %d, %s, against epoch %d, %s)\n",
				name, part.Rank, part.Epoch+1, segmentsText(part.Segments), m.Epoch+1, segmentsText(m.Segments))
			return 0
		}
	}
	blob, _ := json.MarshalIndent(m, "", "  ")
	err := atomicfile.WriteFile(filepath.Join(staging, "manifest.json"), blob)
	if err == nil {
		err = os.Rename(staging, filepath.Join(cp.dir, name))
	}
	if err == nil {
		err = syncDir(cp.dir)
	}
	if err != nil {
		os.RemoveAll(staging)
		cp.e.printf("train: checkpoint %s not written: %v\n", name, err)
		return 0
	}
	secs := time.Since(t0).Seconds()
	cp.e.printf("train: checkpoint %s written: epoch %d, %s; %d ranks' state, %s, saved in %.3f s (the slowest trainer), committed in %.3f s\n",
		name, m.Epoch+1, segmentsText(m.Segments), m.Ranks, report.Bytes(bytes), save, secs)
	cp.written = append(cp.written, map[string]any{"name": name, "epoch": m.Epoch, "segments": m.Segments, "bytes": bytes,
		"save_seconds": save, "commit_seconds": secs, "at": time.Now().UTC().Format(time.RFC3339Nano)})
	cp.prune()
	return 1
}

// prune removes the complete checkpoints older than the newest keep.
func (cp *checkpointer) prune() {
	names, err := checkpointNames(cp.dir, false)
	if err != nil {
		return
	}
	for len(names) > cp.keep {
		os.RemoveAll(filepath.Join(cp.dir, names[0]))
		names = names[1:]
	}
}

// syncDir makes a directory's entries durable (the rename of a
// checkpoint).
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// segmentsText says how far an epoch got.
func segmentsText(segs []sampler.Segment) string {
	var parts []string
	for _, s := range segs {
		parts = append(parts, fmt.Sprintf("%d batches a rank at %d ranks", s.Done, s.Ranks))
	}
	if len(parts) == 0 {
		return "at its start"
	}
	return strings.Join(parts, ", then ")
}

var _ train.Checkpoints = (*checkpointer)(nil)
