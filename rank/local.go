package rank

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// LocalOption configures RunLocal.
type LocalOption func(*localOptions) error

type localOptions struct {
	ranksPerHost int
	timeout      time.Duration
}

func (o *localOptions) setDefault(size int) {
	o.ranksPerHost = size
	o.timeout = 2 * time.Minute
}

// RanksPerHost places n consecutive ranks on each pretend host, so
// SplitShared and host counts can be tested in one process.
func RanksPerHost(n int) LocalOption {
	return func(o *localOptions) error {
		if n < 1 {
			return fmt.Errorf("rank: ranks per host must be at least 1, got %d", n)
		}
		o.ranksPerHost = n
		return nil
	}
}

// Timeout fails the world if its ranks have not all returned after d
// (default 2 minutes), so a test that deadlocks fails instead of hanging.
func Timeout(d time.Duration) LocalOption {
	return func(o *localOptions) error {
		if d <= 0 {
			return fmt.Errorf("rank: timeout must be positive, got %v", d)
		}
		o.timeout = d
		return nil
	}
}

// RunLocal runs fn on size ranks, each a goroutine with its own Comm over an
// in-process world, and waits for all of them. When a rank returns an error,
// panics or aborts, the collectives of the others return ErrAborted, so
// nothing hangs. It returns the first rank's failure, as "rank R/P: ...",
// or nil when every rank returned nil.
func RunLocal(size int, fn func(c Comm) error, opts ...LocalOption) error {
	if size < 1 {
		return fmt.Errorf("rank: local world needs at least 1 rank, got %d", size)
	}
	var o localOptions
	o.setDefault(size)
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return err
		}
	}
	w := newWorld()
	members := make([]int, size)
	for i := range members {
		members[i] = i
	}
	g := w.newGroup(members)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		c := &localComm{g: g, rank: r, host: fmt.Sprintf("local%d", r/o.ranksPerHost), traffic: new(trafficCounter)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			aborted := true
			defer func() {
				if p := recover(); p != nil {
					errs[r] = fmt.Errorf("rank %d/%d: panic: %v\n%s", r, size, p, debug.Stack())
				} else if aborted && errs[r] == nil {
					errs[r] = fmt.Errorf("rank %d/%d: aborted", r, size)
				}
				if errs[r] != nil {
					w.fail(errs[r])
				}
			}()
			if err := fn(c); err != nil {
				errs[r] = fmt.Errorf("rank %d/%d: %w", r, size, err)
			}
			aborted = false
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(o.timeout):
		err := fmt.Errorf("rank: local world of %d ranks timed out after %v", size, o.timeout)
		w.fail(err)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		return err
	}
	return firstFailure(errs)
}

// firstFailure prefers a rank's own error over the ErrAborted its failure
// caused in the others.
func firstFailure(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, ErrAborted) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// world is the state all local communicators of one RunLocal share. One
// mutex and condition serve every group: local worlds are small.
type world struct {
	mu   sync.Mutex
	cond *sync.Cond
	err  error
}

func newWorld() *world {
	w := &world{}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *world) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.cond.Broadcast()
}

// group is the rendezvous of one communicator's members.
type group struct {
	w       *world
	members []int // world rank of each member
	slots   []any
	arrived int
	gen     uint64
	result  any
}

func (w *world) newGroup(members []int) *group {
	return &group{w: w, members: members, slots: make([]any, len(members))}
}

// meet deposits v as rank's contribution and returns once every member has
// deposited one. The last to arrive runs finish over all contributions under
// the lock; every member gets its result.
func (g *group) meet(rank int, v any, finish func(slots []any) any) (any, error) {
	w := g.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, ErrAborted
	}
	g.slots[rank] = v
	g.arrived++
	if g.arrived == len(g.slots) {
		slots := g.slots
		g.slots = make([]any, len(slots))
		g.arrived = 0
		if finish == nil {
			g.result = slots
		} else {
			g.result = finish(slots)
		}
		g.gen++
		w.cond.Broadcast()
		return g.result, nil
	}
	gen := g.gen
	for g.gen == gen && w.err == nil {
		w.cond.Wait()
	}
	if g.gen == gen {
		return nil, ErrAborted
	}
	// No member can complete the next meeting before this one leaves, so
	// g.result still belongs to this generation.
	return g.result, nil
}

type trafficCounter struct{ sent, received atomic.Int64 }

func (t *trafficCounter) add(sent, received int64) {
	t.sent.Add(sent)
	t.received.Add(received)
}

// localComm is one rank's view of a group.
type localComm struct {
	g       *group
	rank    int
	host    string
	traffic *trafficCounter
	freed   bool
}

func (c *localComm) Rank() int    { return c.rank }
func (c *localComm) Size() int    { return len(c.g.members) }
func (c *localComm) Host() string { return c.host }

func (c *localComm) Traffic() Traffic {
	return Traffic{Sent: c.traffic.sent.Load(), Received: c.traffic.received.Load()}
}

