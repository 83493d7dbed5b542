package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"gnnrun/graphio"
	"gnnrun/parmetis"
	"gnnrun/parmetis/serial"
)

type partitionArgs struct {
	in, format, out string
	parts           int
	seed            uint64
	imbalance       string
	balance         string
	tpwgts          string
	hierarchy       string
	algo            string
	tries           int
	maxReplicated   int64
	overwrite       bool
	method          string
	coarsening      string
}

var partitionFlags partitionArgs

func init() {
	register(&command{
		name:    "partition",
		summary: "compute a K-way min-cut partition assignment with balance constraints",
		usage:   "partition --in GRAPH --parts K --out DIR [--seed S] [--imbalance U] [--balance LIST] [--hierarchy AxB] [--algo parmetis|random]",
		help: `Reads GRAPH with all ranks (anything ingest-check reads: a DGL chunked
graph, a METIS .graph, an edge list, ...) and computes a K-way partition of
its nodes with a minimum edge cut, every part within --imbalance of its
target for every balance constraint. The graph is treated as undirected: an
edge u->v and v->u together weigh 2; self loops are ignored; METIS files are
taken as they are (already symmetric).

The algorithm is a parallel multilevel scheme in the style of ParMETIS:
distributed coarsening (heavy-edge matching by request/grant on meshes;
stars around hubs and pruning of coarse vertices to their heaviest edges on
power-law graphs) until the graph fits --max-replicated, serial multilevel
partitions of that coarsest graph on every rank with a different seed (the
best balanced cut wins), then projection and distributed refinement (greedy
moves on coarse levels, FM local search on the finest, moves kept only when
the cut does not grow) and balancing, level by level. For K > 2 on several
ranks the ranks bisect the graph this way, split into two groups with the
two halves, and recurse; a single rank partitions its piece serially. On one
rank the whole graph is partitioned serially. A power-law graph in 3 to 8
parts whose first level of stars leaves fewer than one vertex in 16
(communities; on several ranks, each rank's stars over the arcs among its
own vertices) is partitioned directly instead, on one rank coarsened to
1000000 vertices + arcs first. --algo random gives the balanced random
baseline.

Balance constraints (--balance, comma-separated): nodes (every node weighs 1),
edges (a node weighs its in-degree), ntypes (one constraint per node type),
train, val, test (nodes whose train_mask/val_mask/test_mask is set), vwgt
(the vertex weights of a METIS file). Default: vwgt for weighted METIS files,
else nodes.

DIR receives DGL's partition assignment (<ntype>.txt, line i = part of
type-wise node i; partition_meta.json), plus <graph_name>.part (one part per
line, as gpmetis writes) for graphs with one node type.`,
		flags: func(fs *pflag.FlagSet) {
			f := &partitionFlags
			fs.StringVar(&f.in, "in", "", "input graph (required)")
			fs.StringVar(&f.format, "format", "", "input format instead of guessing: chunked, edgelist, metis, mtx, npz, npy")
			fs.IntVar(&f.parts, "parts", -1, "number of parts K (required)")
			fs.StringVar(&f.out, "out", "", "output directory for the assignment (required)")
			fs.Uint64Var(&f.seed, "seed", 1, "seed; the same seed and rank count give the same partition")
			fs.StringVar(&f.imbalance, "imbalance", "1.03", "largest part weight over its target: one value, or one per constraint")
			fs.StringVar(&f.balance, "balance", "", "balance constraints: nodes,edges,ntypes,train,val,test,vwgt (default nodes, or vwgt)")
			fs.StringVar(&f.tpwgts, "tpwgts", "", "target weight fraction of each part, comma-separated, summing to 1 (default equal)")
			fs.StringVar(&f.hierarchy, "hierarchy", "", "AxB: partition into A machines, then each machine's nodes into B parts (A*B = K)")
			fs.StringVar(&f.algo, "algo", "parmetis", "parmetis or random")
			fs.IntVar(&f.tries, "tries", 4, "serial initial partitions tried per run (spread over the ranks)")
			fs.Int64Var(&f.maxReplicated, "max-replicated", 0, "largest coarsest graph (vertices + arcs) every rank holds; 0: max(1000000, (N+arcs)/(3P)) (one rank: the whole graph, but see above), inside recursive bisection max(1000000, 0.8*arcs/P), coarsened a level first if that level halves it, each up to 10% more")
			fs.StringVar(&f.method, "method", "auto", "auto (rb for K > 2 on several ranks, else kway; kway on graphs with communities, see above), kway or rb")
			fs.StringVar(&f.coarsening, "coarsening", "auto", "auto (stars for power-law graphs, else match), match or stars")
			fs.BoolVar(&f.overwrite, "overwrite", false, "replace an assignment already in DIR")
		},
		run: runPartition,
	})
}

