package main

import (
	"fmt"
	"gnnrun/report"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/graphio"
)

var genFlags struct {
	spec graphio.GenSpec
	out  string
}

func init() {
	register(&command{
		name:    "gen",
		summary: "generate an R-MAT graph in DGL's chunked format, every rank writing its chunks",
		usage:   "gen --scale S --out DIR [--edge-factor E] [--seed X] [--feat-dim D] [--classes C [--planted F]] [--format csv|numpy|parquet] [--hetero [--item-feat-dim D] [--reverse]] [--chunks K]",
		help: `Generates a Graph500-style R-MAT (stochastic Kronecker) graph with 2^S nodes
and E*2^S edges and writes it in DGL's chunked graph format: DIR/metadata.json
(with both per-type and per-chunk counts), edge chunks in DIR/edges/ and node
data in DIR/node_data/. Every rank generates and writes its own chunks.

Edge k is a function of the seed and k alone, so the graph is the same for any
number of ranks; with a fixed --chunks the files are byte-identical too (the
default, one chunk per rank, only changes how the same edges are cut into
files). The edge checksum printed at the end is the one ingest-check prints.

--feat-dim adds float32 features "feat"; --classes adds int64 labels "label"
and boolean masks train_mask/val_mask/test_mask (60/20/20%). --hetero adds a
second node type "item" (2^S/4 nodes) and an edge type "user:buys:item"
(E*2^S/4 edges, uniform items) beside "user:follows:user"; labels and masks
are the users'. --item-feat-dim D gives items D feature columns (-1: none)
instead of --feat-dim's. --reverse adds "item:bought_by:user", every buys
edge reversed, so that users hear from items.

Labels are random unless --planted F (with --classes C) plants them as
communities a GNN can learn: node v's class is v mod C, a share F of the
edges (of the first type) keep their R-MAT source and take a destination of
the source's class, and the features are the class's centroid (+-0.1 per
column) plus uniform noise in [-1, 1), so that features alone tell the
classes apart poorly and a node's in-neighbours, mostly of its class, well.
With --hetero --reverse, a share F of the buys edges also go to an item of
the user's class (an item's class is its ID mod C), so a user's items carry
its class too: R-GCN's task (examples/rgcn.py).`,
		flags: func(fs *pflag.FlagSet) {
			s := &genFlags.spec
			fs.IntVar(&s.Scale, "scale", 0, "log2 of the number of nodes (required)")
			fs.IntVar(&s.EdgeFactor, "edge-factor", 16, "edges per node")
			fs.Float64Var(&s.A, "a", 0.57, "R-MAT probability of the top-left quadrant")
			fs.Float64Var(&s.B, "b", 0.19, "R-MAT probability of the top-right quadrant")
			fs.Float64Var(&s.C, "c", 0.19, "R-MAT probability of the bottom-left quadrant (d = 1-a-b-c)")
			fs.Float64Var(&s.Noise, "noise", 0.1, "per-level noise of the probabilities, in [0,1) (0: plain R-MAT)")
			fs.Uint64Var(&s.Seed, "seed", 1, "random seed")
			fs.BoolVar(&s.Permute, "permute", true, "relabel the nodes by a pseudo-random permutation (Graph500)")
			fs.IntVar(&s.FeatDim, "feat-dim", 0, "float32 node features per node (0: none)")
			fs.IntVar(&s.Classes, "classes", 0, "label classes; also writes train/val/test masks (0: none)")
			fs.Float64Var(&s.Planted, "planted", 0, "plant the classes as communities: this share of edges joins a node to its class (0: random labels)")
			fs.StringVar(&s.Format, "format", "numpy", "edge chunk format: csv, numpy or parquet")
			fs.BoolVar(&s.Hetero, "hetero", false, "add a second node type and edge type")
			fs.IntVar(&s.ItemFeatDim, "item-feat-dim", 0, "with --hetero: item's feature columns (0: --feat-dim; -1: none)")
			fs.BoolVar(&s.Reverse, "reverse", false, "with --hetero: add edge type item:bought_by:user (buys reversed; planted too with --planted)")
			fs.IntVar(&s.Chunks, "chunks", 0, "chunks per type (default: one per rank)")
			fs.StringVar(&s.Name, "name", "", "graph name (default rmatS)")
			fs.StringVar(&genFlags.out, "out", "", "output directory (required)")
		},
		run: runGen,
	})
}

func runGen(e *env, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q", args)
	}
	spec := genFlags.spec
	if spec.Scale == 0 || genFlags.out == "" {
		return fmt.Errorf("--scale and --out are required (see gnnrun help gen)")
	}
	spec.SetDefaults(e.comm.Size())
	if err := spec.Validate(); err != nil {
		return err
	}
	meta := spec.Meta()
	done := e.stage("gen")
	task := e.meter.Start("gen", 0, "edges")
	start := time.Now()
	var last int64
	res, err := graphio.Generate(e.comm, spec, genFlags.out, func(d, _ int64) { task.Add(d - last); last = d })
	task.Done()
	done()
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	m := meta.TotalEdges()
	e.printf("generated %s: %s nodes, %s edges (%s chunks of %s per type) in %s\n", meta.Name, report.Count(meta.TotalNodes()), report.Count(m), report.Count(int64(spec.Chunks)), spec.Format, genFlags.out)
	for t, et := range meta.EdgeTypes {
		e.printf("  %-24s %s edges\n", et, report.Count(meta.NumEdges[t]))
	}
	e.printf("wrote %s in %.2f s on %d ranks (%.3g edges/s, %.1f MB/s)\n", bytesString(res.Bytes), secs, e.comm.Size(), float64(m)/secs, float64(res.Bytes)/secs/1e6)
	e.printf("edge checksum: %#016x\n", res.Checksum)
	e.rec.Set("nodes", meta.TotalNodes())
	e.rec.Set("edges", m)
	e.rec.Set("bytes", res.Bytes)
	e.rec.Set("checksum", fmt.Sprintf("%#016x", res.Checksum))
	return nil
}
