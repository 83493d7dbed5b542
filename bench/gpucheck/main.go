// Command gpucheck proves gnnrun on a GPU node, in one run from prebuilt
// binaries (make gpu-check): a GPU machine may have CUDA, PyTorch and
// Python but no Go toolchain, no MPI and no registry, so everything it
// runs is built beforehand (make gpu-check-build: gnnrun without MPI but
// with cgo, this program, and the test binaries of ./cuda and ./sampler)
// and copied there with the repository.
//
// Usage (from the repository root):
//
//	bin/gpucheck --gnnrun bin/gnnrun-nompi-cuda --python python3 --out bench/results/gpu-check
//
// It runs these steps in order, each recorded as pass, fail or skipped
// with its figures and the commands that reproduce it:
//
//  0. probe: the GPU as gnnrun's driver layer sees it, nvidia-smi -L,
//     PyTorch and whether it sees CUDA;
//  1. the CUDA backend's GPU tests (cuda.test and sampler.test, -test.run
//     GPU): a test that skips on a GPU host fails the step;
//  2. gather bandwidth in process: GatherPinned (zero-copy rows from
//     registered host memory) against cuMemcpyHtoD of as many contiguous
//     bytes, ScatterRows and CopyRows, at several row widths, every
//     output checked once;
//  3. gnnrun loader --device cuda --verify on a generated graph;
//  4. gnnrun train --device cuda: the trainer's persistent GPU tensor
//     checked batch by batch (cmd/gnnrun/testdata/api_trainer.py with
//     MIRROR=cuda), then examples/graphsage.py on the GPU against the
//     pipeline's generation alone, and examples/link.py, rgcn.py (and
//     pyg_sage.py where PyTorch Geometric is installed) on the GPU;
//  5. GPU neighbour sampling (cuda.GPUGraph) against the CPU sampler's
//     edges/s on the same graph.
//
// It writes <out>.json and <out>.md (a table: step, result, figure, goal,
// ratio) and exits 1 when a step failed. A missed goal does not fail a
// step (the table marks it): the steps fail on wrong output or a failed
// command. Without a usable GPU it stops at step 0, saying how to run it
// on a GPU node, and writes nothing; --dry-run-host runs instead what makes
// sense on the host backend (the gather through cuda.Host, loader --device
// host, the trainer's CPU mirror), so the program itself can be tested
// anywhere.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// options are gpucheck's flags.
type options struct {
	gnnrun, python, out, work, tests, repo string
	steps                                  []int
	dryRun                                 bool
	scale                                  int
	tableMiB, gatherMiB                    int
	timeout                                time.Duration
}

// setDefault fills what the flags left to gpucheck: the sizes of the
// gather (smaller on the host backend), where the test binaries are, and
// the outputs of a dry run (kept apart from a GPU's results).
func (o *options) setDefault() {
	if o.tableMiB == 0 {
		o.tableMiB = 1024
		if o.dryRun {
			o.tableMiB = 256
		}
	}
	if o.gatherMiB == 0 {
		o.gatherMiB = 256
		if o.dryRun {
			o.gatherMiB = 64
		}
	}
	if o.tests == "" {
		o.tests = filepath.Dir(o.gnnrun)
	}
	if o.out == "" {
		o.out = "bench/results/gpu-check"
		if o.dryRun {
			o.out = "bench/results/tmp/gpu-check-dry-run"
		}
	}
	if o.work == "" {
		o.work = "bench/results/tmp/gpu-check"
	}
}

// validate says what is wrong with the options.
func (o *options) validate() error {
	switch {
	case o.scale < 8 || o.scale > 24:
		return fmt.Errorf("--scale %d: the graph's scale must be 8 to 24", o.scale)
	case o.tableMiB < 1 || o.gatherMiB < 1 || o.tableMiB > 64<<10:
		return fmt.Errorf("--table-mib must be 1 to 65536 (its rows are numbered in int32), --gather-mib at least 1")
	case o.gatherMiB > o.tableMiB:
		return fmt.Errorf("--gather-mib %d is more than the table's --table-mib %d", o.gatherMiB, o.tableMiB)
	case o.timeout <= 0:
		return fmt.Errorf("--timeout must be positive")
	}
	for _, s := range o.steps {
		if s < 0 || s >= len(steps) {
			return fmt.Errorf("--steps: there is no step %d (0 to %d)", s, len(steps)-1)
		}
	}
	return nil
}

