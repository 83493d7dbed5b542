package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/internal/proc"
	"gnnrun/prefetch"
	"gnnrun/report"
	"gnnrun/shard"
)

type loaderArgs struct {
	pipelineFlags
	device            string
	computeMS         float64
	verify            bool
	maxBatches, alone int
}

var loaderFlags loaderArgs

func init() {
	register(&command{
		name:    "loader",
		summary: "run the asynchronous mini-batch pipeline (sample, gather, device copy) with a stand-in trainer",
		usage:   "loader PARTDIR --fanouts 15,10,5 --batch-size 1024 --epochs E [--device host|cuda|auto] [--cache reuse|none] [--hot-cache BYTES] [--compute-ms X] [--verify] [flags]",
		help: `Runs the per-GPU pipeline on every rank, as a trainer would get its
batches: the schedule of the next batches, sampling (--sample-workers side by
side, up to --sample-depth batches ahead), the gather of the input nodes'
--feat rows (local ones from the mapped partition, remote ones over
--transport) into one host buffer per batch (--gather-depth ahead, its row
copies split over --gather-workers goroutines), and the copy to the device
(--device-depth batches ahead of the trainer). The pipeline does not stop
between epochs. A stand-in trainer holds each batch
for --compute-ms milliseconds (a GPU's step, which takes no CPU), then
releases it.

The device keeps each buffer's rows from the batch it last held (--cache
reuse): a new batch's input nodes found there stay in their rows, and only
the others are gathered and copied, into the rows of the nodes that left,
in ascending order; the buffer grows or shrinks to the batch. Rows are then
in slot order: the batch's outermost block's source indices are renumbered
to slots, and the batch carries each input node's slot. With --hot-cache
BYTES the rows of the highest in-degree nodes that fit are kept on the
device for the whole run and copied from there.

--verify copies every batch back from the device and checks each input
node's row against the partition's row of the node. At the end rank 0 prints
per stage its busy time and the mean fill of its input queue, the trainer's
wait as a fraction of the run, batches/s, rows gathered locally and
remotely, rows reused and from the hot cache, and the bytes copied to the
device against the bytes of every input row, the ranks' CPU time per
batch during the run with the share of their cores it kept busy (near
all of them, the cores set the pace), and the memory in flight.
--max-batches N stops the trainer early (the pipeline shuts down cleanly).

--stages-alone N first runs N batches through each stage alone (sample,
with its workers; gather; device copy), one stage at a time, after up to 16
untimed ones (so that the device buffers have grown), and prints each
stage's time per batch beside the pipeline's: the pipeline can at best keep
pace with its slowest stage; where all stages share the same cores it runs
nearer the sum of their times.

` + batchFlagsHelp,
		flags: func(fs *pflag.FlagSet) {
			f := &loaderFlags
			f.pipelineFlags.register(fs)
			fs.StringVar(&f.device, "device", "host", "where the batches go: host, cuda or auto (cuda when a GPU is bound to the rank)")
			fs.Float64Var(&f.computeMS, "compute-ms", 0, "milliseconds the stand-in trainer holds each batch")
			fs.BoolVar(&f.verify, "verify", false, "check every batch's device rows against the partition's rows")
			fs.IntVar(&f.maxBatches, "max-batches", 0, "stop the trainer after this many batches (0: all)")
			fs.IntVar(&f.alone, "stages-alone", 0, "first time each stage alone over this many batches (held in memory at once), and compare")
		},
		run: runLoader,
	})
}

// loaderRun is one run of the command.
type loaderRun struct {
	e       *env
	f       loaderArgs
	served  *shard.Served
	l       *prefetch.Loader
	dump    *dumper
	elapsed time.Duration
	// cpu is the CPU time the rank's process took over elapsed (every
	// stage's threads, user and system).
	cpu time.Duration
	// The trainer's waits: for the first batch of every epoch after the
	// first, and for the others.
	firstWait, otherWait time.Duration
	firsts, others       int64
	// The last epoch's waits and time (with two epochs or more): the
	// steady state, past the pipeline's start in the first.
	lastWait, lastTime time.Duration
	alone              *prefetch.StagesAlone
}