// exchange deposits v and returns every member's contribution.
func (c *localComm) exchange(v any) ([]any, error) {
	if c.freed {
		return nil, errors.New("rank: collective on a freed communicator")
	}
	res, err := c.g.meet(c.rank, v, nil)
	if err != nil {
		return nil, err
	}
	return res.([]any), nil
}

// Barrier implements Comm.
func (c *localComm) Barrier() error {
	_, err := c.exchange(nil)
	return err
}

// Alltoallv implements Comm. A second meeting keeps senders from reusing
// their buffers while receivers still copy out of them.
func (c *localComm) Alltoallv(send, recv [][]byte) error {
	if err := checkMessages(c.Size(), send, recv); err != nil {
		return err
	}
	all, err := c.exchange(send)
	if err != nil {
		return err
	}
	var bad error
	for i, v := range all {
		msg := v.([][]byte)[c.rank]
		if len(msg) != len(recv[i]) {
			bad = fmt.Errorf("rank: alltoallv: rank %d sends %d bytes to rank %d, which expects %d", i, len(msg), c.rank, len(recv[i]))
			continue
		}
		copy(recv[i], msg)
	}
	c.traffic.add(peerBytes(send, c.rank), peerBytes(recv, c.rank))
	if err := c.Barrier(); err != nil {
		return err
	}
	return bad
}

// peerBytes sums the lengths of the messages that leave the rank.
func peerBytes(msgs [][]byte, self int) int64 {
	var n int64
	for j, m := range msgs {
		if j != self {
			n += int64(len(m))
		}
	}
	return n
}

// Allgatherv implements Comm.
func (c *localComm) Allgatherv(send []byte, recv [][]byte) error {
	if len(recv) != c.Size() {
		return fmt.Errorf("rank: allgatherv needs %d receive slices, got %d", c.Size(), len(recv))
	}
	all, err := c.exchange(send)
	if err != nil {
		return err
	}
	var bad error
	for i, v := range all {
		msg := v.([]byte)
		if len(msg) != len(recv[i]) {
			bad = fmt.Errorf("rank: allgatherv: rank %d contributes %d bytes, rank %d expects %d", i, len(msg), c.rank, len(recv[i]))
			continue
		}
		copy(recv[i], msg)
	}
	c.traffic.add(int64(len(send))*int64(c.Size()-1), peerBytes(recv, c.rank))
	if err := c.Barrier(); err != nil {
		return err
	}
	return bad
}

// AllreduceInt64 implements Comm.
func (c *localComm) AllreduceInt64(in, out []int64, op Op) error {
	return allreduceLocal(c, in, out, op)
}

// AllreduceFloat64 implements Comm.
func (c *localComm) AllreduceFloat64(in, out []float64, op Op) error {
	return allreduceLocal(c, in, out, op)
}

