// Package parmetis computes K-way graph partitions with minimum edge cut
// under balance constraints, in the multilevel style of METIS and ParMETIS:
// coarsen by matching, partition the coarsest graph, then project back and
// refine level by level.
//
// The serial multilevel partitioner (serial_*.go) works on a Graph one rank
// holds whole: the replicated coarsest graph of the distributed scheme, or the
// input when running on one rank. The distributed partitioner (dist_*.go)
// works on a graph spread over the ranks by contiguous vertex ranges.
package parmetis
