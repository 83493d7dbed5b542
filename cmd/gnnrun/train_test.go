package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gnnrun/cuda"
	"gnnrun/graphio"
)

// python is the interpreter the trainers run on: Debian's, which sees
// python3-torch and python3-numpy (make deps installs them).
const pythonBin = "/usr/bin/python3"

// needPython skips the test when the trainers' Python lacks numpy (or
// torch, when asked).
func needPython(t *testing.T, torch bool) {
	t.Helper()
	needMPIRun(t)
	mods := "numpy"
	if torch {
		mods += ", torch"
	}
	if out, err := exec.Command(pythonBin, "-c", "import "+mods).CombinedOutput(); err != nil {
		t.Skipf("%s cannot import %s (make deps installs python3-numpy and python3-torch): %v %s", pythonBin, mods, err, out)
	}
}

// trainerScript is the test trainer's path.
func trainerScript(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("testdata", "trainer.py"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// plantedDir generates a graph whose 4 classes are planted communities
// (features of featDim columns, a share planted of the edges into the
// source's class), partitions it into K = 4 and dispatches it.
func plantedDir(t *testing.T, featDim int, planted string) string {
	t.Helper()
	dir := t.TempDir()
	g, asg, parts := filepath.Join(dir, "g"), filepath.Join(dir, "asg"), filepath.Join(dir, "parts")
	mustRun(t, 2, "gen", "--scale", "12", "--edge-factor", "8", "--feat-dim", fmt.Sprint(featDim), "--classes", "4", "--planted", planted, "--seed", "3", "--out", g)
	mustRun(t, 2, "partition", "--in", g, "--parts", "4", "--balance", "nodes,train", "--out", asg)
	mustRun(t, 2, "dispatch", "--in", g, "--assignment", asg, "--out", parts)
	return parts
}

// lastJSON decodes the last line of out that is a JSON object.
func lastJSON(t *testing.T, out string, v any) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "{") {
			if err := json.Unmarshal([]byte(lines[i]), v); err != nil {
				t.Fatalf("%q: %v", lines[i], err)
			}
			return
		}
	}
	t.Fatalf("no JSON line in:\n%s", out)
}

// TestTrainLearnsUnderMPI trains examples/graphsage.py on planted
// communities at 1 and 2 ranks: features alone tell the 4 classes apart
// about half the time, the neighbourhoods far better, so a test accuracy
// above 0.85 means the batches carry the graph to the model.
func TestTrainLearnsUnderMPI(t *testing.T) {
	needPython(t, true)
	parts := plantedDir(t, 16, "0.8")
	example, _ := filepath.Abs(filepath.Join("..", "..", "examples", "graphsage.py"))
	for _, np := range []int{1, 2} {
		r := mustRun(t, np, "train", parts, "--fanouts", "10,10", "--batch-size", "64", "--epochs", "4", "--seed", "2",
			"--", pythonBin, example, "--hidden", "32", "--lr", "0.01")
		var res struct {
			TestAcc float64 `json:"test_acc"`
			Epochs  int     `json:"epochs"`
			Ranks   int     `json:"ranks"`
		}
		lastJSON(t, r.stdout, &res)
		if res.Epochs != 4 || res.Ranks != np || res.TestAcc < 0.85 {
			t.Errorf("P=%d: %+v; want 4 epochs on %d ranks and a test accuracy above 0.85\n%s", np, res, np, r.stdout)
		}
	}
}

// TestTrainLinkExampleUnderMPI runs examples/link.py on a planted graph
// at 2 ranks: an edge joins mostly nodes of one class and a negative
// mostly nodes of two, so scores of the last epoch's batches well above
// chance (AUC 0.5) mean the link batches carry the graph to the model.
// It runs with the host views and on the GPU's code path (--device cpu
// --mirror), which must score exactly alike.
func TestTrainLinkExampleUnderMPI(t *testing.T) {
	needPython(t, true)
	parts := plantedDir(t, 64, "0.9")
	example, _ := filepath.Abs(filepath.Join("..", "..", "examples", "link.py"))
	var host float64
	for _, mirror := range []bool{false, true} {
		args := []string{"train", parts, "--task", "link", "--negatives", "3", "--exclude", "reverse", "--fanouts", "5,5",
			"--batch-size", "256", "--epochs", "8", "--batches-per-epoch", "20", "--", pythonBin, example, "--hidden", "32", "--lr", "0.01"}
		if mirror {
			args = append(args, "--device", "cpu", "--mirror")
		}
		r := mustRun(t, 2, args...)
		var res struct {
			AUC    float64 `json:"train_auc"`
			MRR    float64 `json:"train_mrr"`
			Epochs int     `json:"epochs"`
		}
		lastJSON(t, r.stdout, &res)
		if res.Epochs != 8 || res.AUC <= 0.7 || res.MRR <= 0 {
			t.Errorf("mirror %v: %+v; want 8 epochs and an AUC above 0.7\n%s", mirror, res, r.stdout)
		}
		if mirror && res.AUC != host {
			t.Errorf("--mirror: AUC %v, the host views' %v", res.AUC, host)
		}
		host = res.AUC
	}
}