func runPartition(e *env, args []string) error {
	f := partitionFlags
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q", args)
	}
	if f.in == "" || f.out == "" || f.parts == -1 {
		return errors.New("--in, --parts and --out are required (see gnnrun help partition)")
	}
	o, cons, err := partitionOptions(f)
	if err != nil {
		return err
	}
	if err := checkOnRoot(e.comm, func() error { return checkOutputDir(f.out, f.overwrite) }); err != nil {
		return err
	}
	end := e.stage("read")
	g, err := graphio.Read(e.comm, f.in, graphio.InputFormat(f.format), graphio.Logger(e.log))
	end()
	if err != nil {
		return err
	}
	defer g.Close()
	if int64(f.parts) > g.Meta.TotalNodes() {
		return fmt.Errorf("--parts %d exceeds the %d nodes of %s", f.parts, g.Meta.TotalNodes(), f.in)
	}
	in, err := partitionInput(g)
	if err != nil {
		return err
	}
	bal := parmetis.Balance{Constraints: cons, Meta: &g.Meta, Nodes: g.Nodes}
	var res *parmetis.Result
	var w *parmetis.Weights
	var bst parmetis.BuildStats
	if f.algo == "random" {
		end = e.stage("partition")
		res, w, err = parmetis.PartitionRandom(e.comm, in, bal, o)
		end()
	} else {
		res, w, bst, err = multilevelPartition(e, in, bal, o, f)
	}
	if err != nil {
		return err
	}
	end = e.stage("write")
	files, err := graphio.WriteAssignment(e.comm, f.out, &g.Meta, res.Lo, res.Part, o.Parts)
	end()
	if err != nil {
		return err
	}
	printPartitionSummary(e, g, bst, res, w.Names, o, files)
	return nil
}

// multilevelPartition builds the partitioner's graph, weighs its vertices
// and partitions it.
func multilevelPartition(e *env, in parmetis.Input, bal parmetis.Balance, o parmetis.Options, f partitionArgs) (*parmetis.Result, *parmetis.Weights, parmetis.BuildStats, error) {
	end := e.stage("build")
	dg, bst, err := parmetis.Build(e.comm, in)
	end()
	if err != nil {
		return nil, nil, bst, err
	}
	w, err := bal.Weights(e.comm, dg.Lo(), dg.InDeg)
	if err != nil {
		return nil, nil, bst, err
	}
	if err := dg.SetVertexWeights(w.NCon, w.Vwgt); err != nil {
		return nil, nil, bst, err
	}
	if len(o.Imbalance) > 1 && len(o.Imbalance) != w.NCon {
		return nil, nil, bst, fmt.Errorf("--imbalance has %d values for the %d constraints %v", len(o.Imbalance), w.NCon, w.Names)
	}
	end = e.stage("partition")
	res, err := partitionGraph(dg, o, f)
	end()
	return res, w, bst, err
}

// partitionOptions turns the flags into parmetis options and balance
// constraints (nil: the default for the graph).
func partitionOptions(f partitionArgs) (parmetis.Options, []parmetis.Constraint, error) {
	o := parmetis.Options{Options: serial.Options{Parts: f.parts, Seed: f.seed, Tries: f.tries}, MaxReplicated: f.maxReplicated}
	if f.parts < 1 {
		return o, nil, fmt.Errorf("--parts must be at least 1, got %d", f.parts)
	}
	var err error
	if o.Imbalance, err = parseFloats(f.imbalance); err != nil {
		return o, nil, fmt.Errorf("--imbalance: %w", err)
	}
	for _, u := range o.Imbalance {
		if !(u > 1) {
			return o, nil, fmt.Errorf("--imbalance must be above 1 (1.03 allows parts 3%% above their target), got %v", u)
		}
	}
	if f.tpwgts != "" {
		if o.TargetWeights, err = parseFloats(f.tpwgts); err != nil {
			return o, nil, fmt.Errorf("--tpwgts: %w", err)
		}
	}
	if o.Method, err = parmetis.ParseMethod(f.method); err != nil {
		return o, nil, err
	}
	if o.Coarsening, err = parmetis.ParseCoarsening(f.coarsening); err != nil {
		return o, nil, err
	}
	cons, err := parmetis.ParseConstraints(f.balance)
	if err != nil {
		return o, nil, err
	}
	if f.algo != "parmetis" && f.algo != "random" {
		return o, nil, fmt.Errorf("--algo %q: want parmetis or random", f.algo)
	}
	if f.hierarchy != "" {
		if _, _, err := parseHierarchy(f.hierarchy, f.parts); err != nil {
			return o, nil, err
		}
	}
	if f.tries < 1 {
		return o, nil, fmt.Errorf("--tries must be at least 1, got %d", f.tries)
	}
	return o, cons, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, x := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a number", x)
		}
		out = append(out, v)
	}
	return out, nil
}

// checkOutputDir refuses a directory that already holds an assignment, or
// a path that cannot be one.
func checkOutputDir(dir string, overwrite bool) error {
	if err := checkDirPath("--out", dir); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "partition_meta.json")); err == nil && !overwrite {
		return fmt.Errorf("%s already holds a partition assignment; pass --overwrite to replace it", dir)
	}
	return nil
}
