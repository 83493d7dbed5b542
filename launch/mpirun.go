package launch

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// MPIRunOption configures MPIRun. Options are checked when applied, so a bad
// value is reported by the option that carried it.
type MPIRunOption func(*mpirunOptions) error

type mpirunOptions struct {
	program       string
	np            int
	hostfile      *Hostfile
	oversubscribe *bool // nil: decide from np and the slots
	asRoot        bool
	cores         int
	mca           [][2]string
	export        []string
	spread        bool
	cpuSet        []int
}

func (o *mpirunOptions) setDefault() {
	o.program = "mpirun"
	o.asRoot = os.Geteuid() == 0
	o.cores = runtime.NumCPU()
}

// SpreadCores gives every rank its share of the machine's cores (at
// least one; unbound when there are more ranks than cores): mpirun binds
// each rank to one core by default, which leaves a lone rank's other cores
// idle. Without a hostfile only (the hosts' cores are not known here).
func SpreadCores() MPIRunOption {
	return func(o *mpirunOptions) error {
		o.spread = true
		return nil
	}
}

// OnCores binds the ranks to the given cores, one core a rank in rank
// order (mpirun's --cpu-set): a one-rank job pinned to a core other than
// the first, to measure each core of a machine whose cores differ in
// speed. Without a hostfile only.
func OnCores(cores ...int) MPIRunOption {
	return func(o *mpirunOptions) error {
		if len(cores) == 0 {
			return errors.New("launch: OnCores needs at least one core")
		}
		for _, c := range cores {
			if c < 0 {
				return fmt.Errorf("launch: core %d is negative", c)
			}
		}
		o.cpuSet = cores
		return nil
	}
}

// NP sets the number of ranks. Without it, a hostfile whose hosts all give
// slots= starts one rank per slot.
func NP(n int) MPIRunOption {
	return func(o *mpirunOptions) error {
		if n < 1 {
			return fmt.Errorf("launch: np must be at least 1, got %d", n)
		}
		o.np = n
		return nil
	}
}

// WithHostfile runs the ranks on the hosts of hf, which must have been read
// from a file (mpirun reads it again by its path).
func WithHostfile(hf *Hostfile) MPIRunOption {
	return func(o *mpirunOptions) error {
		if hf == nil || hf.Path == "" {
			return errors.New("launch: the hostfile has no path: write it to a file first")
		}
		o.hostfile = hf
		return nil
	}
}

// Oversubscribe allows (true) or forbids (false) more ranks than slots. Left
// unset, MPIRun allows it on a single machine with more ranks than cores
// (tests on a laptop or a 2-core CI machine) and forbids it with a hostfile,
// where more ranks than slots is more likely a mistake than a wish.
func Oversubscribe(on bool) MPIRunOption {
	return func(o *mpirunOptions) error {
		o.oversubscribe = &on
		return nil
	}
}

// RunAsRoot adds --allow-run-as-root (true) or not (false). The default is
// true exactly when the process runs as root, since mpirun refuses root
// without it.
func RunAsRoot(on bool) MPIRunOption {
	return func(o *mpirunOptions) error {
		o.asRoot = on
		return nil
	}
}

// Program sets the launcher to run, "mpirun" by default (a path to another
// OpenMPI's mpirun, or orterun).
func Program(path string) MPIRunOption {
	return func(o *mpirunOptions) error {
		if path == "" {
			return errors.New("launch: empty mpirun program")
		}
		o.program = path
		return nil
	}
}

// MCA adds "--mca key value"; later values of a key replace earlier ones.
func MCA(key, value string) MPIRunOption {
	return func(o *mpirunOptions) error {
		if !mcaKey.MatchString(key) {
			return fmt.Errorf("launch: MCA parameter %q: want letters, digits and '_'", key)
		}
		if value == "" {
			return fmt.Errorf("launch: MCA parameter %s: empty value", key)
		}
		for i := range o.mca {
			if o.mca[i][0] == key {
				o.mca[i][1] = value
				return nil
			}
		}
		o.mca = append(o.mca, [2]string{key, value})
		return nil
	}
}