// npzHashes returns the SHA-256 of every array of every batch file in
// dir, by file name without .npz.
func npzHashes(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.npz"))
	for _, f := range files {
		z, err := graphio.OpenNpz(f)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, e := range z.Entries {
			rows := int64(0)
			if len(e.Header.Shape) > 0 {
				rows = e.Header.Shape[0]
			}
			ten, err := z.ReadRows(e, 0, rows)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.Sum256(ten.Data)
			m[e.Name] = hex.EncodeToString(h[:])
		}
		z.Close()
		out[strings.TrimSuffix(filepath.Base(f), ".npz")] = m
	}
	return out
}

// TestTrainBatchesAreSamplersUnderMPI: the batches a trainer receives are
// the sampler's. The trainer hashes each batch's arrays in input IDs on
// the Python side; at 1 and 4 ranks, over both transports, every hash
// equals the hash of the same array in the one-rank `sample --dump` file
// of the batch, and none is missing.
func TestTrainBatchesAreSamplersUnderMPI(t *testing.T) {
	needPython(t, false)
	parts := sampleDir(t, false)
	common := []string{"--fanouts", "4,3", "--batch-size", "16", "--epochs", "2", "--seed", "7"}
	ref := filepath.Join(t.TempDir(), "ref")
	mustRun(t, 1, append(append([]string{"sample", parts}, common...), "--dump", ref)...)
	want := npzHashes(t, ref)
	for _, tr := range []string{"alltoall", "rma"} {
		for _, np := range []int{1, 4} {
			if np == 1 && tr == "rma" {
				continue
			}
			args := append(append([]string{"train", parts}, common...), "--transport", tr, "--ids", "--eval", "none", "--", pythonBin, trainerScript(t), "hash")
			out := t.TempDir()
			r := runGnnrun(t, np, 5*time.Minute, []string{"OUT_DIR=" + out}, args...)
			if r.err != nil {
				t.Fatalf("%s P=%d: %v", tr, np, r)
			}
			var lines []string
			for rk := range np {
				blob, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.jsonl", rk)))
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, strings.Split(strings.TrimSpace(string(blob)), "\n")...)
			}
			got := 0
			sc := bufio.NewScanner(strings.NewReader(strings.Join(lines, "\n")))
			for sc.Scan() {
				var b struct {
					Kind          string
					Epoch, Number int
					Arrays        map[string]string
				}
				if !strings.HasPrefix(sc.Text(), `{"kind"`) {
					continue
				}
				if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
					t.Fatal(err)
				}
				if b.Number >= len(want)/2 {
					continue // an empty batch padding a rank, not in sample --dump
				}
				name := fmt.Sprintf("e%d-b%d", b.Epoch, b.Number)
				w, ok := want[name]
				if !ok || len(w) != len(b.Arrays) {
					t.Fatalf("%s P=%d: batch %s has arrays %v; the sampler's file %v", tr, np, name, b.Arrays, w)
				}
				for k, h := range b.Arrays {
					if w[k] != h {
						t.Fatalf("%s P=%d: batch %s array %s differs from sample --dump's", tr, np, name, k)
					}
				}
				got++
			}
			if got != len(want) {
				t.Fatalf("%s P=%d: the trainers got %d of the %d batches", tr, np, got, len(want))
			}
		}
	}
}

// leftovers returns the processes whose command line holds marker, and
// the entries of /dev/shm that were not in before.
func leftovers(t *testing.T, marker string, before map[string]bool) []string {
	t.Helper()
	var out []string
	if b, err := exec.Command("pgrep", "-af", marker).Output(); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		out = append(out, "processes: "+strings.TrimSpace(string(b)))
	}
	for _, n := range shmEntries(t) {
		if !before[n] {
			out = append(out, "/dev/shm/"+n)
		}
	}
	return out
}

