// Command loader measures gnnrun's mini-batch pipeline (gnnrun loader) on
// generated R-MAT graphs with 128 float32 features per node, dispatched
// into K = 4 partitions, at 2 and 4 ranks: the time to generate a batch
// with no trainer, each stage's time run alone beside it, the trainer's
// wait with a stand-in trainer that holds each batch 0.8, 1.2 and 2 times
// the generation time, the first batch of each epoch against the others,
// and the rows reused and bytes copied to the device with the reuse cache,
// without it, and with a hot cache of 10% of the rows.
//
// Usage (from the repository root; it runs mpirun itself):
//
//	go run ./bench/loader --scale 20,22
//
// Graphs and partitions are made once under --dir (default
// bench/results/tmp/loader, git-ignored). Results go to
// bench/results/loader.{json,md,svg}.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"gnnrun/bench/driver"
)

// balance is the partitions' constraints: the README's advice for
// sampling (DGL's partition_graph with balance_edges=True). Balanced on
// nodes and training nodes only, R-MAT's hubs share one rank's partitions,
// and at 2 ranks that rank samples nearly every edge.
const balance = "nodes,train,edges"

type options struct {
	scales, ranks, dir, out, fanouts string
	parts, batch, perEpoch, alone    int
}

func main() {
	var o options
	flag.StringVar(&o.scales, "scale", "20,22", "R-MAT scales, comma-separated")
	flag.StringVar(&o.ranks, "np", "1,2,4", "rank counts, comma-separated")
	flag.IntVar(&o.parts, "parts", 4, "partitions K")
	flag.StringVar(&o.fanouts, "fanouts", "15,10,5", "fanouts, the hop nearest the seeds first")
	flag.IntVar(&o.batch, "batch-size", 1024, "seeds per batch")
	flag.IntVar(&o.perEpoch, "batches-per-epoch", 32, "batches each rank runs per epoch (2 epochs a run)")
	flag.IntVar(&o.alone, "stages-alone", 8, "batches each stage runs alone")
	flag.StringVar(&o.dir, "dir", "bench/results/tmp/loader", "work directory for graphs and partitions")
	flag.StringVar(&o.out, "out", "bench/results/loader", "results prefix (.json, .md, .svg)")
	render := flag.Bool("render", false, "only rewrite the .md and .svg from the .json of an earlier run")
	flag.Parse()
	var err error
	if *render {
		err = rerender(o.out)
	} else {
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/loader:", err)
		os.Exit(1)
	}
}

// loaderReport is what the benchmark reads of gnnrun loader's --report.
type loaderReport struct {
	Wait      float64 `json:"trainer_wait_fraction"`
	Startup   float64 `json:"startup_wait_s"`
	Input     float64 `json:"rows_input"`
	Reused    float64 `json:"rows_reused"`
	Hot       float64 `json:"rows_hot"`
	Local     float64 `json:"rows_local"`
	Remote    float64 `json:"rows_remote"`
	Batches   []int64 `json:"batches"`
	Bytes     float64 `json:"bytes_to_device"`
	BytesNone float64 `json:"bytes_to_device_without_cache"`
	FirstWait float64 `json:"first_of_epoch_wait_s"`
	OtherWait float64 `json:"other_wait_s"`
	// LastWait is the trainer's wait in the last epoch over its time (-1
	// with one epoch): the steady state, past the pipeline's start.
	LastWait   float64 `json:"last_epoch_wait_fraction"`
	Seconds    float64 `json:"seconds_slowest"`
	PeakHost   float64 `json:"peak_host_bytes"`
	PeakDevice float64 `json:"peak_device_bytes"`
	// GatherWorkers is the gather's copy workers (the default for the
	// rank's cores).
	GatherWorkers int `json:"gather_workers"`
	SampleWorkers int `json:"sample_workers"`
	// CPUPerBatch is the ranks' CPU time per batch during the run (every
	// stage's threads), CoresBusy the share of their cores it kept busy.
	CPUPerBatch float64 `json:"cpu_s_per_batch"`
	CoresBusy   float64 `json:"cores_busy"`
	Stages      map[string]struct {
		Busy float64 `json:"busy_s"`
		Fill float64 `json:"mean_queue_fill"`
	} `json:"stages"`
	Alone *struct {
		Sample    float64 `json:"sample_s"`
		Gather    float64 `json:"gather_s"`
		Device    float64 `json:"device_s"`
		Pipeline  float64 `json:"pipeline_s"`
		SampleCPU float64 `json:"sample_cpu_s"`
		GatherCPU float64 `json:"gather_cpu_s"`
		DeviceCPU float64 `json:"device_cpu_s"`
		Cores     float64 `json:"cores_per_rank"`
		Bound     float64 `json:"bound_s"`
		BoundBy   string  `json:"bound_by"`
	} `json:"stages_alone_per_batch"`
}