func main() {
	var o options
	stepList := flag.String("steps", "0,1,2,3,4,5", "the steps to run (step 0, the probe, always runs)")
	flag.StringVar(&o.gnnrun, "gnnrun", "bin/gnnrun-nompi-cuda", "the gnnrun binary (built with cgo, make gpu-check-build)")
	flag.StringVar(&o.python, "python", "/usr/bin/python3", "the trainers' Python, with PyTorch (CUDA) and NumPy")
	flag.StringVar(&o.out, "out", "", "results prefix: <out>.json and <out>.md (default bench/results/gpu-check; a dry run's bench/results/tmp/gpu-check-dry-run)")
	flag.StringVar(&o.work, "work", "", "work directory: the graph, reports and logs (default bench/results/tmp/gpu-check)")
	flag.StringVar(&o.tests, "tests", "", "the directory of cuda.test and sampler.test (default: --gnnrun's)")
	flag.StringVar(&o.repo, "repo", ".", "the repository (cuda/, sampler/, examples/, cmd/gnnrun/testdata/)")
	flag.BoolVar(&o.dryRun, "dry-run-host", false, "run what makes sense without a GPU, on the host backend (to test gpucheck itself)")
	flag.IntVar(&o.scale, "scale", 16, "R-MAT scale of the graph of steps 3 to 5")
	flag.IntVar(&o.tableMiB, "table-mib", 0, "step 2: MiB of the host table rows are gathered from (default 1024, 256 in a dry run; less when memory is short)")
	flag.IntVar(&o.gatherMiB, "gather-mib", 0, "step 2: MiB gathered per operation (default 256, 64 in a dry run)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "the longest one command of a step may run")
	flag.Parse()
	var err error
	if o.steps, err = parseSteps(*stepList); err == nil {
		o.setDefault()
		err = o.validate()
	}
	if err != nil || flag.NArg() > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected arguments %q", flag.Args())
		}
		fmt.Fprintln(os.Stderr, "gpucheck:", err)
		os.Exit(2)
	}
	os.Exit(run(o))
}

