package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/launch"
	"gnnrun/rank"
)

func init() {
	register(&command{
		name:    "info",
		summary: "print the world as every rank sees it",
		usage:   "info",
		help: `Prints one line per rank, in rank order: rank, world size, host, local
rank and local size on its host (from the node-local communicator), the
local rank and size the launcher announced (OpenMPI's, MPICH's or Slurm's
variables; "-" when none did), pid, the MPI thread level, the MPI library,
and the GPU the rank is bound to with the reason; under each rank, its GPU
as the CUDA driver sees it (name, memory, compute capability, the driver's
CUDA version, PCI bus), or why there is none (no driver library, no device,
a build without cgo). A build without MPI (tag nompi) says so on a line of
its own.

GPU binding happens at start-up for every command: with CUDA_VISIBLE_DEVICES
unset, local rank r gets GPU r mod N of its host's N GPUs. GNNRUN_GPU_BIND
(auto, split, off) and GNNRUN_GPU_COUNT steer it; see launch.BindGPU.

Use it to check a hostfile or a Slurm allocation before a long job.`,
		run: runInfo,
	})
}

// placement is how this rank was placed at start-up: the local rank its
// launcher announced (or the node-local communicator's) and the GPU binding
// made from it. bindGPU fills it before any command runs.
var placement struct {
	local   launch.Local
	fromEnv bool
	gpu     launch.Binding
}

// bindGPU binds this rank to one GPU of its host by its local rank, before
// anything initialises CUDA. The local rank comes from the launcher's
// environment and, when no launcher announced it, from the node-local
// communicator. That fallback is collective; every rank of one job takes it
// or none does, because they share one launcher.
func bindGPU(world rank.Comm) error {
	local, ok, err := launch.EnvLocal()
	if err != nil {
		return err
	}
	placement.fromEnv = ok
	if !ok {
		node, err := world.SplitShared()
		if err != nil {
			return err
		}
		local = launch.Local{Rank: node.Rank(), Size: node.Size(), Source: "node communicator"}
		if err := node.Free(); err != nil {
			return err
		}
	}
	placement.local = local
	placement.gpu, err = launch.BindGPU(local)
	return err
}

// noMPINote tells the user of a build without MPI why it will not run on
// several ranks and what to run instead.
const noMPINote = "without MPI (tag nompi): a world of one rank only; run the MPI build of gnnrun under mpirun or srun for several ranks"

type rankInfo struct {
	Rank, Size           int
	Host                 string
	LocalRank, LocalSize int
	Launcher             string
	Thread, Library      string
	PID                  int
	GPU                  string
	CUDA                 string // the bound GPU as the driver sees it, or why none
}

func runInfo(e *env, _ []string) error {
	node, err := e.comm.SplitShared()
	if err != nil {
		return err
	}
	defer node.Free()
	hosts, err := collective.Sum(e.comm, boolInt(node.Rank() == 0))
	if err != nil {
		return err
	}
	launcher := "-"
	if placement.fromEnv {
		l := placement.local
		launcher = fmt.Sprintf("%d/%d:%s", l.Rank, l.Size, l.Source)
	}
	me := rankInfo{
		Rank: e.comm.Rank(), Size: e.comm.Size(), Host: e.comm.Host(),
		LocalRank: node.Rank(), LocalSize: node.Size(), Launcher: launcher,
		Thread: rank.ThreadLevel(), Library: rank.LibraryVersion(), PID: os.Getpid(),
		GPU: placement.gpu.String(), CUDA: cudaInfo(),
	}
	blob, err := json.Marshal(me)
	if err != nil {
		return err
	}
	all, counts, err := collective.Allgatherv(e.comm, blob)
	if err != nil {
		return err
	}
	e.printf("world: %d ranks on %d hosts\n", e.comm.Size(), hosts)
	if !rank.MPI {
		e.printf("build: %s\n", noMPINote)
	}
	const row = "%-5v %-5v %-16v %-6v %-6v %-16v %-8v %-20v %-22v %v\n"
	e.printf(row, "rank", "size", "host", "local", "lsize", "launcher", "pid", "thread", "mpi", "gpu")
	off := 0
	for _, n := range counts {
		var ri rankInfo
		if err := json.Unmarshal(all[off:off+n], &ri); err != nil {
			return fmt.Errorf("info: %w", err)
		}
		off += n
		e.printf(row, ri.Rank, ri.Size, ri.Host, ri.LocalRank, ri.LocalSize, ri.Launcher, ri.PID, ri.Thread, ri.Library, ri.GPU)
		e.printf("      cuda: %s\n", ri.CUDA)
	}
	return nil
}

// cudaInfo describes the rank's GPU as the CUDA driver sees it (device 0
// after the binding), or says why there is none.
func cudaInfo() string {
	g, err := cuda.Probe(0)
	if err != nil {
		return "none: " + strings.TrimPrefix(err.Error(), "cuda: ")
	}
	return g.String()
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
