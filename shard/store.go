package shard

import (
	"fmt"
	"slices"
	"sync"

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

type storeOptions struct {
	budget, copyWorkers int
	hostRows            bool
}

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

// StoreCopyWorkers splits a Pull's row copies over n goroutines (default
// 1): the rows it finds on this rank and, with the alltoall transport, the
// rows it answers and receives. One core copying random rows keeps only a
// few in flight and reaches a fraction of the memory system's bandwidth
// (0.36-0.45 µs a 512-byte row on a 16-core Xeon, inside the loader);
// for ranks with cores to spare. Pulls of fewer than parallelCopyBytes
// copy on one.
func StoreCopyWorkers(n int) StoreOption {
	return func(o *storeOptions) error {
		if n < 1 {
			return fmt.Errorf("shard: store copy workers must be positive, got %d", n)
		}
		o.copyWorkers = n
		return nil
	}
}

// parallelCopyBytes is the least a Pull's copies must move to be split
// over the copy workers: starting and waiting for a goroutine costs
// microseconds, a 512-byte row a few hundred nanoseconds. (A variable for
// the tests, whose pulls are small.)
var parallelCopyBytes int64 = 256 << 10

// StoreStats counts what a Store fetched.
type StoreStats struct {
	Pulls, LocalRows, RemoteRows, RemoteBytes, Steps int64
	// HostRows are the local rows of partitions other ranks of this host
	// serve (StoreHostRows).
	HostRows int64
}

// Store serves the rows of one per-node array of a partitioned graph (a
// feature, label or mask of one node type, or the original node IDs) by
// global node ID, from every rank that serves partitions. A Store is used
// by one goroutine at a time.
type Store struct {
	c        *collective.Comm
	t        Transport
	what     string
	rowBytes int
	// own lists this rank's partitions' rows: the common case of a Pull,
	// answered from memory.
	own []ownRows
	// near is own and the rows of the partitions of this host's other
	// ranks, mapped from their files (hostRows): the rows a Pull copies.
	near []ownRows
	host hostRows
	// nearAll says every rank's near holds every partition's rows (one
	// rank, or one host with host rows): no Pull anywhere has a remote
	// row, and an alltoall Pull skips its exchanges.
	nearAll bool
	locate  func(id int64) (part int, row int64, err error)
	served  *Served
	server  []int // per partition, the rank this one reads it from
	// copyWorkers is the goroutines a Pull's copies are split over.
	copyWorkers int
	wins        []rank.Window // per slot (see Served.Slot), over each rank's rows
	budget      int
	stats       StoreStats
	// local is per partition this rank's rows of it, or nil.
	local   [][]byte
	scratch pullScratch
}

// Touch reads a byte of every page of this rank's rows, so that pulls
// timed after it find them mapped, as a store that has served a while
// does; it returns what it read (keep it, so that the reads stay).
func (s *Store) Touch() byte {
	var x byte
	for _, o := range s.own {
		for i := 0; i < len(o.data); i += 4096 {
			x ^= o.data[i]
		}
	}
	return x
}

// ownRows are the rows of the IDs [lo, hi) in one of this rank's
// partitions, row id-lo at data[(id-lo)*rowBytes:].
type ownRows struct {
	lo, hi int64
	data   []byte
}

// pullScratch holds the buffers of a Pull, reused by the next one so a
// stream of pulls does not fault in fresh pages every time.
type pullScratch struct {
	rem          []remote
	remOf        [][]remote // per copy worker: its range's remote rows
	order        []int
	rows, asked  []int64
	reply, got   []byte
	counts, next []int
	src, dst     [][]int64 // RMA: per (holder, slot), offsets there and here
}

// NewStore returns the store of node array name of node type ntype over
// the partitions s serves on each rank of c: a rank reads its partitions
// from memory and each other partition from one of the ranks serving it.
// It is collective.
func NewStore(c *collective.Comm, s *Served, ntype, name string, t Transport, opts ...StoreOption) (*Store, error) {
	var err error
	dtype, shape := graph.InvalidDType, []int64(nil)
	rows := make([][]byte, len(s.Parts))
	if slices.Index(s.Config.NodeTypes, ntype) < 0 {
		err = errorf("store: no node type %q (types %v)", ntype, s.Config.NodeTypes)
	} else {
		for k, p := range s.Parts {
			ten := p.NodeFeat(ntype, name)
			if ten == nil {
				err = errorf("store: partition %d has no node array %s/%s", p.ID, ntype, name)
				break
			}
			if k > 0 && (ten.DType != dtype || !slices.Equal(ten.RowShape(), shape)) {
				err = errorf("store: node array %s/%s is %s%v in partition %d, %s%v in partition %d", ntype, name, ten.DType, ten.RowShape(), p.ID, dtype, shape, s.Parts[0].ID)
				break
			}
			dtype, shape = ten.DType, ten.RowShape()
			rows[k] = ten.Data
		}
	}
	if err := collective.Agree(c, err); err != nil {
		return nil, err
	}
	rb := dtype.Size()
	for _, d := range shape {
		rb *= int(d)
	}
	return newRowStore(c, s, ntype, fmt.Sprintf("%s/%s", ntype, name), rows, rb, t, &featKey{ntype, name}, opts)
}

// NewRowStore returns a store of rows of rowBytes per node of type ntype
// that the caller computed: rows[k] holds the rows of the nodes of the type
// in s.Parts[k], in new-ID order. what names the rows in errors. It is
// collective.
func NewRowStore(c *collective.Comm, s *Served, ntype, what string, rows [][]byte, rowBytes int, t Transport, opts ...StoreOption) (*Store, error) {
	return newRowStore(c, s, ntype, what, rows, rowBytes, t, nil, opts)
}

// newRowStore is NewRowStore; key, when not nil, names the node array the
// rows are, whose files the store maps for the partitions of this host's
// other ranks (StoreHostRows).
func newRowStore(c *collective.Comm, s *Served, ntype, what string, rows [][]byte, rowBytes int, t Transport, key *featKey, opts []StoreOption) (*Store, error) {
	ti := slices.Index(s.Config.NodeTypes, ntype)
	var err error
	if ti < 0 {
		err = errorf("store %s: no node type %q (types %v)", what, ntype, s.Config.NodeTypes)
	} else if len(rows) != len(s.Parts) {
		err = errorf("store %s: rows of %d partitions for the %d served here", what, len(rows), len(s.Parts))
	}
	own := make([]ownRows, len(s.Parts))
	for k, p := range s.Parts {
		if err != nil {
			break
		}
		own[k].lo, own[k].hi = s.Book.TypeRange(p.ID, ti)
		own[k].data = rows[k]
		if int64(len(rows[k])) != (own[k].hi-own[k].lo)*int64(rowBytes) {
			err = errorf("store %s: %d bytes of rows for the %d nodes of type %s in partition %d, rows of %d bytes", what, len(rows[k]), own[k].hi-own[k].lo, ntype, p.ID, rowBytes)
		}
	}
	if err := collective.Agree(c, err); err != nil {
		return nil, err
	}
	book := s.Book
	locate := func(id int64) (int, int64, error) {
		if id < 0 || id >= book.NumNodes() {
			return 0, 0, errorf("store: node ID %d outside [0,%d)", id, book.NumNodes())
		}
		part, typ, row := book.TypeRow(id)
		if typ != ti {
			return 0, 0, errorf("store: node %d is of type %q; this store serves %s", id, s.Config.NodeTypes[typ], what)
		}
		return part, row, nil
	}
	o, err := storeOpts(opts)
	if err != nil {
		return nil, err
	}
	st, err := newStore(c, s, what, own, rowBytes, locate, t, o)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return st.withNearAgreed()
	}
	// The ranks agree, so that all or none map (the environment that sets
	// the default may differ between them).
	on, err := collective.All(c, o.hostRows)
	if err == nil && !on {
		return st.withNearAgreed()
	}
	if err == nil {
		st.host, err = mapHostRows(c, s, *key, ti, rowBytes)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	st.near = append(slices.Clip(own), st.host.rows...)
	return st.withNearAgreed()
}

// withNearAgreed sets nearAll, whether every rank of the store holds or
// maps the rows of every partition, and returns the store (closed, on an
// error). With alltoall, a Pull of such a store exchanges nothing, where
// it would otherwise agree with every other rank's Pull on its steps,
// holding each rank to the slowest one's pace every batch. It is
// collective.
func (s *Store) withNearAgreed() (*Store, error) {
	all, err := collective.All(s.c, len(s.near) == s.served.Config.NumParts)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.nearAll = all
	return s, nil
}

// NewOrigIDStore returns the store of the type-wise original ID (one int64
// row) of every node, whatever its type. It is collective.
func NewOrigIDStore(c *collective.Comm, s *Served, t Transport, opts ...StoreOption) (*Store, error) {
	own := make([]ownRows, len(s.Parts))
	for k, p := range s.Parts {
		own[k] = ownRows{lo: p.Lo, hi: p.Hi, data: graph.AsBytes(p.OrigNIDs)}
	}
	book := s.Book
	locate := func(id int64) (int, int64, error) {
		if id < 0 || id >= book.NumNodes() {
			return 0, 0, errorf("store: node ID %d outside [0,%d)", id, book.NumNodes())
		}
		part, local := book.Locate(id)
		return part, local, nil
	}
	o, err := storeOpts(opts)
	if err != nil {
		return nil, err
	}
	st, err := newStore(c, s, fileOrigNIDs, own, 8, locate, t, o)
	if err != nil {
		return nil, err
	}
	return st.withNearAgreed()
}

// storeOpts returns the options opts set over the defaults.
func storeOpts(opts []StoreOption) (storeOptions, error) {
	o := storeOptions{budget: 256 << 20, copyWorkers: 1, hostRows: hostRowsDefault()}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

func newStore(c *collective.Comm, s *Served, what string, own []ownRows, rb int, locate func(int64) (int, int64, error), t Transport, o storeOptions) (*Store, error) {
	if t != Alltoall && t != RMA {
		return nil, fmt.Errorf("shard: unknown transport %d", int(t))
	}
	if s.Config.NumParts >= 1<<(63-rowKeyBits) {
		return nil, errorf("store %s: %d partitions; a store serves at most %d", what, s.Config.NumParts, 1<<(63-rowKeyBits)-1)
	}
	dc, err := c.Dup()
	if err != nil {
		return nil, err
	}
	st := &Store{c: dc, t: t, what: what, own: own, near: own, locate: locate, served: s, budget: o.budget, copyWorkers: o.copyWorkers,
		local: make([][]byte, s.Config.NumParts), server: make([]int, s.Config.NumParts)}
	for k, p := range s.Parts {
		st.local[p.ID] = own[k].data
	}
	for q := range st.server {
		st.server[q] = s.Server(q)
	}
	if err := st.agreeRowBytes(rb); err != nil {
		dc.Free()
		return nil, err
	}
	if t == RMA {
		if err := collective.CheckOneSided(dc); err != nil {
			dc.Free()
			return nil, err
		}
		if err := st.openWindows(); err != nil {
			st.closeWindows()
			dc.Free()
			return nil, err
		}
	}
	return st, nil
}

// agreeRowBytes checks that every rank has rows of the same size.
func (s *Store) agreeRowBytes(rb int) error {
	size := int64(rb)
	if len(s.own) == 0 {
		size = -1 // serves nothing: takes the others' size
	}
	hi, err := collective.Max(s.c, size)
	if err != nil {
		return err
	}
	if size < 0 {
		size = hi
	}
	lo, err := collective.Min(s.c, size)
	if err != nil {
		return err
	}
	if lo != hi || hi < 0 {
		return errorf("store %s: the ranks' rows differ in size (%d to %d bytes) or no rank serves a partition", s.what, lo, hi)
	}
	s.rowBytes = int(hi)
	return nil
}

// openWindows exposes, in one window per slot, each rank's rows of its
// partition in that slot (none where it serves fewer), and starts the
// passive-target epoch of every window.
func (s *Store) openWindows() error {
	for slot := range s.served.Slots() {
		var buf []byte
		if slot < len(s.own) {
			buf = s.own[slot].data
		}
		w, err := s.c.CreateWindow(buf)
		if err != nil {
			return err
		}
		s.wins = append(s.wins, w)
		if err := w.LockAll(); err != nil {
			return err
		}
	}
	return nil
}

// closeWindows ends the epochs and frees the windows; it is collective.
func (s *Store) closeWindows() error {
	var first error
	for _, w := range s.wins {
		if err := w.UnlockAll(); err != nil && first == nil {
			first = err
		}
		if err := w.Free(); err != nil && first == nil {
			first = err
		}
	}
	s.wins = nil
	return first
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
	part   int
	row    int64
}

// PullInto is Pull into dst, which must hold len(ids) rows.
func (s *Store) PullInto(dst []byte, ids []int64) error {
	if len(dst) != len(ids)*s.rowBytes {
		return errorf("store %s: %d bytes for %d rows of %d", s.what, len(dst), len(ids), s.rowBytes)
	}
	rb := int64(s.rowBytes)
	rem, local, host, bad := s.pullOwn(dst, ids)
	s.stats.LocalRows += local
	s.stats.HostRows += host
	s.stats.Pulls++
	s.stats.RemoteRows += int64(len(rem))
	s.stats.RemoteBytes += int64(len(rem)) * rb
	if s.t == RMA {
		if bad != nil {
			return bad
		}
		return s.pullRMA(dst, rem)
	}
	if s.nearAll {
		return bad // nothing remote here or at any other rank
	}
	return s.pullAlltoall(dst, rem, bad)
}

// pullOwn copies into dst the rows of ids this rank holds or maps and
// returns the others (in the order of ids), the rows copied, those of them
// from the partitions of this host's other ranks, and the first ID that
// cannot be found (the rows after it are neither copied nor listed). The
// copy workers each take a contiguous range of ids.
func (s *Store) pullOwn(dst []byte, ids []int64) ([]remote, int64, int64, error) {
	sc := &s.scratch
	w := s.copySplit(len(ids))
	if w == 1 {
		rem, local, host, bad := s.pullOwnRange(dst, ids, 0, sc.rem[:0])
		sc.rem = rem
		return rem, local, host, bad
	}
	for len(sc.remOf) < w {
		sc.remOf = append(sc.remOf, nil)
	}
	locals, hosts, bads := make([]int64, w), make([]int64, w), make([]error, w)
	s.inRanges(len(ids), w, func(k, lo, hi int) {
		sc.remOf[k], locals[k], hosts[k], bads[k] = s.pullOwnRange(dst, ids[lo:hi], lo, sc.remOf[k][:0])
	})
	rem, local, host := sc.rem[:0], int64(0), int64(0)
	var bad error
	for k := range w {
		rem, local, host = append(rem, sc.remOf[k]...), local+locals[k], host+hosts[k]
		if bad = bads[k]; bad != nil {
			break
		}
	}
	sc.rem = rem
	return rem, local, host, bad
}

// pullOwnRange is pullOwn for ids, which start at index base of the
// Pull's, appending the remote rows to rem.
func (s *Store) pullOwnRange(dst []byte, ids []int64, base int, rem []remote) ([]remote, int64, int64, error) {
	me, rb, nOwn := s.c.Rank(), int64(s.rowBytes), len(s.own)
	var local, host int64
next:
	for j, id := range ids {
		i := int64(base + j)
		for k, o := range s.near {
			if id >= o.lo && id < o.hi {
				row := id - o.lo
				copy(dst[i*rb:(i+1)*rb], o.data[row*rb:(row+1)*rb])
				local++
				if k >= nOwn {
					host++
				}
				continue next
			}
		}
		part, row, err := s.locate(id)
		if err != nil {
			return rem, local, host, err
		}
		srv := s.server[part]
		if srv == me {
			copy(dst[i*rb:(i+1)*rb], s.local[part][row*rb:(row+1)*rb])
			local++
			continue
		}
		rem = append(rem, remote{at: int(i), server: srv, part: part, row: row})
	}
	return rem, local, host, nil
}

// copySplit returns how many copy workers n rows are split over.
func (s *Store) copySplit(n int) int {
	if s.copyWorkers <= 1 || int64(n)*int64(s.rowBytes) < parallelCopyBytes {
		return 1
	}
	return max(1, min(s.copyWorkers, n))
}

// inRanges runs f(k, lo, hi) for w contiguous ranges [lo, hi) that cover
// [0, n), side by side when w > 1, and returns when all are done.
func (s *Store) inRanges(n, w int, f func(k, lo, hi int)) {
	if w <= 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(k, k*n/w, (k+1)*n/w)
		}()
	}
	wg.Wait()
}

// Close releases the store's windows and communicator; it is collective.
func (s *Store) Close() error {
	first := s.closeWindows()
	if err := s.host.close(); err != nil && first == nil {
		first = err
	}
	if err := s.c.Free(); err != nil && first == nil {
		first = err
	}
	return first
}
