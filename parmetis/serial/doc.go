// Package serial is a serial multilevel K-way graph partitioner in the style
// of METIS: it partitions a Graph one process holds whole, with minimum edge
// cut under one or more balance constraints. It is pure computation: no
// network, no files, no global state; the same graph, options and seed give
// the same partition whatever the number of goroutines it runs on.
//
// Partition bisects recursively: each bisection coarsens by heavy-edge and
// 2-hop matching, grows initial bisections on the coarsest graph and refines
// them with FM on every level back up; k-way balancing and greedy refinement
// follow. On graphs that are not power-law a METIS-style direct k-way
// partition competes, and the better one gets a multilevel k-way cycle.
// One control structure (ctrl.go) carries the options, the tuning, the
// per-phase timers and the reusable buffers through every phase; the files
// follow the phases: match, contract, coarsen, initpart, project,
// refine2way, balance2way, split, rb, direct, kwaycycle, refinekway,
// balancekway.
//
// The distributed partitioner (package parmetis) partitions its replicated
// coarsest graph and the pieces of its recursive bisection with it.
package serial
