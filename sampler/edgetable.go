package sampler

import (
	"math/bits"
	"sync"

	"golang.org/x/sys/unix"

	"gnnrun/collective"
	"gnnrun/internal/parallel"
	"gnnrun/shard"
)

// edgeTable is the in-edges of the partitions a rank serves laid out for
// the sampler: the in-edge at CSC position q of partition p is entry
// base[p]+q, which holds its source's and its own global ID, so an edge
// drawn costs one random read where the partition's files take three (the
// local source, the halo source's global ID, the edge ID). An entry is
// one word, source<<shift | edge ID, when the graph's node and edge IDs
// fit 64 bits together (2^30 nodes and 2^34 edges do), else two words.
// It costs 8 (or 16) bytes per edge of the served partitions, once per
// rank (the samplers of a rank share it), or, with the host's partitions
// (HostGraph), once per host for all of them (newHostEdgeTable).
type edgeTable struct {
	words []uint64
	wide  bool // two words an entry: source, edge ID
	shift uint
	mask  uint64
	base  []int64 // per partition ID: its first entry, or -1 when not read here
	// served is the entries of the served partitions, the table's first.
	served int64
	// region is the range of addresses of a table of the host's
	// partitions (see newHostEdgeTable), nil for one in this rank's
	// memory alone (hugeWords).
	region []byte
}

// at returns the global source and edge IDs of entry i.
func (t *edgeTable) at(i int64) (src, eid int64) {
	if t.wide {
		return int64(t.words[2*i]), int64(t.words[2*i+1])
	}
	w := t.words[i]
	return int64(w >> t.shift), int64(w & t.mask)
}

// read puts the global source and edge IDs of entries pos into src and
// eid (as long as pos): one pass of independent loads, which the CPU keeps
// many of in flight.
func (t *edgeTable) read(pos, src, eid []int64) {
	src, eid = src[:len(pos)], eid[:len(pos)]
	if t.wide {
		for k, i := range pos {
			src[k], eid[k] = int64(t.words[2*i]), int64(t.words[2*i+1])
		}
		return
	}
	sh, m := t.shift, t.mask
	for k, i := range pos {
		w := t.words[i]
		src[k], eid[k] = int64(w>>sh), int64(w&m)
	}
}

// readWords puts the words of entries pos into w (as long as pos), for a
// table of one word an entry: what unpack reads back.
func (t *edgeTable) readWords(pos []int64, w []int64) {
	w = w[:len(pos)]
	for k, i := range pos {
		w[k] = int64(t.words[i])
	}
}

// unpack appends the global source and edge IDs of the words w (of a
// table of one word an entry) to src and eid.
func (t *edgeTable) unpack(w []int64, src, eid []int64) ([]int64, []int64) {
	sh, m := t.shift, t.mask
	for _, x := range w {
		src, eid = append(src, int64(uint64(x)>>sh)), append(eid, int64(uint64(x)&m))
	}
	return src, eid
}

// wideEdgeTables makes every edge table two words an entry, as a graph
// too large for one takes: for the tests of that layout on small graphs.
var wideEdgeTables = false

// blankEdgeTable returns the layout of an edge table of s's graph, no
// partition placed yet (every base -1).
func blankEdgeTable(s *shard.Served) *edgeTable {
	n, m := s.Book.NumNodes(), s.Book.NumEdges()
	eb := uint(bits.Len64(uint64(max(m-1, 0))))
	t := &edgeTable{shift: eb, mask: 1<<eb - 1, base: make([]int64, s.Config.NumParts)}
	t.wide = wideEdgeTables || eb+uint(bits.Len64(uint64(max(n-1, 0)))) > 64
	for q := range t.base {
		t.base[q] = -1
	}
	return t
}

// stride is the words of an entry.
func (t *edgeTable) stride() int64 {
	if t.wide {
		return 2
	}
	return 1
}

// newEdgeTable lays out the in-edges of the partitions s serves, in this
// rank's memory.
func newEdgeTable(s *shard.Served) *edgeTable {
	t := blankEdgeTable(s)
	for _, p := range s.Parts {
		t.base[p.ID] = t.served
		t.served += p.NumEdges()
	}
	t.words = hugeWords(int(t.served * t.stride()))
	t.fillParts(s.Parts, s.Checks.Workers)
	return t
}

// servedWords returns the words of the served partitions' entries: what
// the RMA readers of other ranks read.
func (t *edgeTable) servedWords() []uint64 { return t.words[:t.served*t.stride()] }

