package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gnnrun/bench/driver"
	"gnnrun/cuda"
)

// dryRunOptions are a dry run's options on a small graph, with outputs
// under dir: at scale 13 the 1 MB hot cache of steps 3 and 4 holds an
// eighth of the rows, so the others are copied.
func dryRunOptions(dir, gnnrun string) options {
	o := options{gnnrun: gnnrun, python: "/usr/bin/python3", out: filepath.Join(dir, "gpu-check"), work: filepath.Join(dir, "work"),
		repo: "../..", steps: []int{0, 1, 2, 3, 4, 5}, dryRun: true, scale: 13, tableMiB: 8, gatherMiB: 2, timeout: 2 * time.Minute}
	o.setDefault()
	return o
}

// The dry run on the host backend runs every step that makes sense
// without a GPU, passes them, and writes a report with every step: the
// gather's four widths checked, the loader's figures, the trainer's
// mirror equal to gnnrun's buffers, GraphSAGE's result.
func TestDryRun(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 lacks PyTorch or NumPy (make deps installs them): %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gnnrun")
	if err := driver.Build([2]string{bin, "gnnrun/cmd/gnnrun"}); err != nil {
		t.Fatal(err)
	}
	o := dryRunOptions(dir, bin)
	if code := run(o); code != 0 {
		t.Fatalf("the dry run exited %d", code)
	}
	var r Report
	blob, err := os.ReadFile(o.out + ".json")
	if err == nil {
		err = json.Unmarshal(blob, &r)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{Skipped, Skipped, Pass, Pass, Pass, Skipped}
	// Step 5's CPU half ran.
	if f := r.Steps[5].Figures; len(f) != 1 || f[0].Value <= 0 || len(r.Steps[5].Commands) != 4 {
		t.Errorf("step 5 in a dry run: %+v", r.Steps[5])
	}
	if len(r.Steps) != len(steps) {
		t.Fatalf("%d steps in the report, want %d", len(r.Steps), len(steps))
	}
	for i, st := range r.Steps {
		if st.Number != i || st.Name != steps[i].name || st.Result != want[i] {
			t.Errorf("step %d: %d %q %s (%s), want %q %s", i, st.Number, st.Name, st.Result, st.Reason, steps[i].name, want[i])
		}
		if st.Result == Pass && (len(st.Figures) == 0 || len(st.Commands) == 0) {
			t.Errorf("step %d passed with %d figures and %d commands", i, len(st.Figures), len(st.Commands))
		}
	}
	if !r.Passed || !r.DryRun {
		t.Errorf("passed %v, dry run %v", r.Passed, r.DryRun)
	}
	checkGather(t, r.Steps[2])
	if f := r.Steps[4].Figures; len(f) < 4 || f[0].Value == 0 || !strings.Contains(f[0].Note, "wrong: 0") || f[2].Goal == "" || f[3].Ratio == nil {
		t.Errorf("step 4's figures: %+v", f)
	}
	for _, ex := range []string{"examples/link.py's train_auc", "examples/rgcn.py's test_acc"} {
		found := false
		for _, f := range r.Steps[4].Figures {
			found = found || (f.Name == ex && f.Value > 0)
		}
		if !found {
			t.Errorf("step 4 has no figure %q: %+v", ex, r.Steps[4].Figures)
		}
	}
	checkGPUSampling(t, o)
	md, err := os.ReadFile(o.out + ".md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| step | result | figure | goal | ratio |", "| 2. gather bandwidth | pass | GatherPinned, 128-byte rows", "api_trainer.py loader"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("the Markdown lacks %q:\n%s", s, md)
		}
	}
}

// checkGather checks that step 2 measured and verified every operation
// at every width.
func checkGather(t *testing.T, st Step) {
	t.Helper()
	blob, _ := json.Marshal(st.Details["widths"])
	var ws []widthResult
	if err := json.Unmarshal(blob, &ws); err != nil || len(ws) != len(gatherWidths) {
		t.Fatalf("step 2's widths: %s (%v)", blob, err)
	}
	for i, w := range ws {
		if w.RowBytes != gatherWidths[i] || w.Bytes != int64(w.Rows*w.RowBytes) || w.Rows == 0 ||
			w.GatherPinned <= 0 || w.HtoD <= 0 || w.ScatterRows <= 0 || w.CopyRows <= 0 || w.HostGather <= 0 ||
			strings.Join(w.Verified, ",") != "GatherPinned,HtoD,ScatterRows,CopyRows" {
			t.Errorf("width %d: %+v", gatherWidths[i], w)
		}
	}
	if f := st.Figures[0]; f.Ratio == nil || f.Met == nil || f.Goal != "GatherPinned / HtoD ≥ 0.8" {
		t.Errorf("the gather's first figure: %+v", f)
	}
}

