package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/atomicfile"
	"gnnrun/collective"
	"gnnrun/pack"
	"gnnrun/rank"
)

var packFlags struct {
	hist, tu, ogb, split   string
	addInverse             bool
	maxNodes, maxEdges     int
	maxGraphs              string
	algo, heuristic, order string
	effort                 string
	sweep                  bool
	sweepNodes, sweepEdges string
	target                 float64
	top, workers           int
	out                    string
	epochs                 int
	seed                   uint64
}

func init() {
	register(&command{
		name:    "pack",
		summary: "pack a dataset of small graphs into fixed-size batches (tuple packing)",
		usage:   "pack (--hist FILE | --tu DIR | --ogb DIR) [--max-nodes N] [--max-edges N] [--max-graphs N] [--algo ours|reference] [--sweep] [--out FILE]",
		help: `Packs the graphs of a dataset of many small graphs into packs of at most
--max-nodes nodes, --max-edges edges and --max-graphs graphs, so every batch
has the same static shape and little of it is padding. It works on the
histogram of (nodes, edges) per graph and prints the number of packs, the
lower bound max(N/max-nodes, E/max-edges, G/max-graphs), and the node and
edge efficiency (true: against the limits; published: as the paper's code
computes it).

--algo ours (default) is our packer. --algo reference is the published
longest-pack-first histogram packing of the Tuple Packing paper, reproduced
with its quirks to match the paper's Table 2; --heuristic selects its sort
key (product, sum, max, min, node, edge, or all). Several algorithms can be
listed (--algo ours,reference) to compare; --out writes the packing with the
fewest packs.

--sweep packs at every combination of --sweep-nodes and --sweep-edges
(default: from the dataset maxima to 3 times them, 20 values each) and
reports the best shapes by harmonic mean of node and edge efficiency, the
Pareto set of node versus edge efficiency, and the smallest limits reaching
--target percent in both. Under mpirun the points are split over the ranks
and each rank packs its share on --workers cores.

--epochs N assigns concrete graphs to packs for N epochs (shuffled by --seed
and the epoch), splits the packs evenly over the ranks, and checks with an
all-reduce that every graph is in exactly one pack of one rank.

Inputs: --hist FILE, a CSV "nodes,edges,count" with one line per distinct
size; --tu DIR, a TU dataset folder (DS_A.txt, DS_graph_indicator.txt; edges
counted as PyG loads them); --ogb DIR, OGB raw counts (num-node-list.csv,
num-edge-list.csv, optionally .gz; edges doubled unless
--ogb-add-inverse=false). --split FILE keeps the graphs listed in FILE (one
index per line, e.g. OGB's split/scaffold/train.csv.gz).`,
		flags: func(fs *pflag.FlagSet) {
			f := &packFlags
			fs.StringVar(&f.hist, "hist", "", "histogram CSV nodes,edges,count")
			fs.StringVar(&f.tu, "tu", "", "TU dataset folder")
			fs.StringVar(&f.ogb, "ogb", "", "OGB dataset folder with num-node-list.csv(.gz) and num-edge-list.csv(.gz)")
			fs.StringVar(&f.split, "split", "", "keep only the graphs listed in this file (one index per line, .gz allowed)")
			fs.BoolVar(&f.addInverse, "ogb-add-inverse", true, "double OGB edge counts: OGB stores undirected edges once and adds the inverse (as PyG loads them)")
			fs.IntVar(&f.maxNodes, "max-nodes", 0, "nodes per pack (0: the largest graph's)")
			fs.IntVar(&f.maxEdges, "max-edges", 0, "edges per pack (0: the largest graph's)")
			fs.StringVar(&f.maxGraphs, "max-graphs", strconv.Itoa(pack.DefaultMaxGraphs), `graphs per pack, or "max" for min(max-nodes, max-edges) as the paper's code`)
			fs.StringVar(&f.algo, "algo", "ours", "packer: ours, reference, or a comma-separated list")
			fs.StringVar(&f.heuristic, "heuristic", "product", "reference packer's heuristic: product, sum, max, min, node, edge, a list, or all")
			fs.StringVar(&f.order, "order", "longest-first", "reference packer's search: longest-first (the paper's) or shortest-first")
			fs.StringVar(&f.effort, "effort", "", "our packer's effort: thorough or quick (default: thorough, quick in sweeps)")
			fs.BoolVar(&f.sweep, "sweep", false, "sweep the limits instead of packing once")
			fs.StringVar(&f.sweepNodes, "sweep-nodes", "", "node limits LO:HI:STEP (default: max to 3×max, 20 values)")
			fs.StringVar(&f.sweepEdges, "sweep-edges", "", "edge limits LO:HI:STEP (default: max to 3×max, 20 values)")
			fs.Float64Var(&f.target, "target", 95, "sweep: report the smallest limits reaching this efficiency (percent) in nodes and edges")
			fs.IntVar(&f.top, "top", 10, "sweep: how many of the best shapes to print")
			fs.IntVar(&f.workers, "workers", 0, "sweep: goroutines per rank (0: one per core)")
			fs.StringVar(&f.out, "out", "", "write the packing (or the sweep) as JSON to this file")
			fs.IntVar(&f.epochs, "epochs", 0, "assign graphs to packs for this many epochs and check the split over ranks")
			fs.Uint64Var(&f.seed, "seed", 1, "seed of the assignment shuffle")
		},
		run: runPack,
	})
}