var (
	mcaKey  = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(=.*)?$`)
)

// RshAgent makes mpirun reach other hosts through agent instead of ssh
// (plm_rsh_agent); agent must be an absolute path, because the daemons it
// starts call it again to reach further hosts.
func RshAgent(agent string) MPIRunOption {
	return func(o *mpirunOptions) error {
		if !strings.HasPrefix(agent, "/") {
			return fmt.Errorf("launch: rsh agent %q must be an absolute path", agent)
		}
		return MCA("plm_rsh_agent", agent)(o)
	}
}

// TCP restricts MPI to TCP between hosts (and shared memory within one),
// over the interfaces or subnets in include ("eth0" or "10.0.0.0/24"),
// for both the MPI data (btl) and mpirun's own wiring (oob).
func TCP(include string) MPIRunOption {
	return func(o *mpirunOptions) error {
		if include == "" || strings.ContainsAny(include, " \t") {
			return fmt.Errorf("launch: TCP interfaces %q: want a name or subnet list without blanks", include)
		}
		for _, kv := range [][2]string{{"btl", "self,vader,tcp"}, {"btl_tcp_if_include", include}, {"oob_tcp_if_include", include}} {
			if err := MCA(kv[0], kv[1])(o); err != nil {
				return err
			}
		}
		return nil
	}
}

// Export passes environment variables to the ranks on every host (-x NAME or
// -x NAME=VALUE): ssh starts remote daemons with an almost empty environment.
func Export(vars ...string) MPIRunOption {
	return func(o *mpirunOptions) error {
		for _, v := range vars {
			if !envName.MatchString(v) {
				return fmt.Errorf("launch: export %q: want NAME or NAME=VALUE", v)
			}
			o.export = append(o.export, v)
		}
		return nil
	}
}

// MPIRun returns the command line (program first) that starts command on
// every rank with OpenMPI's mpirun. It fails when the options contradict each
// other: no rank count and no slots to count, more ranks than the hostfile's
// slots without Oversubscribe(true), more than its max_slots at all.
func MPIRun(command []string, opts ...MPIRunOption) ([]string, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, errors.New("launch: mpirun needs a command to run")
	}
	var o mpirunOptions
	o.setDefault()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	over, err := o.decideOversubscribe()
	if err != nil {
		return nil, err
	}
	args := []string{o.program}
	if o.np > 0 {
		args = append(args, "-np", strconv.Itoa(o.np))
	}
	if o.hostfile != nil {
		args = append(args, "--hostfile", o.hostfile.Path)
	}
	if over {
		args = append(args, "--oversubscribe")
	}
	if o.asRoot {
		args = append(args, "--allow-run-as-root")
	}
	if o.spread && o.hostfile == nil {
		if pe := o.cores / o.np; pe >= 1 {
			args = append(args, "--map-by", fmt.Sprintf("slot:PE=%d", pe))
		} else {
			args = append(args, "--bind-to", "none")
		}
	}
	if len(o.cpuSet) > 0 {
		if o.hostfile != nil || o.spread {
			return nil, errors.New("launch: OnCores binds ranks on this machine: not with a hostfile or SpreadCores")
		}
		set := make([]string, len(o.cpuSet))
		for i, c := range o.cpuSet {
			set[i] = strconv.Itoa(c)
		}
		args = append(args, "--cpu-set", strings.Join(set, ","), "--bind-to", "core")
	}
	for _, kv := range o.mca {
		args = append(args, "--mca", kv[0], kv[1])
	}
	for _, v := range o.export {
		args = append(args, "-x", v)
	}
	return append(args, command...), nil
}

// decideOversubscribe checks np against the slots and says whether to pass
// --oversubscribe.
func (o *mpirunOptions) decideOversubscribe() (bool, error) {
	if o.hostfile == nil {
		if o.np == 0 {
			return false, errors.New("launch: mpirun needs NP or a hostfile")
		}
		if o.oversubscribe != nil {
			return *o.oversubscribe, nil
		}
		return o.np > o.cores, nil
	}
	hf := o.hostfile
	slots, known := hf.Slots()
	if o.np == 0 && !known {
		// mpirun counts the cores of the hosts without slots=; nothing to check.
		return o.oversubscribe != nil && *o.oversubscribe, nil
	}
	np := o.np
	if np == 0 {
		np = slots
		o.np = slots
	}
	if limit, capped := hf.MaxSlots(); capped && np > limit {
		return false, fmt.Errorf("launch: %d ranks but %s allows at most %d (max_slots)", np, hf.Path, limit)
	}
	want := known && np > slots
	if o.oversubscribe == nil {
		if want {
			return false, fmt.Errorf("launch: %d ranks but %s has %d slots; add slots or allow oversubscription", np, hf.Path, slots)
		}
		return false, nil
	}
	if want && !*o.oversubscribe {
		return false, fmt.Errorf("launch: %d ranks but %s has %d slots and oversubscription is off", np, hf.Path, slots)
	}
	return *o.oversubscribe, nil
}
