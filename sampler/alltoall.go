package sampler

import (
	"errors"
	"fmt"
	"time"

	"gnnrun/collective"
	"gnnrun/rank"
)

// alltoallDraws samples remote frontier nodes at their owners: one
// exchange sends every rank the nodes it serves (with the batch's
// exclusions of those nodes), each rank draws them exactly as their own
// rank would, and a second exchange brings the edges back. Every rank
// takes part in both exchanges of every layer of every batch.
//
// A request to a rank is int64s: status, epoch, batch, layer, n, the n
// nodes, m, and m exclusions of 4 (dst, etype, eid, src). The reply is the
// status, the n nodes' edge counts, then the E edges' sources and edge
// IDs, their types (for graphs of more than one edge type) and, when asked
// for, their original edge IDs, each a flat run of E values: the owner
// reads them from its edge table in one pass, and the asker copies each
// node's edges as runs. Where the edge table packs an edge's source and
// edge ID into one word (a graph whose node and edge IDs fit 64 bits
// together), the reply carries that word, one run instead of two: half
// the bytes of a reply of one edge type.
type alltoallDraws struct {
	sm         *Sampler
	send, back [][]int64
	// what the last exchanges brought, whose memory the next ones reuse
	asked, got [][]int64
	// scratch of a layer
	order   []int32 // per node asked, the rank asked
	perRank []int   // nodes asked of each rank
	excl    exclusionSet
	pos     []int64 // edge table entries drawn for the nodes asked of this rank
	types   []int16
	parts   []int16 // ... and their partitions, with Options.OrigEIDs
	// nodeParts is the partition of each node asked of this rank.
	nodeParts []int32
	// between ask and collect
	before    rank.Traffic
	answerErr error
}

// The status word that leads every message.
const (
	statusOK     = 0
	statusFailed = 1
)

var errPeerFailed = errors.New("sampler: another rank failed while sampling this batch")

func (a *alltoallDraws) close() error { return nil }

// The runs of E values of a reply, in order, where present.
const (
	runSrc   = iota // the sources, or the table's words of source and edge ID
	runEID          // where the table's words are not sent
	runType         // with more than one edge type
	runOrig         // with Options.OrigEIDs
	runKinds        // the most runs a reply has
)

// runsOf returns where each run of a reply is, as its index among the
// reply's runs (-1 where absent), and how many there are.
func (a *alltoallDraws) runsOf() (at [runKinds]int, n int) {
	has := [runKinds]bool{true, a.sm.table.wide, len(a.sm.served.Config.EdgeTypes) > 1, a.sm.o.OrigEIDs}
	for k, h := range has {
		at[k] = -1
		if h {
			at[k], n = n, n+1
		}
	}
	return at, n
}

// ask exchanges the requests and draws the nodes the other ranks asked
// of this one into their replies; an error drawing them is kept for
// collect, which still sends the replies (with the failed status).
func (a *alltoallDraws) ask(epoch int, batch int64, layer int, nodes []int64, parts []int, excl *exclusionSet, failed bool) error {
	sm := a.sm
	a.requests(epoch, batch, layer, nodes, parts, excl, failed)
	a.before = sm.c.Traffic()
	tx := time.Now()
	asked, err := collective.ExchangeInto(sm.c, a.send, a.asked)
	sm.stats.ExchangeSeconds += time.Since(tx).Seconds()
	if err != nil {
		return err
	}
	a.asked = asked
	t0 := time.Now()
	a.answerErr = a.answer(asked)
	if a.answerErr == nil && anyFailed(asked) {
		a.answerErr = errPeerFailed
	}
	sm.stats.AnswerSeconds += time.Since(t0).Seconds()
	return nil
}

// collect exchanges the replies and unpacks the edges of the nodes this
// rank asked for.
func (a *alltoallDraws) collect(out *edgeList, counts []int32, failed bool) ([]int32, error) {
	sm := a.sm
	tx := time.Now()
	got, err := collective.ExchangeInto(sm.c, a.back, a.got)
	sm.stats.ExchangeSeconds += time.Since(tx).Seconds()
	if err != nil {
		return nil, err
	}
	a.got = got
	after := sm.c.Traffic()
	sm.stats.Sent += after.Sent - a.before.Sent
	sm.stats.Received += after.Received - a.before.Received
	if failed || a.answerErr != nil {
		return nil, a.answerErr // nil when this rank failed already: its own error is reported
	}
	if anyFailed(got) {
		return nil, errPeerFailed
	}
	return a.unpack(got, out, counts)
}