// packJob is the parsed command line of one run of gnnrun pack.
type packJob struct {
	name  string       // dataset name for reports
	sizes []pack.Tuple // one per graph
	named bool         // sizes are real graphs, not expanded from a histogram
	hist  pack.Histogram
	algos []pack.Algo
	heurs []pack.Heuristic
	order pack.Order
	cap   int // 0: min(limits), the published "max"
}

func runPack(e *env, _ []string) error {
	job, err := parsePackJob()
	if err != nil {
		return trimPack(err)
	}
	end := e.stage("pack/read")
	err = job.load()
	end()
	if err != nil {
		return trimPack(err)
	}
	if packFlags.sweep {
		return trimPack(job.sweep(e))
	}
	best, err := job.packOnce(e)
	if err != nil {
		return trimPack(err)
	}
	if packFlags.epochs > 0 {
		return trimPack(job.checkAssignment(e, best))
	}
	return nil
}

// trimPack drops the package's "pack: " prefix, which the command name
// already gives.
func trimPack(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(strings.TrimPrefix(err.Error(), "pack: "))
}

func parsePackJob() (*packJob, error) {
	f := &packFlags
	inputs := 0
	for _, s := range []string{f.hist, f.tu, f.ogb} {
		if s != "" {
			inputs++
		}
	}
	if inputs != 1 {
		return nil, errors.New("give exactly one input: --hist FILE, --tu DIR or --ogb DIR")
	}
	if f.split != "" && f.hist != "" {
		return nil, errors.New("--split needs graphs, not a histogram: use it with --tu or --ogb")
	}
	if f.maxNodes < 0 || f.maxEdges < 0 {
		return nil, fmt.Errorf("--max-nodes and --max-edges must be >= 0 (0: dataset maxima), got %d and %d", f.maxNodes, f.maxEdges)
	}
	if f.target <= 0 || f.target > 100 {
		return nil, fmt.Errorf("--target must be in (0, 100] percent, got %g", f.target)
	}
	if f.workers < 0 || f.epochs < 0 || f.top < 0 {
		return nil, errors.New("--workers, --epochs and --top must be >= 0")
	}
	job := &packJob{}
	var err error
	if job.cap, err = parsePackCap(f.maxGraphs); err != nil {
		return nil, err
	}
	if job.algos, err = parsePackAlgos(f.algo); err != nil {
		return nil, err
	}
	if job.heurs, err = pack.ParseHeuristics(f.heuristic); err != nil {
		return nil, err
	}
	if job.order, err = pack.ParseOrder(f.order); err != nil {
		return nil, err
	}
	if f.effort != "" {
		if _, err := pack.ParseEffort(f.effort); err != nil {
			return nil, err
		}
	}
	return job, nil
}

func parsePackCap(s string) (int, error) {
	if strings.EqualFold(s, "max") {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf(`--max-graphs must be a positive integer or "max", got %q`, s)
	}
	return n, nil
}

