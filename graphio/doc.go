// Package graphio reads graphs from disk into a distributed edge list and
// writes them back: DGL's chunked graph format (edges in CSV, NumPy or
// Parquet chunks, node and edge data in NumPy or Parquet), NumPy .npy and
// .npz, METIS .graph files, MatrixMarket coordinate files and plain edge
// lists, plus an R-MAT generator that writes the chunked format.
//
// Every rank calls Read with the same arguments (SPMD). The input is cut by
// bytes, so every rank reads about the same amount however the files are
// chunked: a file larger than a rank's share is read by byte range (CSV and
// text realign to line starts, NumPy to rows, Parquet to row groups). Each
// rank ends with about M/P edges in homogeneous int64 IDs, with their types
// and type-wise edge IDs, and with the node data rows of an even range of
// type-wise node IDs per node type. No rank allocates anything sized by the
// global node or edge count.
//
// Errors name the file and the line (or row) and say what is wrong; counts
// are checked against the metadata and conserved through every
// normalisation step (self loops, reverse edges, duplicates, compaction).
package graphio
