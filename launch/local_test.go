package launch

import (
	"reflect"
	"strings"
	"testing"
)

func envMap(m map[string]string) lookupFunc {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestEnvLocal(t *testing.T) {
	slurmStep := func(extra map[string]string) map[string]string {
		m := map[string]string{"SLURM_STEP_ID": "0", "SLURM_LOCALID": "1", "SLURM_NODEID": "0", "SLURM_TASKS_PER_NODE": "4"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		env  map[string]string
		want Local
		ok   bool
		err  string
	}{
		{"nothing", nil, Local{}, false, ""},
		{"openmpi", map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "3"}, Local{2, 3, "openmpi"}, true, ""},
		{"openmpi beats slurm", map[string]string{
			"OMPI_COMM_WORLD_LOCAL_RANK": "3", "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
			"SLURM_STEP_ID": "0", "SLURM_LOCALID": "0", "SLURM_TASKS_PER_NODE": "1",
		}, Local{3, 4, "openmpi"}, true, ""},
		{"openmpi rank only", map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "0"}, Local{}, false, ""},
		{"openmpi bad", map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "x", "OMPI_COMM_WORLD_LOCAL_SIZE": "3"}, Local{}, false, `OMPI_COMM_WORLD_LOCAL_RANK="x"`},
		{"openmpi rank past size", map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "3", "OMPI_COMM_WORLD_LOCAL_SIZE": "3"}, Local{}, false, "not below the local size 3"},
		{"mpich", map[string]string{"MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"}, Local{1, 2, "mpich"}, true, ""},
		{"slurm", slurmStep(nil), Local{1, 4, "slurm"}, true, ""},
		{"slurm old step var", map[string]string{"SLURM_STEPID": "3", "SLURM_LOCALID": "0", "SLURM_NTASKS_PER_NODE": "2"}, Local{0, 2, "slurm"}, true, ""},
		{"slurm step layout wins", slurmStep(map[string]string{"SLURM_STEP_TASKS_PER_NODE": "2"}), Local{1, 2, "slurm"}, true, ""},
		{"slurm second node", slurmStep(map[string]string{"SLURM_NODEID": "3", "SLURM_TASKS_PER_NODE": "4(x3),2"}), Local{1, 2, "slurm"}, true, ""},
		{"slurm ntasks per node", map[string]string{"SLURM_STEP_ID": "0", "SLURM_LOCALID": "5", "SLURM_NTASKS_PER_NODE": "8"}, Local{5, 8, "slurm"}, true, ""},
		// The batch shell: SLURM_LOCALID=0 and the allocation's tasks, but
		// no step. A program run there without srun is not task 0 of 4.
		{"slurm batch shell", map[string]string{"SLURM_LOCALID": "0", "SLURM_TASKS_PER_NODE": "4", "SLURM_NTASKS_PER_NODE": "4"}, Local{}, false, ""},
		{"slurm no size", map[string]string{"SLURM_STEP_ID": "0", "SLURM_LOCALID": "0"}, Local{}, false, ""},
		{"slurm bad layout", slurmStep(map[string]string{"SLURM_TASKS_PER_NODE": "4(3)"}), Local{}, false, `SLURM_TASKS_PER_NODE="4(3)"`},
		{"slurm node past layout", slurmStep(map[string]string{"SLURM_NODEID": "2", "SLURM_TASKS_PER_NODE": "4(x2)"}), Local{}, false, "lists 2 nodes"},
		{"slurm local past size", slurmStep(map[string]string{"SLURM_LOCALID": "4"}), Local{}, false, "SLURM_LOCALID=4 is not below the local size 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := envLocal(envMap(tt.env))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "launch: ") {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || ok != tt.ok {
				t.Fatalf("got %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseTasksPerNode(t *testing.T) {
	good := []struct {
		in   string
		want []int
	}{
		{"4", []int{4}},
		{"2(x4)", []int{2, 2, 2, 2}},
		{"2(x3),1", []int{2, 2, 2, 1}},
		{"3,2(x2),8", []int{3, 2, 2, 8}},
		{" 1 ", []int{1}},
	}
	for _, tt := range good {
		got, err := ParseTasksPerNode(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseTasksPerNode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "0", "-1", "x", "2(x0)", "2(3)", "2(x3", "2x3)", "2(y3)", ",", "2,,3", "2(x99999999)"} {
		if got, err := ParseTasksPerNode(in); err == nil {
			t.Errorf("ParseTasksPerNode(%q) = %v, want an error", in, got)
		}
	}
}

func TestEnvWorldRank(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_RANK", "7")
	if r := EnvWorldRank(); r != 7 {
		t.Fatalf("EnvWorldRank() = %d, want 7", r)
	}
}

func TestEnvWorldSize(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		n    int
		v    string
	}{
		{"alone", nil, 0, ""},
		{"openmpi", map[string]string{"OMPI_COMM_WORLD_SIZE": "4"}, 4, "OMPI_COMM_WORLD_SIZE"},
		{"mpirun inside a slurm step", map[string]string{
			"OMPI_COMM_WORLD_SIZE": "1", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "3",
		}, 1, "OMPI_COMM_WORLD_SIZE"},
		{"hydra", map[string]string{"PMI_SIZE": "2", "PMI_RANK": "1"}, 2, "PMI_SIZE"},
		{"srun", map[string]string{"SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "8", "SLURM_NTASKS": "16"}, 8, "SLURM_STEP_NUM_TASKS"},
		{"srun of old slurm", map[string]string{"SLURM_STEPID": "2", "SLURM_NTASKS": "5"}, 5, "SLURM_NTASKS"},
		{"batch shell", map[string]string{"SLURM_NTASKS": "16", "SLURM_JOB_ID": "7"}, 0, ""},
		{"malformed passed over", map[string]string{"OMPI_COMM_WORLD_SIZE": "x", "PMI_SIZE": "0", "SLURM_STEP_ID": "0", "SLURM_NTASKS": "2"}, 2, "SLURM_NTASKS"},
	}
	for _, tc := range tests {
		n, v := envWorldSize(envMap(tc.env))
		if n != tc.n || v != tc.v {
			t.Errorf("%s: envWorldSize = %d, %q; want %d, %q", tc.name, n, v, tc.n, tc.v)
		}
	}
}