func parsePackAlgos(s string) ([]pack.Algo, error) {
	var out []pack.Algo
	for _, f := range strings.Split(s, ",") {
		a, err := pack.ParseAlgo(f)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// load reads the dataset on every rank: inputs are small (a count per graph).
func (j *packJob) load() error {
	f := &packFlags
	var err error
	switch {
	case f.hist != "":
		j.name = filepath.Base(f.hist)
		if j.hist, err = pack.ReadHistogramFile(f.hist); err != nil {
			return err
		}
		j.sizes = pack.Expand(j.hist)
		return nil
	case f.tu != "":
		j.name = filepath.Base(filepath.Clean(f.tu))
		j.sizes, err = pack.ReadTU(f.tu)
		j.named = true
	default:
		j.name = filepath.Base(filepath.Clean(f.ogb))
		j.sizes, err = pack.ReadOGB(f.ogb, f.addInverse)
		j.named = true
	}
	if err != nil {
		return err
	}
	if f.split != "" {
		idx, err := pack.ReadIntList(f.split)
		if err != nil {
			return err
		}
		if j.sizes, err = pack.Subset(j.sizes, idx); err != nil {
			return fmt.Errorf("%s: %w", f.split, err)
		}
		j.name += "[" + filepath.Base(f.split) + "]"
	}
	j.hist, err = pack.HistogramOf(j.sizes)
	return err
}

// checkSizes fails when a graph does not fit l, naming it by its index in
// the dataset when the input has graphs (the packer names the size).
func (j *packJob) checkSizes(l pack.Limits) error {
	if j.named {
		return pack.CheckSizes(j.sizes, l)
	}
	if j.hist.MaxNodes() > l.Nodes || j.hist.MaxEdges() > l.Edges {
		_, err := pack.Pack(j.hist, pack.WithLimits(l))
		return err
	}
	return nil
}

// limits returns the limits of the flags, dataset maxima where 0.
func (j *packJob) limits() pack.Limits {
	return pack.DefaultLimits(j.hist, pack.Limits{Nodes: packFlags.maxNodes, Edges: packFlags.maxEdges, Graphs: j.cap})
}

// points returns what to pack at limits l: ours once, the reference once per
// heuristic.
func (j *packJob) points(l pack.Limits, defaultEffort pack.Effort) []pack.Point {
	effort := defaultEffort
	if packFlags.effort != "" {
		effort, _ = pack.ParseEffort(packFlags.effort) // checked in parsePackJob
	}
	var out []pack.Point
	for _, a := range j.algos {
		if a == pack.Ours {
			out = append(out, pack.Point{Limits: l, Algo: a, Effort: effort})
			continue
		}
		for _, h := range j.heurs {
			out = append(out, pack.Point{Limits: l, Algo: a, Heuristic: h, Order: j.order})
		}
	}
	return out
}

// packOnce packs at the limits of the flags with every algorithm asked for,
// prints a row for each, writes the packing with the fewest packs to --out
// and returns it.
func (j *packJob) packOnce(e *env) (pack.Packing, error) {
	l := j.limits()
	if err := j.checkSizes(l); err != nil {
		return pack.Packing{}, err
	}
	defer e.stage("pack/pack")()
	j.printDataset(e, l)
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "algo\theuristic\tpacks\tlower bound\tgap\tnodes %\tedges %\tharmonic %\tpublished nodes %\tpublished edges %\ttime\t")
	var best pack.Packing
	for _, pt := range j.points(l, pack.Thorough) {
		start := time.Now()
		p, err := pack.Pack(j.hist, pt.Options()...)
		if err != nil {
			return pack.Packing{}, err
		}
		elapsed := time.Since(start)
		if err := p.Validate(j.hist); err != nil {
			return pack.Packing{}, fmt.Errorf("internal error: %v packing is invalid: %w", pt.Algo, err)
		}
		printPackRow(tw, pt, p.Efficiency(), pack.LowerBound(j.hist, l), elapsed)
		if best.Groups == nil || p.Packs() < best.Packs() {
			best = p
		}
	}
	tw.Flush()
	return best, j.writeStrategy(e, best)
}

func (j *packJob) printDataset(e *env, l pack.Limits) {
	e.printf("dataset %s: %d graphs, %d distinct sizes, %d nodes, %d edges, largest %d nodes / %d edges\n",
		j.name, j.hist.Graphs(), j.hist.Len(), j.hist.Nodes(), j.hist.Edges(), j.hist.MaxNodes(), j.hist.MaxEdges())
	e.printf("limits  %v per pack\n\n", l)
}

func printPackRow(w io.Writer, pt pack.Point, ef pack.Efficiency, lb int, elapsed time.Duration) {
	heur := "-"
	if pt.Algo == pack.Reference {
		heur = pt.Heuristic.String()
	}
	gap := 100 * float64(ef.Packs-lb) / float64(lb)
	fmt.Fprintf(w, "%v\t%s\t%d\t%d\t%.2f%%\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%v\t\n", pt.Algo, heur, ef.Packs, lb, gap,
		ef.Nodes, ef.Edges, ef.Harmonic, ef.PublishedNodes, ef.PublishedEdges, elapsed.Round(10*time.Microsecond))
}

func (j *packJob) writeStrategy(e *env, p pack.Packing) error {
	if packFlags.out == "" || e.comm.Rank() != 0 {
		return nil
	}
	return atomicfile.WriteFunc(packFlags.out, func(w io.Writer) error {
		return pack.WriteStrategy(w, pack.NewStrategy(p, j.hist, j.name))
	})
}

// checkAssignment assigns graphs to packs for every epoch, takes this rank's
// share, and checks with an all-reduce that the ranks hold every graph once.
func (j *packJob) checkAssignment(e *env, p pack.Packing) error {
	defer e.stage("pack/assign")()
	g := int64(len(j.sizes))
	want := []int64{g, g * (g - 1) / 2, int64(p.Packs())}
	for epoch := range packFlags.epochs {
		a, err := pack.Assign(p, j.sizes, packFlags.seed, uint64(epoch))
		if err != nil {
			return err
		}
		lo, hi := pack.Share(a.Packs(), e.comm.Rank(), e.comm.Size())
		mine := []int64{0, 0, int64(hi - lo)}
		for i := lo; i < hi; i++ {
			for _, id := range a.Pack(i) {
				mine[0]++
				mine[1] += int64(id)
			}
		}
		got, err := collective.Allreduce(e.comm, mine, rank.Sum)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("epoch %d: the ranks hold %d graphs (id sum %d) in %d packs, want %d (%d) in %d", epoch, got[0], got[1], got[2], want[0], want[1], want[2])
		}
		e.printf("epoch %d: %d packs over %d ranks (%d–%d each), every one of %d graphs once\n",
			epoch, a.Packs(), e.comm.Size(), a.Packs()/e.comm.Size(), (a.Packs()+e.comm.Size()-1)/e.comm.Size(), g)
	}
	return nil
}

