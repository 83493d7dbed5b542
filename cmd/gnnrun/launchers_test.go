package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gnnrun/rank"
)

// The launcher tests run the built binary under real launchers through the
// scripts in ci/: a one-node Slurm that runs launch/gnnrun.sbatch with
// mpirun and with srun --mpi=pmix, and mpirun --hostfile over network
// namespaces playing three hosts. The scripts set up and tear down what they
// need (daemons, namespaces) and exit 77 where the machine forbids it.

// ciSkip is the exit status of a ci/ script on a machine that forbids it.
const ciSkip = 77

// runCIScript runs ci/NAME with args and returns its stdout; it skips the test
// when the script says the machine forbids it, and fails it on any other
// non-zero exit.
func runCIScript(t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("launcher test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("launcher tests need root (Slurm daemons, network namespaces)")
	}
	if !rank.MPI {
		t.Skip("launcher tests run several ranks: built with -tags nompi, gnnrun is a world of one")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "ci", name))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	// On timeout, SIGTERM lets the script's exit trap stop its daemons and
	// remove its namespaces; SIGKILL follows only if that hangs.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	t.Logf("ci/%s took %v", name, time.Since(start).Round(10*time.Millisecond))
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == ciSkip {
		t.Skipf("ci/%s: the machine forbids this test: %s", name, lastLine(stderr.String(), "SKIP"))
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v: %w", timeout, err)
		}
		t.Fatalf("ci/%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// lastLine returns the last line of s that contains want, or s's last line.
func lastLine(s, want string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], want) {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}

// infoRow is one rank's line of gnnrun info.
type infoRow struct {
	rank, size         int
	host               string
	local, localSize   int
	launcher, gpu, why string
}

// infoRowRE matches a rank line: rank size host local lsize launcher pid
// thread mpi... gpu (reason).
var infoRowRE = regexp.MustCompile(`^(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s+\d+\s+\S+\s+.*?\s(\S+) \(([^()]*)\)$`)

// parseInfo returns the rank lines of gnnrun info output in s.
func parseInfo(t *testing.T, s string) []infoRow {
	t.Helper()
	var rows []infoRow
	for _, line := range strings.Split(s, "\n") {
		m := infoRowRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		var r infoRow
		fmt.Sscan(m[1], &r.rank)
		fmt.Sscan(m[2], &r.size)
		r.host = m[3]
		fmt.Sscan(m[4], &r.local)
		fmt.Sscan(m[5], &r.localSize)
		r.launcher, r.gpu, r.why = m[6], m[7], m[8]
		rows = append(rows, r)
	}
	return rows
}

// slurmJob is one job's section of ci/run-slurm.sh's output.
type slurmJob struct {
	launcher, state, exit, log string
}

var slurmJobRE = regexp.MustCompile(`(?ms)^== job (\d+) launcher=(\S+) state=(\S*) exit=(\S*)\n(.*?)^== end job (\d+)$`)

func TestLaunchersSlurm(t *testing.T) {
	bin := gnnrunBin(t)
	out := runCIScript(t, 6*time.Minute, "run-slurm.sh", bin)
	jobs := map[string]slurmJob{}
	for _, m := range slurmJobRE.FindAllStringSubmatch(out, -1) {
		jobs[m[2]] = slurmJob{launcher: m[2], state: m[3], exit: m[4], log: m[5]}
	}
	for _, launcher := range []string{"mpirun", "srun"} {
		t.Run(launcher, func(t *testing.T) {
			j, ok := jobs[launcher]
			if !ok {
				t.Fatalf("no %s job in the output:\n%s", launcher, out)
			}
			if j.state != "COMPLETED" || j.exit != "0:0" {
				t.Fatalf("job ended %s with exit code %s:\n%s", j.state, j.exit, j.log)
			}
			if !strings.Contains(j.log, "world: 4 ranks on 1 hosts") || !regexp.MustCompile(`(?m)^selftest passed: .* on 4 ranks`).MatchString(j.log) {
				t.Fatalf("want 4 ranks and 'selftest passed' in the job's log:\n%s", j.log)
			}
			rows := parseInfo(t, j.log)
			if len(rows) != 4 {
				t.Fatalf("want 4 rank lines in gnnrun info, got %d:\n%s", len(rows), j.log)
			}
			// One GPU per rank: the node books fake GPUs and the script asks
			// for one per task, so the four ranks must see four devices.
			gpus := map[string]bool{}
			for _, r := range rows {
				if r.local != r.rank || r.localSize != 4 || !strings.HasPrefix(r.launcher, fmt.Sprintf("%d/4:", r.rank)) {
					t.Errorf("rank %d: local %d/%d, launcher %q; want %d/4 from both", r.rank, r.local, r.localSize, r.launcher, r.rank)
				}
				gpus[r.gpu] = true
			}
			if len(gpus) != 4 || gpus["-"] {
				t.Errorf("want 4 ranks on 4 distinct GPUs, got %v:\n%s", gpus, j.log)
			}
		})
	}
}

