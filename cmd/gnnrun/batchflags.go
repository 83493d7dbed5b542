package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/prefetch"
	"gnnrun/rank"
	"gnnrun/report"
	"gnnrun/sampler"
	"gnnrun/shard"
)

// batchFlags are the flags of the commands that draw mini-batches (sample,
// loader): what to sample and how.
type batchFlags struct {
	fanouts                     string
	etypeFanouts, reverse       []string
	batch, epochs, negatives    int
	perEpoch                    int64
	task, ntype, mask, label    string
	etype, edgeMask, prob       string
	negDist, exclude, transport string
	dump                        string
	replace, hostGraph          bool
	seed                        uint64
}

// batchFlagsHelp explains the flags register adds, for the commands' help.
const batchFlagsHelp = `Fanouts: one per layer, the FIRST for the hop NEAREST the seeds, as the
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
by the seed, the epoch and the partition), joined in partition order and cut
into batches; rank r runs batches [r*f, (r+1)*f), f = floor(batches/P),
mostly items of its own partitions; the batches left (fewer than P) go one
each to the last ranks, and every other rank runs an empty batch (no seeds)
instead, so every item is trained every epoch and every rank runs as many
batches. Every draw is keyed by (seed, epoch, batch, layer, edge type, node,
draw): batch b is the same at any rank count and with either --transport
(alltoall: the owners sample their nodes in one exchange per layer; rma:
one-sided reads of the owners' arrays).

--dump DIR writes each batch (not the empty ones that pad ranks) as
DIR/e<epoch>-b<batch>.npz, int64 arrays in the input's type-wise IDs: seeds
(node task; and labels), or pos_src, pos_dst, neg_src, neg_dst (link task),
and per block l (0 = the outermost, whose sources are the input nodes)
src_l, dst_l, eid_l (each sampled edge's endpoints and input edge ID), plus
etype_l on graphs with several edge types. A batch's file is byte-identical
at any rank count and transport.`

func (f *batchFlags) register(fs *pflag.FlagSet) {
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
	fs.IntVar(&f.epochs, "epochs", 1, "epochs to run")
	fs.Int64Var(&f.perEpoch, "batches-per-epoch", 0, "run at most this many batches per rank per epoch, a different subset each epoch (0: all)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of every draw")
	fs.StringVar(&f.transport, "transport", "alltoall", "how remote frontier nodes are sampled (and remote rows fetched): alltoall or rma")
	fs.StringVar(&f.dump, "dump", "", "write every batch as DIR/e<epoch>-b<batch>.npz (input IDs)")
	fs.BoolVar(&f.hostGraph, "host-graph", true, "sample the partitions of this host's other ranks from their files, as this rank's own: only other hosts' frontier nodes are remote; their edge table is held once per host in /dev/shm (8 bytes an edge; where /dev/shm cannot hold it, the host's ranks ask each other, with a note). --host-graph=false: ask them always")
}

// options turns the flags into sampler options, failing on bad values
// before any work.
func (f *batchFlags) options() (sampler.Options, error) {
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
	case f.perEpoch < 0:
		return o, fmt.Errorf("--batches-per-epoch %d: must be >= 0", f.perEpoch)
	case f.task != "node" && f.task != "link":
		return o, fmt.Errorf("--task %q: want node or link", f.task)
	}
	if o.Transport, err = shard.ParseTransport(f.transport); err != nil {
		return o, err
	}
	o.Replace, o.Prob, o.Seed, o.OrigEIDs, o.HostGraph = f.replace, f.prob, f.seed, f.dump != "", f.hostGraph
	if f.task == "link" {
		if o.Link, err = f.linkOptions(); err != nil {
			return o, err
		}
	}
	return o, nil
}

func (f *batchFlags) linkOptions() (*sampler.LinkOptions, error) {
	l := &sampler.LinkOptions{Negatives: f.negatives, ReverseEtypes: map[string]string{}}
	if f.negatives < 0 {
		return nil, fmt.Errorf("--negatives %d: must be >= 0", f.negatives)
	}
	var err error
	if l.Dist, err = sampler.ParseNegativeDist(f.negDist); err != nil {
		return nil, err
	}
	if l.Exclude, err = sampler.ParseExclude(f.exclude); err != nil {
		return nil, err
	}
	for _, r := range f.reverse {
		a, b, ok := strings.Cut(r, "=")
		if !ok {
			return nil, fmt.Errorf("--reverse-etypes %q: want A=B", r)
		}
		l.ReverseEtypes[a] = b
	}
	return l, nil
}

// plan makes the training split of the flags' task over s, and sets the
// label array of o when the node task's seeds have one. It is collective.
func (f *batchFlags) plan(c *collective.Comm, s *shard.Served, o *sampler.Options) (*sampler.Plan, error) {
	pl, err := f.split(c, s, o)
	if err == nil && f.perEpoch > 0 {
		err = pl.Truncate(f.perEpoch)
	}
	return pl, err
}

// split makes the plan of the task, before --batches-per-epoch.
func (f *batchFlags) split(c *collective.Comm, s *shard.Served, o *sampler.Options) (*sampler.Plan, error) {
	if f.task == "link" {
		return sampler.NewEdgePlan(c, s, f.etype, f.edgeMask, f.batch)
	}
	ntype := f.ntype
	if ntype == "" {
		ntype = s.Config.NodeTypes[0]
	}
	pl, err := sampler.NewNodePlan(c, s, ntype, f.mask, f.batch)
	if err != nil || f.label == "" {
		return pl, err
	}
	// Labels come when every rank's partitions have the array.
	has, err := s.HasNodeArray(c, ntype, f.label)
	if has {
		o.Labels = sampler.LabelSpec{NType: ntype, Name: f.label}
	}
	return pl, err
}

