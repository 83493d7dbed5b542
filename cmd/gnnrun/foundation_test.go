package main

import (
	"strings"
	"testing"
	"time"
)

func TestSelftestAlone(t *testing.T) {
	r := mustRun(t, 0, "selftest")
	if !strings.Contains(r.stdout, "selftest passed") || !strings.Contains(r.stdout, "on 1 ranks") {
		t.Fatalf("unexpected output: %v", r)
	}
}

func TestSelftestUnderMPIRun(t *testing.T) {
	for _, np := range []int{1, 2, 4} {
		r := mustRun(t, np, "selftest", "--scales", "0,3,1000")
		if !strings.Contains(r.stdout, "selftest passed") {
			t.Fatalf("np=%d: %v", np, r)
		}
	}
}

func TestInfoListsEveryRank(t *testing.T) {
	r := mustRun(t, 4, "info")
	if !strings.Contains(r.stdout, "world: 4 ranks on 1 hosts") || !strings.Contains(r.stdout, "MPI_THREAD_MULTIPLE") {
		t.Fatalf("unexpected info: %v", r)
	}
	if rows := parseInfo(t, r.stdout); len(rows) != 4 {
		t.Fatalf("want 4 rank lines, got %v", r)
	}
	if n := strings.Count(r.stdout, "\n      cuda: "); n != 4 {
		t.Fatalf("want a cuda line under each of the 4 ranks, got %d: %v", n, r)
	}
}

// TestFailFast injects a failure on rank 2 of 4 while the others run a long
// soak; the job must end non-zero in seconds and name the rank.
func TestFailFast(t *testing.T) {
	for _, kind := range []string{"error", "panic", "exit"} {
		t.Run(kind, func(t *testing.T) {
			r := runGnnrun(t, 4, time.Minute, []string{"GNNRUN_FAULT=2:" + kind + ":selftest"}, "selftest", "--soak", "60s", "--scales", "10")
			if r.err == nil {
				t.Fatalf("job with a failing rank exited 0: %v", r)
			}
			if r.elapsed > 10*time.Second {
				t.Fatalf("job took %v to fail", r.elapsed)
			}
			if kind != "exit" && !strings.Contains(r.stderr, "gnnrun: rank 2/4") {
				t.Fatalf("stderr does not name rank 2/4: %v", r)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	r := runGnnrun(t, 0, time.Minute, nil, "no-such-command")
	if r.err == nil || !strings.Contains(r.stderr, `unknown command "no-such-command"`) {
		t.Fatalf("unknown command: %v", r)
	}
	r = runGnnrun(t, 0, time.Minute, nil, "selftest", "--no-such-flag")
	if r.err == nil || !strings.Contains(r.stderr, "unknown flag") {
		t.Fatalf("unknown flag: %v", r)
	}
	r = mustRun(t, 0, "help", "selftest")
	if !strings.Contains(r.stdout, "--soak") {
		t.Fatalf("help lacks flags: %v", r)
	}
}
