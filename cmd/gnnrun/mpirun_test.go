package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gnnrun/rank"
)

// The integration tests run the built gnnrun binary, alone and under a real
// mpirun, and compare results across rank counts.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// gnnrunBin builds the binary once per test run and returns its path.
func gnnrunBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gnnrun-test-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "gnnrun")
		args := []string{"build", "-o", binPath}
		if !rank.MPI {
			// A test binary built with -tags nompi tests the build without
			// MPI, on a machine that may have no MPI library to link.
			args = append(args, "-tags", "nompi")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// result is what one run of the binary printed and how it ended.
type result struct {
	stdout, stderr string
	err            error
	elapsed        time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("err=%v after %v\nstdout:\n%s\nstderr:\n%s", r.err, r.elapsed, r.stdout, r.stderr)
}

// needMPIRun skips the test when mpirun is missing (make deps installs it)
// or the binary under test is built without MPI.
func needMPIRun(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test skipped in -short mode")
	}
	if !rank.MPI {
		t.Skip("needs mpirun and several ranks: built with -tags nompi, gnnrun is a world of one and refuses to run under mpirun")
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found: run make deps to install OpenMPI")
	}
}

// mpirunArgs returns the mpirun command line for np ranks: root needs
// --allow-run-as-root, and more ranks than cores need --oversubscribe.
func mpirunArgs(np int) []string {
	args := []string{"-np", fmt.Sprint(np), "--oversubscribe"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	return append(args, "--mca", "btl", "self,vader,tcp")
}

// runGnnrun runs the binary with args on np ranks (np = 0: without mpirun)
// under a timeout, with extra environment variables.
func runGnnrun(t *testing.T, np int, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	return runBinary(t, gnnrunBin(t), np, timeout, env, args...)
}

// runBinary is runGnnrun for the gnnrun binary at bin.
func runBinary(t *testing.T, bin string, np int, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var cmd *exec.Cmd
	if np == 0 {
		cmd = exec.CommandContext(ctx, bin, args...)
	} else {
		needMPIRun(t)
		cmd = exec.CommandContext(ctx, "mpirun", append(append(mpirunArgs(np), bin), args...)...)
	}
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), err: err, elapsed: time.Since(start)}
	if ctx.Err() != nil {
		r.err = fmt.Errorf("timed out after %v: %w", timeout, err)
	}
	return r
}

// mustRun runs like runGnnrun and fails the test unless the run succeeded.
func mustRun(t *testing.T, np int, args ...string) result {
	t.Helper()
	r := runGnnrun(t, np, 5*time.Minute, nil, args...)
	if r.err != nil {
		t.Fatalf("gnnrun %s on %d ranks failed: %v", strings.Join(args, " "), np, r)
	}
	return r
}

// badInput is a command line that must fail, on np ranks (default 2),
// with stderr saying want.
type badInput struct {
	name string
	np   int
	args []string
	want string
}

// checkFailures runs every case after the common args: each must fail
// within 30 s saying its reason.
func checkFailures(t *testing.T, common []string, cases []badInput) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			np := c.np
			if np == 0 {
				np = 2
			}
			r := runGnnrun(t, np, time.Minute, nil, append(append([]string{}, common...), c.args...)...)
			if r.err == nil || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("want a failure saying %q, got %v", c.want, r)
			}
			if r.elapsed > 30*time.Second {
				t.Errorf("took %v to fail", r.elapsed)
			}
		})
	}
}
