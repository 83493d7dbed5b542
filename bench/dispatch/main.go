// Command dispatch measures gnnrun's dispatch and feature serving: the
// dispatch of a generated R-MAT graph with 128 float32 features per node
// at 1 and 2 ranks (edges/s, feature bytes/s and the bytes/s each shuffle
// put on the wire, beside the raw MPI_Alltoallv bandwidth measured in the
// same run), the peak RSS of every rank, and Store.Pull throughput for
// random rows: local, alltoall and rma transports, beside a plain memcpy
// gather of as many rows.
//
// Usage (from the repository root; it runs mpirun itself):
//
//	go run ./bench/dispatch --scale 20,22
//
// Built without MPI (go run -tags nompi ./bench/dispatch --np 1) it builds
// gnnrun and itself the same way and starts them directly, as worlds of one.
//
// For each scale it generates the graph once under --dir (default
// bench/results/tmp/dispatch, git-ignored) with `gnnrun gen`, writes random
// K-way assignments (a hash of each node ID), then for each
// rank count runs itself under `mpirun -np P` as a worker: read the graph,
// dispatch it (timed per phase, traffic counted), measure MPI_Alltoallv
// on plain buffers, open the partitions and time Pull. Results go to
// bench/results/dispatch.json and bench/results/dispatch.md.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"gnnrun/bench/driver"
	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/rank"
)

func main() {
	var o driverOptions
	flag.StringVar(&o.scales, "scale", "20,22", "R-MAT scales, comma-separated")
	flag.IntVar(&o.feat, "feat-dim", 128, "float32 features per node")
	flag.IntVar(&o.parts, "parts", 8, "partitions K of the timed dispatch (the Pull benchmark uses K = P)")
	flag.StringVar(&o.ranks, "np", "1,2", "rank counts, comma-separated")
	flag.IntVar(&o.budget, "max-message", 32<<20, "round budget and message limit in bytes (gnnrun --max-message)")
	flag.IntVar(&o.pullRows, "pull-rows", 1<<20, "rows per rank for the Pull benchmark")
	flag.StringVar(&o.dir, "dir", "bench/results/tmp/dispatch", "work directory for graphs and partitions")
	flag.StringVar(&o.out, "out", "bench/results/dispatch", "results prefix (.json and .md)")
	worker := flag.Bool("worker", false, "internal: run as an MPI rank")
	render := flag.Bool("render", false, "only rewrite the .md from the .json of an earlier run")
	var w workerOptions
	flag.StringVar(&w.graph, "graph", "", "worker: graph directory")
	flag.StringVar(&w.assignment, "assignment", "", "worker: assignment directory")
	flag.StringVar(&w.partDir, "parts-dir", "", "worker: output partition directory")
	flag.StringVar(&w.cpuProfile, "cpuprofile", "", "worker: write rank 0's CPU profile of the dispatch here")
	flag.StringVar(&w.pullAssignment, "pull-assignment", "", "worker: K = P assignment for the Pull benchmark")
	flag.StringVar(&w.pullDir, "pull-dir", "", "worker: partition directory for the Pull benchmark")
	flag.Parse()
	if *worker {
		w.budget, w.pullRows = o.budget, o.pullRows
		if err := runWorker(w); err != nil {
			fmt.Fprintln(os.Stderr, "bench/dispatch worker:", err)
			os.Exit(1)
		}
		return
	}
	if *render {
		if err := rerender(o.out); err != nil {
			fmt.Fprintln(os.Stderr, "bench/dispatch:", err)
			os.Exit(1)
		}
		return
	}
	if err := runDriver(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/dispatch:", err)
		os.Exit(1)
	}
}

type driverOptions struct {
	scales, ranks, dir, out string
	feat, parts, budget     int
	pullRows                int
}

// result is one worker run, as rank 0 prints it.
type result struct {
	Scale int `json:"scale"`
	workerResult
}