func shmEntries(t *testing.T) []string {
	ents, err := os.ReadDir("/dev/shm")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestTrainFailuresUnderMPI: a trainer that exits 1, a trainer killed, a
// gnnrun rank killed, and SIGTERM to the job: each ends the whole job
// non-zero within 10 s, and leaves no process and nothing in /dev/shm.
func TestTrainFailuresUnderMPI(t *testing.T) {
	needPython(t, false)
	parts := sampleDir(t, false)
	// A copy of the trainer under a name of this test's own, so leftover
	// processes are found by it.
	dir := t.TempDir()
	script := filepath.Join(dir, "faulty_trainer_"+fmt.Sprint(os.Getpid())+".py")
	src, err := os.ReadFile(trainerScript(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o755); err != nil {
		t.Fatal(err)
	}
	base := []string{"train", parts, "--fanouts", "4,3", "--batch-size", "8", "--epochs", "200", "--", pythonBin, script}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"trainer exits 1", []string{"exit1", "1", "3"}, "rank 1/2"},
		{"trainer killed", []string{"kill", "1", "3"}, "was killed by signal 9"},
		{"gnnrun rank killed", []string{"killparent", "1", "3"}, ""},
		{"SIGTERM", []string{"hold"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := map[string]bool{}
			for _, n := range shmEntries(t) {
				before[n] = true
			}
			markers := t.TempDir()
			args := append(append([]string{}, base...), c.args...)
			var r result
			if c.name == "SIGTERM" {
				r = runUntilMarked(t, markers, 2, args)
			} else {
				r = runGnnrun(t, 2, time.Minute, []string{"MARKER_DIR=" + markers}, args...)
			}
			if r.err == nil {
				t.Fatalf("the job exited 0: %v", r)
			}
			if r.elapsed > 10*time.Second {
				t.Errorf("the job took %v to end", r.elapsed)
			}
			if c.want != "" && !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr does not say %q: %v", c.want, r)
			}
			time.Sleep(500 * time.Millisecond) // the kernel reaps the last ones
			if left := leftovers(t, filepath.Base(script), before); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// runUntilMarked starts the job on np ranks, waits until every trainer
// wrote its marker, sends mpirun SIGTERM and returns how the job ended
// (elapsed counted from the signal).
func runUntilMarked(t *testing.T, markers string, np int, args []string) result {
	t.Helper()
	cmd := exec.Command("mpirun", append(append(mpirunArgs(np), gnnrunBin(t)), args...)...)
	cmd.Env = append(os.Environ(), "MARKER_DIR="+markers)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ents, _ := os.ReadDir(markers)
		if len(ents) == np {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the trainers did not start: %s %s", stdout.String(), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		err = fmt.Errorf("still running 30 s after SIGTERM")
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err, elapsed: time.Since(start)}
}

// TestTrainStopsEarlyUnderMPI: a trainer that exits 0 after a few batches
// while the other rank's takes all ends the run cleanly (exit 0), also
// with --ids, whose arrays are collective (the stopped rank makes them for
// the rest of the stream: it hung before).
func TestTrainStopsEarlyUnderMPI(t *testing.T) {
	needPython(t, false)
	parts := sampleDir(t, false)
	for _, extra := range [][]string{nil, {"--ids"}} {
		args := append(append([]string{"train", parts, "--fanouts", "4,3", "--batch-size", "8", "--epochs", "3"}, extra...),
			"--", pythonBin, trainerScript(t), "stop", "0", "2")
		r := runGnnrun(t, 2, time.Minute, nil, args...)
		if r.err != nil {
			t.Fatalf("%v: %v", extra, r)
		}
		if !strings.Contains(r.stdout, "1 trainer(s) stopped early") {
			t.Errorf("%v: the report does not count the early stop:\n%s", extra, r.stdout)
		}
	}
}

// TestTrainBadInputUnderMPI: a missing trainer command or partition
// directory fails at once with the reason.
func TestTrainBadInputUnderMPI(t *testing.T) {
	needMPIRun(t)
	parts := sampleDir(t, false)
	checkFailures(t, nil, []badInput{
		{name: "no command", args: []string{"train", parts}, want: "then -- and the trainer's command"},
		{name: "no dash", args: []string{"train", parts, "python3"}, want: "then -- and the trainer's command"},
		{name: "not found", args: []string{"train", parts, "--batch-size", "8", "--", "/nonexistent/trainer"}, want: `trainer "/nonexistent/trainer"`},
		{name: "eval mask", args: []string{"train", parts, "--batch-size", "8", "--eval", "nosuch_mask", "--", "true"}, want: "--eval nosuch_mask"},
		{name: "eval every", args: []string{"train", parts, "--eval-every", "0", "--", "true"}, want: "--eval-every 0"},
		{name: "device", args: []string{"train", parts, "--device", "tpu", "--", "true"}, want: `--device "tpu": want auto, cuda or cpu`},
		{name: "pad", args: []string{"train", parts, "--pad", "zero", "--", "true"}, want: `--pad "zero": want repeat or empty`},
	})
}

// TestTrainNoGPUUnderMPI: --device cuda on a host without a usable GPU
// fails at start, before any batch, in under 5 s, saying why (the
// trainer's command is never run); auto falls back to the CPU.
func TestTrainNoGPUUnderMPI(t *testing.T) {
	needMPIRun(t)
	if _, err := cuda.Probe(0); err == nil {
		t.Skip("this host has a GPU")
	}
	parts := sampleDir(t, false)
	mark := filepath.Join(t.TempDir(), "ran")
	r := runGnnrun(t, 2, time.Minute, nil, "train", parts, "--fanouts", "4,3", "--batch-size", "8", "--device", "cuda", "--", "touch", mark)
	if r.err == nil || !strings.Contains(r.stderr, "--device cuda: cuda:") || !strings.Contains(r.stderr, "no usable GPU") {
		t.Fatalf("want a failure naming why there is no GPU, got %v", r)
	}
	if r.elapsed > 5*time.Second {
		t.Errorf("took %v to fail (want < 5 s)", r.elapsed)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("the trainer ran")
	}
	needPython(t, false)
	r = mustRun(t, 1, "train", parts, "--fanouts", "4,3", "--batch-size", "8", "--epochs", "1", "--device", "auto", "--",
		pythonBin, "-c", `import gnnrun; print("hello device", gnnrun.hello()["device"])`)
	if !strings.Contains(r.stdout, "trainer's device cpu") || !strings.Contains(r.stdout, "hello device cpu") {
		t.Errorf("auto without a GPU: want the trainer on cpu:\n%s", r.stdout)
	}
}

// TestTrainClientIsPrivateUnderMPI: the trainers import gnnrun's client
// from a directory only this user can write, under TMPDIR; one that
// another user made first (here writable by all, holding a client of
// theirs) is not used, and the run's own directory is gone after it.
func TestTrainClientIsPrivateUnderMPI(t *testing.T) {
	needPython(t, false)
	parts := sampleDir(t, false)
	where := `import gnnrun, os; print("client at", os.path.dirname(os.path.dirname(os.path.abspath(gnnrun.__file__))))`
	clientAt := func(t *testing.T, out string) string {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			if dir, ok := strings.CutPrefix(l, "client at "); ok {
				return dir
			}
		}
		t.Fatalf("the trainer did not say where its client is:\n%s", out)
		return ""
	}
	private := func(t *testing.T, dir string) {
		t.Helper()
		fi, err := os.Lstat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || int(st.Uid) != os.Getuid() {
			t.Fatalf("%s: mode %v owner %d: not this user's private directory", dir, fi.Mode(), st.Uid)
		}
	}
	for _, planted := range []bool{false, true} {
		base := t.TempDir()
		if err := os.Chmod(base, 0o777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(base, fmt.Sprintf("gnnrun-%d", os.Getuid()))
		if planted {
			if err := os.Mkdir(root, 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(root, 0o777)
		}
		r := runGnnrun(t, 2, 2*time.Minute, []string{"TMPDIR=" + base}, "train", parts, "--fanouts", "4,3", "--batch-size", "8",
			"--epochs", "1", "--", pythonBin, "-c", where)
		if r.err != nil {
			t.Fatalf("planted %v: %v", planted, r)
		}
		dir := clientAt(t, r.stdout)
		if !planted {
			if filepath.Dir(dir) != root {
				t.Fatalf("the client is at %s, want under %s", dir, root)
			}
			private(t, root)
			continue
		}
		if strings.HasPrefix(dir, root) {
			t.Fatalf("the trainer imported the client from the planted %s", dir)
		}
		if !strings.Contains(r.stderr, "others can write it") {
			t.Errorf("no warning about the planted directory:\n%s", r.stderr)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the run's own client directory %s is left behind (%v)", dir, err)
		}
	}
}

// TestTrainPyGExampleUnderMPI runs examples/pyg_sage.py, GraphSAGE with
// PyTorch Geometric's SAGEConv called in PyG's documented bipartite form,
// on planted communities at 2 ranks. Where PyG is not installed (no
// package index here), its layer is testdata/pyg_standin's: SAGEConv as
// PyG documents it, refusing any call outside PyG's contract (x a
// (source, destination) pair, edge_index [2, E] int64 within size), so
// the test proves the example's calls, not PyG. Without PyG or the
// stand-in, the job fails in seconds saying what is missing.
func TestTrainPyGExampleUnderMPI(t *testing.T) {
	needPython(t, true)
	parts := plantedDir(t, 16, "0.8")
	example, _ := filepath.Abs(filepath.Join("..", "..", "examples", "pyg_sage.py"))
	standin, _ := filepath.Abs(filepath.Join("testdata", "pyg_standin"))
	args := []string{"train", parts, "--fanouts", "10,10", "--batch-size", "64", "--epochs", "4", "--seed", "2",
		"--", pythonBin, example, "--hidden", "32", "--lr", "0.01"}
	var env []string
	if exec.Command(pythonBin, "-c", "import torch_geometric").Run() != nil {
		r := runGnnrun(t, 2, time.Minute, nil, args...)
		if r.err == nil || !strings.Contains(r.stderr, "needs PyTorch Geometric") || r.elapsed > 20*time.Second {
			t.Errorf("without PyG: want a failure within 20 s saying PyG is needed, got %v", r)
		}
		env = []string{"PYTHONPATH=" + standin}
		t.Logf("PyG is not installed: its SAGEConv is the stand-in's")
	}
	r := runGnnrun(t, 2, 5*time.Minute, env, args...)
	if r.err != nil {
		t.Fatal(r)
	}
	var res struct {
		TestAcc float64 `json:"test_acc"`
		Epochs  int     `json:"epochs"`
	}
	lastJSON(t, r.stdout, &res)
	if res.Epochs != 4 || res.TestAcc < 0.85 {
		t.Errorf("%+v; want 4 epochs and a test accuracy above 0.85\n%s", res, r.stdout)
	}
}

// TestTrainProgressUnderMPI: at 2 ranks over 3 epochs, rank 0 prints a
// progress line every --progress-every while the trainers train and one
// at each epoch's end with the figures the trainers logged (gnnrun.log),
// averaged over each rank's calls and then over the ranks that logged
// them (NaN kept as NaN); --report keeps them per epoch.
func TestTrainProgressUnderMPI(t *testing.T) {
	needPython(t, false)
	parts := sampleDir(t, false)
	script, _ := filepath.Abs(filepath.Join("testdata", "log_trainer.py"))
	rep := filepath.Join(t.TempDir(), "report.json")
	r := runGnnrun(t, 2, 2*time.Minute, []string{"SLEEP_S=0.05"}, "train", parts, "--fanouts", "4,3", "--batch-size", "16",
		"--epochs", "3", "--progress-every", "200ms", "--report", rep, "--", pythonBin, script)
	if r.err != nil {
		t.Fatal(r)
	}
	periodic, epochLines := 0, 0
	for _, l := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "train: epoch ") && strings.Contains(l, " done: "):
			e := epochLines
			want := fmt.Sprintf("train: epoch %d/3 done: 5 batches in ", e+1)
			figs := fmt.Sprintf("; bad NaN, only0 1 (1 of 2 ranks), step 2, x %.4g (mean over ranks)", 10*float64(e)+0.5)
			if !strings.HasPrefix(l, want) || !strings.Contains(l, figs) {
				t.Errorf("epoch line %q, want %q...%q", l, want, figs)
			}
			epochLines++
		case strings.HasPrefix(l, "train: epoch "):
			if !strings.Contains(l, "/5 batches") || !strings.Contains(l, "batches/s, epoch ETA") || !strings.Contains(l, "run ETA") {
				t.Errorf("progress line %q", l)
			}
			periodic++
		}
	}
	if epochLines != 3 || periodic < 3 {
		t.Errorf("%d epoch lines (want 3) and %d periodic lines (want several: 15 batches of 50 ms a rank)\n%s", epochLines, periodic, r.stdout)
	}
	var report struct {
		Results struct {
			Train struct {
				Epochs []struct {
					Epoch   int
					Batches int
					Values  map[string]any
				}
			}
		}
	}
	if blob, err := os.ReadFile(rep); err != nil || json.Unmarshal(blob, &report) != nil {
		t.Fatalf("the report: %v", err)
	}
	eps := report.Results.Train.Epochs
	if len(eps) != 3 {
		t.Fatalf("the report has %d epochs: %+v", len(eps), eps)
	}
	for e, ep := range eps {
		if ep.Epoch != e || ep.Batches != 5 || ep.Values["x"] != 10*float64(e)+0.5 || ep.Values["bad"] != "NaN" || ep.Values["step"] != 2.0 {
			t.Errorf("the report's epoch %d: %+v", e, ep)
		}
	}
}
