package launch

import (
	"os"
	"strconv"
	"strings"
)

// worldRankVars are the variables launchers set to the process's world rank,
// in the order they are trusted.
var worldRankVars = []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}

// EnvWorldRank returns the world rank the launcher announced in the
// environment, or -1 when the process was not started by a known launcher.
// It works before MPI is initialised.
func EnvWorldRank() int {
	return firstInt(worldRankVars)
}

func firstInt(vars []string) int {
	for _, v := range vars {
		if s, ok := os.LookupEnv(v); ok {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				return n
			}
		}
	}
	return -1
}

// EnvWorldSize returns the number of ranks the launcher announced in the
// environment and the variable that announced it, or 0 and "" when no known
// launcher did (the process was started alone). It works without MPI. It
// trusts, in order:
//
//   - OpenMPI's mpirun: OMPI_COMM_WORLD_SIZE. It comes first because mpirun
//     inside a Slurm allocation leaves in the ranks' environment the Slurm
//     variables of its daemons' step, which count daemons, not ranks.
//   - PMI_SIZE: MPICH's hydra, and srun --mpi=pmi2.
//   - Slurm's srun: SLURM_STEP_NUM_TASKS, then SLURM_NTASKS, only inside a
//     job step (SLURM_STEP_ID set): the batch shell has the allocation's
//     SLURM_NTASKS, which a program started there without srun must not
//     take for its own. srun --mpi=pmix announces the size only this way.
//
// A value that is not a whole number of at least 1 is passed over.
func EnvWorldSize() (int, string) {
	return envWorldSize(os.LookupEnv)
}

func envWorldSize(lookup lookupFunc) (int, string) {
	vars := []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}
	if inSlurmStep(lookup) {
		vars = append(vars, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS")
	}
	for _, v := range vars {
		if s, ok := lookup(v); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 1 {
				return n, v
			}
		}
	}
	return 0, ""
}

// inSlurmStep reports whether the process runs in a Slurm job step (started
// by srun), as opposed to the batch shell of an allocation. Old Slurm
// versions spell the variable SLURM_STEPID.
func inSlurmStep(lookup lookupFunc) bool {
	_, step := lookup("SLURM_STEP_ID")
	_, old := lookup("SLURM_STEPID")
	return step || old
}
