package shard

import (
	"fmt"
	"slices"

	"gnnrun/collective"
)

// Which rank serves which partition, at any rank count P over K
// partitions. With P < K, rank r serves the partitions q with
// floor(q*P/K) = r: a run of consecutive partitions, so its nodes are one
// contiguous range of new IDs. With P >= K, rank r serves partition
// floor(r*K/P), and the P/K consecutive ranks of a partition (usually on
// one host, where they share one page-cache copy of its files) split the
// requests for it. P > K must be a multiple of K, so that every partition
// has as many ranks answering for it and none is a bottleneck.

// CheckRanks reports whether P ranks can serve K partitions.
func CheckRanks(ranks, parts int) error {
	if ranks < 1 || parts < 1 {
		return fmt.Errorf("shard: %d ranks for %d partitions", ranks, parts)
	}
	if ranks > parts && ranks%parts != 0 {
		return fmt.Errorf("shard: %d ranks cannot serve %d partitions: with more ranks than partitions the ranks must be a multiple of the partitions, so each partition has as many ranks answering for it (run %d or %d ranks, or dispatch into %d partitions)",
			ranks, parts, ranks/parts*parts, (ranks/parts+1)*parts, ranks)
	}
	return nil
}

// ServedParts returns the partitions rank serves when ranks ranks serve
// parts partitions, ascending.
func ServedParts(rank, ranks, parts int) []int {
	if ranks >= parts {
		return []int{rank * parts / ranks}
	}
	var out []int
	for q := rank * parts / ranks; q < parts && q*ranks/parts <= rank; q++ {
		if q*ranks/parts == rank {
			out = append(out, q)
		}
	}
	return out
}

// Served is what one rank serves of a partition directory: its partitions,
// open, and who serves each of the others.
type Served struct {
	Config     *Config
	ConfigPath string
	Book       *Book
	// Parts are this rank's partitions, ascending by ID.
	Parts []*Partition
	// Checks is what this rank's checks of the files cost.
	Checks OpenStats

	rank    int
	ranks   int
	local   []*Partition // per partition: open here, or nil
	servers [][]int      // per partition: the ranks serving it, ascending
	slots   int          // the most partitions one rank serves
}

// Serve opens on every rank of c the partitions ServedParts gives it. The
// arrays are memory-mapped read-only (a compressed directory is
// decompressed once per host into /dev/shm). First the files' CRC-32C are
// compared with the config's (see Checksums), the ranks serving a
// partition splitting its files; then every partition's structure is
// checked (bounds.go). It fails on every rank, naming the file, when one
// rank finds a file changed or malformed, or when P cannot serve K
// (CheckRanks). It is collective.
func Serve(c *collective.Comm, dir string, opts ...OpenOption) (*Served, error) {
	path, cfg, err := LoadConfig(c, dir)
	if err != nil {
		return nil, err
	}
	if err := CheckRanks(c.Size(), cfg.NumParts); err != nil {
		return nil, errorf("%s: %v", path, err)
	}
	s := &Served{Config: cfg, ConfigPath: path, Book: cfg.Book(), rank: c.Rank(), ranks: c.Size(),
		local: make([]*Partition, cfg.NumParts), servers: make([][]int, cfg.NumParts)}
	for r := range c.Size() {
		served := ServedParts(r, c.Size(), cfg.NumParts)
		s.slots = max(s.slots, len(served))
		for _, q := range served {
			s.servers[q] = append(s.servers[q], r)
		}
	}
	// The ranks of a partition split its files for the checksums.
	share := func(q, i int) bool {
		hs := s.servers[q]
		return hs[i%len(hs)] == s.rank
	}
	mine := ServedParts(c.Rank(), c.Size(), cfg.NumParts)
	if s.Parts, s.Checks, err = openParts(c, path, cfg, mine, share, opts); err != nil {
		return nil, err
	}
	for _, p := range s.Parts {
		s.local[p.ID] = p
	}
	return s, nil
}

// Local returns partition q when this rank serves it, else nil.
func (s *Served) Local(q int) *Partition { return s.local[q] }

// Server returns the rank this rank reads partition q from: itself when it
// serves q, else one of q's ranks, picked by this rank's number so the
// ranks asking spread over the ranks answering.
func (s *Served) Server(q int) int {
	hs := s.servers[q]
	if slices.Contains(hs, s.rank) {
		return s.rank
	}
	return hs[s.rank%len(hs)]
}

// Primary reports whether this rank is the first of the ranks serving
// partition q: the one that counts q once when the ranks sum something
// over all partitions.
func (s *Served) Primary(q int) bool { return s.servers[q][0] == s.rank }

// Slot returns the index of partition q among the partitions of each rank
// serving it (the same on all of them).
func (s *Served) Slot(q int) int {
	return q - ServedParts(s.servers[q][0], s.ranks, s.Config.NumParts)[0]
}

// Slots returns the most partitions one rank serves: how many one-sided
// windows cover every rank's partitions of one array.
func (s *Served) Slots() int { return s.slots }

// HasNodeArray reports whether every partition every rank serves has the
// node array name of node type ntype. It is collective.
func (s *Served) HasNodeArray(c *collective.Comm, ntype, name string) (bool, error) {
	has := true
	for _, p := range s.Parts {
		if p.NodeFeat(ntype, name) == nil {
			has = false
		}
	}
	return collective.All(c, has)
}

// Close releases the partitions' memory maps.
func (s *Served) Close() error {
	var first error
	for _, p := range s.Parts {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.Parts = nil
	return first
}
