package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
