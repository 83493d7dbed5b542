package shard

import (
	"hash/crc32"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
)

// idHash hashes an ID with a salt naming what kind of ID it is.
func idHash(salt uint64, id int64) uint64 {
	return graph.Mix64(salt ^ graph.Mix64(uint64(id)+0x9e3779b97f4a7c15))
}

// castagnoli is the CRC-32C table: the CPU computes it (SSE4.2, ARMv8),
// at several GB/s, so checking every row costs little beside moving it.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rowHash hashes the bytes of one row with the ID it belongs to: a 64-bit
// mix of the row's CRC-32C and its length with the ID's hash. A changed row
// goes unnoticed with probability 2^-32.
func rowHash(id int64, data []byte) uint64 {
	return graph.Mix64(idHash(0x726f77, id) ^ uint64(crc32.Checksum(data, castagnoli)) ^ uint64(len(data))<<32)
}

// tally is what one side of a data movement saw: how many items and the
// order-independent checksums of their IDs and payload. Sender and
// receiver tallies are summed over all ranks and must agree.
type tally struct {
	n    int64
	ids  graphio.Checksum
	rows graphio.Checksum
}

// conserved compares the global totals of the sent and received tallies
// and returns an error naming what differs. It is collective.
func conserved(c *collective.Comm, what string, sent, got *tally) error {
	// Copies: the cgo layer refuses memory inside objects holding pointers,
	// and a tally may be a field of one.
	vals := []graphio.Checksum{sent.ids, sent.rows, got.ids, got.rows}
	var sums [4]uint64
	for i := range vals {
		v := new(graphio.Checksum)
		*v = vals[i]
		s, err := v.Total(c)
		if err != nil {
			return err
		}
		sums[i] = s
	}
	ns, err := collective.Sum(c, sent.n)
	if err != nil {
		return err
	}
	ng, err := collective.Sum(c, got.n)
	if err != nil {
		return err
	}
	switch {
	case ns != ng:
		return errorf("%s lost items: %d sent, %d received", what, ns, ng)
	case sums[0] != sums[2]:
		return errorf("%s: checksum of the IDs sent %#x differs from the one received %#x", what, sums[0], sums[2])
	case sums[1] != sums[3]:
		return errorf("%s: checksum of the rows sent %#x differs from the one received %#x", what, sums[1], sums[3])
	}
	return nil
}
