package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/report"
	"gnnrun/sampler"
	"gnnrun/shard"
)

type sampleArgs struct {
	fanouts                     string
	etypeFanouts, reverse       []string
	batch, epochs, negatives    int
	task, ntype, mask, label    string
	etype, edgeMask, prob       string
	negDist, exclude, transport string
	dump                        string
	replace                     bool
	seed                        uint64
}

var sampleFlags sampleArgs

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
at other ranks, and the bytes exchanged for them.

Fanouts: one per layer, the FIRST for the hop NEAREST the seeds, as the
GraphSAGE paper and PyG read "15,10,5" (DGL lists them the other way round:
its fanouts[0] is the input layer's). -1 takes every in-edge. They apply to
every edge type; --etype-fanouts SRC:REL:DST=10,5 (or REL=10,5) sets one
type's (0: none of its edges), and may be repeated.

Node task (--task node): the seeds are the nodes of --ntype (default: the
first node type) whose --mask array is non-zero ("" for all of them), and
batches carry their --label rows. Link task (--task link): the positives are
the edges of --etype (needed when there are several types) whose
--edge-mask is non-zero (default all), each with --negatives destinations of
the same type drawn uniformly or in proportion to in-degree^0.75
(--neg-dist degree); --exclude self keeps each batch's positive edges out of
its neighbourhoods, --exclude reverse their reverse edges v -> u too (a type
whose endpoints differ needs --reverse-etypes A=B naming its reverse type).

The split: every partition's training items are shuffled each epoch (keyed
by the seed, the epoch and the partition), joined in partition order and
cut into batches; rank r runs batches [r*n, (r+1)*n), n = floor(batches/P),
mostly items of its own partitions; the last batches (fewer than P) are
dropped so every rank runs as many. Every draw is keyed by (seed, epoch,
batch, layer, edge type, node, draw): batch b is the same at any rank count
and with either --transport (alltoall: the owners sample their nodes in one
exchange per layer; rma: one-sided reads of the owners' arrays).

--dump DIR writes each batch as DIR/e<epoch>-b<batch>.npz, int64 arrays in
the input's type-wise IDs: seeds (node task; and labels), or pos_src,
pos_dst, neg_src, neg_dst (link task), and per block l (0 = the outermost,
whose sources are the input nodes) src_l, dst_l, eid_l (each sampled edge's
endpoints and input edge ID), plus etype_l on graphs with several edge
types. A batch's file is byte-identical at any rank count and transport.`,
		flags: func(fs *pflag.FlagSet) {
			f := &sampleFlags
			fs.StringVar(&f.fanouts, "fanouts", "15,10,5", "in-edges drawn per node, per layer, the hop nearest the seeds FIRST (-1: all)")
			fs.StringArrayVar(&f.etypeFanouts, "etype-fanouts", nil, "ETYPE=F1,F2,...: fanouts of one edge type (0: none); repeatable")
			fs.IntVar(&f.batch, "batch-size", 1024, "seeds (node task) or positive edges (link task) per batch")
			fs.StringVar(&f.task, "task", "node", "node (node classification) or link (link prediction)")
			fs.StringVar(&f.ntype, "ntype", "", "node task: node type of the seeds (default: the first)")
			fs.StringVar(&f.mask, "mask", "train_mask", "node task: node array marking the training nodes (\"\": all nodes)")
			fs.StringVar(&f.label, "label", "label", "node task: node array of the seeds' labels (\"\" or absent: none)")
			fs.StringVar(&f.etype, "etype", "", "link task: edge type to train on (SRC:REL:DST or REL)")
			fs.StringVar(&f.edgeMask, "edge-mask", "", "link task: edge array marking the training edges (default: all edges)")
			fs.IntVar(&f.negatives, "negatives", 1, "link task: negative edges per positive")
			fs.StringVar(&f.negDist, "neg-dist", "uniform", "link task: negatives' destinations uniform or by in-degree^0.75 (degree)")
			fs.StringVar(&f.exclude, "exclude", "none", "link task: keep out of the neighbourhoods none, self (the positives) or reverse (and their reverse edges)")
			fs.StringArrayVar(&f.reverse, "reverse-etypes", nil, "A=B: edge type B is the reverse of A (for --exclude reverse); repeatable")
			fs.StringVar(&f.prob, "prob", "", "draw in-edges in proportion to this edge array (finite, >= 0; 0 never drawn)")
			fs.BoolVar(&f.replace, "replace", false, "draw with replacement")
			fs.IntVar(&f.epochs, "epochs", 1, "epochs to sample")
			fs.Uint64Var(&f.seed, "seed", 1, "seed of every draw")
			fs.StringVar(&f.transport, "transport", "alltoall", "how remote frontier nodes are sampled: alltoall or rma")
			fs.StringVar(&f.dump, "dump", "", "write every batch as DIR/e<epoch>-b<batch>.npz (input IDs)")
		},
		run: runSample,
	})
}

