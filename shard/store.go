package shard

import (
	"fmt"
	"slices"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
)

// Transport is how a Store fetches rows held by other ranks.
type Transport int

// The transports. Both return the same bytes.
const (
	// Alltoall sends the requests to the rows' holders and the rows back in
	// two all-to-alls on the store's own communicator: every rank takes
	// part in every Pull, with or without IDs of its own.
	Alltoall Transport = iota
	// RMA reads remote rows with one-sided MPI gets from a window over each
	// rank's array, under a passive-target lock held for the store's life:
	// the holder's CPU takes no part, and a Pull involves no other rank.
	RMA
)

// String returns the transport's flag name.
func (t Transport) String() string {
	switch t {
	case Alltoall:
		return "alltoall"
	case RMA:
		return "rma"
	}
	return fmt.Sprintf("Transport(%d)", int(t))
}

// ParseTransport parses "alltoall" or "rma".
func ParseTransport(s string) (Transport, error) {
	switch s {
	case "alltoall":
		return Alltoall, nil
	case "rma":
		return RMA, nil
	}
	return 0, fmt.Errorf("shard: transport %q is not alltoall or rma", s)
}

// StoreOption configures a Store.
type StoreOption func(*storeOptions) error

type storeOptions struct{ budget int }

// StoreBudget bounds the reply bytes one rank receives in one step of an
// all-to-all Pull (default 256 MiB); a bigger Pull takes several steps.
func StoreBudget(n int) StoreOption {
	return func(o *storeOptions) error {
		if n < 1 {
			return fmt.Errorf("shard: store budget must be positive, got %d", n)
		}
		o.budget = n
		return nil
	}
}

// StoreStats counts what a Store fetched.
type StoreStats struct {
	Pulls, LocalRows, RemoteRows, RemoteBytes, Steps int64
}

// Store serves the rows of one per-node array of a partitioned graph (a
// feature, label or mask of one node type, or the original node IDs) by
// global node ID, from every rank that opened a partition. A Store is used
// by one goroutine at a time.
type Store struct {
	c        *collective.Comm
	t        Transport
	what     string
	rowBytes int
	data     []byte // this rank's rows
	locate   func(id int64) (part int, row int64, err error)
	// own is the range of IDs this rank serves itself (row = id - own[0]):
	// the common case of a Pull, answered without a search.
	own     [2]int64
	server  []int // per partition, the rank this one reads it from
	win     rank.Window
	budget  int
	stats   StoreStats
	scratch pullScratch
}

// pullScratch holds the buffers of a Pull, reused by the next one so a
// stream of pulls does not fault in fresh pages every time.
type pullScratch struct {
	rem          []remote
	order        []int
	rows, asked  []int64
	reply, got   []byte
	counts, next []int
}

// NewStore returns the store of node array name of node type ntype, over
// the partitions the ranks of c opened (p.ID < 0: none; then only the
// config is used). Every partition must be open on some rank; a rank reads
// its own partition from memory and each other partition from one of the
// ranks holding it. It is collective.
func NewStore(c *collective.Comm, p *Partition, ntype, name string, t Transport, opts ...StoreOption) (*Store, error) {
	ti := slices.Index(p.Config.NodeTypes, ntype)
	var err error
	var data []byte
	dtype, shape := graph.InvalidDType, []int64(nil)
	switch {
	case ti < 0:
		err = errorf("store: no node type %q (types %v)", ntype, p.Config.NodeTypes)
	case p.ID >= 0:
		ten := p.NodeFeat(ntype, name)
		if ten == nil {
			err = errorf("store: partition %d has no node array %s/%s", p.ID, ntype, name)
		} else {
			data, dtype, shape = ten.Data, ten.DType, ten.RowShape()
		}
	}
	if err := collective.Agree(c, err); err != nil {
		return nil, err
	}
	rb := dtype.Size()
	for _, s := range shape {
		rb *= int(s)
	}
	book := p.Book
	locate := func(id int64) (int, int64, error) {
		if id < 0 || id >= book.NumNodes() {
			return 0, 0, errorf("store: node ID %d outside [0,%d)", id, book.NumNodes())
		}
		part, typ, row := book.TypeRow(id)
		if typ != ti {
			return 0, 0, errorf("store: node %d is of type %q; this store serves %s/%s", id, p.Config.NodeTypes[typ], ntype, name)
		}
		return part, row, nil
	}
	var own [2]int64
	if p.ID >= 0 {
		own[0], own[1] = book.TypeRange(p.ID, ti)
	}
	return newStore(c, p, fmt.Sprintf("%s/%s", ntype, name), data, rb, locate, own, t, opts)
}

// NewOrigIDStore returns the store of the type-wise original ID (one int64
// row) of every node, whatever its type. It is collective.
func NewOrigIDStore(c *collective.Comm, p *Partition, t Transport, opts ...StoreOption) (*Store, error) {
	var data []byte
	if p.ID >= 0 {
		data = graph.AsBytes(p.OrigNIDs)
	}
	book := p.Book
	locate := func(id int64) (int, int64, error) {
		if id < 0 || id >= book.NumNodes() {
			return 0, 0, errorf("store: node ID %d outside [0,%d)", id, book.NumNodes())
		}
		part, local := book.Locate(id)
		return part, local, nil
	}
	var own [2]int64
	if p.ID >= 0 {
		own[0], own[1] = p.Lo, p.Hi
	}
	return newStore(c, p, fileOrigNIDs, data, 8, locate, own, t, opts)
}

