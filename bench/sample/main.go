// Command sample measures gnnrun's neighbour sampler on generated R-MAT
// graphs dispatched into K = 4 partitions (partitioned by gnnrun's
// partitioner, balanced on nodes, training nodes and in-edges, as DGL's
// partition_graph balances edges by default: a rank's sampling is its
// nodes' in-edges drawn, and R-MAT's hubs in one rank's partitions leave
// the others idle): sampled edges/s per
// rank at 1, 2 and 4 ranks with both transports, beside the limit measured
// in the same run — a plain loop that reads, for the same destination
// nodes, their indptr entries and as many random entries of their indices
// ranges as were sampled (the memory system's random-access rate) — and the
// share of frontier nodes sampled remotely with each transport's cost per
// remote frontier node. The one-rank reference runs on each core the
// multi-rank runs use: the cores of a VM can differ in speed. Every
// configuration of a graph runs once a round, -repeat rounds (3 by
// default): a row is a configuration's median run, and its ratios to the
// one-rank runs are medians over the rounds of runs seconds apart.
//
// Usage (from the repository root; it runs mpirun itself):
//
//	go run ./bench/sample --scale 20,22
//
// Graphs and partitions are made once under --dir (default
// bench/results/tmp/sample, git-ignored). Results go to
// bench/results/sample.{json,md,svg}.
package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"gnnrun/bench/driver"
	"gnnrun/rank"
)

func main() {
	var o driverOptions
	flag.StringVar(&o.scales, "scale", "20,22", "R-MAT scales, comma-separated (\"\": none)")
	flag.StringVar(&o.ranks, "np", "1,2,4", "rank counts, comma-separated")
	flag.IntVar(&o.parts, "parts", 4, "partitions K")
	flag.StringVar(&o.balance, "balance", "nodes,train,edges", "the partitions' balance constraints (partition's --balance)")
	flag.StringVar(&o.fanouts, "fanouts", "15,10,5", "fanouts, the hop nearest the seeds first")
	flag.IntVar(&o.batch, "batch-size", 1024, "seeds per batch")
	flag.IntVar(&o.batches, "batches", 32, "batches each rank samples per configuration")
	flag.IntVar(&o.repeat, "repeat", 3, "runs of each configuration, in rounds (every configuration of a graph once a round); a row is its median run")
	flag.IntVar(&o.samplers, "samplers", 1, "samplers side by side per rank, each on its own communicator, taking the batches in turn (the loader's --sample-workers)")
	flag.StringVar(&o.dir, "dir", "bench/results/tmp/sample", "work directory for graphs and partitions")
	flag.StringVar(&o.out, "out", "bench/results/sample", "results prefix (.json, .md, .svg)")
	flag.StringVar(&o.tasks, "tasks", "node,link", "tasks, comma-separated: node (seeds: the training nodes), link (batch-size positive edges, 4 negatives each, reverse exclusion)")
	flag.StringVar(&o.real, "real", "slashdot="+realDefault, "NAME=FILE: a real graph (an edge list gnnrun reads) measured beside R-MAT, its seeds every node; \"\" for none")
	worker := flag.Bool("worker", false, "internal: run as an MPI rank")
	render := flag.Bool("render", false, "only rewrite the .md and .svg from the .json of an earlier run")
	var w workerOptions
	flag.StringVar(&w.parts, "parts-dir", "", "worker: partition directory")
	flag.StringVar(&w.transport, "transport", "alltoall", "worker: alltoall or rma")
	flag.StringVar(&w.task, "task", "node", "worker: node or link")
	flag.StringVar(&w.mask, "mask", "train_mask", "worker: node task: the node array marking the seeds (\"\": every node)")
	flag.BoolVar(&w.hostGraph, "host-graph", false, "worker: sample the host's other partitions as the rank's own (sampler.Options.HostGraph; gnnrun's default), the limit loop reading them too")
	flag.StringVar(&w.cpuProfile, "cpuprofile", "", "worker: write each rank's CPU profile of the timed batches to PREFIX.<rank>")
	flag.Parse()
	switch {
	case *worker:
		w.fanouts, w.batch, w.batches, w.samplers = o.fanouts, o.batch, o.batches, o.samplers
		if err := runWorker(w); err != nil {
			fmt.Fprintln(os.Stderr, "bench/sample worker:", err)
			os.Exit(1)
		}
	case *render:
		if err := rerender(o.out); err != nil {
			fmt.Fprintln(os.Stderr, "bench/sample:", err)
			os.Exit(1)
		}
	default:
		if err := runDriver(o); err != nil {
			fmt.Fprintln(os.Stderr, "bench/sample:", err)
			os.Exit(1)
		}
	}
}