// run runs the steps and writes the report; it returns the exit status.
func run(o options) int {
	c, err := newChecker(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpucheck:", err)
		return 1
	}
	rep := c.check()
	if !o.dryRun && rep.Steps[0].Result != Pass {
		fmt.Fprint(os.Stderr, noGPUMessage(rep.Steps[0], o))
		return 1
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err == nil {
		err = rep.write(o.out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpucheck:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "\n%s", summary(rep))
	fmt.Fprintf(os.Stderr, "gpucheck: wrote %s.json and %s.md\n", o.out, o.out)
	if !rep.Passed {
		return 1
	}
	return 0
}

func parseSteps(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("--steps: %q is not a step number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// summary is a line per step, for the terminal.
func summary(r *Report) string {
	var b strings.Builder
	for _, st := range r.Steps {
		why := ""
		if st.Result != Pass {
			why, _, _ = strings.Cut(st.Reason, "\n")
			why = ": " + why
		}
		fmt.Fprintf(&b, "step %d %-44s %s%s\n", st.Number, st.Name, st.Result, why)
	}
	for _, g := range r.GoalsMissed {
		fmt.Fprintf(&b, "goal missed: %s\n", g)
	}
	return b.String()
}

// noGPUMessage says there is no GPU here, why, and how to run the check
// on a GPU node.
func noGPUMessage(probe Step, o options) string {
	found := ""
	for _, n := range probe.Notes {
		found += "\n    " + n
	}
	return fmt.Sprintf(`
gpucheck: no usable GPU on this host, so nothing was checked (step 0):
    %s%s
make gpu-check proves gnnrun on a GPU node. Run it there, from the repository root:
  - with Go on that node: make gpu-check [PYTHON=<a python3 with CUDA PyTorch and NumPy>]
  - without Go: build here with make gpu-check-build, copy the repository with its bin/
    (bin/gnnrun-nompi-cuda, bin/gpucheck, bin/cuda.test, bin/sampler.test; they need
    glibc 2.34 or later, no MPI) to the node, and run make gpu-check there, or without
    make: bin/gpucheck --gnnrun %s --python <python3> --out %s
To test gpucheck itself without a GPU: bin/gpucheck --dry-run-host (results in bench/results/tmp/).
`, strings.ReplaceAll(probe.Reason, "\n", "\n    "), found, o.gnnrun, o.out)
}

// stepFunc runs one step, filling st; an error fails the step.
type stepFunc func(c *checker, st *Step) error

// steps are gpucheck's steps, in order.
var steps = []struct {
	name string
	run  stepFunc
}{
	{"probe", (*checker).probe},
	{"GPU tests of the CUDA backend", (*checker).gpuTests},
	{"gather bandwidth", (*checker).gather},
	{"loader on the device, --verify", (*checker).loader},
	{"the trainer's device tensor; GraphSAGE", (*checker).trainer},
	{"GPU sampling against the CPU sampler", (*checker).sampling},
}

// checker holds what the steps share.
type checker struct {
	o    options
	work string
	rep  *Report
	// Filled by the steps, for the later ones.
	gpu       bool   // step 0 found a usable GPU (never in a dry run)
	torchCUDA bool   // the Python's PyTorch sees a CUDA device
	torchErr  string // why PyTorch is not usable, "" when it is
	g         *graph // the graph of steps 3 to 5, made once
}

func newChecker(o options) (*checker, error) {
	host, _ := os.Hostname()
	c := &checker{o: o, work: o.work, rep: &Report{Host: host, Started: time.Now().Format(time.RFC3339), DryRun: o.dryRun,
		Gnnrun: o.gnnrun, Python: o.python}}
	// The work directory's outputs are this run's: earlier ones go.
	for _, d := range []string{"graph", "assignment", "parts", "logs", "reports", "trainer"} {
		if err := os.RemoveAll(filepath.Join(o.work, d)); err != nil {
			return nil, err
		}
	}
	return c, os.MkdirAll(o.work, 0o755)
}

// check runs every step in order and returns the report. Without a usable
// GPU (and not a dry run) it stops after step 0.
func (c *checker) check() *Report {
	for i, s := range steps {
		st := Step{Number: i, Name: s.name, Commands: []string{}}
		switch {
		case i > 0 && !c.o.dryRun && !c.gpu:
			st.skip("no usable GPU (step 0)")
		case i > 0 && !slices.Contains(c.o.steps, i):
			st.skip("not among --steps")
		default:
			start := time.Now()
			if err := s.run(c, &st); err != nil {
				st.Result, st.Reason = Fail, err.Error()
			} else if st.Result == "" {
				st.Result = Pass
			}
			st.Seconds = time.Since(start).Seconds()
			fmt.Fprintf(os.Stderr, "gpucheck: step %d (%s): %s\n", i, s.name, st.Result)
		}
		c.rep.Steps = append(c.rep.Steps, st)
	}
	c.rep.finish()
	return c.rep
}

// gnnrunCmd is a gnnrun command line.
func (c *checker) gnnrunCmd(log string, args ...string) command {
	return command{args: append([]string{c.o.gnnrun}, args...), log: log}
}

// repoPath is a path in the repository.
func (c *checker) repoPath(p string) string { return filepath.Join(c.o.repo, p) }

// reproduce is the gpucheck line that runs only step n again.
func (c *checker) reproduce(n int) string {
	s := fmt.Sprintf("bin/gpucheck --steps %d --gnnrun %s --python %s --table-mib %d --gather-mib %d", n,
		quote(c.o.gnnrun), quote(c.o.python), c.o.tableMiB, c.o.gatherMiB)
	if c.o.dryRun {
		s += " --dry-run-host"
	}
	return s
}
