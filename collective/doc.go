// Package collective builds typed collectives on a rank.Comm: all-to-all of
// any plain-data element type, per-destination exchange, all-gather,
// request/reply lookups answered by the owner of each key, and reductions.
//
// Payloads of any size work: every message to one peer is cut into rounds of
// at most MaxMessage bytes (1 GiB by default), so a 10 GiB exchange never
// hands MPI a count above 2^31. Messages above a threshold can be compressed
// with zstd on the wire, which trades about 300-500 MB/s of CPU per core for
// fewer bytes on a slow network; it is off by default.
//
// Element types must be plain data: numbers, bools, and arrays or structs of
// them, no pointers, slices, maps or strings. They travel as their memory
// image, so every rank must share the machine's byte order.
package collective