func runLoader(e *env, args []string) error {
	f := loaderFlags
	if len(args) != 1 {
		return fmt.Errorf("want one partition directory (see gnnrun help loader)")
	}
	o, err := f.prefetchOptions()
	if err != nil {
		return err
	}
	if f.dump != "" {
		if err := checkOnRoot(e.comm, func() error { return checkDirPath("--dump", f.dump) }); err != nil {
			return err
		}
	}
	kind, err := cuda.ParseKind(f.device)
	if err != nil {
		return err
	}
	dev, served, err := f.open(e, args[0], kind)
	if err != nil {
		return err
	}
	o.Device = dev
	r := &loaderRun{e: e, f: f, served: served}
	if err := r.start(o); err != nil {
		return err
	}
	if err := r.train(); err != nil {
		return err
	}
	if err := r.finish(); err != nil {
		return err
	}
	if err := served.Close(); err != nil {
		return err
	}
	return dev.Close()
}

// prefetchOptions turns the flags into the pipeline's options, failing on
// bad values before any work.
func (f *loaderArgs) prefetchOptions() (prefetch.Options, error) {
	o, err := f.pipelineFlags.options()
	if err != nil {
		return o, err
	}
	o.Verify = f.verify
	switch {
	case f.computeMS < 0:
		return o, fmt.Errorf("--compute-ms %v: must be >= 0", f.computeMS)
	case f.maxBatches < 0:
		return o, fmt.Errorf("--max-batches %d: must be >= 0", f.maxBatches)
	}
	return o, nil
}

// start makes the plan, the loader and the dumper. It is collective.
func (r *loaderRun) start(o prefetch.Options) error {
	e := r.e
	pl, err := r.f.plan(e.comm, r.served, &o.Sampler)
	if err != nil {
		return err
	}
	o.Fault = e.faultPoint
	if r.f.alone > 0 {
		end := e.stage("stages alone")
		a, err := prefetch.MeasureStagesAlone(e.comm, r.served, pl, o, r.f.alone)
		end()
		if err != nil {
			return err
		}
		r.alone = &a
	}
	end := e.stage("setup")
	r.l, err = prefetch.New(e.comm, r.served, pl, o)
	end()
	if err != nil {
		return err
	}
	if r.f.dump != "" {
		if r.dump, err = newDumper(e.comm, r.served, r.f.dump, o.Sampler.Transport); err != nil {
			return err
		}
	}
	r.f.describe(e, r.served, pl, "loader", r.l.HostGraphOff())
	e.printf("  device %s, cache %s, hot cache %s, depths: %d sample workers, sample %d, gather %d (copy workers: %d), device %d\n",
		o.Device.Name(), r.f.cache, report.Bytes(r.f.hotBytes), r.l.SampleWorkers(), r.f.sampleDepth, r.f.gatherDepth, r.l.GatherWorkers(), r.f.deviceDepth)
	return nil
}

