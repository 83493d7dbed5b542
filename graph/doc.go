// Package graph holds the types every stage shares: a graph's node and edge
// types and counts (Meta), contiguous ID ranges and their owners (Book), and
// one rank's share of a distributed edge list (Edges). IDs are int64.
//
// Node IDs are homogeneous: node type t's nodes follow those of types
// 0..t-1, as in DGL, so type-wise ID i of type t is NodeOffset(t)+i.
package graph
