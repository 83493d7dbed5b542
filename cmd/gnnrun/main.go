// Command gnnrun is the data side of distributed GNN training: ingest,
// partition, dispatch, serve and pack graphs. Every rank of an mpirun or
// srun job runs the same binary (SPMD); started alone it is a world of one.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/pflag"

	"gnnrun/launch"
	"gnnrun/rank"
)

func init() {
	freedPagesStay()
	// MPI is initialised and finalised on the main thread.
	runtime.LockOSThread()
	// Stages hold arrays of the size of a rank's share of the graph: let the
	// heap grow 50% over live data before collecting rather than Go's 100%,
	// trading a little CPU for a lower peak. GOGC in the environment wins.
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(50)
	}
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run parses the command line and runs the command on the MPI world. It
// returns the exit code; failures after MPI is up never return, they abort
// the job.
func run(args []string) int {
	// Before MPI is up, only the rank that will be 0 prints usage errors.
	quiet := launch.EnvWorldRank() > 0
	usageErr := func(err error) int {
		if !quiet {
			fmt.Fprintf(os.Stderr, "gnnrun: %v\n", err)
		}
		return 2
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		printUsage(os.Stdout)
		return 0
	}
	if args[0] == "help" {
		if len(args) == 1 {
			printUsage(os.Stdout)
			return 0
		}
		c, ok := commands[args[1]]
		if !ok {
			return usageErr(fmt.Errorf("unknown command %q; run gnnrun help", args[1]))
		}
		c.printHelp(os.Stdout)
		return 0
	}
	if args[0] == "version" || args[0] == "--version" {
		if rank.MPI {
			fmt.Println("gnnrun", version)
		} else {
			fmt.Println("gnnrun", version, "(without MPI, tag nompi)")
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		return usageErr(fmt.Errorf("unknown command %q; run gnnrun help", args[0]))
	}
	var common commonFlags
	fs := c.flagSet(&common)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			c.printHelp(os.Stdout)
			return 0
		}
		return usageErr(fmt.Errorf("%s: %v (see gnnrun help %s)", c.name, err, c.name))
	}

	world, err := rank.World()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gnnrun: %v\n", err)
		return 1
	}
	defer guard(world)
	if err := bindGPU(world); err != nil {
		fail(world, err)
	}
	e, err := newEnv(world, c.name, common)
	if err != nil {
		fail(world, err)
	}
	e.args, e.dashAt = fs.Args(), fs.ArgsLenAtDash()
	if err := e.faultPoint("start"); err != nil {
		fail(world, err)
	}
	stop, err := e.startProfile()
	if err != nil {
		fail(world, err)
	}
	code := 0
	if err := c.run(e, fs.Args()); errors.Is(err, errCheckpointExit) {
		// Every rank stops here after the same checkpoint: a clean end
		// with the status that asks for the job to be resumed.
		e.printf("gnnrun: %v (exit status %d)\n", err, checkpointExit)
		code = checkpointExit
	} else if err != nil {
		fail(world, fmt.Errorf("%s: %w", c.name, err))
	}
	if err := stop(); err != nil {
		fail(world, err)
	}
	if err := e.finish(); err != nil {
		fail(world, err)
	}
	if err := rank.Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "gnnrun: %v\n", err)
		return 1
	}
	return code
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"
