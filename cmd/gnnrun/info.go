package main

import (
	"encoding/json"
	"fmt"
	"os"

	"gnnrun/collective"
	"gnnrun/rank"
)

func init() {
	register(&command{
		name:    "info",
		summary: "print the world as every rank sees it",
		usage:   "info",
		help: `Prints one line per rank, in rank order: rank, world size, host, local
rank and local size on its host, the MPI thread level, the MPI library and
the GPUs the rank is bound to. Use it to check a hostfile or a Slurm
allocation before a long job.`,
		run: runInfo,
	})
}

type rankInfo struct {
	Rank, Size           int
	Host                 string
	LocalRank, LocalSize int
	Thread, Library      string
	PID                  int
	GPUs                 string
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
	gpus, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	if !ok {
		gpus = "-"
	}
	me := rankInfo{
		Rank: e.comm.Rank(), Size: e.comm.Size(), Host: e.comm.Host(),
		LocalRank: node.Rank(), LocalSize: node.Size(),
		Thread: rank.ThreadLevel(), Library: rank.LibraryVersion(), PID: os.Getpid(), GPUs: gpus,
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
	e.printf("%-5s %-5s %-16s %-6s %-6s %-8s %-20s %-22s %s\n", "rank", "size", "host", "local", "lsize", "pid", "thread", "mpi", "gpus")
	off := 0
	for _, n := range counts {
		var ri rankInfo
		if err := json.Unmarshal(all[off:off+n], &ri); err != nil {
			return fmt.Errorf("info: %w", err)
		}
		off += n
		e.printf("%-5d %-5d %-16s %-6d %-6d %-8d %-20s %-22s %s\n", ri.Rank, ri.Size, ri.Host, ri.LocalRank, ri.LocalSize, ri.PID, ri.Thread, ri.Library, ri.GPUs)
	}
	return nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
