package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gnnrun/pack"
)

// packData is the pack package's test data, seen from this package.
func packData(name string) string { return filepath.Join("..", "..", "pack", "testdata", name) }

// TestPackTable2 runs the reference packer with every heuristic next to ours
// on molhiv-train: the rows must carry the paper's Table 2 efficiencies and
// pack counts, ours fewer packs, and --out a valid packing.
func TestPackTable2(t *testing.T) {
	out := filepath.Join(t.TempDir(), "strategy.json")
	r := mustRun(t, 0, "pack", "--hist", packData("ogbg-molhiv-train.csv"), "--algo", "reference,ours", "--heuristic", "all", "--out", out)
	rows := packRows(r.stdout)
	for heur, want := range map[string][3]string{
		"product": {"3917", "95.56", "90.50"}, "sum": {"3838", "97.52", "92.37"}, "max": {"3800", "98.50", "93.29"},
		"min": {"3800", "98.50", "93.29"}, "node": {"3789", "98.78", "93.56"}, "edge": {"3800", "98.50", "93.29"},
	} {
		f := rows["reference/"+heur]
		if len(f) < 10 || f[2] != want[0] || f[8] != want[1] || f[9] != want[2] {
			t.Errorf("reference %s: row %v, want packs %s and published %s%%, %s%%", heur, f, want[0], want[1], want[2])
		}
	}
	ours := rows["ours/-"]
	if len(ours) < 3 {
		t.Fatalf("no row for ours: %v", r)
	}
	if n, err := strconv.Atoi(ours[2]); err != nil || n >= 3789 {
		t.Fatalf("ours: row %v, want fewer than 3789 packs", ours)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, s, err := pack.ReadStrategy(f)
	if err != nil {
		t.Fatal(err)
	}
	h, err := pack.ReadHistogramFile(packData("ogbg-molhiv-train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(h); err != nil {
		t.Fatalf("--out packing: %v", err)
	}
	if s.Algo != "ours" || s.Packs != p.Packs() || ours[2] != strconv.Itoa(p.Packs()) {
		t.Errorf("--out holds %s with %d packs, the table says ours %s", s.Algo, s.Packs, ours[2])
	}
}

// packRows maps "algo/heuristic" to the fields of that row of the table.
func packRows(stdout string) map[string][]string {
	rows := map[string][]string{}
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && (f[0] == "ours" || f[0] == "reference") {
			rows[f[0]+"/"+f[1]] = f
		}
	}
	return rows
}

// TestPackSweepAcrossRanks sweeps a small grid alone and under mpirun on 1
// and 3 ranks: the points are split over the ranks, and every run must
// report the same results.
func TestPackSweepAcrossRanks(t *testing.T) {
	args := []string{"pack", "--hist", packData("ogbg-molhiv-train.csv"), "--sweep",
		"--sweep-nodes", "222:444:74", "--sweep-edges", "502:1004:251", "--algo", "ours,reference", "--heuristic", "node,max", "--target", "90"}
	var first []byte
	for _, np := range []int{0, 1, 3} {
		out := filepath.Join(t.TempDir(), "sweep.json")
		r := mustRun(t, np, append(args, "--out", out, "--workers", "1")...)
		if !strings.Contains(r.stdout, "sweep: 36 points (4 node limits × 3 edge limits × 3 packers)") ||
			!strings.Contains(r.stdout, "Pareto set") || !strings.Contains(r.stdout, "smallest limits reaching 90% in both") {
			t.Fatalf("np=%d: unexpected output: %v", np, r)
		}
		got := sweepWithoutTimes(t, out)
		if first == nil {
			first = got
		} else if string(got) != string(first) {
			t.Fatalf("np=%d: sweep results differ from the run without mpirun", np)
		}
	}
}

// sweepWithoutTimes reads a sweep's JSON and drops the wall times.
func sweepWithoutTimes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc packSweepJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Points) != 36 || len(doc.Pareto) == 0 {
		t.Fatalf("%d points, %d on the Pareto front", len(doc.Points), len(doc.Pareto))
	}
	for i := range doc.Points {
		doc.Points[i].Seconds = 0
	}
	out, _ := json.Marshal(doc)
	return out
}

