//go:build nompi

package rank

import (
	"os"
	"strings"
	"testing"
)

func TestNoMPIWorldIsOneRank(t *testing.T) {
	c, err := World()
	if err != nil {
		t.Fatal(err)
	}
	again, err := World()
	if err != nil || again != c {
		t.Fatalf("second World() = %v, %v; want the same communicator", again, err)
	}
	host, _ := os.Hostname()
	if c.Size() != 1 || c.Rank() != 0 || c.Host() != host {
		t.Fatalf("world is rank %d of %d on %q, want 0 of 1 on %q", c.Rank(), c.Size(), c.Host(), host)
	}
	if MPI || ThreadLevel() != "none" || !strings.Contains(LibraryVersion(), "nompi") {
		t.Fatalf("MPI = %v, thread level %q, library %q: the build must say it has no MPI", MPI, ThreadLevel(), LibraryVersion())
	}
	if err := Finalize(); err != nil {
		t.Fatal(err)
	}
}

// TestNoMPIRefusesSeveralRanks sets the variables a launcher of several
// ranks would; each such process must refuse to run as a world of one.
func TestNoMPIRefusesSeveralRanks(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"mpirun", map[string]string{"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"}, "started 2 ranks (OMPI_COMM_WORLD_SIZE=2)"},
		{"srun", map[string]string{"SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "4", "SLURM_PROCID": "0"}, "started 4 ranks (SLURM_STEP_NUM_TASKS=4)"},
		{"rank only", map[string]string{"PMIX_RANK": "3"}, "as rank 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			err := checkAlone()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "built without MPI") {
				t.Fatalf("got %v, want an error saying %q and that the build has no MPI", err, tc.want)
			}
		})
	}
}
