package launch

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

//go:embed gnnrun.sbatch
var sbatchScript string

// SbatchScript returns launch/gnnrun.sbatch, the batch script Sbatch submits:
// write it to a file to submit it on a machine without the source tree.
func SbatchScript() string { return sbatchScript }

// Launcher is how the batch script starts the ranks.
type Launcher int

const (
	// Srun starts the ranks with srun --mpi=pmix.
	Srun Launcher = iota
	// Mpirun starts them with OpenMPI's mpirun inside the allocation.
	Mpirun
)

var launcherNames = []string{"srun", "mpirun"}

// String returns the launcher's name as GNNRUN_LAUNCHER spells it.
func (l Launcher) String() string {
	if l >= 0 && int(l) < len(launcherNames) {
		return launcherNames[l]
	}
	return "Launcher(" + strconv.Itoa(int(l)) + ")"
}

// ParseLauncher parses "srun" or "mpirun".
func ParseLauncher(s string) (Launcher, error) {
	for i, n := range launcherNames {
		if s == n {
			return Launcher(i), nil
		}
	}
	return 0, fmt.Errorf("launch: launcher %q: want srun or mpirun", s)
}

// SbatchOption configures Sbatch; options are checked when applied.
type SbatchOption func(*sbatchOptions) error

type sbatchOptions struct {
	flags    []string // sbatch flags in the order given
	launcher Launcher
	binary   string
	info     *bool
}

func (o *sbatchOptions) setDefault() { o.launcher = Srun }

func (o *sbatchOptions) flag(name, value string) {
	prefix := "--" + name + "="
	for i, f := range o.flags {
		if strings.HasPrefix(f, prefix) {
			o.flags[i] = prefix + value
			return
		}
	}
	o.flags = append(o.flags, prefix+value)
}

func positive(name string, n int) error {
	if n < 1 {
		return fmt.Errorf("launch: %s must be at least 1, got %d", name, n)
	}
	return nil
}

// Nodes asks for n nodes (--nodes).
func Nodes(n int) SbatchOption {
	return func(o *sbatchOptions) error {
		if err := positive("nodes", n); err != nil {
			return err
		}
		o.flag("nodes", strconv.Itoa(n))
		return nil
	}
}

// TasksPerNode sets the ranks per node (--ntasks-per-node): the GPUs of a
// node, for one rank per GPU.
func TasksPerNode(n int) SbatchOption {
	return func(o *sbatchOptions) error {
		if err := positive("tasks per node", n); err != nil {
			return err
		}
		o.flag("ntasks-per-node", strconv.Itoa(n))
		return nil
	}
}

// Tasks sets the total number of ranks (--ntasks).
func Tasks(n int) SbatchOption {
	return func(o *sbatchOptions) error {
		if err := positive("tasks", n); err != nil {
			return err
		}
		o.flag("ntasks", strconv.Itoa(n))
		return nil
	}
}

// GPUsPerTask sets --gpus-per-task; 0 runs on nodes without GPUs (the
// script asks for 1 by default).
func GPUsPerTask(n int) SbatchOption {
	return func(o *sbatchOptions) error {
		if n < 0 {
			return fmt.Errorf("launch: GPUs per task must be at least 0, got %d", n)
		}
		o.flag("gpus-per-task", strconv.Itoa(n))
		return nil
	}
}

// TimeLimit sets the job's wall-time limit (--time), rounded up to whole
// minutes as Slurm counts them.
func TimeLimit(d time.Duration) SbatchOption {
	return func(o *sbatchOptions) error {
		if d <= 0 {
			return fmt.Errorf("launch: time limit must be positive, got %v", d)
		}
		m := int((d + time.Minute - 1) / time.Minute)
		o.flag("time", fmt.Sprintf("%d-%02d:%02d:00", m/(24*60), m/60%24, m%60))
		return nil
	}
}

var slurmWord = regexp.MustCompile(`^[A-Za-z0-9_.%/\-]+$`)

func word(what, s string) error {
	if !slurmWord.MatchString(s) {
		return fmt.Errorf("launch: %s %q: want letters, digits and _ . %% / -", what, s)
	}
	return nil
}

// JobName sets --job-name.
func JobName(s string) SbatchOption {
	return func(o *sbatchOptions) error {
		if err := word("job name", s); err != nil {
			return err
		}
		o.flag("job-name", s)
		return nil
	}
}

// Partition sets --partition.
func Partition(s string) SbatchOption {
	return func(o *sbatchOptions) error {
		if err := word("partition", s); err != nil {
			return err
		}
		o.flag("partition", s)
		return nil
	}
}

// Output sets the job's log file (--output); %j is the job ID.
func Output(pattern string) SbatchOption {
	return func(o *sbatchOptions) error {
		if err := word("output", pattern); err != nil {
			return err
		}
		o.flag("output", pattern)
		return nil
	}
}

// Chdir sets the job's working directory (--chdir).
func Chdir(dir string) SbatchOption {
	return func(o *sbatchOptions) error {
		if err := word("directory", dir); err != nil {
			return err
		}
		o.flag("chdir", dir)
		return nil
	}
}

// Parsable makes sbatch print only the job ID (--parsable).
func Parsable() SbatchOption {
	return func(o *sbatchOptions) error {
		for _, f := range o.flags {
			if f == "--parsable" {
				return nil
			}
		}
		o.flags = append(o.flags, "--parsable")
		return nil
	}
}

// Via chooses how the script starts the ranks (GNNRUN_LAUNCHER).
func Via(l Launcher) SbatchOption {
	return func(o *sbatchOptions) error {
		if l != Srun && l != Mpirun {
			return fmt.Errorf("launch: unknown launcher %v", l)
		}
		o.launcher = l
		return nil
	}
}

// Binary sets the gnnrun binary the job runs (GNNRUN); it must be an
// absolute path the nodes can reach.
func Binary(path string) SbatchOption {
	return func(o *sbatchOptions) error {
		if !strings.HasPrefix(path, "/") {
			return fmt.Errorf("launch: gnnrun binary %q must be an absolute path", path)
		}
		if err := word("gnnrun binary", path); err != nil {
			return err
		}
		o.binary = path
		return nil
	}
}

// Info runs (true, the script's default) or skips `gnnrun info` before the
// command (GNNRUN_INFO).
func Info(on bool) SbatchOption {
	return func(o *sbatchOptions) error {
		o.info = &on
		return nil
	}
}

// Sbatch returns the command line (sbatch first) that submits script with
// command as gnnrun's command line. Script variables travel in --export,
// which keeps the submitting environment (ALL) and adds GNNRUN_LAUNCHER and,
// when set, GNNRUN and GNNRUN_INFO.
func Sbatch(script string, command []string, opts ...SbatchOption) ([]string, error) {
	if script == "" {
		return nil, errors.New("launch: sbatch needs a batch script")
	}
	if len(command) == 0 || command[0] == "" {
		return nil, errors.New("launch: sbatch needs a gnnrun command")
	}
	var o sbatchOptions
	o.setDefault()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	export := "ALL,GNNRUN_LAUNCHER=" + o.launcher.String()
	if o.binary != "" {
		export += ",GNNRUN=" + o.binary
	}
	if o.info != nil {
		export += ",GNNRUN_INFO=" + map[bool]string{true: "1", false: "0"}[*o.info]
	}
	args := append([]string{"sbatch"}, o.flags...)
	args = append(args, "--export="+export, script)
	return append(args, command...), nil
}
