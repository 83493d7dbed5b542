// Package parteval measures a partition of a graph — its edge cut and the
// balance of every constraint — from the graph and the assignment alone,
// without the partitioner's help, so tests judge the partitioner by what it
// wrote rather than by what it says about itself.
//
// The core (eval.go) is a pure function over plain data: nodes, edge
// endpoints, a part per node, K, target shares and one weight column per
// constraint; tests of the partitioner's own packages can call it on their
// in-memory graphs. The front end (input.go, assignment.go) reads an input
// graph whole into one process with graphio and an assignment directory or
// METIS .part file, and builds the constraint columns gnnrun partition's
// --balance names, from the definitions in the README: the graph is treated
// as undirected (u->v and v->u together weigh 2, self loops cost nothing,
// a METIS file's arcs are already symmetric, so each edge counts once);
// nodes weigh 1, edges their in-degree, masks 1 where set.
//
// The package imports neither the partitioner (parmetis) nor dispatch
// (shard), so a bug there cannot hide in the measurement.
package parteval
