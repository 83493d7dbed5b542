package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSbatch(t *testing.T) {
	cmd := []string{"selftest", "--scales", "0,3"}
	tests := []struct {
		name string
		opts []SbatchOption
		want string
	}{
		{"defaults", nil, "sbatch --export=ALL,GNNRUN_LAUNCHER=srun job.sbatch selftest --scales 0,3"},
		{"all", []SbatchOption{
			Nodes(2), TasksPerNode(8), Tasks(16), GPUsPerTask(1), TimeLimit(90 * time.Minute), JobName("gnn"),
			Partition("gpu"), Output("/tmp/gnn-%j.out"), Chdir("/scratch/run"), Parsable(), Via(Mpirun),
			Binary("/opt/bin/gnnrun"), Info(false),
		}, "sbatch --nodes=2 --ntasks-per-node=8 --ntasks=16 --gpus-per-task=1 --time=0-01:30:00 --job-name=gnn " +
			"--partition=gpu --output=/tmp/gnn-%j.out --chdir=/scratch/run --parsable " +
			"--export=ALL,GNNRUN_LAUNCHER=mpirun,GNNRUN=/opt/bin/gnnrun,GNNRUN_INFO=0 job.sbatch selftest --scales 0,3"},
		{"later value wins, no GPUs, days", []SbatchOption{Nodes(1), Nodes(3), GPUsPerTask(0), TimeLimit(49*time.Hour + time.Second), Parsable(), Parsable(), Info(true)},
			"sbatch --nodes=3 --gpus-per-task=0 --time=2-01:01:00 --parsable --export=ALL,GNNRUN_LAUNCHER=srun,GNNRUN_INFO=1 job.sbatch selftest --scales 0,3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Sbatch("job.sbatch", cmd, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != tt.want {
				t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), tt.want)
			}
		})
	}
}

func TestSbatchErrors(t *testing.T) {
	tests := []struct {
		name   string
		script string
		cmd    []string
		opt    SbatchOption
		want   string
	}{
		{"no script", "", []string{"info"}, nil, "needs a batch script"},
		{"no command", "s", nil, nil, "needs a gnnrun command"},
		{"nodes", "s", []string{"info"}, Nodes(0), "nodes must be at least 1"},
		{"tasks per node", "s", []string{"info"}, TasksPerNode(-1), "tasks per node must be at least 1"},
		{"tasks", "s", []string{"info"}, Tasks(0), "tasks must be at least 1"},
		{"gpus", "s", []string{"info"}, GPUsPerTask(-1), "GPUs per task must be at least 0"},
		{"time", "s", []string{"info"}, TimeLimit(0), "time limit must be positive"},
		{"job name", "s", []string{"info"}, JobName("a b"), `job name "a b"`},
		{"partition", "s", []string{"info"}, Partition("gpu,cpu"), `partition "gpu,cpu"`},
		{"output", "s", []string{"info"}, Output(""), `output ""`},
		{"chdir", "s", []string{"info"}, Chdir("a;b"), `directory "a;b"`},
		{"relative binary", "s", []string{"info"}, Binary("bin/gnnrun"), "must be an absolute path"},
		{"comma binary", "s", []string{"info"}, Binary("/a,b/gnnrun"), `gnnrun binary "/a,b/gnnrun"`},
		{"launcher", "s", []string{"info"}, Via(Launcher(7)), "unknown launcher Launcher(7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []SbatchOption
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			got, err := Sbatch(tt.script, tt.cmd, opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "launch: ") {
				t.Fatalf("Sbatch = %q, %v; want an error containing %q", got, err, tt.want)
			}
		})
	}
}

func TestParseLauncher(t *testing.T) {
	for _, l := range []Launcher{Srun, Mpirun} {
		got, err := ParseLauncher(l.String())
		if err != nil || got != l {
			t.Errorf("ParseLauncher(%q) = %v, %v", l, got, err)
		}
	}
	if _, err := ParseLauncher("ssh"); err == nil {
		t.Error("ParseLauncher(ssh) gave no error")
	}
}

