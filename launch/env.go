package launch

import (
	"os"
	"strconv"
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