// sweep packs at every point of the grid, each rank its share (pack.Deal)
// on --workers goroutines; every rank gathers all results, rank 0 prints
// them.
func (j *packJob) sweep(e *env) error {
	nodes, edges, err := j.sweepRanges()
	if err != nil {
		return err
	}
	points := pack.Grid(nodes.Values(), edges.Values(), j.cap, j.points(pack.Limits{}, pack.Quick))
	lowest := pack.Limits{Nodes: nodes.Lo, Edges: edges.Lo, Graphs: 1}
	if err := j.checkSizes(lowest); err != nil {
		return fmt.Errorf("--sweep-nodes/--sweep-edges start too low: %w", err)
	}
	end := e.stage("pack/sweep")
	start := time.Now()
	workers := pack.SweepWorkers(packFlags.workers)
	results, err := pack.SweepShare(j.hist, points, e.comm.Rank(), e.comm.Size(), workers)
	if err != nil {
		return err
	}
	all, _, err := collective.Allgatherv(e.comm, results)
	end()
	if err != nil {
		return err
	}
	if all, err = pack.Collect(all, len(points)); err != nil {
		return err
	}
	e.printf("sweep: %d points (%d node limits × %d edge limits × %d packers) on %d ranks × %d workers in %v\n\n",
		len(points), len(nodes.Values()), len(edges.Values()), len(points)/len(nodes.Values())/len(edges.Values()),
		e.comm.Size(), workers, time.Since(start).Round(time.Millisecond))
	j.printSweep(e, all)
	if packFlags.out == "" || e.comm.Rank() != 0 {
		return nil
	}
	return atomicfile.WriteFunc(packFlags.out, func(w io.Writer) error { return writePackSweepJSON(w, j.name, all) })
}

