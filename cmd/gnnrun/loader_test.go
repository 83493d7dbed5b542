package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loaderReport is what the tests read of gnnrun loader's --report.
type loaderReport struct {
	Batches []int64 `json:"batches"`
	// LastWait is the trainer's wait in the last epoch over its time, -1
	// when the run did not get past its first epoch.
	LastWait float64 `json:"last_epoch_wait_fraction"`
	// The ranks' CPU time per batch during the run, and the share of
	// their cores it kept busy.
	CPUPerBatch float64 `json:"cpu_s_per_batch"`
	CoresBusy   float64 `json:"cores_busy"`
}

// readLoaderReport reads results.loader from a report.
func readLoaderReport(t *testing.T, path string) loaderReport {
	t.Helper()
	blob, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results struct {
			Loader loaderReport `json:"loader"`
		} `json:"results"`
	}
	if err := json.Unmarshal(blob, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep.Results.Loader
}

// TestLoaderMatchesSampleUnderMPI runs the whole pipeline with --verify
// (every batch's device rows checked against the partition's rows) at 1,
// 2 and 4 ranks over both transports, node and link tasks, homogeneous and
// two-type, across an epoch boundary, and checks that the batches it
// delivers are the sampler's: every --dump file equal to the one-rank
// `gnnrun sample --dump` file of the same name, none missing, every rank
// the same number of batches.
func TestLoaderMatchesSampleUnderMPI(t *testing.T) {
	needMPIRun(t)
	const epochs = 2
	for _, hetero := range []bool{false, true} {
		parts := sampleDir(t, hetero)
		tasks := map[string][]string{
			"node": {"--task", "node", "--fanouts", "4,3", "--batch-size", "16"},
			"link": {"--task", "link", "--fanouts", "3,2", "--batch-size", "64", "--negatives", "2", "--exclude", "reverse"},
		}
		if hetero {
			tasks = map[string][]string{"node": {"--task", "node", "--fanouts", "4,3", "--batch-size", "16", "--etype-fanouts", "buys=2,-1"}}
		}
		for name, args := range tasks {
			t.Run(fmt.Sprintf("hetero=%v/%s", hetero, name), func(t *testing.T) {
				common := append([]string{"--epochs", fmt.Sprint(epochs), "--seed", "7"}, args...)
				ref := filepath.Join(t.TempDir(), "ref")
				mustRun(t, 1, append(append([]string{"sample", parts}, common...), "--dump", ref)...)
				want := filesOf(t, ref)
				if len(want) < 8 {
					t.Fatalf("the one-rank sample wrote %d batch files", len(want))
				}
				for _, tr := range []string{"alltoall", "rma"} {
					for _, np := range []int{1, 2, 4} {
						if np == 1 && tr == "rma" {
							continue // one rank serves every partition: nothing is remote
						}
						dir := t.TempDir()
						dump, rep := filepath.Join(dir, "dump"), filepath.Join(dir, "report.json")
						// rma samples remote nodes (the host's graph
						// off); alltoall, the default, none on this host.
						more := []string{"--transport", tr}
						if tr == "rma" {
							more = append(more, "--host-graph=false")
						}
						mustRun(t, np, append(append(append([]string{"loader", parts}, common...), more...),
							"--verify", "--dump", dump, "--report", rep, "--sample-depth", "3", "--gather-depth", "1")...)
						lr := readLoaderReport(t, rep)
						counts := lr.Batches
						if len(counts) != np {
							t.Fatalf("%s P=%d: the report has %d ranks' batches", tr, np, len(counts))
						}
						if lr.LastWait < 0 || lr.LastWait > 1 {
							t.Errorf("%s P=%d: the trainer's wait in the last of %d epochs is %v, want a share", tr, np, epochs, lr.LastWait)
						}
						// A process's CPU time over its wall time and its
						// share of the cores: up to 1, a little more where
						// the ranks' runs end apart.
						if lr.CPUPerBatch <= 0 || lr.CoresBusy <= 0 || lr.CoresBusy > 1.5 {
							t.Errorf("%s P=%d: %v s of CPU a batch, %v of the cores busy", tr, np, lr.CPUPerBatch, lr.CoresBusy)
						}
						checkDump(t, fmt.Sprintf("%s P=%d", tr, np), want, dump, epochs, counts)
					}
				}
			})
		}
	}
}

