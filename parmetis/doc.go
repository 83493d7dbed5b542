// Package parmetis computes K-way graph partitions with minimum edge cut
// under balance constraints, in the multilevel style of METIS and ParMETIS:
// coarsen by matching, partition the coarsest graph, then project back and
// refine level by level.
//
// This package is the distributed partitioner: it works on a DistGraph
// spread over the ranks by contiguous vertex ranges, and hands the graphs one
// rank holds whole (the replicated coarsest graph, the pieces of a
// recursive bisection, the input on one rank) to the serial multilevel
// partitioner, package parmetis/serial.
package parmetis
