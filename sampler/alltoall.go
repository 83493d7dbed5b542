package sampler

import (
	"errors"
	"fmt"

	"gnnrun/collective"
)

// alltoallDraws samples remote frontier nodes at their owners: one
// exchange sends every rank the nodes it serves (with the batch's
// exclusions of those nodes), each rank draws them exactly as their own
// rank would, and a second exchange brings the edges back. Every rank
// takes part in both exchanges of every layer of every batch.
//
// A request to a rank is int64s: status, epoch, batch, layer, n, the n
// nodes, m, and m exclusions of 4 (dst, etype, eid, src). The reply is the
// status, then per node its edge count and edgeWidth values per edge.
type alltoallDraws struct {
	sm         *Sampler
	send, back [][]int64
	out        edgeList
}

// The status word that leads every message.
const (
	statusOK     = 0
	statusFailed = 1
)

var errPeerFailed = errors.New("sampler: another rank failed while sampling this batch")

func (a *alltoallDraws) close() error { return nil }

// edgeWidth is the int64s of one edge in a reply: source, edge ID, type,
// and the original edge ID when asked for.
func (a *alltoallDraws) edgeWidth() int {
	if a.sm.o.OrigEIDs {
		return 4
	}
	return 3
}

func (a *alltoallDraws) draw(epoch int, batch int64, layer int, nodes []int64, parts []int, excl map[int64][]Exclusion, out *edgeList, counts []int32, failed bool) ([]int32, error) {
	sm := a.sm
	n := sm.c.Size()
	order := a.requests(epoch, batch, layer, nodes, parts, excl, failed)
	before := sm.c.Traffic()
	asked, err := collective.Exchange(sm.c, a.send)
	if err != nil {
		return nil, err
	}
	answerErr := a.answer(asked)
	if answerErr == nil && anyFailed(asked) {
		answerErr = errPeerFailed
	}
	got, err := collective.Exchange(sm.c, a.back)
	if err != nil {
		return nil, err
	}
	after := sm.c.Traffic()
	sm.stats.Sent += after.Sent - before.Sent
	sm.stats.Received += after.Received - before.Received
	if failed || answerErr != nil {
		return nil, answerErr // nil when this rank failed already: its own error is reported
	}
	if anyFailed(got) {
		return nil, errPeerFailed
	}
	return a.unpack(got, order, len(nodes), n, out, counts)
}

// requests builds this rank's request to every rank and returns, per
// node, the rank it was sent to.
func (a *alltoallDraws) requests(epoch int, batch int64, layer int, nodes []int64, parts []int, excl map[int64][]Exclusion, failed bool) []int {
	sm := a.sm
	n := sm.c.Size()
	if len(a.send) != n {
		a.send, a.back = make([][]int64, n), make([][]int64, n)
	}
	status := int64(statusOK)
	if failed {
		status = statusFailed
	}
	order := make([]int, len(nodes))
	perRank := make([][]int64, n)
	for i, v := range nodes {
		r := sm.served.Server(parts[i])
		order[i] = r
		perRank[r] = append(perRank[r], v)
	}
	for r := range n {
		m := append(a.send[r][:0], status, int64(epoch), batch, int64(layer), int64(len(perRank[r])))
		m = append(m, perRank[r]...)
		var xs []Exclusion
		for _, v := range perRank[r] {
			xs = append(xs, excl[v]...)
		}
		m = append(m, int64(len(xs)))
		for _, x := range xs {
			m = append(m, x.Dst, int64(x.EType), x.EID, x.Src)
		}
		a.send[r] = m
	}
	return order
}

// answer draws the nodes each rank asked for into a.back; a malformed or
// misdirected request is an error (still answered, with the failed status).
func (a *alltoallDraws) answer(asked [][]int64) error {
	w := a.edgeWidth()
	var first error
	for r, m := range asked {
		reply := append(a.back[r][:0], statusOK)
		err := a.answerOne(m, w, &reply)
		if err != nil {
			reply = append(reply[:0], statusFailed)
			if first == nil {
				first = fmt.Errorf("sampler: answering rank %d: %w", r, err)
			}
		}
		a.back[r] = reply
	}
	return first
}

func (a *alltoallDraws) answerOne(m []int64, w int, reply *[]int64) error {
	sm := a.sm
	if len(m) < 6 {
		return fmt.Errorf("request of %d values", len(m))
	}
	if m[0] != statusOK {
		return nil // the asking rank failed: it reads no answer
	}
	epoch, batch, layer, k := int(m[1]), m[2], int(m[3]), int(m[4])
	if layer < 0 || layer >= len(sm.fanouts) || k < 0 || 5+k >= len(m) {
		return fmt.Errorf("malformed request (layer %d, %d nodes, %d values)", layer, k, len(m))
	}
	nodes := m[5 : 5+k]
	xm := int(m[5+k])
	xs := m[6+k:]
	if xm < 0 || len(xs) != 4*xm {
		return fmt.Errorf("malformed exclusions (%d announced, %d values)", xm, len(xs))
	}
	excl := map[int64][]Exclusion{}
	for i := range xm {
		x := Exclusion{Dst: xs[4*i], EType: int(xs[4*i+1]), EID: xs[4*i+2], Src: xs[4*i+3]}
		excl[x.Dst] = append(excl[x.Dst], x)
	}
	key := BatchKey(sm.o.Seed, epoch, batch)
	book := sm.served.Book
	for _, v := range nodes {
		if v < 0 || v >= book.NumNodes() {
			return fmt.Errorf("node %d outside the graph", v)
		}
		vw := sm.views[book.Part(v)]
		if vw == nil {
			return fmt.Errorf("node %d of partition %d, which this rank does not serve", v, book.Part(v))
		}
		a.out.reset()
		sm.draws.draw(vw, v-vw.p.Lo, v, key, layer, excl[v], &a.out)
		*reply = append(*reply, int64(a.out.len()))
		for j := range a.out.len() {
			*reply = append(*reply, a.out.src[j], a.out.eid[j], int64(a.out.etype[j]))
			if w == 4 {
				*reply = append(*reply, a.out.orig[j])
			}
		}
	}
	return nil
}

// anyFailed reports whether a message of any rank carries the failed
// status.
func anyFailed(msgs [][]int64) bool {
	for _, m := range msgs {
		if len(m) > 0 && m[0] == statusFailed {
			return true
		}
	}
	return false
}

// unpack appends the replies' edges in the order of the nodes asked for.
func (a *alltoallDraws) unpack(got [][]int64, order []int, nodes, ranks int, out *edgeList, counts []int32) ([]int32, error) {
	w := a.edgeWidth()
	at := make([]int, ranks)
	for r := range at {
		at[r] = 1 // after the status
	}
	for i := range nodes {
		r := order[i]
		m := got[r]
		if at[r] >= len(m) {
			return nil, fmt.Errorf("sampler: rank %d answered fewer nodes than asked", r)
		}
		c := int(m[at[r]])
		at[r]++
		if c < 0 || at[r]+c*w > len(m) {
			return nil, fmt.Errorf("sampler: rank %d answered %d edges beyond its reply", r, c)
		}
		for j := range c {
			e := m[at[r]+j*w:]
			out.src = append(out.src, e[0])
			out.eid = append(out.eid, e[1])
			out.etype = append(out.etype, int16(e[2]))
			if w == 4 {
				out.orig = append(out.orig, e[3])
			}
		}
		at[r] += c * w
		counts = append(counts, int32(c))
	}
	return counts, nil
}
