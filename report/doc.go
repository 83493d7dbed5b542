// Package report observes long runs: per-stage wall time, bytes sent and
// received and peak resident memory of every rank, gathered into one JSON
// file, and progress of long stages on rank 0.
package report
