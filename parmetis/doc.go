// Package parmetis computes K-way graph partitions with minimum edge cut
// under balance constraints, in the multilevel style of METIS and ParMETIS:
// coarsen by matching, partition the coarsest graph, then project back and
// refine level by level.
//
// This package is the distributed partitioner: it works on a DistGraph
// spread over the ranks by contiguous vertex ranges (Build makes one from
// every rank's share of the edges), and hands the graphs one rank holds
// whole (the replicated coarsest graph, the small pieces of a recursive
// bisection, the input on one rank) to the serial multilevel partitioner,
// package parmetis/serial. Its files follow the phases as ParMETIS lays
// them out: coarsen.go (with match.go, contract.go, sparsify.go),
// initial.go, project.go, refine.go (with fm.go), balance.go and rb.go
// (recursive bisection, with pieces.go); partition.go chooses between
// direct k-way and recursive bisection, hierarchy.go partitions machines
// then GPUs, isolated.go sets the vertices without edges aside. The tuning
// constants and the defaults are in options.go; one control structure
// (ctrl.go) carries the options and the measurements through the phases.
//
// Around the partitioner, for callers that read a graph with graphio:
// Balance turns balance constraints (nodes, edges, node types, masks, METIS
// vertex weights) into vertex weights, and PartitionRandom is the balanced
// random baseline.
package parmetis