func TestLaunchersHostfileNetns(t *testing.T) {
	bin := gnnrunBin(t)
	out := runCIScript(t, 5*time.Minute, "run-netns.sh", bin, "3", "2")
	if !strings.Contains(out, "world: 6 ranks on 3 hosts") {
		t.Fatalf("want 6 ranks on 3 hosts:\n%s", out)
	}
	hosts := map[string][]int{} // host -> local ranks
	for _, r := range parseInfo(t, out) {
		hosts[r.host] = append(hosts[r.host], r.local)
		if r.localSize != 2 || !strings.HasPrefix(r.launcher, fmt.Sprintf("%d/2:openmpi", r.local)) {
			t.Errorf("rank %d on %s: local %d/%d, launcher %q; want local size 2 from both", r.rank, r.host, r.local, r.localSize, r.launcher)
		}
	}
	if len(hosts) != 3 {
		t.Fatalf("want 3 distinct host names in gnnrun info, got %v:\n%s", hosts, out)
	}
	for h, locals := range hosts {
		if len(locals) != 2 || locals[0]+locals[1] != 1 {
			t.Errorf("host %s has local ranks %v, want 0 and 1", h, locals)
		}
	}
	if !regexp.MustCompile(`(?m)^selftest passed: .* on 6 ranks`).MatchString(out) {
		t.Fatalf("no 'selftest passed' on 6 ranks:\n%s", out)
	}
}

// TestLaunchersTrainNetns samples and trains GraphSAGE on three hosts of
// two ranks whose host names resolve nowhere: the batches, with the host's
// graph (each rank samples its host's partitions as its own) and without,
// are the one-rank run's. With no variable set by hand, gnnrun must hand
// the trainers a MASTER_ADDR every rank reaches and each host's interface,
// and the model must learn as well as on one host from the same partitions.
// Then a MASTER_ADDR where no host answers must end the job within 10 s
// of what starting and ending a job takes (gnnrun info under the same
// mpirun: seconds on a loaded machine), saying what to set, with no process
// left behind.
func TestLaunchersTrainNetns(t *testing.T) {
	needPython(t, true)
	bin := gnnrunBin(t)
	work := t.TempDir()
	example, err := filepath.Abs(filepath.Join("..", "..", "examples", "graphsage.py"))
	if err != nil {
		t.Fatal(err)
	}
	gen := []string{"--scale", "12", "--edge-factor", "8", "--feat-dim", "16", "--classes", "4", "--planted", "0.8", "--seed", "3"}
	trainArgs := []string{"--fanouts", "10,10", "--batch-size", "32", "--epochs", "4", "--seed", "2",
		"--", pythonBin, example, "--hidden", "32", "--lr", "0.01"}
	args := append(append(append([]string{bin, work, "3", "2"}, gen...), "--"), trainArgs...)
	out := runCIScript(t, 8*time.Minute, "train-netns.sh", args...)

	trained, forced, ok := strings.Cut(out, "== train with MASTER_ADDR")
	if !ok || !strings.Contains(trained, "== train exit=0 ") {
		t.Fatalf("the training on 3 hosts failed:\n%s", out)
	}
	if m := regexp.MustCompile(`torch\.distributed: MASTER_ADDR=\S+ \(chosen by gnnrun\) MASTER_PORT=\d+, reached from every rank \(through eth0;.*`).FindString(trained); m == "" {
		t.Errorf("want gnnrun to choose MASTER_ADDR, reached through each host's eth0:\n%s", trained)
	} else {
		t.Log(m)
	}
	type accuracy struct {
		TestAcc float64 `json:"test_acc"`
		Epochs  int     `json:"epochs"`
		Ranks   int     `json:"ranks"`
	}
	var hosts3, host1 accuracy
	lastJSON(t, trained, &hosts3)
	single := mustRun(t, 6, append([]string{"train", filepath.Join(work, "parts")}, trainArgs...)...)
	lastJSON(t, single.stdout, &host1)
	t.Logf("test accuracy on 3 hosts %.3f, on 1 host %.3f", hosts3.TestAcc, host1.TestAcc)
	if hosts3.Epochs != 4 || hosts3.Ranks != 6 || hosts3.TestAcc < 0.85 || host1.TestAcc < 0.85 || math.Abs(hosts3.TestAcc-host1.TestAcc) > 0.05 {
		t.Errorf("3 hosts: %+v, 1 host: %+v; want 4 epochs on 6 ranks, both above 0.85 and within 0.05", hosts3, host1)
	}

	// The batches sampled on the 3 hosts, with the host's graph and
	// without, are the one-rank run's (the script's sample_args).
	ref := filepath.Join(t.TempDir(), "ref")
	mustRun(t, 1, "sample", filepath.Join(work, "parts"), "--fanouts", "4,3", "--batch-size", "32", "--seed", "5", "--dump", ref)
	want := filesOf(t, ref)
	for _, hg := range []string{"true", "false"} {
		m := regexp.MustCompile(`(?s)== sample host-graph=` + hg + `\n(.*)== sample host-graph=` + hg + ` exit=(\d+)`).FindStringSubmatch(trained)
		if m == nil || m[2] != "0" {
			t.Fatalf("sampling on 3 hosts with --host-graph=%s failed:\n%s", hg, trained)
		}
		checkDump(t, "3 hosts, --host-graph="+hg, want, filepath.Join(work, "dump-"+hg), 1, rankBatches(t, m[1]))
	}

	m := regexp.MustCompile(`== unreachable exit=(\d+) seconds=([\d.]+) baseline=([\d.]+) left=(\d+)`).FindStringSubmatch(forced)
	if m == nil {
		t.Fatalf("no result of the run with an unreachable MASTER_ADDR:\n%s", forced)
	}
	var secs, baseline float64
	fmt.Sscan(m[2], &secs)
	fmt.Sscan(m[3], &baseline)
	t.Logf("an unreachable MASTER_ADDR ended the job in %.2f s (gnnrun info: %.2f s)", secs, baseline)
	if m[1] == "0" || secs-baseline >= 10 || m[4] != "0" {
		t.Errorf("with an unreachable MASTER_ADDR: exit %s after %.2f s (info %.2f s), %s processes left; want a failure within 10 s more than info, none left:\n%s",
			m[1], secs, baseline, m[4], forced)
	}
	for _, want := range []string{"(yours): not every rank reached rank 0's gnnrun there", "gnnh2 (ranks 2, 3)", "set MASTER_ADDR to an address of gnnh1", "GLOO_SOCKET_IFNAME"} {
		if !strings.Contains(forced, want) {
			t.Errorf("the error does not say %q:\n%s", want, forced)
		}
	}
}