// requests builds this rank's request to every rank into a.send, and
// a.order, per node, the rank it is asked of.
func (a *alltoallDraws) requests(epoch int, batch int64, layer int, nodes []int64, parts []int, excl *exclusionSet, failed bool) {
	sm := a.sm
	n := sm.c.Size()
	if len(a.send) != n {
		a.send, a.back, a.perRank = make([][]int64, n), make([][]int64, n), make([]int, n)
	}
	status := int64(statusOK)
	if failed {
		status = statusFailed
	}
	a.order = a.order[:0]
	clear(a.perRank)
	for i := range nodes {
		r := sm.served.Server(parts[i])
		a.order = append(a.order, int32(r))
		a.perRank[r]++
	}
	for r := range n {
		a.send[r] = append(a.send[r][:0], status, int64(epoch), batch, int64(layer), int64(a.perRank[r]))
	}
	for i, v := range nodes {
		a.send[a.order[i]] = append(a.send[a.order[i]], v)
	}
	for r := range n {
		a.send[r] = append(a.send[r], 0) // the exclusions, counted below
	}
	if excl.len() > 0 {
		for i, v := range nodes {
			r := a.order[i]
			for _, x := range excl.of(v) {
				a.send[r] = append(a.send[r], x.Dst, int64(x.EType), x.EID, x.Src)
			}
		}
		for r := range n {
			m := a.send[r]
			at := 5 + a.perRank[r]
			m[at] = int64(len(m)-at-1) / 4
		}
	}
}

