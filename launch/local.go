package launch

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Local is a rank's place among the ranks of its host.
type Local struct {
	// Rank is the rank's index on its host, 0 <= Rank < Size.
	Rank int
	// Size is the number of ranks of the job on the host.
	Size int
	// Source names where the numbers came from: "openmpi", "slurm",
	// "mpich" or, filled in by the caller, "node communicator".
	Source string
}

// String renders the place as "RANK/SIZE (SOURCE)".
func (l Local) String() string {
	return fmt.Sprintf("%d/%d (%s)", l.Rank, l.Size, l.Source)
}

// EnvLocal returns the local rank and local size the launcher put in the
// environment, and false when no known launcher did. It works before MPI is
// initialised. It tries, in order:
//
//   - OpenMPI's mpirun: OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_SIZE.
//     These come first because mpirun inside a Slurm allocation leaves the
//     Slurm variables of the batch shell or of its daemon's step in the
//     ranks' environment, and those describe the daemon, not the rank.
//   - MPICH's hydra: MPI_LOCALRANKID, MPI_LOCALNRANKS.
//   - Slurm's srun: SLURM_LOCALID and this node's entry of
//     SLURM_STEP_TASKS_PER_NODE (or SLURM_TASKS_PER_NODE, "2(x3),1" form,
//     indexed by SLURM_NODEID), or SLURM_NTASKS_PER_NODE. Only inside a job
//     step (SLURM_STEP_ID set): the batch shell has SLURM_LOCALID=0 and the
//     allocation's task count, which a program started there without srun
//     must not take for its own.
//
// A variable that is present but malformed, or a local rank outside the local
// size, is an error naming the variable.
func EnvLocal() (Local, bool, error) {
	return envLocal(os.LookupEnv)
}

type lookupFunc func(string) (string, bool)

func envLocal(lookup lookupFunc) (Local, bool, error) {
	if l, ok, err := envPair(lookup, "openmpi", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"); ok || err != nil {
		return l, ok, err
	}
	if l, ok, err := envPair(lookup, "mpich", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"); ok || err != nil {
		return l, ok, err
	}
	return slurmLocal(lookup)
}

// envPair reads a launcher's local rank and size variables; both must be
// present for ok.
func envPair(lookup lookupFunc, source, rankVar, sizeVar string) (Local, bool, error) {
	rs, okR := lookup(rankVar)
	ss, okS := lookup(sizeVar)
	if !okR || !okS {
		return Local{}, false, nil
	}
	r, err := envInt(rankVar, rs, 0)
	if err != nil {
		return Local{}, false, err
	}
	s, err := envInt(sizeVar, ss, 1)
	if err != nil {
		return Local{}, false, err
	}
	return checkLocal(Local{Rank: r, Size: s, Source: source}, rankVar)
}

func slurmLocal(lookup lookupFunc) (Local, bool, error) {
	rs, ok := lookup("SLURM_LOCALID")
	if !inSlurmStep(lookup) || !ok {
		return Local{}, false, nil
	}
	r, err := envInt("SLURM_LOCALID", rs, 0)
	if err != nil {
		return Local{}, false, err
	}
	s, ok, err := slurmLocalSize(lookup)
	if !ok || err != nil {
		return Local{}, false, err
	}
	return checkLocal(Local{Rank: r, Size: s, Source: "slurm"}, "SLURM_LOCALID")
}

// slurmLocalSize returns the number of tasks of the step on this node.
func slurmLocalSize(lookup lookupFunc) (int, bool, error) {
	for _, v := range []string{"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"} {
		s, ok := lookup(v)
		if !ok {
			continue
		}
		counts, err := ParseTasksPerNode(s)
		if err != nil {
			return 0, false, fmt.Errorf("launch: %s=%q: %v", v, s, err)
		}
		node := 0
		if ns, ok := lookup("SLURM_NODEID"); ok {
			if node, err = envInt("SLURM_NODEID", ns, 0); err != nil {
				return 0, false, err
			}
		}
		if node >= len(counts) {
			return 0, false, fmt.Errorf("launch: SLURM_NODEID=%d but %s=%q lists %d nodes", node, v, s, len(counts))
		}
		return counts[node], true, nil
	}
	if s, ok := lookup("SLURM_NTASKS_PER_NODE"); ok {
		n, err := envInt("SLURM_NTASKS_PER_NODE", s, 1)
		return n, err == nil, err
	}
	return 0, false, nil
}

// ParseTasksPerNode expands Slurm's compressed per-node task counts, as in
// SLURM_TASKS_PER_NODE: "2(x3),1" is [2 2 2 1]. Every count must be at least
// 1 and every repeat at least 1.
func ParseTasksPerNode(s string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		count, times := item, "1"
		if i := strings.IndexByte(item, '('); i >= 0 {
			if !strings.HasSuffix(item, ")") || !strings.HasPrefix(item[i+1:], "x") {
				return nil, fmt.Errorf("bad item %q, want N or N(xK)", item)
			}
			count, times = item[:i], item[i+2:len(item)-1]
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad task count %q in %q", count, item)
		}
		k, err := strconv.Atoi(times)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("bad repeat %q in %q", times, item)
		}
		if len(out)+k > 1<<20 {
			return nil, fmt.Errorf("more than %d nodes", 1<<20)
		}
		for j := 0; j < k; j++ {
			out = append(out, n)
		}
	}
	return out, nil
}

func envInt(name, val string, min int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(val))
	if err != nil || n < min {
		return 0, fmt.Errorf("launch: %s=%q: want a whole number of at least %d", name, val, min)
	}
	return n, nil
}

func checkLocal(l Local, rankVar string) (Local, bool, error) {
	if l.Rank >= l.Size {
		return Local{}, false, fmt.Errorf("launch: %s=%d is not below the local size %d (%s)", rankVar, l.Rank, l.Size, l.Source)
	}
	return l, true, nil
}
