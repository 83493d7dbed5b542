package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gnnrun/graphio"
	"gnnrun/report"
)

// sampleDir dispatches a small generated graph into K = 4 partitions
// (balanced on nodes and training nodes) and returns the directory.
func sampleDir(t *testing.T, hetero bool) string {
	t.Helper()
	return partsOf(t, genSmall(t, hetero))
}

// partsOf dispatches graph g into K = 4 partitions (balanced on nodes and
// training nodes) and returns the directory.
func partsOf(t *testing.T, g string) string {
	t.Helper()
	asg := filepath.Join(t.TempDir(), "asg")
	mustRun(t, 2, "partition", "--in", g, "--parts", "4", "--balance", "nodes,train", "--out", asg)
	out := filepath.Join(t.TempDir(), "parts")
	mustRun(t, 2, "dispatch", "--in", g, "--assignment", asg, "--out", out)
	return out
}

// rankBatches returns the batches column of sample's per-rank table.
func rankBatches(t *testing.T, stdout string) []int64 {
	t.Helper()
	var out []int64
	for _, m := range regexp.MustCompile(`(?m)^\s+\d+\s+(\d+)\s`).FindAllStringSubmatch(stdout, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		out = append(out, n)
	}
	return out
}

// checkDump checks a run's --dump directory against the one-rank run's
// files: the same files (the empty batches that pad ranks are not
// written), each equal to the one of the same name, and every rank
// (counts: the batches each ran) ceil(NB/P) batches per epoch.
func checkDump(t *testing.T, what string, want map[string][]byte, dump string, epochs int, counts []int64) {
	t.Helper()
	got := filesOf(t, dump)
	for f, b := range got {
		if w, ok := want[f]; !ok || !bytes.Equal(b, w) {
			t.Fatalf("%s: %s differs from the one-rank run's (or that run has none)", what, f)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d of the one-rank run's %d batches missing over %d epochs", what, len(want)-len(got), len(want), epochs)
	}
	np := int64(len(counts))
	nb := int64(len(want) / epochs)
	for _, c := range counts {
		if np == 0 || c != int64(epochs)*((nb+np-1)/np) {
			t.Fatalf("%s: ranks ran %v batches; %d epochs of %d batches make %d per rank", what, counts, epochs, nb, int64(epochs)*((nb+np-1)/np))
		}
	}
}

// TestSampleUnderMPI samples a homogeneous and a two-type graph's K = 4
// directory, node and link tasks, at 1, 2, 4 and 8 ranks over both
// transports, and checks that every batch file equals the one-rank run's
// file of the same name, that none is missing, and that every rank ran as
// many batches.
func TestSampleUnderMPI(t *testing.T) {
	needMPIRun(t)
	const epochs = 2
	for _, hetero := range []bool{false, true} {
		parts := sampleDir(t, hetero)
		tasks := map[string][]string{
			"node": {"--task", "node", "--fanouts", "4,3", "--batch-size", "16"},
			"link": {"--task", "link", "--fanouts", "3,2", "--batch-size", "64", "--negatives", "2", "--exclude", "reverse"},
		}
		if hetero {
			tasks["node"] = append(tasks["node"], "--etype-fanouts", "buys=2,-1")
			tasks["link"] = []string{"--task", "link", "--etype", "buys", "--fanouts", "3,2", "--batch-size", "32", "--negatives", "3", "--neg-dist", "degree", "--exclude", "self"}
		}
		for name, args := range tasks {
			t.Run(fmt.Sprintf("hetero=%v/%s", hetero, name), func(t *testing.T) {
				common := append([]string{"sample", parts, "--epochs", fmt.Sprint(epochs), "--seed", "7"}, args...)
				ref := filepath.Join(t.TempDir(), "ref")
				mustRun(t, 1, append(common, "--dump", ref)...)
				want := filesOf(t, ref)
				if len(want) < 8 {
					t.Fatalf("the one-rank run wrote %d batch files", len(want))
				}
				// The transports, with every other rank's partitions
				// remote, and by default, every partition of this host
				// mapped (nothing remote: one transport is enough).
				type config struct {
					transport string
					more      []string
					nps       []int
				}
				for _, cf := range []config{
					{"alltoall", []string{"--host-graph=false"}, []int{1, 2, 4, 8}},
					{"rma", []string{"--host-graph=false"}, []int{1, 2, 4, 8}},
					{"alltoall", nil, []int{2, 4, 8}},
				} {
					tr := cf.transport
					for _, np := range cf.nps {
						dump := filepath.Join(t.TempDir(), fmt.Sprintf("%s-%d", tr, np))
						res := mustRun(t, np, append(append(common, cf.more...), "--transport", tr, "--dump", dump)...)
						what := fmt.Sprintf("%s %v P=%d", tr, cf.more, np)
						counts := rankBatches(t, res.stdout)
						if len(counts) != np {
							t.Fatalf("%s: %d rows in the per-rank table:\n%s", what, len(counts), res.stdout)
						}
						checkDump(t, what, want, dump, epochs, counts)
					}
				}
				// rma reads a rank on the same host directly (rank/cma.go);
				// through the MPI library alone as well, at 2 ranks.
				dump := filepath.Join(t.TempDir(), "rma-mpi-2")
				res := runGnnrun(t, 2, 5*time.Minute, []string{"GNNRUN_CMA=off"}, append(common, "--transport", "rma", "--host-graph=false", "--dump", dump)...)
				if res.err != nil {
					t.Fatalf("rma with GNNRUN_CMA=off on 2 ranks failed: %v", res)
				}
				checkDump(t, "rma through MPI P=2", want, dump, epochs, rankBatches(t, res.stdout))
			})
		}
	}
}

// TestSampleBadInputUnderMPI feeds bad flags, weights and rank counts:
// every one fails on every rank with a clear message, without hanging.
func TestSampleBadInputUnderMPI(t *testing.T) {
	needMPIRun(t)
	parts := sampleDir(t, false)
	weighted := weightedParts(t)
	checkFailures(t, nil, []badInput{
		{"empty fanouts", 2, []string{"sample", parts, "--fanouts", ""}, "no fanouts given"},
		{"zero fanout", 2, []string{"sample", parts, "--fanouts", "5,0"}, "fanout 0"},
		{"fanout below -1", 2, []string{"sample", parts, "--fanouts", "-2"}, "fanout -2"},
		{"batch size", 2, []string{"sample", parts, "--batch-size", "0"}, "--batch-size 0"},
		{"unsupported ranks", 6, []string{"sample", parts, "--fanouts", "2"}, "6 ranks cannot serve 4 partitions"},
		{"missing prob", 2, []string{"sample", parts, "--prob", "nosuch", "--batch-size", "8"}, "no edge array"},
		{"negative weight", 2, []string{"sample", weighted["negative"], "--prob", "weight", "--mask", "", "--batch-size", "2"}, "has weight -1"},
		{"nan weight", 2, []string{"sample", weighted["nan"], "--prob", "weight", "--mask", "", "--batch-size", "2"}, "has weight NaN"},
		{"no edges to train on", 2, []string{"sample", weighted["zero"], "--task", "link", "--edge-mask", "weight"}, "nothing to train on"},
		{"link without reverse type", 2, []string{"sample", sampleDir(t, true), "--task", "link", "--etype", "buys", "--exclude", "reverse", "--batch-size", "8"}, "name its reverse type"},
	})
}

// weightedParts writes three small weighted edge lists (one with a
// negative weight, one with a NaN, one whose weights are all 0) and
// dispatches each into 2 partitions, odd and even nodes.
func weightedParts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, w := range map[string]string{"negative": "-1", "nan": "nan", "zero": "0"} {
		dir := t.TempDir()
		var b strings.Builder
		for i := range 40 {
			weight := "1"
			if name == "zero" || i == 17 {
				weight = w
			}
			fmt.Fprintf(&b, "%d %d %s\n", i%20, (i*7+3)%20, weight)
		}
		in := filepath.Join(dir, "g.txt")
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		// The partitioner refuses such weights: assign by hand, a METIS
		// .part file of node i's part.
		asg := filepath.Join(dir, "g.part")
		if err := os.WriteFile(asg, []byte(strings.Repeat("0\n1\n", 10)), 0o644); err != nil {
			t.Fatal(err)
		}
		parts := filepath.Join(dir, "parts")
		mustRun(t, 1, "dispatch", "--in", in, "--assignment", asg, "--out", parts)
		out[name] = parts
	}
	return out
}

