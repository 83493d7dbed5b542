package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ckptLine is one training batch testdata/ckpt_trainer.py logged.
type ckptLine struct {
	Run     string
	Epoch   int
	Number  int64
	Padding bool
	Seeds   []int64
}

func (l ckptLine) key() string { return fmt.Sprintf("e%d b%d %v", l.Epoch, l.Number, l.Seeds) }

// ckptLines reads a rank's log, the lines of run (every run's: "").
func ckptLines(t *testing.T, dir string, rank int, run string) []ckptLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, fmt.Sprintf("%d.jsonl", rank)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ckptLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var l ckptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if run == "" || l.Run == run {
			out = append(out, l)
		}
	}
	return out
}

// exitCode is the job's exit status, or -1.
func exitCode(r result) int {
	var ee *exec.ExitError
	if errors.As(r.err, &ee) {
		return ee.ExitCode()
	}
	if r.err == nil {
		return 0
	}
	return -1
}

// sameWeights fails unless two runs' final weights (final-<rank>.pt) are
// within 1e-6 of each other.
func sameWeights(t *testing.T, a, b string, rank int) {
	t.Helper()
	script := `import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
print(max(float((a[k] - b[k]).abs().max()) for k in a))`
	fa, fb := filepath.Join(a, fmt.Sprintf("final-%d.pt", rank)), filepath.Join(b, fmt.Sprintf("final-%d.pt", rank))
	out, err := exec.Command(pythonBin, "-c", script, fa, fb).CombinedOutput()
	if err != nil {
		t.Fatalf("comparing %s and %s: %v %s", fa, fb, err, out)
	}
	var d float64
	if _, err := fmt.Sscan(string(out), &d); err != nil || d > 1e-6 {
		t.Errorf("rank %d: the resumed run's weights differ from the uninterrupted run's by %s", rank, strings.TrimSpace(string(out)))
	}
}