// answer draws the nodes each rank asked for into a.back; a malformed or
// misdirected request is an error (still answered, with the failed status).
func (a *alltoallDraws) answer(asked [][]int64) error {
	var first error
	for r, m := range asked {
		reply := append(a.back[r][:0], statusOK)
		err := a.answerOne(m, &reply)
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

// answerOne draws the nodes of request m as the local ones are: their
// edge table entries first, then one pass reading them into the reply.
func (a *alltoallDraws) answerOne(m []int64, reply *[]int64) error {
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
	a.excl.reset()
	for i := range xm {
		a.excl.add(Exclusion{Dst: xs[4*i], EType: int(xs[4*i+1]), EID: xs[4*i+2], Src: xs[4*i+3]})
	}
	key := BatchKey(sm.o.Seed, epoch, batch)
	*reply = append(*reply, make([]int64, k)...)
	counts := (*reply)[1:]
	if err := a.positions(nodes, key, layer, counts); err != nil {
		return err
	}
	*reply = a.readEdges(*reply)
	return nil
}

// positions draws the nodes' edge table entries into a.pos (their types
// into a.types, their partitions into a.parts) and each node's count into
// counts, chunk by chunk as the local draws (Sampler.localPositions).
func (a *alltoallDraws) positions(nodes []int64, key Key, layer int, counts []int64) error {
	sm := a.sm
	a.pos, a.types, a.parts = a.pos[:0], a.types[:0], a.parts[:0]
	a.nodeParts = grow32(a.nodeParts, len(nodes))
	if err := sm.partsOf(nodes, a.nodeParts); err != nil {
		return err
	}
	// A graph of one edge type: its nodes without exclusions as the local
	// ones are drawn (Sampler.appendOneType), their types (all 0) written
	// at the end.
	oneType, f := sm.oneTypeLayer(layer), 0
	if oneType {
		f = sm.draws.fanouts[layer][0]
	}
	for c := 0; c < len(nodes); c += rangeChunk {
		chunk := nodes[c:min(c+rangeChunk, len(nodes))]
		parts := a.nodeParts[c : c+len(chunk)]
		sm.readChunkRanges(chunk, parts)
		sm.drawAhead(chunk, parts, key, layer, &a.excl)
		for j, v := range chunk {
			part := parts[j]
			vw := sm.views[part]
			if vw == nil {
				return fmt.Errorf("node %d of partition %d, which this rank does not serve", v, part)
			}
			start := len(a.pos)
			if oneType && a.excl.of(v) == nil {
				a.pos = sm.appendOneType(a.pos, j, v, part, key, layer, f)
			} else {
				if oneType { // the types so far, for tableDraws to append to
					a.types = zeroTypes(a.types, len(a.pos))
				}
				a.pos, a.types, a.parts = sm.tableDraws(vw, int(part), v, key, layer, a.excl.of(v), a.pos, a.types, a.parts)
			}
			counts[c+j] = int64(len(a.pos) - start)
		}
	}
	if oneType {
		a.types = zeroTypes(a.types, len(a.pos))
	}
	return nil
}

// readEdges appends the runs of the drawn edges' sources, edge IDs, types
// (and original edge IDs) to reply.
func (a *alltoallDraws) readEdges(reply []int64) []int64 {
	sm := a.sm
	e := len(a.pos)
	runs, w := a.runsOf()
	at := len(reply)
	reply = append(reply, make([]int64, w*e)...)
	run := func(k int) []int64 { return reply[at+runs[k]*e : at+(runs[k]+1)*e] }
	if runs[runEID] >= 0 {
		sm.table.read(a.pos, run(runSrc), run(runEID))
	} else {
		sm.table.readWords(a.pos, run(runSrc))
	}
	if runs[runType] >= 0 {
		typ := run(runType)
		for i, t := range a.types {
			typ[i] = int64(t)
		}
	}
	if runs[runOrig] >= 0 {
		orig := run(runOrig)
		for i, q := range a.pos {
			part := a.parts[i]
			orig[i] = sm.views[part].p.OrigEIDs[q-sm.table.base[part]]
		}
	}
	return reply
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

// unpack appends the replies' edges in the order of the nodes asked for,
// and each node's count to counts.
func (a *alltoallDraws) unpack(got [][]int64, out *edgeList, counts []int32) ([]int32, error) {
	runs, w := a.runsOf()
	type cursor struct {
		count  []int64 // the counts not yet read
		runs   [runKinds][]int64
		at, ne int
	}
	cur := make([]cursor, len(got))
	for r, m := range got {
		k := a.perRank[r]
		if len(m) < 1+k {
			return nil, fmt.Errorf("sampler: rank %d answered fewer nodes than asked", r)
		}
		ne := 0
		for _, c := range m[1 : 1+k] {
			if c < 0 || c > int64(len(m)) {
				return nil, fmt.Errorf("sampler: rank %d answered %d edges for a node", r, c)
			}
			ne += int(c)
		}
		if len(m) != 1+k+w*ne {
			return nil, fmt.Errorf("sampler: rank %d answered %d values for %d nodes and %d edges", r, len(m), k, ne)
		}
		cur[r] = cursor{count: m[1 : 1+k], ne: ne}
		for kind, j := range runs {
			if j >= 0 {
				cur[r].runs[kind] = m[1+k+j*ne : 1+k+(j+1)*ne]
			}
		}
	}
	// The nodes asked of one rank that follow each other in the frontier
	// are copied as one run: at 2 ranks, every remote node of a layer.
	for i := 0; i < len(a.order); {
		r := a.order[i]
		c := &cur[r]
		j := i + 1
		for j < len(a.order) && a.order[j] == r {
			j++
		}
		n := 0
		for _, x := range c.count[:j-i] {
			n += int(x)
			counts = append(counts, int32(x))
		}
		c.count = c.count[j-i:]
		i = j
		lo, hi := c.at, c.at+n
		if eids := c.runs[runEID]; eids != nil {
			out.src = append(out.src, c.runs[runSrc][lo:hi]...)
			out.eid = append(out.eid, eids[lo:hi]...)
		} else {
			out.src, out.eid = a.sm.table.unpack(c.runs[runSrc][lo:hi], out.src, out.eid)
		}
		if types := c.runs[runType]; types != nil {
			for _, t := range types[lo:hi] {
				out.etype = append(out.etype, int16(t))
			}
		} else {
			out.etype = append(out.etype, make([]int16, n)...)
		}
		if orig := c.runs[runOrig]; orig != nil {
			out.orig = append(out.orig, orig[lo:hi]...)
		}
		c.at = hi
	}
	return counts, nil
}