// train is the stand-in trainer: it takes every batch, holds it
// --compute-ms, verifies and dumps it when asked, and releases it.
func (r *loaderRun) train() error {
	e, f := r.e, r.f
	task := e.meter.Start("loader", r.l.BatchesPerRank(), "batches")
	end := e.stage("train")
	defer end()
	t0, c0 := time.Now(), proc.CPU()
	hold := time.Duration(f.computeMS * float64(time.Millisecond))
	newEpoch := false
	epoch := 0
	var lastStart time.Time
	for n := 0; f.maxBatches == 0 || n < f.maxBatches; n++ {
		tw := time.Now()
		b, err := r.l.Next()
		wait := time.Since(tw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if newEpoch {
			r.firstWait += wait
			r.firsts++
		} else if n > 0 {
			r.otherWait += wait
			r.others++
		}
		if epoch == f.epochs-1 && epoch > 0 {
			if lastStart.IsZero() {
				lastStart = tw
			}
			r.lastWait += wait
		}
		if b.EndOfEpoch {
			epoch++
		}
		newEpoch = b.EndOfEpoch
		if hold > 0 {
			time.Sleep(hold)
		}
		if err := r.check(b); err != nil {
			return err
		}
		b.Release()
		task.Add(1)
	}
	r.elapsed, r.cpu = time.Since(t0), proc.CPU()-c0
	if !lastStart.IsZero() {
		r.lastTime = time.Since(lastStart)
	}
	task.Done()
	return nil
}

// check verifies and dumps a batch as asked.
func (r *loaderRun) check(b *prefetch.Batch) error {
	if r.f.verify {
		if err := r.l.Verify(b); err != nil {
			return err
		}
	}
	if r.dump == nil {
		return nil
	}
	return r.dump.dump(b.Batch, b.NodeSources(), b.Kind)
}

// finish closes the loader and prints and records what it did; it is
// collective.
func (r *loaderRun) finish() error {
	if err := r.l.Close(); err != nil {
		return err
	}
	if r.dump != nil {
		if err := r.dump.close(); err != nil {
			return err
		}
	}
	return r.report()
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// loaderFigures names what every rank contributes to the report, in the
// order ranks send them; perRank gathers them.
var loaderFigures = []string{"seconds", "wait", "startup", "batches", "input", "reused", "hot", "fetched", "local", "remote", "host",
	"bytes", "bytes_nocache", "first_wait", "firsts", "other_wait", "others", "peak_host", "peak_device", "moved", "moved_bytes", "featureless", "last_wait", "last_seconds", "cpu", "cores"}

// perRank is every rank's figures by name.
type perRank map[string][]float64

func (m perRank) sum(k string) float64 {
	s := 0.0
	for _, v := range m[k] {
		s += v
	}
	return s
}

// dot returns the sum over ranks of figure a times figure b.
func (m perRank) dot(a, b string) float64 {
	s := 0.0
	for i, v := range m[a] {
		s += v * m[b][i]
	}
	return s
}

func (m perRank) max(k string) float64 {
	s := 0.0
	for _, v := range m[k] {
		s = max(s, v)
	}
	return s
}

// gatherFigures gathers the named figures (and each stage's busy time and
// queue fill) of every rank; it is collective.
func (r *loaderRun) gatherFigures(st prefetch.Stats) (perRank, error) {
	mine := map[string]float64{"seconds": r.elapsed.Seconds(), "wait": st.TrainerWait.Seconds(), "startup": st.StartupWait.Seconds(), "batches": float64(st.Batches),
		"input": float64(st.RowsInput), "reused": float64(st.RowsReused), "hot": float64(st.RowsHot), "fetched": float64(st.RowsFetched),
		"local": float64(st.RowsLocal), "remote": float64(st.RowsRemote), "host": float64(st.RowsHost), "bytes": float64(st.BytesToDevice),
		"bytes_nocache": float64(st.BytesWithoutCache), "first_wait": r.firstWait.Seconds(), "firsts": float64(r.firsts),
		"other_wait": r.otherWait.Seconds(), "others": float64(r.others), "peak_host": float64(st.PeakHostBytes),
		"peak_device": float64(st.PeakDeviceBytes), "moved": float64(st.RowsMoved), "moved_bytes": float64(st.BytesMovedOnDevice),
		"featureless": float64(st.RowsFeatureless), "last_wait": r.lastWait.Seconds(), "last_seconds": r.lastTime.Seconds(),
		"cpu": r.cpu.Seconds(), "cores": r.l.Cores()}
	names := append([]string(nil), loaderFigures...)
	for _, s := range st.Stages {
		mine[s.Name+"_busy"], mine[s.Name+"_fill"] = s.Busy.Seconds(), s.MeanQueueFill
		names = append(names, s.Name+"_busy", s.Name+"_fill")
	}
	vals := make([]float64, len(names))
	for i, n := range names {
		vals[i] = mine[n]
	}
	all, _, err := collective.Allgatherv(r.e.comm, vals)
	if err != nil {
		return nil, err
	}
	out := perRank{}
	for k, n := range names {
		for p := range r.e.comm.Size() {
			out[n] = append(out[n], all[p*len(names)+k])
		}
	}
	return out, nil
}

// report prints the run's numbers, per stage and in total over ranks, and
// records them under results.loader.
func (r *loaderRun) report() error {
	e := r.e
	st := r.l.Stats()
	m, err := r.gatherFigures(st)
	if err != nil {
		return err
	}
	p := float64(e.comm.Size())
	slowest := m.max("seconds")
	// The wait after the first batch, over the run after it: the steady
	// state; the first batch waits while the pipeline fills, reported apart.
	waitFrac := m.sum("wait") / max(m.sum("seconds")-m.sum("startup"), 1e-9)
	e.printf("  %-9s %8s %12s\n", "stage", "busy s", "queue fill")
	stages := map[string]any{}
	for _, s := range st.Stages {
		busy, fill := m.sum(s.Name+"_busy")/p, m.sum(s.Name+"_fill")/p
		e.printf("  %-9s %8.3f %11.0f%%   (mean over ranks; %d worker(s) each)\n", s.Name, busy, 100*fill, s.Workers)
		stages[s.Name] = map[string]float64{"busy_s": busy, "mean_queue_fill": fill}
	}
	e.printf("  trainer waited %.1f%% of the run after its first batch (%.3fs of %.3fs per rank), %.1f ms for the first; %.1f batches/s per rank, %.1f in all\n",
		100*waitFrac, m.sum("wait")/p, (m.sum("seconds")-m.sum("startup"))/p, 1e3*m.max("startup"), m.sum("batches")/p/max(slowest, 1e-9), m.sum("batches")/max(slowest, 1e-9))
	firstWait, otherWait := m.sum("first_wait")/max(m.sum("firsts"), 1), m.sum("other_wait")/max(m.sum("others"), 1)
	if m.sum("firsts") > 0 && m.sum("others") > 0 {
		e.printf("  first batch of an epoch waited %.2f ms on average, the others %.2f ms\n", 1e3*firstWait, 1e3*otherWait)
	}
	lastFrac := -1.0 // no last epoch apart from the first
	if m.sum("last_seconds") > 0 {
		lastFrac = m.sum("last_wait") / m.sum("last_seconds")
		e.printf("  in the last epoch (the steady state, past the first epoch's start) the trainer waited %.1f%% (%.3fs of %.3fs per rank)\n",
			100*lastFrac, m.sum("last_wait")/p, m.sum("last_seconds")/p)
	}
	e.printf("  input rows %s: reused %s (%.1f%%), hot cache %s, copied %s (gathered %s locally, %s of them from this host's other ranks' partitions, and %s remotely)\n",
		report.Count(int64(m.sum("input"))), report.Count(int64(m.sum("reused"))), 100*m.sum("reused")/max(m.sum("input"), 1),
		report.Count(int64(m.sum("hot"))), report.Count(int64(m.sum("fetched"))), report.Count(int64(m.sum("local"))), report.Count(int64(m.sum("host"))),
		report.Count(int64(m.sum("remote"))))
	e.printf("  bytes to the device %s, without the cache %s (saved %s = %s rows of %d bytes)\n",
		report.Bytes(int64(m.sum("bytes"))), report.Bytes(int64(m.sum("bytes_nocache"))), report.Bytes(int64(m.sum("bytes_nocache")-m.sum("bytes"))),
		report.Count(int64(m.sum("reused")+m.sum("hot"))), r.l.RowBytes())
	if n := m.sum("featureless"); n > 0 {
		e.printf("  rows of node types without features %s (zeroed on the device, not copied)\n", report.Count(int64(n)))
	}
	e.printf("  moved on the device %s rows (%s: block 0's destinations into the first rows, rows past a shrinking end)\n",
		report.Count(int64(m.sum("moved"))), report.Bytes(int64(m.sum("moved_bytes"))))
	// The cores the run kept busy: where they are all busy, the stages'
	// CPU time per batch over the cores sets the pace, not a stage alone.
	cpuPerBatch := m.sum("cpu") / max(m.sum("batches"), 1)
	coresBusy := m.sum("cpu") / max(m.dot("seconds", "cores"), 1e-9)
	e.printf("  CPU during the run: %.2f ms a batch per rank (every stage's threads), %.0f%% of the ranks' cores busy (%.3g per rank)\n",
		1e3*cpuPerBatch, 100*coresBusy, m.sum("cores")/p)
	e.printf("  memory in flight per rank at most: host gather buffers %s, device %s; batches in flight at most %d\n",
		report.Bytes(int64(m.max("peak_host"))), report.Bytes(int64(m.max("peak_device"))), r.l.MaxInFlight())
	var alone map[string]any
	if a := r.alone; a != nil {
		perBatch := slowest / max(m.max("batches"), 1)
		bound, by := a.Bound()
		e.printf("  stages alone over %d batches: sample %.2f ms, gather %.2f ms, device %.2f ms per batch (CPU %.2f, %.2f, %.2f ms on %.3g cores per rank); the pipeline %.2f ms: %.2f of the slowest stage's rate, %.2f of the sum's, %.2f of the bound its cores allow (%.2f ms, set by %s)\n",
			a.Batches, ms(a.Sample), ms(a.Gather), ms(a.Device), ms(a.SampleCPU), ms(a.GatherCPU), ms(a.DeviceCPU), a.Cores,
			1e3*perBatch, a.Slowest().Seconds()/perBatch, a.Sum().Seconds()/perBatch, bound.Seconds()/perBatch, ms(bound), by)
		alone = map[string]any{"batches": a.Batches, "sample_s": a.Sample.Seconds(), "gather_s": a.Gather.Seconds(),
			"device_s": a.Device.Seconds(), "pipeline_s": perBatch, "sample_cpu_s": a.SampleCPU.Seconds(), "gather_cpu_s": a.GatherCPU.Seconds(),
			"device_cpu_s": a.DeviceCPU.Seconds(), "cores_per_rank": a.Cores, "bound_s": bound.Seconds(), "bound_by": by}
	}
	perEpoch, items := r.l.Trained()
	trained, err := r.f.reportTrained(e, perEpoch, items)
	if err != nil {
		return err
	}
	batches := make([]int64, len(m["batches"]))
	for i, v := range m["batches"] {
		batches[i] = int64(v)
	}
	e.rec.Set("loader", map[string]any{
		"trainer_wait_fraction": waitFrac, "startup_wait_s": m.max("startup"), "rows_input": m.sum("input"), "rows_reused": m.sum("reused"), "rows_hot": m.sum("hot"),
		"rows_fetched": m.sum("fetched"), "rows_local": m.sum("local"), "rows_host": m.sum("host"), "rows_remote": m.sum("remote"), "batches": batches,
		"bytes_to_device": m.sum("bytes"), "bytes_to_device_without_cache": m.sum("bytes_nocache"), "stages": stages,
		"rows_moved": m.sum("moved"), "bytes_moved_on_device": m.sum("moved_bytes"), "rows_featureless": m.sum("featureless"),
		"first_of_epoch_wait_s": firstWait, "other_wait_s": otherWait, "seconds_slowest": slowest, "last_epoch_wait_fraction": lastFrac,
		"peak_host_bytes": m.max("peak_host"), "peak_device_bytes": m.max("peak_device"), "max_batches_in_flight": r.l.MaxInFlight(),
		"stages_alone_per_batch": alone, "trained": trained, "gather_workers": r.l.GatherWorkers(), "sample_workers": r.l.SampleWorkers(),
		"host_graph": r.f.hostGraph && r.l.HostGraphOff() == "", "host_graph_off": r.l.HostGraphOff(),
		"cpu_s_per_batch": cpuPerBatch, "cores_busy": coresBusy,
	})
	return nil
}