// items names the task's training items.
func (f *batchFlags) items() string {
	if f.task == "link" {
		return "edges"
	}
	return "nodes"
}

// describe prints the split.
func (f *batchFlags) describe(e *env, s *shard.Served, pl *sampler.Plan, cmd, hostGraphOff string) {
	if hostGraphOff != "" {
		e.log.Warn("the host's other partitions are sampled by their ranks, not mapped here (--host-graph)", "why", hostGraphOff,
			"hint", "their edge table takes 8 bytes an edge of /dev/shm: give it room (a container's --shm-size), or pass --host-graph=false")
	}
	st := pl.Stats()
	what := f.items()
	empty, run := "", ""
	if st.Empty > 0 {
		empty = fmt.Sprintf(" (+%d empty, padding ranks)", st.Empty)
	}
	if st.Padded > 0 {
		empty = fmt.Sprintf(" (+%d of %s repeated from the epoch's start, padding ranks)", st.Padded, what)
	}
	if n := pl.BatchesPerEpoch(); n < st.PerRank {
		run = fmt.Sprintf(" (%s run)", report.Count(n))
	}
	e.printf("%s: %s: %d ranks, %d partitions, %s task, %s training %s in %s batches of %d%s; %s per rank per epoch%s; fanouts %s, transport %s\n",
		cmd, s.ConfigPath, e.comm.Size(), s.Config.NumParts, f.task, report.Count(st.Items), what,
		report.Count(st.Batches), f.batch, empty, report.Count(st.PerRank), run, f.fanouts, f.transport)
}

// reportTrained sums every rank's training items per epoch (seed nodes,
// or positive edges of a link task: counted in the batches sampled or
// delivered, not from the split's arithmetic), prints them on rank 0
// against the split's training items and returns them for the report. It
// is collective.
func (f *batchFlags) reportTrained(e *env, perEpoch []int64, items int64) (map[string]any, error) {
	all, err := collective.Allreduce(e.comm, perEpoch, rank.Sum)
	if err != nil {
		return nil, err
	}
	what := f.items()
	every := len(all) > 0
	for _, n := range all {
		every = every && n == items
	}
	if every {
		e.printf("  every epoch trained all %s training %s (%d epochs)\n", report.Count(items), what, len(all))
	} else {
		e.printf("  trained per epoch %v of the %s training %s\n", all, report.Count(items), what)
	}
	return map[string]any{"trained_per_epoch": all, "training_items": items, "all_trained": every}, nil
}

// dumper writes batches as .npz files in input IDs (see batchFlagsHelp).
type dumper struct {
	dir    string
	hetero bool
	orig   *shard.Store // new -> input node IDs
}

// newDumper makes dir on rank 0 (none when dir is "": arrays only) and
// opens the ID store; it is collective.
func newDumper(c *collective.Comm, s *shard.Served, dir string, t shard.Transport) (*dumper, error) {
	var err error
	if c.Rank() == 0 && dir != "" {
		err = os.MkdirAll(dir, 0o755)
	}
	if err = collective.Agree(c, err); err != nil {
		return nil, err
	}
	orig, err := shard.NewOrigIDStore(c, s, t)
	if err != nil {
		return nil, err
	}
	return &dumper{dir: dir, hetero: len(s.Config.EdgeTypes) > 1, orig: orig}, nil
}

func (d *dumper) close() error { return d.orig.Close() }

// dump writes one batch as DIR/e<epoch>-b<batch>.npz (an evaluation
// batch as <kind>-e<epoch>-b<batch>.npz); block0Src, when not nil, are
// block 0's source indices into its nodes (the loader renumbers
// Blocks[0].Src to device slots). It is collective with the alltoall
// transport.
func (d *dumper) dump(b *sampler.Batch, block0Src []int32, kind string) error {
	arrays, err := d.arrays(b, block0Src)
	if err != nil {
		return err
	}
	if b.Items() == 0 { // a rank's padding, not a batch of the epoch's
		return nil
	}
	name := fmt.Sprintf("e%d-b%d.npz", b.Epoch, b.Number)
	if kind != "" && kind != prefetch.TrainKind {
		name = kind + "-" + name
	}
	return graphio.WriteNpz(filepath.Join(d.dir, name), arrays)
}

// arrays returns a batch's arrays in input IDs, as dump writes them. It is
// collective with the alltoall transport.
func (d *dumper) arrays(b *sampler.Batch, block0Src []int32) ([]graphio.NpzArray, error) {
	nodes := b.Blocks[0].Nodes // every node of the batch is a source of the outermost block
	rows, err := d.orig.Pull(nodes)
	if err != nil {
		return nil, err
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
	for l, bl := range b.Blocks {
		srcIdx := bl.Src
		if l == 0 && block0Src != nil {
			srcIdx = block0Src
		}
		src, dst := make([]int64, bl.NumEdges()), make([]int64, bl.NumEdges())
		for i := range src {
			src[i], dst[i] = bl.Nodes[srcIdx[i]], bl.Nodes[bl.Dst[i]]
		}
		add(fmt.Sprintf("src_%d", l), ids(src))
		add(fmt.Sprintf("dst_%d", l), ids(dst))
		add(fmt.Sprintf("eid_%d", l), graph.TensorOf(append([]int64(nil), bl.OrigEIDs...), 0))
		if d.hetero {
			et := make([]int64, len(bl.ETypes))
			for i, t := range bl.ETypes {
				et[i] = int64(t)
			}
			add(fmt.Sprintf("etype_%d", l), graph.TensorOf(et, 0))
		}
	}
	return arrays, nil
}
