package shard

import (
	"os"
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
)

// A feature row of a partition that another rank of the same host serves
// is in a file this rank can map too: the ranks of a host share one copy
// of every partition's arrays in the page cache. A Store of a node array
// maps those partitions (OpenHostParts) and copies their rows of the array
// as it copies its own, where the transport would have asked the other
// rank for them: on a GPU host with one rank per GPU, every row lies on
// the host. Only the ranks of other hosts are asked. A compressed
// directory's files live in /dev/shm only while Serve maps them, so its
// stores ask as before.

// StoreHostRows sets whether a store of a node array (NewStore) copies the
// rows of partitions served by other ranks of this host from their files
// instead of asking those ranks (default on, except where the environment
// sets GNNRUN_HOST_ROWS=off: benchmarks of the transports turn it off).
func StoreHostRows(on bool) StoreOption {
	return func(o *storeOptions) error {
		o.hostRows = on
		return nil
	}
}

// hostRowsDefault is StoreHostRows' default: on unless GNNRUN_HOST_ROWS is
// "off".
func hostRowsDefault() bool { return os.Getenv("GNNRUN_HOST_ROWS") != "off" }

// hostRows are the rows of a node array in the partitions served by the
// other ranks of this host and not by this one, and those partitions,
// mapped here (OpenHostParts), to close.
type hostRows struct {
	rows  []ownRows
	parts []*Partition
}

// mapHostRows maps the partitions the other ranks of this host serve
// (none for a compressed directory) and returns their rows of node array
// key, of node type ti, rb bytes a row. It is collective over c: every
// rank fails when one cannot map a partition or finds its rows wrong,
// naming the file.
func mapHostRows(c *collective.Comm, s *Served, key featKey, ti, rb int) (hostRows, error) {
	parts, err := OpenHostParts(c, s)
	if err != nil {
		return hostRows{}, err
	}
	h := hostRows{parts: parts}
	for _, p := range parts {
		t := p.NodeFeat(key.typ, key.name)
		lo, hi := s.Book.TypeRange(p.ID, ti)
		switch {
		case t == nil:
			err = errorf("%s: partition %d has no node array %s", s.ConfigPath, p.ID, key)
		case int64(len(t.Data)) != (hi-lo)*int64(rb):
			err = errorf("%s: %d bytes for the %d rows of %d bytes of partition %d",
				resolve(s.ConfigPath, s.Config.Parts[p.ID].NodeFeats[key.String()]), len(t.Data), hi-lo, rb, p.ID)
		}
		if err != nil {
			break
		}
		h.rows = append(h.rows, ownRows{lo: lo, hi: hi, data: t.Data})
	}
	if err = collective.Agree(c, err); err != nil {
		h.close()
		return hostRows{}, err
	}
	return h, nil
}

// hostPartIDs returns, ascending, the partitions the other ranks of this
// host serve and this one does not: none for a compressed directory,
// whose files are in /dev/shm only while Serve maps them. It is
// collective over c.
func hostPartIDs(c *collective.Comm, s *Served) ([]int, error) {
	if s.Config.Compression == "zstd" {
		return nil, nil
	}
	node, mates, err := SplitHost(c)
	if err != nil {
		return nil, err
	}
	if err := node.Free(); err != nil {
		return nil, err
	}
	var parts []int
	for _, r := range mates {
		for _, q := range ServedParts(int(r), c.Size(), s.Config.NumParts) {
			if s.local[q] == nil && !slices.Contains(parts, q) {
				parts = append(parts, q)
			}
		}
	}
	slices.Sort(parts)
	return parts, nil
}

// SplitHost returns the communicator of the ranks of this rank's host
// (c.SplitShared), which the caller frees, and their ranks in c in the
// order of their ranks in it. It is collective over c.
func SplitHost(c *collective.Comm) (*collective.Comm, []int64, error) {
	node, err := c.SplitShared()
	if err != nil {
		return nil, nil, err
	}
	mates, _, err := collective.Allgatherv(node, []int64{int64(c.Rank())})
	if err != nil {
		node.Free()
		return nil, nil, err
	}
	return node, mates, nil
}

// OpenHostParts maps the partitions that the other ranks of this host
// serve and this rank does not (none for a compressed directory), for
// reading them as its own: the host's ranks share their files in the page
// cache. Their serving ranks checked them (Serve). The caller closes
// them. It is collective over c: every rank fails when one cannot map a
// file, naming it.
func OpenHostParts(c *collective.Comm, s *Served) ([]*Partition, error) {
	parts, err := hostPartIDs(c, s)
	if err != nil {
		return nil, err
	}
	ps, err := loadPartitions(s.ConfigPath, s.Config, parts, func(rel string) (*graph.Tensor, mapping, error) {
		return mapArray(resolve(s.ConfigPath, rel))
	})
	if err = collective.Agree(c, err); err != nil {
		CloseAll(ps)
		return nil, err
	}
	return ps, nil
}

// close unmaps the partitions.
func (h *hostRows) close() error {
	err := CloseAll(h.parts)
	h.parts, h.rows = nil, nil
	return err
}