func newStore(c *collective.Comm, p *Partition, what string, data []byte, rb int, locate func(int64) (int, int64, error), own [2]int64, t Transport, opts []StoreOption) (*Store, error) {
	o := storeOptions{budget: 256 << 20}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if t != Alltoall && t != RMA {
		return nil, fmt.Errorf("shard: unknown transport %d", int(t))
	}
	dc, err := c.Dup()
	if err != nil {
		return nil, err
	}
	s := &Store{c: dc, t: t, what: what, data: data, locate: locate, own: own, budget: o.budget}
	if err := s.agreeLayout(p, rb); err != nil {
		dc.Free()
		return nil, err
	}
	if t == RMA {
		if s.win, err = dc.CreateWindow(data); err != nil {
			dc.Free()
			return nil, err
		}
		if err := s.win.LockAll(); err != nil {
			s.win.Free()
			dc.Free()
			return nil, err
		}
	}
	return s, nil
}

// agreeLayout checks that every holder has rows of the same size, and
// picks the rank each partition is read from.
func (s *Store) agreeLayout(p *Partition, rb int) error {
	me := s.c.Rank()
	size := int64(-1)
	if p.ID >= 0 {
		size = int64(rb)
	}
	hi, err := collective.Max(s.c, size)
	if err != nil {
		return err
	}
	if p.ID < 0 {
		size = hi
	}
	lo, err := collective.Min(s.c, size)
	if err != nil {
		return err
	}
	if lo != hi || hi < 0 {
		return errorf("store %s: the ranks' rows differ in size (%d to %d bytes) or no rank opened a partition", s.what, lo, hi)
	}
	s.rowBytes = int(hi)
	held, err := collective.Allgather(s.c, int64(p.ID))
	if err != nil {
		return err
	}
	k := p.Config.NumParts
	holders := make([][]int, k)
	for r, q := range held {
		if q >= 0 {
			holders[q] = append(holders[q], r)
		}
	}
	s.server = make([]int, k)
	for q, hs := range holders {
		switch {
		case len(hs) == 0:
			return errorf("store %s: partition %d is not open on any rank", s.what, q)
		case slices.Contains(hs, me):
			s.server[q] = me
		default:
			s.server[q] = hs[me%len(hs)]
		}
	}
	return nil
}

// RowBytes returns the bytes of one row.
func (s *Store) RowBytes() int { return s.rowBytes }

// Transport returns the store's transport.
func (s *Store) Transport() Transport { return s.t }

// Stats returns what the store fetched so far.
func (s *Store) Stats() StoreStats { return s.stats }

// Pull returns the rows of nodes ids, row i for ids[i]. With the alltoall
// transport every rank of the store must call Pull the same number of
// times (with no IDs if it has none).
func (s *Store) Pull(ids []int64) ([]byte, error) {
	dst := make([]byte, len(ids)*s.rowBytes)
	return dst, s.PullInto(dst, ids)
}

// remote is a row to fetch: where it goes and where it is.
type remote struct {
	at     int // index in ids
	server int
	row    int64
}

// PullInto is Pull into dst, which must hold len(ids) rows.
func (s *Store) PullInto(dst []byte, ids []int64) error {
	if len(dst) != len(ids)*s.rowBytes {
		return errorf("store %s: %d bytes for %d rows of %d", s.what, len(dst), len(ids), s.rowBytes)
	}
	me, rb := s.c.Rank(), int64(s.rowBytes)
	rem := s.scratch.rem[:0]
	var bad error
	for i, id := range ids {
		if id >= s.own[0] && id < s.own[1] {
			row := id - s.own[0]
			copy(dst[int64(i)*rb:int64(i+1)*rb], s.data[row*rb:(row+1)*rb])
			s.stats.LocalRows++
			continue
		}
		part, row, err := s.locate(id)
		if err != nil {
			bad = err
			break
		}
		srv := s.server[part]
		if srv == me {
			copy(dst[int64(i)*rb:], s.data[row*rb:(row+1)*rb])
			s.stats.LocalRows++
			continue
		}
		rem = append(rem, remote{at: i, server: srv, row: row})
	}
	s.scratch.rem = rem
	s.stats.Pulls++
	s.stats.RemoteRows += int64(len(rem))
	s.stats.RemoteBytes += int64(len(rem)) * rb
	if s.t == RMA {
		if bad != nil {
			return bad
		}
		return s.pullRMA(dst, rem)
	}
	return s.pullAlltoall(dst, rem, bad)
}

// Close releases the store's window and communicator; it is collective.
func (s *Store) Close() error {
	var first error
	if s.win != nil {
		if err := s.win.UnlockAll(); err != nil {
			first = err
		}
		if err := s.win.Free(); err != nil && first == nil {
			first = err
		}
		s.win = nil
	}
	if err := s.c.Free(); err != nil && first == nil {
		first = err
	}
	return first
}