// TestTrainCheckpointResumeUnderMPI: a 3-epoch run checkpointing every 5
// batches is signalled (SIGUSR1, as Slurm's --signal sends) in epoch 1:
// it checkpoints and ends with status 75; the same command resumes. At 2
// ranks, every rank's batch stream over the two runs (epoch, number,
// seeds) is the uninterrupted run's, and so are the trainers' final
// weights. From the same checkpoint at 4 ranks, and again from one of
// that run at 1 rank, the rest of the epoch trains every training node
// the checkpoints had not, exactly once. A rank killed while a checkpoint
// is being written leaves the previous one the newest, which the next run
// resumes; a checkpoint of other flags is refused, naming them.
func TestTrainCheckpointResumeUnderMPI(t *testing.T) {
	needPython(t, true)
	g := genSmall(t, false)
	parts := partsOf(t, g)
	train := maskedNodes(t, g, "train_mask")
	script, _ := filepath.Abs(filepath.Join("testdata", "ckpt_trainer.py"))
	root := t.TempDir()
	// Batches of 4: 39 an epoch, 20 a rank at 2 ranks.
	args := func(dir string, extra ...string) []string {
		a := []string{"train", parts, "--fanouts", "4,3", "--batch-size", "4", "--epochs", "3", "--ids", "--eval", "none",
			"--checkpoint", dir, "--checkpoint-every", "5b"}
		return append(append(a, extra...), "--", pythonBin, script)
	}
	run := func(np int, out string, env []string, a []string) result {
		os.MkdirAll(out, 0o755)
		return runGnnrun(t, np, 3*time.Minute, append([]string{"OUT_DIR=" + out}, env...), a...)
	}
	// The uninterrupted run (its own checkpoints, never resumed).
	ref := filepath.Join(root, "ref")
	if r := run(2, ref, nil, args(filepath.Join(root, "refck"))); r.err != nil {
		t.Fatal(r)
	}
	ck, out := filepath.Join(root, "ck"), filepath.Join(root, "out")
	r := run(2, out, []string{"RUN=a", "SIGNAL_AT=1:3"}, args(ck))
	if exitCode(r) != checkpointExit || !strings.Contains(r.stdout, "exit status 75") {
		t.Fatalf("signalled: want exit status %d, got %v", checkpointExit, r)
	}
	// The trainers stop within a few batches of the signal (after its
	// 3rd batch of epoch 1): those already handed over, and a margin.
	newest := newestManifest(t, ck)
	if done := newest.Segments[0].Done; newest.Epoch != 1 || len(newest.Segments) != 1 || done < 4 || done > 3+10 {
		t.Fatalf("the signal's checkpoint is at epoch %d, %v; want epoch 1, within 10 batches of the 3rd", newest.Epoch, newest.Segments)
	}
	t.Logf("signalled after batch 3 of epoch 1, checkpointed after batch %d", newest.Segments[0].Done)
	// Keep the checkpoint for the resumes at other rank counts.
	ck4 := filepath.Join(root, "ck4")
	if b, err := exec.Command("cp", "-a", ck, ck4).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, b)
	}
	if r := run(2, out, []string{"RUN=b"}, args(ck)); r.err != nil || !strings.Contains(r.stdout, "resuming from") {
		t.Fatalf("the resume: %v", r)
	}
	for rk := range 2 {
		want, a, b := ckptLines(t, ref, rk, ""), ckptLines(t, out, rk, "a"), ckptLines(t, out, rk, "b")
		at := len(want) - len(b)
		if at < 0 || at > len(a) {
			t.Fatalf("rank %d: %d batches uninterrupted, %d before the signal, %d after the resume", rk, len(want), len(a), len(b))
		}
		got := append(slices.Clone(a[:at]), b...)
		for i := range want {
			if got[i].key() != want[i].key() {
				t.Fatalf("rank %d: batch %d of the stream over both runs is %s, the uninterrupted run's %s (%d before the resume)", rk, i, got[i].key(), want[i].key(), at)
			}
		}
		sameWeights(t, ref, out, rk)
	}
	// At 4 ranks from the signal's checkpoint, checkpointing every 4
	// batches and crashing in epoch 2; then at 1 rank, from the checkpoint
	// in epoch 1, to the end.
	out4 := filepath.Join(root, "out4")
	a4 := args(ck4)
	a4[slices.Index(a4, "5b")] = "4b"
	r = run(4, out4, []string{"RUN=c", "EXIT_AT=2:1"}, a4)
	if r.err == nil {
		t.Fatalf("at 4 ranks, a trainer exiting 1: the job exited 0")
	}
	second := newestManifest(t, ck4)
	t.Logf("the 4-rank run's newest checkpoint: epoch %d, %v", second.Epoch, second.Segments)
	if r := run(1, out4, []string{"RUN=d"}, args(ck4)); r.err != nil {
		t.Fatal(r)
	}
	seen := map[int64]int{}
	countUpTo := func(dir string, ranks int, runName string, m manifest, seg int) {
		for rk := range ranks {
			k := 0
			for _, l := range ckptLines(t, dir, rk, runName) {
				if l.Epoch != 1 {
					continue
				}
				k++
				if int64(k) > m.Segments[seg].Done {
					break
				}
				if !l.Padding {
					for _, v := range l.Seeds {
						seen[v]++
					}
				}
			}
		}
	}
	countUpTo(out, 2, "a", newest, 0)
	if len(second.Segments) != 2 || second.Epoch != 1 || second.Segments[1].Ranks != 4 {
		t.Fatalf("the 4-rank run's checkpoint: %+v", second)
	}
	countUpTo(out4, 4, "c", second, 1)
	for _, l := range ckptLines(t, out4, 0, "d") {
		if l.Epoch == 1 && !l.Padding {
			for _, v := range l.Seeds {
				seen[v]++
			}
		}
	}
	for v := range train {
		if seen[v] != 1 {
			t.Fatalf("epoch 1 over three runs (2, 4, 1 ranks) trained node %d %d times", v, seen[v])
		}
	}
	if len(seen) != len(train) {
		t.Fatalf("epoch 1 trained %d nodes, %d are training nodes", len(seen), len(train))
	}
	// A rank killed mid-checkpoint: the previous checkpoint stays the newest.
	ckk, outk := filepath.Join(root, "ckk"), filepath.Join(root, "outk")
	r = run(2, outk, []string{"RUN=k", "KILL_AT_SAVE=3"}, args(ckk))
	if r.err == nil || exitCode(r) == checkpointExit {
		t.Fatalf("a rank killed mid-checkpoint: want a failed job, got %v", r)
	}
	m := newestManifest(t, ckk)
	if m.Name != checkpointName(1) {
		t.Fatalf("after a kill in the third checkpoint, the newest is %s, want %s", m.Name, checkpointName(1))
	}
	r = run(2, outk, []string{"RUN=l"}, args(ckk))
	if r.err != nil || !strings.Contains(r.stdout, "resuming from "+filepath.Join(ckk, checkpointName(1))) {
		t.Fatalf("the resume after the kill: %v", r)
	}
	if left, _ := filepath.Glob(filepath.Join(ckk, "*.staging")); len(left) > 0 {
		t.Errorf("staging directories left: %v", left)
	}
	// Other flags: refused, naming them.
	r = runGnnrun(t, 2, time.Minute, []string{"OUT_DIR=" + outk}, args(ckk, "--seed", "2")...)
	if r.err == nil || !strings.Contains(r.stderr, `seed "2" (the checkpoint's "1")`) {
		t.Errorf("a checkpoint of another seed: %v", r)
	}
}