// checkGPUSampling runs step 5's GPU half on the dry run's graph: it
// opens the partition and then samples on the GPU, or, without one, fails
// for want of a GPU alone.
func checkGPUSampling(t *testing.T, o options) {
	t.Helper()
	gs, err := (&checker{o: o}).gpuSampling(&graph{parts: filepath.Join(o.work, "parts")})
	if _, probe := cuda.Probe(0); probe != nil {
		if !errors.Is(err, cuda.ErrNoGPU) {
			t.Errorf("GPU sampling without a GPU: %v, want an error wrapping cuda.ErrNoGPU", err)
		}
	} else if err != nil || gs.Batches != sampleBatches || gs.Edges == 0 {
		t.Errorf("GPU sampling: %+v, %v", gs, err)
	}
}

// checkBlock accepts a sampled layer of the frontier's shape and refuses
// one whose destinations, edge counts or indices are wrong.
func TestCheckBlock(t *testing.T) {
	frontier := []int64{7, 3}
	ok := func() *cuda.SampledBlock {
		return &cuda.SampledBlock{Nodes: []int64{7, 3, 9}, NumDst: 2, Src: []int32{2, 0, 1}, Dst: []int32{0, 1, 1}, Pos: []int64{4, 1, 2}}
	}
	if err := checkBlock(ok(), frontier, 2); err != nil {
		t.Error(err)
	}
	for name, spoil := range map[string]func(b *cuda.SampledBlock){
		"destinations": func(b *cuda.SampledBlock) { b.Nodes[1] = 9 },
		"too many": func(b *cuda.SampledBlock) {
			b.Src, b.Dst, b.Pos = append(b.Src, 0, 0), append(b.Dst, 0, 0), append(b.Pos, 0, 0)
		},
		"source":      func(b *cuda.SampledBlock) { b.Src[0] = 3 },
		"destination": func(b *cuda.SampledBlock) { b.Dst[0] = 2 },
	} {
		b := ok()
		spoil(b)
		if err := checkBlock(b, frontier, 2); err == nil {
			t.Errorf("a block with wrong %s passed", name)
		}
	}
}

// A step whose command fails fails the run; the others still run and the
// report is written.
func TestFailedStepFailsRun(t *testing.T) {
	dir := t.TempDir()
	o := dryRunOptions(dir, filepath.Join(dir, "no-gnnrun"))
	o.steps = []int{3}
	if code := run(o); code != 1 {
		t.Errorf("exit status %d with a gnnrun that does not exist, want 1", code)
	}
	blob, err := os.ReadFile(o.out + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(blob, &r); err != nil {
		t.Fatal(err)
	}
	if r.Passed || r.Steps[3].Result != Fail || !strings.Contains(r.Steps[3].Reason, "making the graph") || r.Steps[2].Result != Skipped {
		t.Errorf("passed %v, step 3 %s (%s), step 2 %s", r.Passed, r.Steps[3].Result, r.Steps[3].Reason, r.Steps[2].Result)
	}
}

// A test binary's output: a skip on a GPU host is told apart from a pass
// and a failure, subtests included.
func TestParseTests(t *testing.T) {
	out := []byte(`=== RUN   TestGPUModules
--- PASS: TestGPUModules (0.41s)
=== RUN   TestGPUGatherPinned
=== RUN   TestGPUGatherPinned/width=100
    --- FAIL: TestGPUGatherPinned/width=100 (0.01s)
--- FAIL: TestGPUGatherPinned (0.02s)
=== RUN   TestGPUSample
    sample_test.go:12: no GPU to run on, the test is skipped
--- SKIP: TestGPUSample (0.00s)
FAIL
`)
	got := parseTests(out)
	if strings.Join(got.Passed, ",") != "TestGPUModules" || strings.Join(got.Failed, ",") != "TestGPUGatherPinned/width=100,TestGPUGatherPinned" ||
		strings.Join(got.Skipped, ",") != "TestGPUSample" {
		t.Errorf("parseTests: %+v", got)
	}
}

// A row copied wrong is found, whatever its width.
func TestSameRows(t *testing.T) {
	table := []byte("abcdefghijkl")
	out := []byte("ijklefgh")
	if err := sameRows(out, table, []int32{2, 1}, 4); err != nil {
		t.Error(err)
	}
	out[5] = 'x'
	if err := sameRows(out, table, []int32{2, 1}, 4); err == nil || !strings.Contains(err.Error(), "row 1 (the table's row 1) differs at byte 1") {
		t.Errorf("a wrong byte: %v", err)
	}
}

// Goals hold on the ratio when there is one, else on the value, and a
// shell line quotes what a shell would split.
func TestGoalsAndCommands(t *testing.T) {
	f := fig("wait", 0.07, "").goal("<", 0.05)
	g := fig("gather", 20, "GB/s").ratio("gather / HtoD", 0.9, ">=", 0.8)
	if *f.Met || !*g.Met || g.Goal != "gather / HtoD ≥ 0.8" || f.Goal != "wait < 0.05" {
		t.Errorf("goals: %+v, %+v", f, g)
	}
	line := shellLine(command{args: []string{"bin/gnnrun", "train", "--", "python3", "-c", "print('a b')"}, env: []string{"MIRROR=cuda"}, dir: "cuda"})
	if want := `(cd cuda && MIRROR=cuda bin/gnnrun train -- python3 -c 'print('\''a b'\'')')`; line != want {
		t.Errorf("shellLine: %s, want %s", line, want)
	}
}
