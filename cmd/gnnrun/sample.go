package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/collective"
	"gnnrun/report"
	"gnnrun/sampler"
	"gnnrun/shard"
)

var (
	sampleFlags batchFlags
	sampleServe serveFlags
)

func init() {
	register(&command{
		name:    "sample",
		summary: "draw neighbour-sampled mini-batches (node or link tasks) over a partition directory",
		usage:   "sample PARTDIR --fanouts 15,10,5 --batch-size 1024 [--task node|link] [--epochs E] [--seed S] [--transport alltoall|rma] [--dump DIR] [flags]",
		help: `Serves PARTDIR on every rank (with P ranks over K partitions: a run of
partitions per rank when P < K, P/K ranks per partition when P >= K, which
must then be a multiple of K) and samples --epochs epochs of mini-batches,
each rank its share of the training set, then prints batches/s, seeds/s and
sampled edges/s per rank and in total, the share of frontier nodes sampled
at other ranks, the bytes exchanged for them, and the time per frontier
node: µs/local is the sampler's local steps (drawing its own partitions'
nodes, numbering the blocks) over the nodes drawn here, µs/remote its
remote steps (the exchanges or one-sided reads, what they wait for, and
drawing the nodes other ranks ask of this one) over the nodes drawn
elsewhere.

` + batchFlagsHelp,
		flags: func(fs *pflag.FlagSet) { sampleFlags.register(fs); sampleServe.register(fs) },
		run:   runSample,
	})
}

// sampleJob is one run of the command: what it serves, samples and counts.
type sampleJob struct {
	e      *env
	f      batchFlags
	served *shard.Served
	plan   *sampler.Plan
	sm     *sampler.Sampler
	dump   *dumper
	secs   float64 // this rank's time in SampleTask
	// Per epoch, the training items of the batches this rank sampled.
	trained []int64
}

func runSample(e *env, args []string) error {
	f := sampleFlags
	if len(args) != 1 {
		return fmt.Errorf("want one partition directory (see gnnrun help sample)")
	}
	o, err := f.options()
	if err != nil {
		return err
	}
	if f.dump != "" {
		if err := checkOnRoot(e.comm, func() error { return checkDirPath("--dump", f.dump) }); err != nil {
			return err
		}
	}
	served, err := sampleServe.serve(e, args[0])
	if err != nil {
		return err
	}
	defer served.Close()
	j := &sampleJob{e: e, f: f, served: served}
	if err := j.setup(o); err != nil {
		return err
	}
	if err := j.run(); err != nil {
		return err
	}
	return j.close()
}

// setup makes the plan, the sampler and (for --dump) the dumper. It is
// collective.
func (j *sampleJob) setup(o sampler.Options) error {
	e := j.e
	var err error
	end := e.stage("plan")
	j.plan, err = j.f.plan(e.comm, j.served, &o)
	end()
	if err != nil {
		return err
	}
	if j.sm, err = sampler.New(e.comm, j.served, o); err != nil {
		return err
	}
	if err := j.sm.CheckPlan(j.plan); err != nil {
		return err
	}
	if j.f.dump != "" {
		if j.dump, err = newDumper(e.comm, j.served, j.f.dump, o.Transport); err != nil {
			return err
		}
	}
	j.f.describe(e, j.served, j.plan, "sample", j.sm.HostGraphOff())
	return nil
}

// run samples every epoch, dumping batches when asked.
func (j *sampleJob) run() error {
	e := j.e
	total := j.plan.BatchesPerEpoch() * int64(j.f.epochs)
	task := e.meter.Start("sample", total, "batches")
	end := e.stage("sample")
	defer end()
	j.trained = make([]int64, j.f.epochs)
	for ep := range j.f.epochs {
		for _, t := range j.plan.Epoch(j.f.seed, ep) {
			t0 := time.Now()
			b, err := j.sm.SampleTask(t)
			j.secs += time.Since(t0).Seconds()
			if err != nil {
				return err
			}
			j.trained[ep] += int64(b.Items())
			if j.dump != nil {
				if err := j.dump.dump(b, nil, ""); err != nil {
					return err
				}
			}
			task.Add(1)
		}
	}
	task.Done()
	return nil
}