// sampleJob is one run of the command: what it serves, samples and counts.
type sampleJob struct {
	e      *env
	f      sampleArgs
	served *shard.Served
	plan   *sampler.Plan
	sm     *sampler.Sampler
	orig   *shard.Store // for --dump: new -> input node IDs
	secs   float64      // this rank's time in SampleTask
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
	end := e.stage("open")
	served, err := shard.Serve(e.comm, args[0])
	end()
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

// options turns the flags into sampler options, failing on bad values
// before any work.
func (f sampleArgs) options() (sampler.Options, error) {
	var o sampler.Options
	var err error
	if o.Fanouts, err = sampler.ParseFanouts(f.fanouts); err != nil {
		return o, fmt.Errorf("--fanouts: %w", err)
	}
	for _, s := range f.etypeFanouts {
		et, fs, err := sampler.ParseEtypeFanout(s)
		if err != nil {
			return o, fmt.Errorf("--etype-fanouts: %w", err)
		}
		if o.EtypeFanouts == nil {
			o.EtypeFanouts = map[string][]int{}
		}
		o.EtypeFanouts[et] = fs
	}
	switch {
	case f.batch < 1:
		return o, fmt.Errorf("--batch-size %d: must be at least 1", f.batch)
	case f.epochs < 1:
		return o, fmt.Errorf("--epochs %d: must be at least 1", f.epochs)
	case f.task != "node" && f.task != "link":
		return o, fmt.Errorf("--task %q: want node or link", f.task)
	}
	if o.Transport, err = shard.ParseTransport(f.transport); err != nil {
		return o, err
	}
	o.Replace, o.Prob, o.Seed, o.OrigEIDs = f.replace, f.prob, f.seed, f.dump != ""
	if f.task == "link" {
		l := &sampler.LinkOptions{Negatives: f.negatives, ReverseEtypes: map[string]string{}}
		if f.negatives < 0 {
			return o, fmt.Errorf("--negatives %d: must be >= 0", f.negatives)
		}
		if l.Dist, err = sampler.ParseNegativeDist(f.negDist); err != nil {
			return o, err
		}
		if l.Exclude, err = sampler.ParseExclude(f.exclude); err != nil {
			return o, err
		}
		for _, r := range f.reverse {
			a, b, ok := strings.Cut(r, "=")
			if !ok {
				return o, fmt.Errorf("--reverse-etypes %q: want A=B", r)
			}
			l.ReverseEtypes[a] = b
		}
		o.Link = l
	}
	return o, nil
}

// setup makes the plan, the sampler and (for --dump) the ID store. It is
// collective.
func (j *sampleJob) setup(o sampler.Options) error {
	e, f, s := j.e, j.f, j.served
	var err error
	end := e.stage("plan")
	if f.task == "node" {
		if f.ntype == "" {
			f.ntype = s.Config.NodeTypes[0]
		}
		j.plan, err = sampler.NewNodePlan(e.comm, s, f.ntype, f.mask, f.batch)
		if err == nil && f.label != "" {
			// Labels come when every rank's partitions have the array.
			has := int64(1)
			for _, p := range s.Parts {
				if p.NodeFeat(f.ntype, f.label) == nil {
					has = 0
				}
			}
			if has, err = collective.Min(e.comm, has); has == 1 {
				o.Labels = sampler.LabelSpec{NType: f.ntype, Name: f.label}
			}
		}
	} else {
		j.plan, err = sampler.NewEdgePlan(e.comm, s, f.etype, f.edgeMask, f.batch)
	}
	end()
	if err != nil {
		return err
	}
	if j.sm, err = sampler.New(e.comm, s, o); err != nil {
		return err
	}
	if err := j.sm.CheckPlan(j.plan); err != nil {
		return err
	}
	if f.dump != "" {
		if e.comm.Rank() == 0 {
			err = os.MkdirAll(f.dump, 0o755)
		}
		if err = collective.Agree(e.comm, err); err != nil {
			return err
		}
		j.orig, err = shard.NewOrigIDStore(e.comm, s, o.Transport)
	}
	j.printPlan()
	return err
}

// printPlan prints the split.
func (j *sampleJob) printPlan() {
	st := j.plan.Stats()
	what := "nodes"
	if j.f.task == "link" {
		what = "edges"
	}
	j.e.printf("sample: %s: %d ranks, %d partitions, %s task, %s training %s in %s batches of %d; %s per rank per epoch, %d dropped; fanouts %s, transport %s\n",
		j.served.ConfigPath, j.e.comm.Size(), j.served.Config.NumParts, j.f.task, report.Count(st.Items), what,
		report.Count(st.Batches), j.f.batch, report.Count(st.PerRank), st.Dropped, j.f.fanouts, j.f.transport)
}

// run samples every epoch, dumping batches when asked.
func (j *sampleJob) run() error {
	e := j.e
	total := j.plan.BatchesPerEpoch() * int64(j.f.epochs)
	task := e.meter.Start("sample", total, "batches")
	end := e.stage("sample")
	defer end()
	for ep := range j.f.epochs {
		for _, t := range j.plan.Epoch(j.f.seed, ep) {
			t0 := time.Now()
			b, err := j.sm.SampleTask(t)
			j.secs += time.Since(t0).Seconds()
			if err != nil {
				return err
			}
			if j.f.dump != "" {
				if err := j.dumpBatch(b); err != nil {
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
	if j.orig != nil {
		if err := j.orig.Close(); err != nil {
			return err
		}
	}
	return j.sm.Close()
}

// report prints per rank and in total the rates, the remote share and the
// bytes exchanged, and records them.
func (j *sampleJob) report() error {
	e := j.e
	st := j.sm.Stats()
	pst := j.plan.Stats()
	mine := []float64{j.secs, float64(st.Batches), float64(st.Seeds), float64(st.Edges), float64(st.LocalNodes), float64(st.RemoteNodes), float64(st.Sent), float64(st.Received), pst.LocalShare}
	all, _, err := collective.Allgatherv(e.comm, mine)
	if err != nil {
		return err
	}
	w := len(mine)
	var sum [9]float64
	slowest := 0.0
	e.printf("  %4s %9s %10s %12s %14s %8s %12s %10s\n", "rank", "batches", "batches/s", "seeds/s", "edges/s", "remote", "exchanged", "own seeds")
	for r := range e.comm.Size() {
		v := all[r*w : (r+1)*w]
		for k := range v {
			sum[k] += v[k]
		}
		slowest = max(slowest, v[0])
		secs := max(v[0], 1e-9)
		e.printf("  %4d %9.0f %10.1f %12.4g %14.4g %7.1f%% %12s %9.1f%%\n", r, v[1], v[1]/secs, v[2]/secs, v[3]/secs,
			100*v[5]/max(1, v[4]+v[5]), report.Bytes(int64(v[6]+v[7])), 100*v[8])
	}
	slowest = max(slowest, 1e-9)
	e.printf("  %4s %9.0f %10.1f %12.4g %14.4g %7.1f%% %12s   (rates over the slowest rank's %.3fs)\n", "all", sum[1], sum[1]/slowest, sum[2]/slowest, sum[3]/slowest,
		100*sum[5]/max(1, sum[4]+sum[5]), report.Bytes(int64(sum[6]+sum[7])), slowest)
	if j.f.dump != "" && e.comm.Rank() == 0 {
		e.printf("  batches written to %s\n", j.f.dump)
	}
	e.rec.Set("sample", map[string]any{
		"seconds_slowest": slowest, "batches": sum[1], "seeds": sum[2], "edges": sum[3],
		"edges_per_s": sum[3] / slowest, "remote_share": sum[5] / max(1, sum[4]+sum[5]), "bytes_exchanged": sum[6] + sum[7],
		"batches_per_epoch_per_rank": pst.PerRank, "dropped_per_epoch": pst.Dropped, "training_items": pst.Items,
	})
	return nil
}

// dumpBatch writes one batch in input IDs (see the command's help).
func (j *sampleJob) dumpBatch(b *sampler.Batch) error {
	nodes := b.Blocks[0].Nodes // every node of the batch is a source of the outermost block
	rows, err := j.orig.Pull(nodes)
	if err != nil {
		return err
	}
	orig := make(map[int64]int64, len(nodes))
	for i, v := range nodes {
		orig[v] = int64(binary.LittleEndian.Uint64(rows[8*i:]))
	}
	ids := func(vs []int64) *graph.Tensor {
		out := make([]int64, len(vs))
		for i, v := range vs {
			out[i] = orig[v]
		}
		return graph.TensorOf(out, 0)
	}
	var arrays []graphio.NpzArray
	add := func(name string, t *graph.Tensor) { arrays = append(arrays, graphio.NpzArray{Name: name, Data: t}) }
	if b.Pos == nil {
		add("seeds", ids(b.Seeds))
		if b.Labels != nil {
			add("labels", b.Labels)
		}
	} else {
		src, dst := make([]int64, len(b.Pos)), make([]int64, len(b.Pos))
		for i, p := range b.Pos {
			src[i], dst[i] = p.Src, p.Dst
		}
		add("pos_src", ids(src))
		add("pos_dst", ids(dst))
		add("neg_src", ids(b.NegSrc))
		add("neg_dst", ids(b.NegDst))
	}
	hetero := len(j.served.Config.EdgeTypes) > 1
	for l, bl := range b.Blocks {
		src, dst := make([]int64, bl.NumEdges()), make([]int64, bl.NumEdges())
		for i := range src {
			src[i], dst[i] = bl.Nodes[bl.Src[i]], bl.Nodes[bl.Dst[i]]
		}
		add(fmt.Sprintf("src_%d", l), ids(src))
		add(fmt.Sprintf("dst_%d", l), ids(dst))
		add(fmt.Sprintf("eid_%d", l), graph.TensorOf(append([]int64(nil), bl.OrigEIDs...), 0))
		if hetero {
			et := make([]int64, len(bl.ETypes))
			for i, t := range bl.ETypes {
				et[i] = int64(t)
			}
			add(fmt.Sprintf("etype_%d", l), graph.TensorOf(et, 0))
		}
	}
	return graphio.WriteNpz(filepath.Join(j.f.dump, fmt.Sprintf("e%d-b%d.npz", b.Epoch, b.Number)), arrays)
}
