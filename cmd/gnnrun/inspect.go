package main

import (
	"fmt"
	"gnnrun/report"

	"github.com/spf13/pflag"

	"gnnrun/graphio"
	"gnnrun/shard"
)

var inspectFlags struct {
	in, format string
}

func init() {
	register(&command{
		name:    "inspect",
		summary: "print and verify a partition directory (optionally against the input graph)",
		usage:   "inspect PARTDIR [--in GRAPH]",
		help: `Reads the partition directory PARTDIR (partition p by rank p mod P) and prints,
per partition: local nodes, inner and halo nodes, edges, edge cut (in-edges
from halo nodes) and training nodes (train_mask set), with the balance of
nodes, edges and training nodes (largest over mean).

It verifies: node_map and edge_map ranges tile [0, num_nodes) and [0,
num_edges); every partition's arrays agree with each other and the ranges
(local2global, inner_node, node_type, indptr, indices, edge_ids, edge_type,
halo nodes); orig_nids of every node type and orig_eids of every edge type
are permutations of the input IDs, so every input node and edge is in exactly
one partition. With --in GRAPH (read with the normalisation the config
records) it also checks that every partition edge joins its input edge's
endpoints and that every node and edge row equals the input's row. The
checks are distributed by ID: no rank holds more than its share. It exits
non-zero on any violation.`,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&inspectFlags.in, "in", "", "input graph to compare the partitions with")
			fs.StringVar(&inspectFlags.format, "format", "", "input format instead of guessing: chunked, edgelist, metis, mtx, npz, npy")
		},
		run: runInspect,
	})
}

func runInspect(e *env, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want one partition directory (see gnnrun help inspect)")
	}
	dir := args[0]
	_, cfg, err := shard.LoadConfig(e.comm, dir)
	if err != nil {
		return err
	}
	var g *graphio.Graph
	if inspectFlags.in != "" {
		end := e.stage("read")
		g, err = graphio.Read(e.comm, inspectFlags.in, readOptions(e, inspectFlags.format, cfg.Normalize)...)
		end()
		if err != nil {
			return err
		}
		defer g.Close()
	}
	end := e.stage("inspect")
	rep, err := shard.Inspect(e.comm, dir, g, shard.Budget(e.flags.maxMessage), shard.Logger(e.log))
	end()
	if err != nil {
		return err
	}
	printInspect(e, rep)
	if rep.NumViolations > 0 {
		// Every rank has the report: end together, after rank 0 printed it.
		return agreed{fmt.Errorf("%s: %d violations (first: %s)", rep.ConfigPath, rep.NumViolations, rep.Violations[0])}
	}
	return nil
}

func printInspect(e *env, rep *shard.InspectReport) {
	cfg := rep.Config
	e.printf("inspect: %s: graph %s, %d partitions (%s), %s nodes, %s edges, node types %v, edge types %v, halo_hops %d, compression %s\n",
		rep.ConfigPath, cfg.GraphName, cfg.NumParts, cfg.PartMethod, report.Count(cfg.NumNodes), report.Count(cfg.NumEdges),
		cfg.NodeTypes, cfg.EdgeTypes, cfg.HaloHops, cfg.Compression)
	e.printf("  %-5s %13s %13s %13s %13s %13s %13s\n", "part", "nodes", "inner", "halo", "edges", "edge cut", "train")
	var cut int64
	for _, p := range rep.Parts {
		train := "-"
		if p.Train >= 0 {
			train = report.Count(p.Train)
		}
		e.printf("  %-5d %13s %13s %13s %13s %13s %13s\n", p.Part, report.Count(p.Inner+p.Halo), report.Count(p.Inner), report.Count(p.Halo), report.Count(p.Edges), report.Count(p.Cut), train)
		cut += p.Cut
	}
	nb, eb, tb := rep.Balance()
	e.printf("  edge cut %s (%.2f%%); balance (max/mean): nodes %.3f, edges %.3f, train %.3f\n", report.Count(cut),
		100*float64(cut)/float64(max(cfg.NumEdges, 1)), nb, eb, tb)
	for _, c := range rep.Checked {
		e.printf("  checked: %s\n", c)
	}
	if rep.NumViolations == 0 {
		e.printf("  OK: no violations\n")
	} else {
		e.printf("  FAILED: %d violations\n", rep.NumViolations)
		for _, v := range rep.Violations {
			e.printf("    %s\n", v)
		}
	}
	e.rec.Set("violations", rep.NumViolations)
	e.rec.Set("edge_cut", cut)
	e.rec.Set("balance", map[string]float64{"nodes": nb, "edges": eb, "train": tb})
}