// free releases the table's memory; t must not be used after.
func (t *edgeTable) free() {
	if t.region != nil {
		_ = unix.Munmap(t.region)
	} else {
		freeHugeWords(t.words)
	}
	t.words, t.region = nil, nil
}

// fillParts writes the entries of the partitions parts at their bases, in
// pieces of fillPiece entries taken in turn by workers goroutines: the
// table of a graph of 2^24 edges took half a second on one core, most of
// it the first touches of the table's and the partitions' pages.
func (t *edgeTable) fillParts(parts []*shard.Partition, workers int) {
	type piece struct {
		p      *shard.Partition
		lo, hi int64
	}
	var pieces []piece
	for _, p := range parts {
		for lo := int64(0); lo < p.NumEdges(); lo += fillPiece {
			pieces = append(pieces, piece{p, lo, min(lo+fillPiece, p.NumEdges())})
		}
	}
	_ = parallel.Run(workers, len(pieces), func(_, i int) error {
		t.fill(pieces[i].p, pieces[i].lo, pieces[i].hi)
		return nil
	})
}

// fillPiece is the entries a worker of fillParts writes at a time (a
// variable for the tests' small graphs).
var fillPiece int64 = 1 << 20

// fill writes partition p's entries [lo, hi) at the partition's base.
func (t *edgeTable) fill(p *shard.Partition, lo, hi int64) {
	stride := t.stride()
	w := t.words[t.base[p.ID]*stride : (t.base[p.ID]+p.NumEdges())*stride]
	for q := lo; q < hi; q++ {
		l := p.Index(q)
		src := p.Lo + l
		if l >= p.NumInner {
			src = p.Local2Global[l]
		}
		if t.wide {
			w[2*q], w[2*q+1] = uint64(src), uint64(p.EdgeIDs[q])
		} else {
			w[q] = uint64(src)<<t.shift | uint64(p.EdgeIDs[q])
		}
	}
}

// The edge tables of the served sets of the samplers open in this
// process, with or without the host's partitions, with the number of
// samplers using each.
var edgeTables struct {
	sync.Mutex
	of map[tableKey]*sharedTable
}

// tableKey names an edge table: a served set, with the host's other
// partitions or not.
type tableKey struct {
	s    *shard.Served
	host bool
}

type sharedTable struct {
	ready chan struct{} // closed once made (or failed)
	t     *edgeTable
	why   string // why a table of the host's partitions holds the served ones alone
	err   error
	refs  int
}

// acquireEdgeTable returns the edge table of s and, when host is not nil,
// of host (the host's other partitions), made on first use: the samplers
// of a process made in the same order on every rank, the first one's
// making is collective over c (newHostEdgeTable). When the host's shared
// memory cannot hold the host's partitions, the table holds the served
// ones alone, and why says why.
func acquireEdgeTable(c *collective.Comm, s *shard.Served, host []*shard.Partition) (t *edgeTable, why string, err error) {
	if len(host) == 0 {
		host = nil
	}
	key := tableKey{s, host != nil}
	edgeTables.Lock()
	if edgeTables.of == nil {
		edgeTables.of = map[tableKey]*sharedTable{}
	}
	st := edgeTables.of[key]
	first := st == nil
	if first {
		st = &sharedTable{ready: make(chan struct{})}
		edgeTables.of[key] = st
	}
	st.refs++
	edgeTables.Unlock()
	if !first {
		<-st.ready
	} else {
		// Made outside the lock: in the tests' world, every rank's
		// sampler of a host makes its table at once.
		if host != nil {
			st.t, st.why, st.err = newHostEdgeTable(c, s, host)
		}
		if st.err == nil && st.t == nil {
			st.t = newEdgeTable(s)
		}
		close(st.ready)
	}
	if st.err != nil {
		releaseEdgeTable(s, host != nil)
		return nil, "", st.err
	}
	return st.t, st.why, nil
}

// releaseEdgeTable drops a sampler's use of the edge table of s, with the
// host's partitions or not.
func releaseEdgeTable(s *shard.Served, host bool) {
	edgeTables.Lock()
	defer edgeTables.Unlock()
	key := tableKey{s, host}
	if st := edgeTables.of[key]; st != nil {
		if st.refs--; st.refs == 0 {
			delete(edgeTables.of, key)
			if st.t != nil {
				st.t.free()
			}
		}
	}
}
