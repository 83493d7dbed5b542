package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/graphio"
	"gnnrun/report"
	"gnnrun/shard"
)

var dispatchFlags struct {
	in, format, assignment, out string
	parts                       int
	compress                    string
	overwrite                   bool
	undirected, dedup, noLoops  bool
}

func init() {
	register(&command{
		name:    "dispatch",
		summary: "turn a partition assignment into partition directories (relabel, shuffle, halo, CSC)",
		usage:   "dispatch --in GRAPH --assignment DIR|FILE --out PARTDIR [--parts K] [--compress zstd] [--overwrite]",
		help: `Reads GRAPH and a partition assignment with every rank, and writes PARTDIR,
one directory per partition plus <graph_name>.json (DGL's partition config).

The assignment is DGL's directory (<ntype>.txt, line i the part of type-wise
node i, and partition_meta.json), as gnnrun partition writes it, or a single
METIS-style file of one part per line (gpmetis' output) for a graph with one
node type; --parts states K for such a file (default: the largest part + 1).

Nodes get new IDs so that each partition owns one contiguous range, grouped by
node type inside it; every edge goes to the partition of its destination
node, node rows (features, labels, masks) to their node's partition, edge
rows with their edge. Sources of in-edges owned elsewhere become the
partition's halo nodes, numbered after its inner nodes. Data moves all-to-all
in rounds of at most --max-message bytes per rank; counts and checksums are
compared by all-reduce after every shuffle. The result depends on the graph
and the assignment only, not on the number of ranks; K may be anything.

Partition p is written by rank p mod P (P at a time); every file goes to a
temporary name and is renamed, and the config is written last, so a partial
run never looks complete. --compress zstd writes .npy.zst files for shipping
over a shared file system (decompressed once per host into /dev/shm when
opened). Edges are kept as given unless --undirected, --dedup or
--drop-self-loops ask for normalisation (recorded in the config).`,
		flags: func(fs *pflag.FlagSet) {
			f := &dispatchFlags
			fs.StringVar(&f.in, "in", "", "input graph (required)")
			fs.StringVar(&f.format, "format", "", "input format instead of guessing: chunked, edgelist, metis, mtx, npz, npy")
			fs.StringVar(&f.assignment, "assignment", "", "partition assignment: DGL directory or a .part file (required)")
			fs.StringVar(&f.out, "out", "", "output partition directory (required)")
			fs.IntVar(&f.parts, "parts", 0, "number of partitions K (default: from the assignment)")
			fs.StringVar(&f.compress, "compress", "none", "none or zstd (.npy.zst files)")
			fs.BoolVar(&f.overwrite, "overwrite", false, "replace a partition already in --out")
			fs.BoolVar(&f.undirected, "undirected", false, "add the reverse of every edge before dispatch")
			fs.BoolVar(&f.dedup, "dedup", false, "drop duplicate edges before dispatch")
			fs.BoolVar(&f.noLoops, "drop-self-loops", false, "drop self loops before dispatch")
		},
		run: runDispatch,
	})
}

// normalizeSteps lists the normalisation flags in graphio's order of work.
func normalizeSteps(noLoops, undirected, dedup bool) []string {
	var s []string
	if noLoops {
		s = append(s, "drop-self-loops")
	}
	if undirected {
		s = append(s, "undirected")
	}
	if dedup {
		s = append(s, "dedup")
	}
	return s
}

// readOptions returns the graphio options of a normalisation.
func readOptions(e *env, format string, steps []string) []graphio.Option {
	opts := []graphio.Option{graphio.InputFormat(format), graphio.Logger(e.log)}
	for _, s := range steps {
		switch s {
		case "drop-self-loops":
			opts = append(opts, graphio.DropSelfLoops(true))
		case "undirected":
			opts = append(opts, graphio.Undirected(true))
		case "dedup":
			opts = append(opts, graphio.Dedup(true))
		}
	}
	return opts
}

func runDispatch(e *env, args []string) error {
	f := dispatchFlags
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q", args)
	}
	if f.in == "" || f.assignment == "" || f.out == "" {
		return errors.New("--in, --assignment and --out are required (see gnnrun help dispatch)")
	}
	if f.compress != "none" && f.compress != "zstd" {
		return fmt.Errorf("--compress %q: want none or zstd", f.compress)
	}
	// Refuse an existing partition before reading anything.
	if err := shard.CheckOutput(e.comm, f.out, "", f.overwrite); err != nil {
		return err
	}
	steps := normalizeSteps(f.noLoops, f.undirected, f.dedup)
	end := e.stage("read")
	g, err := graphio.Read(e.comm, f.in, readOptions(e, f.format, steps)...)
	end()
	if err != nil {
		return err
	}
	defer g.Close()
	end = e.stage("assignment")
	a, err := graphio.ReadAssignment(e.comm, f.assignment, &g.Meta, f.parts)
	end()
	if err != nil {
		return err
	}
	end = e.stage("dispatch")
	t0 := time.Now()
	var task *report.Task
	stage := ""
	var last int64
	res, err := shard.Dispatch(e.comm, g, a, f.out,
		shard.Budget(e.flags.maxMessage), shard.Compress(f.compress == "zstd"), shard.Overwrite(f.overwrite),
		shard.PartMethod(a.AlgoName), shard.Normalized(steps), shard.Logger(e.log),
		shard.Progress(func(name string, done, total int64) {
			if name != stage {
				if task != nil {
					task.Done()
				}
				task, stage, last = e.meter.Start(name, total, name), name, 0
			}
			task.Add(done - last)
			last = done
		}))
	if task != nil {
		task.Done()
	}
	secs := time.Since(t0).Seconds()
	end()
	if err != nil {
		return err
	}
	printDispatch(e, g, res, secs)
	return nil
}

func printDispatch(e *env, g *graphio.Graph, res *shard.Result, secs float64) {
	cfg := res.Config
	m := &g.Meta
	e.printf("dispatch: %s: %s nodes, %s edges into %d partitions on %d ranks in %.2fs\n",
		g.Path, report.Count(m.TotalNodes()), report.Count(m.TotalEdges()), cfg.NumParts, e.comm.Size(), secs)
	e.printf("  %-6s %14s %14s %14s %14s\n", "part", "inner nodes", "halo nodes", "edges", "edge cut")
	var cut int64
	for p, pf := range cfg.Parts {
		e.printf("  %-6d %14s %14s %14s %14s\n", p, report.Count(pf.InnerNodes), report.Count(pf.HaloNodes), report.Count(pf.Edges), report.Count(res.Cut[p]))
		cut += res.Cut[p]
	}
	e.printf("  edge cut %s (%.2f%% of edges); rounds: lookup %d, nodes %d, edges %d\n", report.Count(cut),
		100*float64(cut)/float64(max(m.TotalEdges(), 1)), res.LookupRounds, res.NodeRounds, res.EdgeRounds)
	e.printf("  phases:")
	for _, ph := range []string{"relabel", "endpoints", "waves", "config"} {
		e.printf(" %s %.2fs", ph, res.Seconds[ph])
	}
	e.printf("\n  wrote %s\n", res.ConfigPath)
	e.rec.Set("num_parts", cfg.NumParts)
	e.rec.Set("edge_cut", cut)
	e.rec.Set("halo", res.Halo)
	e.rec.Set("phase_seconds", res.Seconds)
	e.rec.Set("node_bytes", res.NodeBytes)
	e.rec.Set("edge_bytes", res.EdgeBytes)
	e.rec.Set("rounds", map[string]int{"lookup": res.LookupRounds, "nodes": res.NodeRounds, "edges": res.EdgeRounds})
}