func allreduceLocal[T int64 | float64](c *localComm, in, out []T, op Op) error {
	if len(in) != len(out) {
		return fmt.Errorf("rank: allreduce of %d values into %d", len(in), len(out))
	}
	all, err := c.exchange(in)
	if err != nil {
		return err
	}
	res := make([]T, len(in))
	var bad error
	for i, v := range all {
		x := v.([]T)
		if len(x) != len(res) {
			bad = fmt.Errorf("rank: allreduce: rank %d passes %d values, rank %d passes %d", i, len(x), c.rank, len(res))
			continue
		}
		if i == 0 {
			copy(res, x)
			continue
		}
		combine(res, x, op)
	}
	if c.Size() > 1 {
		c.traffic.add(int64(len(in))*8, int64(len(in))*8)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	copy(out, res)
	return bad
}

func combine[T int64 | float64](acc, x []T, op Op) {
	for k := range acc {
		switch op {
		case Sum:
			acc[k] += x[k]
		case Min:
			acc[k] = min(acc[k], x[k])
		case Max:
			acc[k] = max(acc[k], x[k])
		}
	}
}

// Bcast implements Comm.
func (c *localComm) Bcast(buf []byte, root int) error {
	if root < 0 || root >= c.Size() {
		return fmt.Errorf("rank: broadcast root %d out of range [0,%d)", root, c.Size())
	}
	all, err := c.exchange(buf)
	if err != nil {
		return err
	}
	src := all[root].([]byte)
	var bad error
	if len(src) != len(buf) {
		bad = fmt.Errorf("rank: broadcast: root %d sends %d bytes, rank %d expects %d", root, len(src), c.rank, len(buf))
	} else if c.rank != root {
		copy(buf, src)
		c.traffic.add(0, int64(len(buf)))
	} else {
		c.traffic.add(int64(len(buf))*int64(c.Size()-1), 0)
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	return bad
}

type splitKey struct{ color, key, rank int }

// Split implements Comm. It refuses a negative color, as the MPI world
// does, so code tested here cannot rely on one.
func (c *localComm) Split(color, key int) (Comm, error) {
	if color < 0 {
		return nil, fmt.Errorf("rank: split color must be non-negative, got %d", color)
	}
	res, err := c.g.meet(c.rank, splitKey{color, key, c.rank}, func(slots []any) any {
		byColor := map[int][]splitKey{}
		for _, s := range slots {
			k := s.(splitKey)
			byColor[k.color] = append(byColor[k.color], k)
		}
		groups := map[int]*group{}
		for col, ks := range byColor {
			sort.Slice(ks, func(a, b int) bool {
				if ks[a].key != ks[b].key {
					return ks[a].key < ks[b].key
				}
				return ks[a].rank < ks[b].rank
			})
			members := make([]int, len(ks))
			for i, k := range ks {
				members[i] = c.g.members[k.rank]
			}
			byColor[col] = ks
			groups[col] = c.g.w.newGroup(members)
		}
		return splitResult{byColor, groups}
	})
	if err != nil {
		return nil, err
	}
	sr := res.(splitResult)
	for i, k := range sr.byColor[color] {
		if k.rank == c.rank {
			return &localComm{g: sr.groups[color], rank: i, host: c.host, traffic: c.traffic}, nil
		}
	}
	panic("rank: split lost its own rank")
}

type splitResult struct {
	byColor map[int][]splitKey
	groups  map[int]*group
}

// Dup implements Comm.
func (c *localComm) Dup() (Comm, error) { return c.Split(0, c.rank) }

// SplitShared implements Comm: ranks with the same pretend host share memory.
func (c *localComm) SplitShared() (Comm, error) {
	all, err := c.exchange(c.host)
	if err != nil {
		return nil, err
	}
	color := 0
	for i, h := range all {
		if h.(string) == c.host {
			color = i
			break
		}
	}
	return c.Split(color, c.rank)
}

// Free implements Comm.
func (c *localComm) Free() error {
	err := c.Barrier()
	c.freed = true
	return err
}

// Abort implements Comm: it fails the world and ends the calling goroutine.
func (c *localComm) Abort(code int) {
	c.g.w.fail(fmt.Errorf("rank %d aborted the world with code %d: %w", c.g.members[c.rank], code, ErrAborted))
	runtime.Goexit()
}

// CreateWindow implements Comm.
func (c *localComm) CreateWindow(buf []byte) (Window, error) {
	all, err := c.exchange(buf)
	if err != nil {
		return nil, err
	}
	mem := make([][]byte, len(all))
	for i, v := range all {
		mem[i] = v.([]byte)
	}
	return &localWindow{rank: c.rank, mem: mem, traffic: c.traffic, free: c.Barrier}, nil
}

// localWindow reads other ranks' memory directly: a Get completes at once.
type localWindow struct {
	rank    int
	mem     [][]byte
	traffic *trafficCounter
	free    func() error
	locked  bool
}

func (w *localWindow) LockAll() error {
	if w.locked {
		return errors.New("rank: window already locked")
	}
	w.locked = true
	return nil
}

func (w *localWindow) Get(dst []byte, target int, offset int64) error {
	if !w.locked {
		return errors.New("rank: window get outside a lock epoch")
	}
	if target < 0 || target >= len(w.mem) {
		return fmt.Errorf("rank: window get from rank %d of %d", target, len(w.mem))
	}
	if offset < 0 || offset+int64(len(dst)) > int64(len(w.mem[target])) {
		return fmt.Errorf("rank: window get of bytes [%d,%d) beyond rank %d's %d bytes", offset, offset+int64(len(dst)), target, len(w.mem[target]))
	}
	copy(dst, w.mem[target][offset:])
	if target != w.rank {
		w.traffic.add(0, int64(len(dst)))
	}
	return nil
}

func (w *localWindow) GetBlocks(mem []byte, dst []int64, target int, src []int64, size int) error {
	if err := checkBlocks(mem, dst, src, size); err != nil {
		return err
	}
	for i, d := range dst {
		if err := w.Get(mem[d:d+int64(size)], target, src[i]); err != nil {
			return err
		}
	}
	return nil
}

func (w *localWindow) GetRanges(mem []byte, dst []int64, target int, src []int64, sizes []int) error {
	if err := checkRanges(mem, dst, src, sizes); err != nil {
		return err
	}
	for i, d := range dst {
		if err := w.Get(mem[d:d+int64(sizes[i])], target, src[i]); err != nil {
			return err
		}
	}
	return nil
}

func (w *localWindow) Flush(target int) error {
	if !w.locked {
		return errors.New("rank: window flush outside a lock epoch")
	}
	return nil
}

func (w *localWindow) FlushAll() error { return w.Flush(0) }

func (w *localWindow) UnlockAll() error {
	if !w.locked {
		return errors.New("rank: window unlock without lock")
	}
	w.locked = false
	return nil
}

func (w *localWindow) Free() error { return w.free() }