// sweepRanges returns the node and edge limits of the sweep: the flags, or
// pack.DefaultRanges.
func (j *packJob) sweepRanges() (nodes, edges pack.Range, err error) {
	nodes, edges = pack.DefaultRanges(j.hist)
	if s := packFlags.sweepNodes; s != "" {
		if nodes, err = pack.ParseRange(s); err != nil {
			return nodes, edges, fmt.Errorf("--sweep-nodes: %w", err)
		}
	}
	if s := packFlags.sweepEdges; s != "" {
		if edges, err = pack.ParseRange(s); err != nil {
			return nodes, edges, fmt.Errorf("--sweep-edges: %w", err)
		}
	}
	return nodes, edges, nil
}

func (j *packJob) printSweep(e *env, all []pack.Result) {
	best := slices.Clone(all)
	slices.SortStableFunc(best, func(a, b pack.Result) int { return cmpPackDesc(a.Harmonic, b.Harmonic) })
	j.printResults(e, fmt.Sprintf("best %d shapes by harmonic mean of node and edge efficiency", min(packFlags.top, len(best))), best[:min(packFlags.top, len(best))])
	j.printResults(e, "Pareto set of node versus edge efficiency", pack.Pareto(all))
	small := pack.Smallest(all, packFlags.target)
	if len(small) == 0 {
		e.printf("no shape reaches %g%% in both nodes and edges\n", packFlags.target)
		return
	}
	j.printResults(e, fmt.Sprintf("smallest limits reaching %g%% in both nodes and edges", packFlags.target), small)
}

func (j *packJob) printResults(e *env, title string, rs []pack.Result) {
	e.printf("%s:\n", title)
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "max nodes\tmax edges\tmax graphs\talgo\theuristic\tpacks\tlower bound\tgap\tnodes %\tedges %\tharmonic %\tpublished nodes %\tpublished edges %\ttime\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t", r.Limits.Nodes, r.Limits.Edges, r.Limits.Graphs)
		printPackRow(tw, r.Point, r.Efficiency, r.LowerBound, r.Elapsed)
	}
	tw.Flush()
	e.printf("\n")
}

func cmpPackDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// packSweepJSON is the --out file of a sweep.
type packSweepJSON struct {
	Dataset  string           `json:"dataset"`
	Target   float64          `json:"target"`
	Points   []packResultJSON `json:"points"`
	Pareto   []int            `json:"pareto"`   // indices into points
	Smallest []int            `json:"smallest"` // indices into points
}

type packResultJSON struct {
	Limits     pack.LimitsJSON     `json:"limits"`
	Algo       string              `json:"algo"`
	Heuristic  string              `json:"heuristic,omitempty"`
	Packs      int                 `json:"packs"`
	LowerBound int                 `json:"lower_bound"`
	Efficiency pack.EfficiencyJSON `json:"efficiency"`
	Seconds    float64             `json:"seconds"`
}

func writePackSweepJSON(w io.Writer, name string, all []pack.Result) error {
	doc := packSweepJSON{Dataset: name, Target: packFlags.target}
	for _, r := range all {
		rj := packResultJSON{
			Limits: pack.LimitsJSON{Nodes: r.Limits.Nodes, Edges: r.Limits.Edges, Graphs: r.Limits.Graphs},
			Algo:   r.Algo.String(), Packs: r.Packs, LowerBound: r.LowerBound,
			Efficiency: pack.EfficiencyJSON{Nodes: r.Nodes, Edges: r.Edges, Harmonic: r.Harmonic,
				PublishedNodes: r.PublishedNodes, PublishedEdges: r.PublishedEdges},
			Seconds: r.Elapsed.Seconds(),
		}
		if r.Algo == pack.Reference {
			rj.Heuristic = r.Heuristic.String()
		}
		doc.Points = append(doc.Points, rj)
	}
	for _, r := range pack.Pareto(all) {
		doc.Pareto = append(doc.Pareto, r.Index)
	}
	for _, r := range pack.Smallest(all, packFlags.target) {
		doc.Smallest = append(doc.Smallest, r.Index)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(doc)
}