// newestManifest reads the manifest of dir's newest complete checkpoint.
func newestManifest(t *testing.T, dir string) manifest {
	t.Helper()
	names, err := checkpointNames(dir, false)
	if err != nil || len(names) == 0 {
		t.Fatalf("no checkpoint in %s: %v", dir, err)
	}
	var m manifest
	blob, err := os.ReadFile(filepath.Join(dir, names[len(names)-1], "manifest.json"))
	if err == nil {
		err = json.Unmarshal(blob, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// runUntilLine starts the job on np ranks, sends mpirun SIGUSR1 once a
// line of its output holds line (mpirun forwards it to every rank), and
// returns how the job ended.
func runUntilLine(t *testing.T, np int, line string, args []string) result {
	t.Helper()
	cmd := exec.Command("mpirun", append(append(mpirunArgs(np), gnnrunBin(t)), args...)...)
	var stdout, stderr strings.Builder
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	sc := bufio.NewScanner(pr)
	signalled := false
	for sc.Scan() {
		stdout.WriteString(sc.Text() + "\n")
		if !signalled && strings.Contains(sc.Text(), line) {
			cmd.Process.Signal(syscall.SIGUSR1)
			signalled = true
		}
	}
	err = cmd.Wait()
	if !signalled {
		t.Fatalf("no line %q to signal at:\n%s", line, stdout.String())
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err, elapsed: time.Since(start)}
}

// TestTrainExampleResumeUnderMPI: examples/graphsage.py, as shipped, under
// gnnrun train --checkpoint at 2 ranks, signalled (SIGUSR1 to mpirun) as
// its second epoch ends: it checkpoints and exits 75, and the same command
// resumes and reports the uninterrupted run's scores, to the last digit.
func TestTrainExampleResumeUnderMPI(t *testing.T) {
	needPython(t, true)
	parts := plantedDir(t, 16, "0.8")
	example, _ := filepath.Abs(filepath.Join("..", "..", "examples", "graphsage.py"))
	ck := filepath.Join(t.TempDir(), "ck")
	args := func(extra ...string) []string {
		return append(append([]string{"train", parts, "--fanouts", "10,10", "--batch-size", "32", "--epochs", "8", "--seed", "2"}, extra...),
			"--", pythonBin, example, "--hidden", "32", "--lr", "0.01")
	}
	type scores struct {
		ValAcc    float64 `json:"val_acc"`
		TestAcc   float64 `json:"test_acc"`
		BestEpoch int     `json:"best_epoch"`
		Epochs    int     `json:"epochs"`
	}
	var want, got scores
	lastJSON(t, mustRun(t, 2, args()...).stdout, &want)
	r := runUntilLine(t, 2, "train: epoch 2/8 done", args("--checkpoint", ck))
	if exitCode(r) != checkpointExit {
		t.Fatalf("signalled: want exit status %d: %v", checkpointExit, r)
	}
	r = mustRun(t, 2, args("--checkpoint", ck)...)
	if !strings.Contains(r.stdout, "resuming from") {
		t.Fatalf("the second run did not resume:\n%s", r.stdout)
	}
	lastJSON(t, r.stdout, &got)
	if got != want || want.Epochs != 8 {
		t.Errorf("resumed: %+v; uninterrupted: %+v", got, want)
	}
}
