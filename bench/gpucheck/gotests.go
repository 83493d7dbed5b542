package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// testPackages are the packages whose GPU tests step 1 runs, from the
// test binaries make gpu-check-build leaves beside gnnrun.
var testPackages = []string{"cuda", "sampler"}

// gpuTests is step 1: each package's tests whose names say GPU, run by
// its prebuilt test binary in the package's directory. On a GPU host they
// must run: one that skips fails the step. A missing binary is skipped,
// saying so.
func (c *checker) gpuTests(st *Step) error {
	if c.o.dryRun {
		st.skip("a dry run: without a GPU the GPU tests skip")
		return nil
	}
	var errs []error
	ran := 0
	for _, pkg := range testPackages {
		bin := filepath.Join(c.o.tests, pkg+".test")
		if _, err := os.Stat(bin); err != nil {
			st.note("%s is missing, its tests are skipped: make gpu-check-build builds it where Go is", bin)
			continue
		}
		ran++
		if err := c.runTests(st, pkg, bin); err != nil {
			errs = append(errs, err)
		}
	}
	if ran == 0 {
		st.skip("no test binary in %s (make gpu-check-build builds them where Go is)", c.o.tests)
	}
	return errors.Join(errs...)
}

// runTests runs one test binary's GPU tests and records them.
func (c *checker) runTests(st *Step, pkg, bin string) error {
	dir, exe := c.repoPath(pkg), bin
	if _, err := os.Stat(dir); err != nil {
		dir = "" // tests that read files of their package would fail, and say so
	} else if a, err := filepath.Abs(bin); err == nil {
		if d, err := filepath.Abs(dir); err == nil {
			if rel, err := filepath.Rel(d, a); err == nil {
				exe = rel
			}
		}
	}
	if !strings.Contains(exe, "/") {
		exe = "./" + exe
	}
	// The binary's own timeout comes first: its panic shows where it hung.
	out, err := c.run(st, command{args: []string{exe, "-test.v", "-test.count", "1", "-test.run", "GPU",
		"-test.timeout", (c.o.timeout * 9 / 10).String()}, dir: dir, log: "1-" + pkg})
	t := parseTests(out)
	st.detail(pkg+".test", t)
	st.Figures = append(st.Figures, fig(pkg+".test: GPU tests passed", float64(len(t.Passed)), "").
		withNote("%d failed, %d skipped", len(t.Failed), len(t.Skipped)))
	switch {
	case err != nil:
		return fmt.Errorf("%s.test: tests failed %q: %w", pkg, t.Failed, err)
	case len(t.Skipped) > 0:
		return fmt.Errorf("%s.test: %d tests skipped on a GPU host, where they must run: %s", pkg, len(t.Skipped), strings.Join(t.Skipped, ", "))
	case len(t.Passed) == 0:
		st.note("%s.test has no tests named GPU", pkg)
	}
	return nil
}

// testRuns are the tests of one run of a test binary, by outcome.
type testRuns struct {
	Passed  []string `json:"passed"`
	Failed  []string `json:"failed"`
	Skipped []string `json:"skipped"`
}

var testLine = regexp.MustCompile(`(?m)^\s*--- (PASS|FAIL|SKIP): (\S+)`)

// parseTests reads the outcome of every test and subtest from a test
// binary's -test.v output.
func parseTests(out []byte) testRuns {
	var t testRuns
	for _, m := range testLine.FindAllSubmatch(out, -1) {
		name := string(m[2])
		switch string(m[1]) {
		case "PASS":
			t.Passed = append(t.Passed, name)
		case "FAIL":
			t.Failed = append(t.Failed, name)
		case "SKIP":
			t.Skipped = append(t.Skipped, name)
		}
	}
	return t
}
