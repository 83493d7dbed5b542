package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sampleDir dispatches a small generated graph into K = 4 partitions
// (balanced on nodes and training nodes) and returns the directory.
func sampleDir(t *testing.T, hetero bool) string {
	t.Helper()
	g := genSmall(t, hetero)
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
// files: every file equal to the one of the same name, fewer than P
// batches per epoch missing, every rank (counts: the batches each ran)
// as many batches, adding up to the files.
func checkDump(t *testing.T, what string, want map[string][]byte, dump string, epochs int, counts []int64) {
	t.Helper()
	got := filesOf(t, dump)
	for f, b := range got {
		if !bytes.Equal(b, want[f]) {
			t.Fatalf("%s: %s differs from the one-rank run's", what, f)
		}
	}
	np := len(counts)
	if missing := len(want) - len(got); missing < 0 || missing >= np*epochs {
		t.Fatalf("%s: %d of %d batches missing over %d epochs", what, missing, len(want), epochs)
	}
	if np == 0 || counts[0]*int64(np) != int64(len(got)) {
		t.Fatalf("%s: per-rank batches %v for %d files", what, counts, len(got))
	}
	for _, c := range counts {
		if c != counts[0] {
			t.Fatalf("%s: ranks ran %v batches", what, counts)
		}
	}
}

// TestSampleUnderMPI samples a homogeneous and a two-type graph's K = 4
// directory, node and link tasks, at 1, 2, 4 and 8 ranks over both
// transports, and checks that every batch file equals the one-rank run's
// file of the same name, that fewer than P batches per epoch are missing,
// and that every rank ran as many batches.
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
				for _, tr := range []string{"alltoall", "rma"} {
					for _, np := range []int{1, 2, 4, 8} {
						dump := filepath.Join(t.TempDir(), fmt.Sprintf("%s-%d", tr, np))
						res := mustRun(t, np, append(common, "--transport", tr, "--dump", dump)...)
						counts := rankBatches(t, res.stdout)
						if len(counts) != np {
							t.Fatalf("%s P=%d: %d rows in the per-rank table:\n%s", tr, np, len(counts), res.stdout)
						}
						checkDump(t, fmt.Sprintf("%s P=%d", tr, np), want, dump, epochs, counts)
					}
				}
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
		{"batch too large", 4, []string{"sample", parts, "--batch-size", "100000"}, "fewer than the 4 ranks"},
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
