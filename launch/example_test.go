package launch_test

import (
	"fmt"
	"log"
	"path/filepath"
	"strings"
	"time"

	"gnnrun/launch"
)

// An mpirun command line for every slot of a hostfile.
func ExampleMPIRun() {
	hf, err := launch.ReadHostfile(filepath.Join("testdata", "hostfiles", "good-basic.hosts"))
	if err != nil {
		log.Fatal(err)
	}
	args, err := launch.MPIRun([]string{"bin/gnnrun", "selftest"},
		launch.WithHostfile(hf), launch.RunAsRoot(false), launch.MCA("osc", "ucx"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(args, " "))
	// Output:
	// mpirun -np 8 --hostfile testdata/hostfiles/good-basic.hosts --mca osc ucx bin/gnnrun selftest
}

// A bad hostfile line names the file, the line and the reason.
func ExampleParseHostfile() {
	_, err := launch.ParseHostfile(strings.NewReader("node1 slots=8\nnode2 slots=eight\n"), "hosts")
	fmt.Println(err)
	// Output:
	// launch: hosts:2: slots="eight": want a whole number of at least 1
}

// Submitting gnnrun.sbatch on two 8-GPU nodes with mpirun as the launcher.
func ExampleSbatch() {
	args, err := launch.Sbatch("launch/gnnrun.sbatch", []string{"selftest", "--soak", "10m"},
		launch.Nodes(2), launch.TasksPerNode(8), launch.TimeLimit(30*time.Minute),
		launch.Via(launch.Mpirun), launch.Binary("/opt/gnnrun/bin/gnnrun"), launch.Parsable())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(args, " "))
	// Output:
	// sbatch --nodes=2 --ntasks-per-node=8 --time=0-00:30:00 --parsable --export=ALL,GNNRUN_LAUNCHER=mpirun,GNNRUN=/opt/gnnrun/bin/gnnrun launch/gnnrun.sbatch selftest --soak 10m
}
