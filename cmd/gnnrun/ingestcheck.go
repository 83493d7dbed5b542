package main

import (
	"fmt"
	"gnnrun/report"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/graphio"
)

var ingestFlags struct {
	in            string
	format        string
	undirected    bool
	dropSelfLoops bool
	dedup         bool
	compact       bool
	header        string
	skipData      bool
}

func init() {
	register(&command{
		name:    "ingest-check",
		summary: "read a graph with every rank and print its counts, structure and checksum",
		usage:   "ingest-check --in PATH [--undirected] [--drop-self-loops] [--dedup] [--compact] [--format F]",
		help: `Reads PATH with all ranks, as every later stage reads its input, and prints
on rank 0: node and edge counts per type, what normalisation did, edges held
per rank, self loops, duplicate edges, isolated nodes, min/mean/max degree,
node and edge arrays with dtype, shape and checksum, and an order-independent
checksum of the edge set that is the same at any number of ranks.

PATH is a DGL chunked graph (its directory or metadata.json; edges in CSV,
NumPy or Parquet chunks, node and edge data in NumPy, Parquet or CSV), a METIS
.graph file, a MatrixMarket .mtx file, a NumPy .npz (an "edges" array or a CSR
adjacency, plus node arrays) or .npy (N×2 edges), or an edge list ("src dst
[weight]" lines; # and % comments; optional "n m" header; .gz is streamed).

Normalisation, distributed, in this order: --compact renumbers the node IDs of
an edge list to 0..N-1 (original IDs kept as node array orig_id),
--drop-self-loops, --undirected adds the reverse of every edge, --dedup keeps
one edge per (type, source, destination). Bad input stops every rank with the
file, line or row, and the reason.`,
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&ingestFlags.in, "in", "", "input graph (required)")
			fs.StringVar(&ingestFlags.format, "format", "", "input format instead of guessing from the name: chunked, edgelist, metis, mtx, npz, npy")
			fs.BoolVar(&ingestFlags.undirected, "undirected", false, "add the reverse of every edge that is not a self loop")
			fs.BoolVar(&ingestFlags.dropSelfLoops, "drop-self-loops", false, "drop edges whose source is their destination")
			fs.BoolVar(&ingestFlags.dedup, "dedup", false, "drop duplicate edges, keeping the first")
			fs.BoolVar(&ingestFlags.compact, "compact", false, "renumber an edge list's node IDs to 0..N-1")
			fs.StringVar(&ingestFlags.header, "header", "auto", "edge lists: is the first line a header? auto, yes or no")
			fs.BoolVar(&ingestFlags.skipData, "skip-data", false, "read the edges only, no node or edge data")
		},
		run: runIngestCheck,
	})
}

func runIngestCheck(e *env, args []string) error {
	f := ingestFlags
	if len(args) == 1 && f.in == "" {
		f.in = args[0]
	} else if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q", args)
	}
	if f.in == "" {
		return fmt.Errorf("--in is required (see gnnrun help ingest-check)")
	}
	task := e.meter.Start("read", 0, "bytes")
	var last int64
	opts := []graphio.Option{
		graphio.InputFormat(f.format), graphio.Undirected(f.undirected), graphio.DropSelfLoops(f.dropSelfLoops),
		graphio.Dedup(f.dedup), graphio.Compact(f.compact), graphio.Header(f.header), graphio.SkipData(f.skipData),
		graphio.Logger(e.log),
		graphio.Progress(func(_ string, done, _ int64) {
			if done > last {
				task.Add(done - last)
			}
			last = done
		}),
	}
	start := time.Now()
	end := e.stage("read")
	g, err := graphio.Read(e.comm, f.in, opts...)
	end()
	task.Done()
	if err != nil {
		return err
	}
	defer g.Close()
	readSecs := time.Since(start).Seconds()
	end = e.stage("check")
	s, err := graphio.ComputeStats(e.comm, g)
	end()
	if err != nil {
		return err
	}
	printStats(e, g, s, readSecs)
	e.rec.Set("nodes", s.Meta.TotalNodes())
	e.rec.Set("edges", s.Edges)
	e.rec.Set("checksum", fmt.Sprintf("%#016x", s.Checksum))
	e.rec.Set("read_seconds", readSecs)
	return nil
}

func printStats(e *env, g *graphio.Graph, s *graphio.Stats, secs float64) {
	m := &s.Meta
	e.printf("graph %s (%s: %s) read by %d ranks in %.2f s\n", m.Name, g.Format, g.Path, e.comm.Size(), secs)
	e.printf("node types:\n")
	for t, nt := range m.NodeTypes {
		e.printf("  %-24s %s nodes\n", nt, report.Count(m.NumNodes[t]))
	}
	e.printf("edge types:\n")
	for t, et := range m.EdgeTypes {
		e.printf("  %-24s %s edges\n", et, report.Count(m.NumEdges[t]))
	}
	for _, st := range g.Steps {
		e.printf("%s\n", st.Text)
	}
	e.printf("nodes:             %s\n", report.Count(m.TotalNodes()))
	e.printf("edges:             %s (per rank: min %s, max %s)\n", report.Count(s.Edges), report.Count(s.MinShare), report.Count(s.MaxShare))
	e.printf("self loops:        %s\n", report.Count(s.SelfLoops))
	e.printf("duplicate edges:   %s\n", report.Count(s.Duplicates))
	e.printf("isolated nodes:    %s\n", report.Count(s.Isolated))
	e.printf("out-degree:        min %s, mean %.2f, max %s\n", report.Count(s.OutDegree.Min), s.OutDegree.Mean, report.Count(s.OutDegree.Max))
	e.printf("in-degree:         min %s, mean %.2f, max %s\n", report.Count(s.InDegree.Min), s.InDegree.Mean, report.Count(s.InDegree.Max))
	e.printf("edge weights:      %s\n", map[bool]string{true: "yes", false: "no"}[s.Weighted])
	if len(s.Arrays) > 0 {
		e.printf("arrays:\n")
		for _, a := range s.Arrays {
			e.printf("  %s %-28s %-8s %-16s checksum %#016x\n", a.Kind, a.Type+"/"+a.Name, a.DType, shapeString(a.Shape), a.Checksum)
		}
	}
	e.printf("edge checksum:     %#016x\n", s.Checksum)
}

func shapeString(s []int64) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = fmt.Sprint(x)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// bytesString formats a byte count with a binary unit.
func bytesString(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(n)
	u := 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}