type driverOptions struct {
	scales, ranks, dir, out, fanouts, balance, tasks, real string
	parts, batch, batches, samplers, repeat                int
}

// realDefault is the largest real graph of the shared data (SNAP's
// soc-Slashdot0902: 82,168 nodes, 948,464 arcs), by path from the
// repository root.
const realDefault = "../shared/data/datasets/snap-soc-slashdot0902/soc-Slashdot0902.txt.gz"

// result is one configuration's measurement.
type result struct {
	Scale     int    `json:"scale"`
	Ranks     int    `json:"ranks"`
	Transport string `json:"transport"`
	// HostGraph: the ranks sampled their host's partitions as their own
	// (the transport then only carries other hosts' nodes: none here).
	HostGraph bool   `json:"host_graph,omitempty"`
	Balance   string `json:"balance"`
	Graph     string `json:"graph,omitempty"` // a real graph's name (R-MAT: empty)
	Task      string `json:"task,omitempty"`  // node (also when empty) or link
	// Core is the core a one-rank run was bound to (runs before the
	// field was recorded: core 0, mpirun's default), -1 for runs of
	// several ranks, which mpirun binds rank r to core r (where there are
	// as many cores); Cores is the machine's.
	Core  int `json:"core"`
	Cores int `json:"cores,omitempty"`
	// Rates is the sampled edges/s per rank of each of the
	// configuration's runs, in the order of the rounds; workerResult is
	// the median run's (the lower of the two middle ones of an even
	// count). Runs before the field was recorded ran once.
	Rates []float64 `json:"rates,omitempty"`
	// Limits and LimitsEID are the limit loops' reads/s per rank of the
	// same runs.
	Limits    []float64 `json:"limits,omitempty"`
	LimitsEID []float64 `json:"limits_eid,omitempty"`
	workerResult
}

// median sets r.Rates, r.Limits and r.LimitsEID to the rates of runs (one
// a round) and r's measurement to their median run.
func (r *result) median(runs []workerResult) {
	r.Rates, r.Limits, r.LimitsEID = nil, nil, nil
	for _, w := range runs {
		r.Rates = append(r.Rates, w.edgesPerRank())
		r.Limits = append(r.Limits, w.limitPerRank())
		r.LimitsEID = append(r.LimitsEID, w.limitEIDPerRank())
	}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b workerResult) int { return cmp.Compare(a.edgesPerRank(), b.edgesPerRank()) })
	r.workerResult = sorted[(len(sorted)-1)/2]
}