// close prints the rates and releases the sampler; it is collective.
func (j *sampleJob) close() error {
	if err := j.report(); err != nil {
		return err
	}
	if j.dump != nil {
		if err := j.dump.close(); err != nil {
			return err
		}
	}
	return j.sm.Close()
}

// report prints per rank and in total the rates, the remote share, the
// bytes exchanged and the time per local and per remote frontier node
// (the sampler's local and remote steps over the nodes each served), and
// records them.
func (j *sampleJob) report() error {
	e := j.e
	st := j.sm.Stats()
	pst := j.plan.Stats()
	mine := []float64{j.secs, float64(st.Batches), float64(st.Seeds), float64(st.Edges), float64(st.LocalNodes), float64(st.RemoteNodes), float64(st.Sent), float64(st.Received), pst.LocalShare,
		st.LocalSeconds, st.RemoteSeconds}
	all, _, err := collective.Allgatherv(e.comm, mine)
	if err != nil {
		return err
	}
	w := len(mine)
	var sum [11]float64
	slowest := 0.0
	e.printf("  %4s %9s %10s %12s %14s %8s %12s %10s %10s %10s\n", "rank", "batches", "batches/s", "seeds/s", "edges/s", "remote", "exchanged", "own seeds", "µs/local", "µs/remote")
	for r := range e.comm.Size() {
		v := all[r*w : (r+1)*w]
		for k := range v {
			sum[k] += v[k]
		}
		slowest = max(slowest, v[0])
		secs := max(v[0], 1e-9)
		e.printf("  %4d %9.0f %10.1f %12.4g %14.4g %7.1f%% %12s %9.1f%% %10s %10s\n", r, v[1], v[1]/secs, v[2]/secs, v[3]/secs,
			100*v[5]/max(1, v[4]+v[5]), report.Bytes(int64(v[6]+v[7])), 100*v[8], perNodeMicros(v[9], v[4]), perNodeMicros(v[10], v[5]))
	}
	slowest = max(slowest, 1e-9)
	e.printf("  %4s %9.0f %10.1f %12.4g %14.4g %7.1f%% %12s %10s %10s %10s   (rates over the slowest rank's %.3fs)\n", "all", sum[1], sum[1]/slowest, sum[2]/slowest, sum[3]/slowest,
		100*sum[5]/max(1, sum[4]+sum[5]), report.Bytes(int64(sum[6]+sum[7])), "", perNodeMicros(sum[9], sum[4]), perNodeMicros(sum[10], sum[5]), slowest)
	trained, err := j.f.reportTrained(e, j.trained, pst.Items)
	if err != nil {
		return err
	}
	if j.f.dump != "" {
		e.printf("  batches written to %s\n", j.f.dump)
	}
	e.rec.Set("sample", map[string]any{
		"seconds_slowest": slowest, "batches": sum[1], "seeds": sum[2], "edges": sum[3],
		"edges_per_s": sum[3] / slowest, "remote_share": sum[5] / max(1, sum[4]+sum[5]), "bytes_exchanged": sum[6] + sum[7],
		"local_nodes": sum[4], "remote_nodes": sum[5], "local_seconds": sum[9], "remote_seconds": sum[10],
		"batches_per_epoch_per_rank": pst.PerRank, "empty_per_epoch": pst.Empty, "training_items": pst.Items, "trained": trained,
		"host_graph": j.f.hostGraph && j.sm.HostGraphOff() == "", "host_graph_off": j.sm.HostGraphOff(),
	})
	return nil
}

// perNodeMicros formats seconds over nodes in microseconds a node, or "–"
// where there were none.
func perNodeMicros(secs, nodes float64) string {
	if nodes == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", secs/nodes*1e6)
}
