// Package driver holds what the benchmark programs' drivers share: parsing
// comma-separated lists, building the binaries they run, and launching a
// binary on P ranks (mpirun, or the binary alone in a build without MPI).
package driver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"gnnrun/launch"
	"gnnrun/rank"
)

// Ints parses "1,2,4" into positive integers.
func Ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Build runs go build for each (output, package) pair, with the tag nompi
// when this program is built without MPI, so the binaries run where it
// runs.
func Build(pairs ...[2]string) error {
	for _, b := range pairs {
		args := []string{"build", "-o", b[0]}
		if !rank.MPI {
			args = append(args, "-tags", "nompi")
		}
		if out, err := exec.Command("go", append(args, b[1])...).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	return nil
}

// Ranks parses a comma-separated list of rank counts and refuses counts
// above one in a build without MPI (CheckRanks).
func Ranks(s string) ([]int, error) {
	ranks, err := Ints(s)
	if err == nil {
		err = CheckRanks(ranks)
	}
	return ranks, err
}

// Gnnrun makes the work directory dir and builds gnnrun into it, with the
// more (output, package) pairs; it returns gnnrun's path.
func Gnnrun(dir string, more ...[2]string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "gnnrun")
	return bin, Build(append([][2]string{{bin, "./cmd/gnnrun"}}, more...)...)
}

// Launch returns the command that runs args on np ranks under mpirun (over
// shared memory and TCP, oversubscribed: benchmarks run more ranks than a
// small machine has cores). A build without MPI (tag nompi) has only worlds
// of one (CheckRanks): it starts args directly.
func Launch(np int, args ...string) (*exec.Cmd, error) { return launchWith(np, nil, args) }

// launchWith is Launch with more mpirun options.
func launchWith(np int, more []launch.MPIRunOption, args []string) (*exec.Cmd, error) {
	if !rank.MPI {
		return exec.Command(args[0], args[1:]...), nil
	}
	opts := append([]launch.MPIRunOption{launch.NP(np), launch.Oversubscribe(true), launch.MCA("btl", "self,vader,tcp")}, more...)
	line, err := launch.MPIRun(args, opts...)
	if err != nil {
		return nil, err
	}
	return exec.Command(line[0], line[1:]...), nil
}

// Output runs args on np ranks and returns their stdout; stderr passes
// through.
func Output(np int, args ...string) ([]byte, error) { return output(np, nil, args) }

// OutputSpread is Output with every rank given its share of the machine's
// cores (launch.SpreadCores), where mpirun would bind each to one: for
// programs that run several threads of work per rank.
func OutputSpread(np int, args ...string) ([]byte, error) {
	return output(np, []launch.MPIRunOption{launch.SpreadCores()}, args)
}

// OutputOnCore is Output of one rank bound to the given core: on a machine
// whose cores differ in speed (a VM's vCPUs on a busy host), the one-rank
// reference of a P-rank run is measured on each of the cores the P ranks
// run on.
func OutputOnCore(core int, args ...string) ([]byte, error) {
	return output(1, []launch.MPIRunOption{launch.OnCores(core)}, args)
}

func output(np int, more []launch.MPIRunOption, args []string) ([]byte, error) {
	cmd, err := launchWith(np, more, args)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	return out, nil
}

// CheckRanks refuses rank counts above one in a build without MPI, before
// any work.
func CheckRanks(nps []int) error {
	for _, np := range nps {
		if np != 1 && !rank.MPI {
			return fmt.Errorf("%d ranks asked for, but this build has no MPI (tag nompi): use --np 1", np)
		}
	}
	return nil
}

// GenRanks is the rank count that prepares benchmark graphs: two share the
// work where there is MPI; gen, partition and dispatch give the same
// files at any count.
func GenRanks() int {
	if rank.MPI {
		return 2
	}
	return 1
}

// PartitionedFile makes, once, the assignment of the graph file in (any
// input partition reads) into k parts balanced on balance, and its
// partition directory, under dir and named name, each step skipped when
// its output exists; it returns the partition directory.
func PartitionedFile(bin, dir, name, in string, k int, balance string) (string, error) {
	if _, err := os.Stat(in); err != nil {
		return "", fmt.Errorf("the real graph: %w", err)
	}
	asg, parts := assignmentDirs(filepath.Join(dir, name), k, balance)
	return parts, runSteps([]step{
		{filepath.Join(asg, "partition_meta.json"), []string{"partition", "--in", in, "--parts", fmt.Sprint(k), "--balance", balance, "--out", asg}},
		{filepath.Join(parts, "prepared"), []string{"dispatch", "--in", in, "--assignment", asg, "--out", parts}},
	}, bin)
}

// assignmentDirs names the assignment and partition directories of graph
// g (a path) in k parts balanced on balance.
func assignmentDirs(g string, k int, balance string) (asg, parts string) {
	by := strings.ReplaceAll(balance, ",", "+")
	return fmt.Sprintf("%s-asg%d-%s", g, k, by), fmt.Sprintf("%s-parts%d-%s", g, k, by)
}

// step is one gnnrun command of a preparation, skipped when done exists
// (a file the command writes, or else a marker runSteps writes after it).
type step struct {
	done string
	args []string
}

// runSteps runs bin with each step's arguments whose output is missing.
func runSteps(steps []step, bin string) error {
	for _, st := range steps {
		if _, err := os.Stat(st.done); err == nil {
			continue
		}
		fmt.Fprintf(os.Stderr, "gnnrun %s\n", strings.Join(st.args, " "))
		if _, err := Output(GenRanks(), append([]string{bin}, st.args...)...); err != nil {
			return err
		}
		if _, err := os.Stat(st.done); err != nil { // a marker of the step's own
			if err := os.WriteFile(st.done, nil, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// Partitioned makes, once, R-MAT scale sc under dir (gnnrun gen with
// --classes 10 and the extra genFlags), its assignment into k parts
// balanced on the constraints balance (partition's --balance list), and
// its partition directory, each step skipped when its output exists; it
// returns the partition directory. name tells graphs of different
// genFlags apart.
func Partitioned(bin, dir, name string, sc, k int, balance string, genFlags ...string) (string, error) {
	g := filepath.Join(dir, fmt.Sprintf("rmat%d%s", sc, name))
	asg, parts := assignmentDirs(g, k, balance)
	return parts, runSteps([]step{
		{filepath.Join(g, "metadata.json"), append([]string{"gen", "--scale", fmt.Sprint(sc), "--classes", "10", "--out", g}, genFlags...)},
		{filepath.Join(asg, "partition_meta.json"), []string{"partition", "--in", g, "--parts", fmt.Sprint(k), "--balance", balance, "--out", asg}},
		{filepath.Join(parts, fmt.Sprintf("rmat%d.json", sc)), []string{"dispatch", "--in", g, "--assignment", asg, "--out", parts}},
	}, bin)
}