func runDriver(o driverOptions) error {
	var scales []int
	if o.scales != "" {
		var err error
		if scales, err = driver.Ints(o.scales); err != nil {
			return err
		}
	}
	ranks, err := driver.Ranks(o.ranks)
	if err != nil {
		return err
	}
	self := filepath.Join(o.dir, "bench-sample")
	bin, err := driver.Gnnrun(o.dir, [2]string{self, "./bench/sample"})
	if err != nil {
		return err
	}
	tasks := strings.Split(o.tasks, ",")
	// The cores of the one-rank references: those the largest run uses
	// (one, where there is no MPI to bind ranks to cores).
	cores := []int{0}
	if rank.MPI {
		cores = nil
		for c := range min(slices.Max(ranks), runtime.NumCPU()) {
			cores = append(cores, c)
		}
	}
	if o.repeat < 1 {
		return fmt.Errorf("-repeat %d: at least 1", o.repeat)
	}
	var results []result
	// run measures one configuration: np ranks as mpirun places them (rank
	// r on core r), or one rank bound to core (core >= 0).
	run := func(r result, parts, mask string) (workerResult, error) {
		args := []string{self, "-worker", "-parts-dir", parts, "-transport", r.Transport, "-task", r.Task, "-mask", mask,
			"-fanouts", o.fanouts, "-batch-size", fmt.Sprint(o.batch), "-batches", fmt.Sprint(o.batches), "-samplers", fmt.Sprint(o.samplers),
			fmt.Sprintf("-host-graph=%v", r.HostGraph)}
		var out []byte
		var err error
		if r.Core >= 0 {
			out, err = driver.OutputOnCore(r.Core, args...)
		} else {
			out, err = driver.Output(r.Ranks, args...)
		}
		if err != nil {
			return workerResult{}, err
		}
		var w workerResult
		if err := json.Unmarshal(lastLine(out), &w); err != nil {
			return w, fmt.Errorf("%s %s P=%d %s: worker output: %v\n%s", r.graphName(), r.Task, r.Ranks, r.way(), err, out)
		}
		r.workerResult = w
		fmt.Fprintf(os.Stderr, "%s %s P=%d%s %s: %.3g edges/s per rank (limit %.3g), remote %.1f%%\n",
			r.graphName(), r.Task, r.Ranks, r.onCore(), r.way(), r.edgesPerRank(), r.limitPerRank(), 100*r.remoteShare())
		return w, nil
	}
	// measure runs every configuration of a graph once a round, o.repeat
	// rounds, so that a slower spell of the machine falls on every
	// configuration alike rather than on one; the results so far are
	// saved after each run (what is measured survives a later failure).
	measure := func(graph string, sc int, parts, mask string) error {
		var configs []result
		for _, task := range tasks {
			for _, np := range ranks {
				// Each transport with every other rank's partitions remote,
				// then the host's graph (gnnrun's default: on one host,
				// nothing remote).
				for _, way := range []struct {
					tr   string
					host bool
				}{{"alltoall", false}, {"rma", false}, {"alltoall", true}} {
					tr := way.tr
					if np == 1 && (tr == "rma" || way.host) {
						continue // one rank serves every partition: nothing is remote
					}
					// One rank runs on each core the largest run uses.
					runs := []int{-1}
					if np == 1 {
						runs = cores
					}
					for _, core := range runs {
						configs = append(configs, result{Scale: sc, Graph: graph, Task: task, Ranks: np, Transport: tr, HostGraph: way.host, Balance: o.balance, Core: core, Cores: runtime.NumCPU()})
					}
				}
			}
		}
		runs := make([][]workerResult, len(configs))
		for range o.repeat {
			for i, r := range configs {
				w, err := run(r, parts, mask)
				if err != nil {
					return err
				}
				runs[i] = append(runs[i], w)
				var done []result
				for j, rj := range configs {
					if len(runs[j]) > 0 {
						rj.median(runs[j])
						done = append(done, rj)
					}
				}
				if err := save(o.out, append(slices.Clone(results), done...)); err != nil {
					return err
				}
			}
		}
		for i, r := range configs {
			r.median(runs[i])
			results = append(results, r)
		}
		return nil
	}
	for _, sc := range scales {
		parts, err := driver.Partitioned(bin, o.dir, "", sc, o.parts, o.balance)
		if err == nil {
			err = measure("", sc, parts, "train_mask")
		}
		if err != nil {
			return err
		}
	}
	if o.real != "" {
		name, file, ok := strings.Cut(o.real, "=")
		if !ok {
			return fmt.Errorf("--real %q: want NAME=FILE", o.real)
		}
		// A graph without training nodes: its balance is the constraints
		// it has.
		balance := strings.ReplaceAll(strings.ReplaceAll(o.balance, ",train", ""), "train,", "")
		parts, err := driver.PartitionedFile(bin, o.dir, name, file, o.parts, balance)
		if err == nil {
			err = measure(name, 0, parts, "")
		}
		if err != nil {
			return err
		}
	}
	if err := save(o.out, results); err != nil {
		return err
	}
	return render(o.out, results)
}

// save writes the results to out.json.
func save(out string, results []result) error {
	blob, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out+".json", append(blob, '\n'), 0o644)
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

func rerender(out string) error {
	blob, err := os.ReadFile(out + ".json")
	if err != nil {
		return err
	}
	var results []result
	if err := json.Unmarshal(blob, &results); err != nil {
		return err
	}
	return render(out, results)
}