// perBatch returns the slowest rank's seconds per batch.
func (r loaderReport) perBatch() float64 { return r.Seconds / float64(max(r.Batches[0], 1)) }

// result is one (scale, ranks) configuration: its runs by name.
type result struct {
	Scale    int                     `json:"scale"`
	Ranks    int                     `json:"ranks"`
	Fanouts  string                  `json:"fanouts"`
	Batch    int                     `json:"batch_size"`
	PerEpoch int                     `json:"batches_per_epoch"`
	RowBytes int                     `json:"row_bytes"`
	HotBytes int64                   `json:"hot_bytes"`
	Runs     map[string]loaderReport `json:"runs"`
	// ComputeMS is the stand-in trainer's time per batch of each compute
	// run, by run name.
	ComputeMS map[string]float64 `json:"compute_ms"`
}

// The compute runs: the stand-in trainer's time per batch as a multiple
// of the generation time.
var computeRuns = []struct {
	name   string
	factor float64
}{{"compute0.8", 0.8}, {"compute1.2", 1.2}, {"compute2", 2}}

func run(o options) error {
	scales, err := driver.Ints(o.scales)
	if err != nil {
		return err
	}
	ranks, err := driver.Ranks(o.ranks)
	if err != nil {
		return err
	}
	bin, err := driver.Gnnrun(o.dir)
	if err != nil {
		return err
	}
	var results []result
	for _, sc := range scales {
		parts, err := driver.Partitioned(bin, o.dir, "-f128", sc, o.parts, balance, "--feat-dim", "128")
		if err != nil {
			return err
		}
		nodes, err := numNodes(parts, sc)
		if err != nil {
			return err
		}
		for _, np := range ranks {
			r, err := measure(o, bin, parts, sc, np, nodes)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	blob, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.out+".json", append(blob, '\n'), 0o644); err != nil {
		return err
	}
	return render(o.out, results)
}

// measure runs one configuration's loader runs.
func measure(o options, bin, parts string, sc, np int, nodes int64) (result, error) {
	const rowBytes = 128 * 4
	r := result{Scale: sc, Ranks: np, Fanouts: o.fanouts, Batch: o.batch, PerEpoch: o.perEpoch, RowBytes: rowBytes, HotBytes: nodes / 10 * rowBytes,
		Runs: map[string]loaderReport{}, ComputeMS: map[string]float64{}}
	loader := func(name string, args ...string) (loaderReport, error) {
		rep := filepath.Join(o.dir, fmt.Sprintf("report-%d-%d-%s.json", sc, np, name))
		full := append([]string{bin, "loader", parts, "--fanouts", o.fanouts, "--batch-size", fmt.Sprint(o.batch),
			"--epochs", "2", "--batches-per-epoch", fmt.Sprint(o.perEpoch), "--report", rep}, args...)
		out, err := driver.OutputSpread(np, full...) // the stages overlap on the rank's cores
		if err != nil {
			return loaderReport{}, err
		}
		fmt.Fprintf(os.Stderr, "scale %d P=%d %s:\n%s", sc, np, name, out)
		lr, err := readReport(rep)
		r.Runs[name] = lr
		return lr, err
	}
	gen, err := loader("alone", "--stages-alone", fmt.Sprint(o.alone))
	if err != nil {
		return r, err
	}
	for _, c := range computeRuns {
		ms := c.factor * gen.perBatch() * 1e3
		r.ComputeMS[c.name] = ms
		if _, err := loader(c.name, "--compute-ms", fmt.Sprintf("%.1f", ms)); err != nil {
			return r, err
		}
	}
	if _, err := loader("nocache", "--cache", "none"); err != nil {
		return r, err
	}
	_, err = loader("hot", "--hot-cache", fmt.Sprint(r.HotBytes))
	return r, err
}

func readReport(path string) (loaderReport, error) {
	var rep struct {
		Results struct {
			Loader loaderReport `json:"loader"`
		} `json:"results"`
	}
	blob, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(blob, &rep)
	}
	if err == nil && len(rep.Results.Loader.Batches) == 0 {
		err = fmt.Errorf("no loader results")
	}
	if err != nil {
		return loaderReport{}, fmt.Errorf("%s: %w", path, err)
	}
	return rep.Results.Loader, nil
}

// numNodes reads the node count from the partition directory's config.
func numNodes(parts string, sc int) (int64, error) {
	blob, err := os.ReadFile(filepath.Join(parts, fmt.Sprintf("rmat%d.json", sc)))
	if err != nil {
		return 0, err
	}
	var cfg struct {
		Nodes int64 `json:"num_nodes"`
	}
	if err := json.Unmarshal(blob, &cfg); err != nil {
		return 0, err
	}
	return cfg.Nodes, nil
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