// TestSbatchScriptFile checks that the embedded script is the file and that
// bash can parse it.
func TestSbatchScriptFile(t *testing.T) {
	data, err := os.ReadFile("gnnrun.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	if SbatchScript() != string(data) {
		t.Fatal("SbatchScript() differs from gnnrun.sbatch")
	}
	if out, err := exec.Command("bash", "-n", "gnnrun.sbatch").CombinedOutput(); err != nil {
		t.Fatalf("bash -n gnnrun.sbatch: %v\n%s", err, out)
	}
	for _, want := range []string{"#SBATCH --ntasks-per-node=", "#SBATCH --gpus-per-task=1", "PMIX_MCA_gds", "srun --mpi=pmix"} {
		if !strings.Contains(SbatchScript(), want) {
			t.Errorf("gnnrun.sbatch lacks %q", want)
		}
	}
}

// TestSbatchScriptRuns runs the batch script outside Slurm with stand-ins
// for srun and mpirun that print what they were given, and checks how it
// passes gnnrun's command line on in both launcher modes.
func TestSbatchScriptRuns(t *testing.T) {
	dir := t.TempDir()
	stub := "#!/bin/bash\necho \"$(basename \"$0\") $* bind=${GNNRUN_GPU_BIND-} gds=${PMIX_MCA_gds-}\"\n"
	for _, name := range []string{"srun", "mpirun", "gnnrun"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("gnnrun.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	gnnrun := filepath.Join(dir, "gnnrun")
	tests := []struct {
		name string
		env  []string
		args []string
		want []string // lines of output, after the script's first line
		fail string
	}{
		{"srun", nil, []string{"selftest", "--scales", "0 1"}, []string{
			"srun --mpi=pmix --kill-on-bad-exit=1 " + gnnrun + " info bind= gds=hash",
			"srun --mpi=pmix --kill-on-bad-exit=1 " + gnnrun + " selftest --scales 0 1 bind= gds=hash",
		}, ""},
		{"mpirun", []string{"GNNRUN_LAUNCHER=mpirun", "GNNRUN_INFO=0", "GNNRUN_MPIRUN_FLAGS=--mca btl self,tcp"}, []string{"info"}, []string{
			"mpirun -np 4 --mca btl self,tcp " + gnnrun + " info bind=split gds=hash",
		}, ""},
		{"mpirun on GPU nodes", []string{"GNNRUN_LAUNCHER=mpirun", "GNNRUN_INFO=0", "SLURM_GPUS_ON_NODE=4"}, []string{"info"}, []string{
			"mpirun -np 4 --mca plm_slurm_args --gres=gpu:4 " + gnnrun + " info bind=split gds=hash",
		}, ""},
		{"srun flags", []string{"GNNRUN_INFO=0", "GNNRUN_SRUN_FLAGS=--exact", "PMIX_MCA_gds=ds21"}, []string{"info"}, []string{
			"srun --mpi=pmix --kill-on-bad-exit=1 --exact " + gnnrun + " info bind= gds=ds21",
		}, ""},
		{"no command", nil, nil, nil, "give the gnnrun command"},
		{"bad launcher", []string{"GNNRUN_LAUNCHER=ssh"}, []string{"info"}, nil, "neither srun nor mpirun"},
		{"no binary", []string{"GNNRUN=/nonexistent/gnnrun"}, []string{"info"}, nil, "is not an executable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("bash", append([]string{script}, tt.args...)...)
			cmd.Env = append([]string{"PATH=" + dir + ":/usr/bin:/bin", "GNNRUN=" + gnnrun, "SLURM_NTASKS=4"}, tt.env...)
			out, err := cmd.CombinedOutput()
			if tt.fail != "" {
				if err == nil || !strings.Contains(string(out), tt.fail) {
					t.Fatalf("want a failure saying %q, got %v:\n%s", tt.fail, err, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) < 1 || !strings.HasPrefix(lines[0], "gnnrun.sbatch: job") {
				t.Fatalf("no banner line:\n%s", out)
			}
			if got := lines[1:]; strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