// TestLaunchersSlurmRequeue: on the one-node Slurm, launch/gnnrun.sbatch
// runs examples/graphsage.py under gnnrun train --checkpoint, with mpirun
// and with srun --mpi=pmix; after the first epoch its batch shell gets
// SIGUSR1 (scancel --signal=USR1 --batch, what --signal=B:USR1@T sends
// before the time limit). Each job must checkpoint, be requeued (Restarts
// 1), resume, end COMPLETED 0:0 and report the scores of an
// uninterrupted run from the same partitions.
func TestLaunchersSlurmRequeue(t *testing.T) {
	needPython(t, true)
	bin := gnnrunBin(t)
	parts := plantedDir(t, 16, "0.8")
	example, _ := filepath.Abs(filepath.Join("..", "..", "examples", "graphsage.py"))
	flags := []string{"--fanouts", "10,10", "--batch-size", "32", "--epochs", "6", "--seed", "2"}
	trainer := []string{pythonBin, example, "--hidden", "32", "--lr", "0.01"}
	type scores struct {
		ValAcc    float64 `json:"val_acc"`
		TestAcc   float64 `json:"test_acc"`
		BestEpoch int     `json:"best_epoch"`
		Epochs    int     `json:"epochs"`
	}
	var want scores
	lastJSON(t, mustRun(t, 2, append(append(append([]string{"train", parts}, flags...), "--"), trainer...)...).stdout, &want)
	t.Setenv("GNNRUN_TRAIN_FLAGS", strings.Join(flags, " "))
	args := append([]string{bin, parts, filepath.Join(t.TempDir(), "ck"), "--"}, trainer...)
	out := runCIScript(t, 6*time.Minute, "run-slurm-requeue.sh", args...)
	re := regexp.MustCompile(`(?ms)^== job (\d+) launcher=(\S+) state=(\S*) exit=(\S*) restarts=(\d*) signalled=(\d)\n(.*?)^== end job (\d+)$`)
	got := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		launcher, log := m[2], m[7]
		got[launcher] = true
		if m[3] != "COMPLETED" || m[4] != "0:0" || m[5] != "1" || m[6] != "1" {
			t.Errorf("%s: state %s, exit %s, restarts %s, signalled %s; want COMPLETED 0:0 after one requeue:\n%s", launcher, m[3], m[4], m[5], m[6], log)
			continue
		}
		for _, s := range []string{"checkpoint ckpt-", "(exit status 75)", "requeueing job", "resuming from"} {
			if !strings.Contains(log, s) {
				t.Errorf("%s: the job's log does not say %q:\n%s", launcher, s, log)
			}
		}
		var res scores
		lastJSON(t, log, &res)
		if res != want {
			t.Errorf("%s: requeued and resumed %+v; uninterrupted %+v", launcher, res, want)
		}
	}
	if !got["mpirun"] || !got["srun"] {
		t.Fatalf("want a job with each launcher:\n%s", out)
	}
}