func runDriver(o driverOptions) error {
	scales, err := driver.Ints(o.scales)
	if err != nil {
		return err
	}
	ranks, err := driver.Ranks(o.ranks)
	if err != nil {
		return err
	}
	self := filepath.Join(o.dir, "bench-dispatch")
	bin, err := driver.Gnnrun(o.dir, [2]string{self, "./bench/dispatch"})
	if err != nil {
		return err
	}
	var results []result
	for _, sc := range scales {
		g := filepath.Join(o.dir, fmt.Sprintf("rmat%d-f%d", sc, o.feat))
		if _, err := os.Stat(filepath.Join(g, "metadata.json")); err != nil {
			if err := mpirun(driver.GenRanks(), bin, "gen", "--scale", fmt.Sprint(sc), "--feat-dim", fmt.Sprint(o.feat), "--classes", "10", "--chunks", "4", "--out", g); err != nil {
				return err
			}
		}
		assignment := func(k int) (string, error) {
			asg := fmt.Sprintf("%s-random%d", g, k)
			if _, err := os.Stat(filepath.Join(asg, "partition_meta.json")); err == nil {
				return asg, nil
			}
			return asg, randomAssignment(g, asg, k)
		}
		asg, err := assignment(o.parts)
		if err != nil {
			return err
		}
		for _, np := range ranks {
			pullAsg, err := assignment(np)
			if err != nil {
				return err
			}
			parts := fmt.Sprintf("%s-parts%d-np%d", g, o.parts, np)
			pullParts := fmt.Sprintf("%s-parts%d-np%d", g, np, np)
			os.RemoveAll(parts)
			os.RemoveAll(pullParts)
			var stdout bytes.Buffer
			cmd, err := driver.Launch(np, self, "-worker", "-graph", g, "-assignment", asg, "-parts-dir", parts,
				"-pull-assignment", pullAsg, "-pull-dir", pullParts,
				"-max-message", fmt.Sprint(o.budget), "-pull-rows", fmt.Sprint(o.pullRows))
			if err != nil {
				return err
			}
			cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
			fmt.Fprintf(os.Stderr, "scale %d, %d ranks: %s\n", sc, np, strings.Join(cmd.Args, " "))
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("worker at scale %d on %d ranks: %v\n%s", sc, np, err, stdout.String())
			}
			var r result
			if err := json.Unmarshal(lastLine(stdout.Bytes()), &r.workerResult); err != nil {
				return fmt.Errorf("worker output: %v\n%s", err, stdout.String())
			}
			r.Scale = sc
			results = append(results, r)
			os.RemoveAll(parts)
			os.RemoveAll(pullParts)
		}
	}
	return writeResults(o, results)
}

// randomAssignment writes a DGL assignment of the graph in dir into k
// parts, each node's part a hash of its ID: what `gnnrun partition --algo
// random` gives, without building the partitioner's graph (minutes at
// scale 22 on this machine).
func randomAssignment(dir, out string, k int) error {
	md, err := graphio.ReadMetadata(filepath.Join(dir, "metadata.json"))
	if err != nil {
		return err
	}
	m := md.Meta()
	fmt.Fprintf(os.Stderr, "random assignment of %s into %d parts: %s\n", dir, k, out)
	return rank.RunLocal(1, func(rc rank.Comm) error {
		parts := make([]int32, m.TotalNodes())
		for i := range parts {
			parts[i] = int32(graph.Mix64((uint64(i)^0x5eed)+0x9e3779b97f4a7c15) % uint64(k))
		}
		_, err := graphio.WriteAssignment(collective.MustNew(rc), out, &m, 0, parts, k)
		return err
	}, rank.Timeout(time.Hour))
}

// mpirun runs args on np ranks with their output on stderr.
func mpirun(np int, args ...string) error {
	cmd, err := driver.Launch(np, args...)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "%s\n", strings.Join(cmd.Args, " "))
	return cmd.Run()
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

// startProfile starts a CPU profile when path is set and returns its stop.
func startProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return func() {}
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// document is the .json a run writes.
type document struct {
	Host       string   `json:"host"`
	CPUs       int      `json:"cpus"`
	Date       string   `json:"date"`
	FeatDim    int      `json:"feat_dim"`
	Parts      int      `json:"parts"`
	MaxMessage int      `json:"max_message"`
	PullRows   int      `json:"pull_rows"`
	Scales     string   `json:"scales"`
	Ranks      string   `json:"np"`
	Runs       []result `json:"runs"`
}