// trainingNodes counts the nodes with train_mask set in graph g's input
// files.
func trainingNodes(t *testing.T, g string) int64 {
	t.Helper()
	md, err := graphio.ReadMetadata(filepath.Join(g, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range md.NodeData[md.NodeType[0]]["train_mask"].Data {
		mask, err := graphio.ReadNpy(filepath.Join(g, f))
		if err != nil {
			t.Fatal(err)
		}
		for i := range mask.Rows() {
			if mask.Float64At(i, 0) != 0 {
				n++
			}
		}
	}
	return n
}

// dumpedSeeds returns per epoch the seeds (input IDs) of a --dump
// directory's batches.
func dumpedSeeds(t *testing.T, dump string, epochs int) [][]int64 {
	t.Helper()
	out := make([][]int64, epochs)
	for e := range epochs {
		files, _ := filepath.Glob(filepath.Join(dump, fmt.Sprintf("e%d-b*.npz", e)))
		for _, f := range files {
			z, err := graphio.OpenNpz(f)
			if err != nil {
				t.Fatal(err)
			}
			seeds, err := z.ReadRows(z.Entry("seeds"), 0, z.Entry("seeds").Header.Shape[0])
			z.Close()
			if err != nil {
				t.Fatal(err)
			}
			for i := range seeds.Rows() {
				out[e] = append(out[e], int64(seeds.Float64At(i, 0)))
			}
		}
	}
	return out
}

// TestSampleTrainsEverySeedUnderMPI samples at P = 4 with batch sizes
// whose batches do not divide among the ranks (one of them: fewer batches
// than ranks), and checks that every training node of the input is in
// exactly one dumped batch every epoch and that rank 0's printout and the
// report say every epoch trained all of them.
func TestSampleTrainsEverySeedUnderMPI(t *testing.T) {
	needMPIRun(t)
	const epochs, np = 2, 4
	g := genSmall(t, false)
	parts := partsOf(t, g)
	n := trainingNodes(t, g)
	sizes := []int64{n} // one batch
	for bs := int64(16); ; bs++ {
		if nb := (n + bs - 1) / bs; nb > np && nb%np != 0 {
			sizes = append(sizes, bs)
			break
		}
	}
	for _, bs := range sizes {
		dir := t.TempDir()
		dump, rep := filepath.Join(dir, "dump"), filepath.Join(dir, "report.json")
		res := mustRun(t, np, "sample", parts, "--fanouts", "3,2", "--batch-size", fmt.Sprint(bs), "--epochs", fmt.Sprint(epochs),
			"--dump", dump, "--report", rep)
		for e, seeds := range dumpedSeeds(t, dump, epochs) {
			distinct := map[int64]bool{}
			for _, v := range seeds {
				distinct[v] = true
			}
			if int64(len(seeds)) != n || int64(len(distinct)) != n {
				t.Fatalf("batch size %d: epoch %d's batches hold %d seeds, %d distinct; the input has %d training nodes", bs, e, len(seeds), len(distinct), n)
			}
		}
		blob, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Results struct {
				Sample struct {
					Trained struct {
						PerEpoch []int64 `json:"trained_per_epoch"`
						Items    int64   `json:"training_items"`
						All      bool    `json:"all_trained"`
					} `json:"trained"`
				} `json:"sample"`
			} `json:"results"`
		}
		if err := json.Unmarshal(blob, &r); err != nil {
			t.Fatal(err)
		}
		tr := r.Results.Sample.Trained
		if !tr.All || tr.Items != n || len(tr.PerEpoch) != epochs || tr.PerEpoch[0] != n || tr.PerEpoch[1] != n {
			t.Fatalf("batch size %d: the report says %+v; the input has %d training nodes", bs, tr, n)
		}
		if want := fmt.Sprintf("every epoch trained all %s training nodes", report.Count(n)); !strings.Contains(res.stdout, want) {
			t.Fatalf("batch size %d: the printout lacks %q:\n%s", bs, want, res.stdout)
		}
	}
}

// TestSampleReportsCostPerNode samples the same batches on 1 and 4 ranks:
// the frontier nodes the report counts (local plus remote) are the same
// at both rank counts, as the batches are; one rank has no remote nodes
// and the printout gives no remote cost; at 4 ranks the printout's total row gives a time
// per remote node, and the report the seconds it comes from.
func TestSampleReportsCostPerNode(t *testing.T) {
	needMPIRun(t)
	parts := partsOf(t, genSmall(t, false))
	type counts struct {
		Local   float64 `json:"local_nodes"`
		Remote  float64 `json:"remote_nodes"`
		LocalS  float64 `json:"local_seconds"`
		RemoteS float64 `json:"remote_seconds"`
		HostGr  bool    `json:"host_graph"`
	}
	run := func(np int, more ...string) (counts, string) {
		rep := filepath.Join(t.TempDir(), "report.json")
		res := mustRun(t, np, append([]string{"sample", parts, "--fanouts", "4,3", "--batch-size", "16", "--epochs", "1", "--seed", "3", "--report", rep}, more...)...)
		blob, err := os.ReadFile(rep)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Results struct {
				Sample counts `json:"sample"`
			} `json:"results"`
		}
		if err := json.Unmarshal(blob, &r); err != nil {
			t.Fatal(err)
		}
		return r.Results.Sample, res.stdout
	}
	one, out1 := run(1)
	four, out4 := run(4, "--host-graph=false")
	if one.Local == 0 || one.Remote != 0 {
		t.Fatalf("one rank: the report says %+v; it has no remote nodes to draw", one)
	}
	if four.Remote == 0 || four.Local+four.Remote != one.Local {
		t.Fatalf("4 ranks: %v local + %v remote frontier nodes; the same batches on one rank drew %v", four.Local, four.Remote, one.Local)
	}
	if four.RemoteS <= 0 || four.LocalS <= 0 {
		t.Fatalf("4 ranks: the report's seconds %+v", four)
	}
	// The 4 ranks share this host: with its graph mapped (the default),
	// none is remote.
	if host, _ := run(4); host.Remote != 0 || host.Local != one.Local || !host.HostGr || four.HostGr {
		t.Fatalf("4 ranks, the host's graph: %v local + %v remote frontier nodes (the report says the host's graph was on: %v; with --host-graph=false: %v); one rank drew %v, all local", host.Local, host.Remote, host.HostGr, four.HostGr, one.Local)
	}
	total := func(out string) []string {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == "all" {
				return f
			}
		}
		t.Fatalf("no total row in:\n%s", out)
		return nil
	}
	// all, batches, batches/s, seeds/s, edges/s, remote, exchanged (2
	// fields), µs/local, µs/remote, then the note.
	if f := total(out1); len(f) < 10 || f[9] != "–" {
		t.Fatalf("one rank: the total row gives a remote cost: %q", f)
	}
	f := total(out4)
	if len(f) < 10 {
		t.Fatalf("4 ranks: the total row %q", f)
	}
	want := four.RemoteS / four.Remote * 1e6
	if got, err := strconv.ParseFloat(f[9], 64); err != nil || math.Abs(got-want) > 0.006 {
		t.Fatalf("4 ranks: the total row's µs/remote %q; the report's seconds over nodes give %.2f", f[9], want)
	}
}
