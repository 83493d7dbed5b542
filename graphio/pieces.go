package graphio

// piece is the part of one input file a rank reads: bytes [lo, hi) of file
// src. Records belong to the piece their first byte falls in.
type piece struct {
	src    int
	lo, hi int64
}

// splitBytes cuts the concatenation of files of the given sizes into parts
// ranges of nearly equal bytes and returns the pieces of range part, in file
// order. A file larger than a share is split between ranks; small files go
// whole to one rank or are cut between two, as the bounds fall.
func splitBytes(sizes []int64, part, parts int) []piece {
	var total int64
	for _, s := range sizes {
		total += s
	}
	lo := total/int64(parts)*int64(part) + min(int64(part), total%int64(parts))
	hi := lo + total/int64(parts)
	if int64(part) < total%int64(parts) {
		hi++
	}
	var out []piece
	var off int64
	for i, s := range sizes {
		a, b := max(lo, off), min(hi, off+s)
		if a < b {
			out = append(out, piece{src: i, lo: a - off, hi: b - off})
		}
		off += s
	}
	return out
}

// pieceInfo is what every rank learns about every piece after the read:
// which file it was and how many records it held. Records of a file are
// numbered in piece order, which is rank order.
type pieceInfo struct {
	Src  int64
	Rows int64
}

// fileRows sums the records per file over all pieces and returns, for each
// piece, the index of its first record in its file.
func fileRows(all []pieceInfo, files int) (rows []int64, first []int64) {
	rows = make([]int64, files)
	first = make([]int64, len(all))
	for i, p := range all {
		first[i] = rows[p.Src]
		rows[p.Src] += p.Rows
	}
	return rows, first
}
