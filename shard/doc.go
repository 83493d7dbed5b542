// Package shard turns a partition assignment into partitions a trainer can
// use, and serves them.
//
// Dispatch (dispatch.go) runs in phases, one file each: relabel.go gives
// every node a new global ID so that each partition owns one contiguous
// range, grouped by node type inside it (DGL's order); endpoints.go maps the
// endpoints of every edge to the new IDs by request/reply to the rank that
// holds each node; shuffle_nodes.go and shuffle_edges.go move node rows and
// edges (with their data) all-to-all to the rank writing their partition,
// in rounds whose payload is bounded by the message budget; csc.go builds
// the in-edge CSC with inner nodes first and halo nodes after; write.go
// writes the partition directory (format.go). No rank allocates anything
// sized by the global node or edge count: per rank the memory is the rank's
// share of the input plus the partition being written, one partition at a
// time (waves of P partitions when K > P). Every phase checks conservation
// (counts and order-independent checksums, compared by all-reduce).
//
// Serving: Open memory-maps a partition read-only, so all ranks of a host
// share one copy of the page cache; a zstd-compressed partition is first
// decompressed once per host into /dev/shm by the host's first rank that
// needs it. Book maps a global ID to its partition and local ID by binary
// search over ranges. Store.Pull fetches feature rows by global ID: local
// rows are copied from the map, remote ones come by an all-to-all
// request/reply on the store's own communicator or by one-sided MPI reads
// (RMA) from a window over each rank's feature array.
//
// Inspect (inspect.go) re-verifies a partition directory from its files,
// and against the input graph when given.
package shard