// TestPackInputsUnderMPIRun packs the TU and OGB test datasets on 2 ranks
// and checks the per-epoch assignment across ranks.
func TestPackInputsUnderMPIRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"tu", []string{"--tu", packData("tu/TINY")}, "3 graphs, 3 distinct sizes, 6 nodes, 8 edges"},
		{"ogb", []string{"--ogb", packData("ogb/tiny")}, "4 graphs, 4 distinct sizes, 10 nodes, 14 edges"},
		{"ogb once", []string{"--ogb", packData("ogb/tiny"), "--ogb-add-inverse=false"}, "10 nodes, 7 edges"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRun(t, 2, append([]string{"pack", "--epochs", "2", "--max-nodes", "5", "--max-edges", "8"}, tc.args...)...)
			if !strings.Contains(r.stdout, tc.want) || strings.Count(r.stdout, "graphs once") != 2 {
				t.Fatalf("unexpected output: %v", r)
			}
		})
	}
}

// TestPackBadInput: every bad input ends the job non-zero with a message
// that names the problem.
func TestPackBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	noIndicator := filepath.Join(dir, "BROKEN")
	os.Mkdir(noIndicator, 0o755)
	write("BROKEN/BROKEN_A.txt", "1, 2\n")
	for _, tc := range []struct {
		name string
		np   int
		args []string
		want string
	}{
		{"negative field", 0, []string{"--hist", write("neg.csv", "nodes,edges,count\n3,4,-3\n")}, `neg.csv:2: count "-3" is not a non-negative integer`},
		{"non-integer field", 0, []string{"--hist", write("frac.csv", "3,4.5,1\n")}, `frac.csv:1: edges "4.5" is not a non-negative integer`},
		{"empty dataset", 0, []string{"--hist", write("empty.csv", "nodes,edges,count\n")}, "empty dataset"},
		{"graph over the limits", 0, []string{"--tu", packData("tu/TINY"), "--max-nodes", "2"}, "graph 0 has 3 nodes and 6 edges, more than the pack limits of 2 nodes and 6 edges"},
		{"size over the limits", 0, []string{"--hist", packData("tu-MUTAG.csv"), "--max-edges", "60"}, "1 graph(s) of 27 nodes and 66 edges do not fit in a pack of 28 nodes and 60 edges"},
		{"TU file missing", 0, []string{"--tu", noIndicator}, "BROKEN_graph_indicator.txt: no such file"},
		{"TU folder missing", 0, []string{"--tu", filepath.Join(dir, "nothing")}, "no such file or directory"},
		{"no input", 0, nil, "give exactly one input"},
		{"two inputs", 0, []string{"--hist", "a.csv", "--tu", "b"}, "give exactly one input"},
		{"unknown algorithm", 0, []string{"--hist", packData("tu-MUTAG.csv"), "--algo", "best"}, `unknown algorithm "best"`},
		{"bad cap", 0, []string{"--hist", packData("tu-MUTAG.csv"), "--max-graphs", "0"}, "--max-graphs must be a positive integer"},
		{"bad target", 0, []string{"--hist", packData("tu-MUTAG.csv"), "--sweep", "--target", "0"}, "--target must be in (0, 100]"},
		{"sweep below the data", 0, []string{"--hist", packData("tu-MUTAG.csv"), "--sweep", "--sweep-nodes", "20:30:5"}, "--sweep-nodes/--sweep-edges start too low"},
		{"bad range", 0, []string{"--hist", packData("tu-MUTAG.csv"), "--sweep", "--sweep-edges", "90:70"}, "LO > HI"},
		{"under mpirun", 2, []string{"--hist", write("neg2.csv", "3,-4,1\n")}, `neg2.csv:1: edges "-4" is not a non-negative integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runGnnrun(t, tc.np, time.Minute, nil, append([]string{"pack"}, tc.args...)...)
			if r.err == nil {
				t.Fatalf("exited 0: %v", r)
			}
			if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "gnnrun: rank 0/") {
				t.Fatalf("stderr lacks %q: %v", tc.want, r)
			}
			if strings.Contains(r.stderr, "pack: pack:") {
				t.Errorf("doubled prefix: %v", r.stderr)
			}
		})
	}
}

func TestPackHelp(t *testing.T) {
	r := mustRun(t, 0, "help", "pack")
	for _, flag := range []string{"--hist", "--tu", "--ogb", "--max-nodes", "--max-edges", "--max-graphs", "--heuristic", "--algo", "--sweep", "--out"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("help lacks %s", flag)
		}
	}
}