// TestLoaderStageFailureUnderMPI fails one stage on rank 1 of 2 (an error,
// a panic, an exit without MPI_Abort): the job ends non-zero within 10 s,
// naming the rank.
func TestLoaderStageFailureUnderMPI(t *testing.T) {
	needMPIRun(t)
	parts := sampleDir(t, false)
	for _, c := range []struct{ kind, stage string }{
		{"error", "sample"}, {"error", "gather"}, {"error", "device"}, {"panic", "gather"}, {"exit", "sample"},
	} {
		t.Run(c.kind+"/"+c.stage, func(t *testing.T) {
			r := runGnnrun(t, 2, time.Minute, []string{"GNNRUN_FAULT=1:" + c.kind + ":" + c.stage},
				"loader", parts, "--fanouts", "4,3", "--batch-size", "8", "--epochs", "50", "--compute-ms", "1")
			if r.err == nil {
				t.Fatalf("a failing %s stage: the job exited 0: %v", c.stage, r)
			}
			if r.elapsed > 10*time.Second {
				t.Fatalf("the job took %v to end", r.elapsed)
			}
			if c.kind != "exit" && !strings.Contains(r.stderr, "gnnrun: rank 1/2") {
				t.Fatalf("stderr does not name rank 1/2: %v", r)
			}
		})
	}
}

// TestLoaderStopsEarlyUnderMPI: a trainer that stops after a few batches
// ends the run cleanly on every rank, over both transports.
func TestLoaderStopsEarlyUnderMPI(t *testing.T) {
	needMPIRun(t)
	parts := sampleDir(t, false)
	for _, tr := range []string{"alltoall", "rma"} {
		rep := filepath.Join(t.TempDir(), "report.json")
		r := mustRun(t, 4, "loader", parts, "--fanouts", "4,3", "--batch-size", "8", "--epochs", "20", "--transport", tr,
			"--max-batches", "3", "--verify", "--report", rep)
		if r.elapsed > 30*time.Second {
			t.Errorf("%s: an early stop took %v", tr, r.elapsed)
		}
		lr := readLoaderReport(t, rep)
		for rk, n := range lr.Batches {
			if n != 3 {
				t.Errorf("%s: rank %d's trainer got %d batches, want 3", tr, rk, n)
			}
		}
		if lr.LastWait != -1 {
			t.Errorf("%s: 3 batches of the first epoch report a last epoch's wait of %v, want -1 (none)", tr, lr.LastWait)
		}
	}
}

// TestLoaderBadInputUnderMPI: bad depths, devices, feature arrays and
// flags fail at once on every rank with the reason.
func TestLoaderBadInputUnderMPI(t *testing.T) {
	needMPIRun(t)
	parts := sampleDir(t, false)
	checkFailures(t, []string{"loader", parts, "--fanouts", "4,3", "--batch-size", "8"}, []badInput{
		{name: "sample depth", args: []string{"--sample-depth", "0"}, want: "--sample-depth 0: must be at least 1"},
		{name: "gather depth", args: []string{"--gather-depth", "-1"}, want: "--gather-depth -1: must be at least 1"},
		{name: "device depth", args: []string{"--device-depth", "0"}, want: "--device-depth 0: must be at least 1"},
		{name: "workers past depth", args: []string{"--sample-workers", "4", "--sample-depth", "2"}, want: "sample depth 2 below the 4 sample workers"},
		{name: "no GPU", args: []string{"--device", "cuda"}, want: "use --device host"},
		{name: "unknown device", args: []string{"--device", "tpu"}, want: `device "tpu" is not host, cuda or auto`},
		{name: "missing features", args: []string{"--feat", "nosuch"}, want: `node array "nosuch"`},
		{name: "cache mode", args: []string{"--cache", "lru"}, want: `cache "lru" is not reuse or none`},
		{name: "compute", args: []string{"--compute-ms", "-1"}, want: "--compute-ms -1"},
		{name: "hot cache", args: []string{"--hot-cache", "-5"}, want: "--hot-cache -5"},
	})
}