func writeResults(o driverOptions, rs []result) error {
	host, _ := os.Hostname()
	doc := document{Host: host, CPUs: runtime.NumCPU(), Date: time.Now().UTC().Format(time.RFC3339), FeatDim: o.feat,
		Parts: o.parts, MaxMessage: o.budget, PullRows: o.pullRows, Scales: o.scales, Ranks: o.ranks, Runs: rs}
	blob, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(o.out+".json", append(blob, '\n'), 0o644); err != nil {
		return err
	}
	return writeMarkdown(o.out+".md", doc)
}

// rerender rewrites prefix.md from prefix.json.
func rerender(prefix string) error {
	blob, err := os.ReadFile(prefix + ".json")
	if err != nil {
		return err
	}
	var doc document
	if err := json.Unmarshal(blob, &doc); err != nil {
		return err
	}
	if doc.Scales == "" {
		var sc []string
		for _, s := range uniqueScales(doc.Runs) {
			sc = append(sc, fmt.Sprint(s))
		}
		doc.Scales, doc.Ranks = strings.Join(sc, ","), "1,2"
	}
	return writeMarkdown(prefix+".md", doc)
}

func writeMarkdown(path string, doc document) error {
	o := driverOptions{scales: doc.Scales, ranks: doc.Ranks, feat: doc.FeatDim, parts: doc.Parts, budget: doc.MaxMessage, pullRows: doc.PullRows}
	rs, host := doc.Runs, doc.Host
	var b strings.Builder
	fmt.Fprintf(&b, "# Dispatch and Pull, R-MAT with %d float32 features per node, %s, %d CPUs, %s\n\n", o.feat, host, doc.CPUs, doc.Date)
	fmt.Fprintf(&b, "`go run ./bench/dispatch --scale %s --np %s --parts %d --max-message %d`. Dispatch into K = %d partitions (random assignment; a rank builds its partitions in waves of P), page cache warm (the graph was just generated or read). edges/s = edges over the whole dispatch (relabel, lookups, shuffles, CSC, files); feature MB/s = feature bytes over the node shuffle (which writes the rows to their files). Peak RSS is VmHWM over reading the input and dispatching. Load average of the machine (shared with other jobs) before each run in the last column: wall times are noisy.\n\n", o.scales, o.ranks, o.parts, o.budget, o.parts)
	fmt.Fprintf(&b, "| scale | ranks | nodes | edges | read s | dispatch s | edges/s | feature MB/s | endpoints s | node shuffle s | edge shuffle s | write s | peak RSS per rank MB | load |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		var rss []string
		for _, v := range r.PeakRSS {
			rss = append(rss, fmt.Sprint(v>>20))
		}
		fmt.Fprintf(&b, "| %d | %d | %d | %d | %.2f | %.2f | %.3g | %.1f | %.2f | %.2f | %.2f | %.2f | %s | %.1f |\n",
			r.Scale, r.Ranks, r.Nodes, r.Edges, r.ReadSeconds, r.DispatchSeconds, r.EdgesPerSec, r.FeatureMBps,
			r.Seconds["endpoints"], r.Seconds["nodes"], r.Seconds["edges"], r.Seconds["write"], strings.Join(rss, " / "), r.Load)
	}
	fmt.Fprintf(&b, "\nShuffle bandwidth against a plain `MPI_Alltoallv` of %d MiB per peer on the same ranks in the same run (best of 5; bytes each rank sends to the others per second), for the runs on more than one rank: wire MB/s = bytes a rank sent to other ranks over the phase's wall time (packing, checksums, file writes of node rows included); in-MPI MB/s = the same bytes over the time spent inside the phase's all-to-alls once every rank has reached them (slowest rank; the raw all-to-all also starts after a barrier); skew s = the longest wait of a rank for the others to reach the phase's all-to-alls (load imbalance).\n\n", rawPerPeer>>20)
	fmt.Fprintf(&b, "| scale | ranks | raw alltoallv MB/s | endpoints wire / in-MPI MB/s | nodes wire / in-MPI MB/s | edges wire / in-MPI MB/s | in-MPI / raw: endpoints, nodes, edges | wire / raw | skew s |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		if r.Ranks < 2 {
			continue
		}
		w, m := r.WireMBps, r.CommMBps
		sk := r.SkewSeconds
		fmt.Fprintf(&b, "| %d | %d | %s | %s / %s | %s / %s | %s / %s | %s, %s, %s | %s, %s, %s | %.2f, %.2f, %.2f |\n", r.Scale, r.Ranks, mbps(r.RawAlltoallMBps),
			mbps(w["endpoints"]), mbps(m["endpoints"]), mbps(w["nodes"]), mbps(m["nodes"]), mbps(w["edges"]), mbps(m["edges"]),
			ratio(m["endpoints"], r.RawAlltoallMBps), ratio(m["nodes"], r.RawAlltoallMBps), ratio(m["edges"], r.RawAlltoallMBps),
			ratio(w["endpoints"], r.RawAlltoallMBps), ratio(w["nodes"], r.RawAlltoallMBps), ratio(w["edges"], r.RawAlltoallMBps),
			sk["endpoints"], sk["nodes"], sk["edges"])
	}
	fmt.Fprintf(&b, "\nThe node shuffle against the machine's limits for the same work, measured in the same run on min(a rank's share of the feature bytes, 512 MiB) per rank, all ranks at once, each the better of two turns taken alternately (the first turn after a dispatch runs slower while the kernel writes the partitions back): raw write = a plain sequential write into a new file beside the partitions (not synced, like the partition files); plain shuffle = what any node shuffle has to do, and nothing more: in rounds of the budget, copy the bytes into a send buffer, `MPI_Alltoallv` an equal share to each other rank, write what arrived and the own share to a new file. Rates are feature bytes per rank per second; plain wire / raw = the bytes the plain shuffle sent to other ranks per second over the raw all-to-all's rate, the ceiling of the node shuffle's wire / raw above.\n\n")
	fmt.Fprintf(&b, "| scale | ranks | raw write MB/s | plain shuffle MB/s | plain wire / raw alltoallv | node shuffle MB/s | node / raw write | node / plain shuffle |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		if r.RawWriteMBps == 0 {
			continue
		}
		per := r.FeatureMBps / float64(r.Ranks)
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %s | %s | %s |\n", r.Scale, r.Ranks, mbps(r.RawWriteMBps), mbps(r.PlainMBps), ratio(r.PlainWireMBps, r.RawAlltoallMBps),
			mbps(per), ratio(per, r.RawWriteMBps), ratio(per, r.PlainMBps))
	}
	fmt.Fprintf(&b, "\nPeak RSS per rank, 2 ranks over 1 rank (max over ranks):")
	for _, sc := range uniqueScales(rs) {
		one, two := peakOf(rs, sc, 1), peakOf(rs, sc, 2)
		if one > 0 && two > 0 {
			fmt.Fprintf(&b, " scale %d: %.2f;", sc, float64(two)/float64(one))
		}
	}
	fmt.Fprintf(&b, "\n\n## Pull of %d random rows per rank (128 float32 = 512 B each), K = P partitions\n\n", o.pullRows)
	fmt.Fprintf(&b, "Batches of 65,536 IDs per Pull, best of 3 passes, each timed on its slowest rank; the partition's mapping is warmed first (one byte per page). local: IDs from the rank's own partition; alltoall and rma: IDs from the other partitions only; memcpy: a plain `copy` loop gathering the same rows as local from the same mapped array.\n\n")
	fmt.Fprintf(&b, "| scale | ranks | local MB/s | alltoall MB/s | rma MB/s | memcpy MB/s | rows/s local / alltoall / rma / memcpy |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		p := r.Pull
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %s | %s / %s / %s / %s |\n", r.Scale, r.Ranks, mbps(p["local"]), mbps(p["alltoall"]), mbps(p["rma"]), mbps(p["memcpy"]),
			rowsps(p["local"]), rowsps(p["alltoall"]), rowsps(p["rma"]), rowsps(p["memcpy"]))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func mbps(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func rowsps(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g", v*1e6/512)
}

func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func uniqueScales(rs []result) []int {
	var out []int
	for _, r := range rs {
		if len(out) == 0 || out[len(out)-1] != r.Scale {
			out = append(out, r.Scale)
		}
	}
	return out
}

func peakOf(rs []result, scale, ranks int) int64 {
	for _, r := range rs {
		if r.Scale == scale && r.Ranks == ranks {
			var m int64
			for _, v := range r.PeakRSS {
				m = max(m, v)
			}
			return m
		}
	}
	return 0
}
