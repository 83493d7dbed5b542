package shard

import (
	"gnnrun/collective"
	"gnnrun/graph"
)

// Relabelling: every node gets a new global ID such that partition p owns
// [partStart[p], partStart[p+1]), and inside it the nodes of type 0 come
// first, then type 1, ...; among the nodes of one (partition, type) the
// order is that of their type-wise input IDs. The order depends on the
// assignment alone, not on the number of ranks.
//
// Each rank holds the nodes of an even range of type-wise IDs per type. It
// counts its nodes per (partition, type); an all-gather of these K*T counts
// gives every rank the totals and the counts of the ranks before it, which
// is where its nodes of each (partition, type) start. No rank sees more
// than counts: the new ID of a node lives only on the rank that holds it.

// relabel assigns the new IDs of this rank's nodes.
func (d *dispatcher) relabel() error {
	K, T, me := d.K, d.T, d.c.Rank()
	local := make([]int64, K*T)
	for t := range T {
		for i, p := range d.a.Parts[t] {
			if p < 0 || int(p) >= K {
				lo, _ := d.g.Nodes.Range(t)
				return errorf("node %d of type %q is assigned part %d, outside [0,%d)", lo+int64(i), d.m.NodeTypes[t], p, K)
			}
			local[int(p)*T+t]++
		}
	}
	all, _, err := collective.Allgatherv(d.c, local)
	if err != nil {
		return err
	}
	totals := make([]int64, K*T)
	next := make([]int64, K*T)
	for r := range d.P {
		for s := range K * T {
			v := all[r*K*T+s]
			totals[s] += v
			if r < me {
				next[s] += v
			}
		}
	}
	var at int64
	for s := range K * T {
		next[s] += at
		at += totals[s]
	}
	if at != d.m.TotalNodes() {
		return errorf("relabel: the assignment covers %d nodes, the graph has %d", at, d.m.TotalNodes())
	}
	d.nodeCounts = make([][]int64, K)
	d.partStart = make([]int64, K+1)
	for p := range K {
		d.nodeCounts[p] = totals[p*T : (p+1)*T]
		d.partStart[p+1] = d.partStart[p]
		for _, n := range d.nodeCounts[p] {
			d.partStart[p+1] += n
		}
	}
	var sum tally
	d.newIDs = make([][]int64, T)
	for t := range T {
		ids := make([]int64, len(d.a.Parts[t]))
		for i, p := range d.a.Parts[t] {
			s := int(p)*T + t
			ids[i] = next[s]
			next[s]++
			sum.ids.Add(idHash(saltNode, ids[i]))
		}
		d.newIDs[t] = ids
	}
	return d.checkPermutation(&sum)
}

// saltNode salts the hashes of node IDs.
const saltNode = 0x6e6f6465

// checkPermutation checks that the new IDs are a permutation of [0, N):
// the checksum of the IDs given out must equal that of 0..N-1, which each
// rank sums over an even slice.
func (d *dispatcher) checkPermutation(given *tally) error {
	var want tally
	lo, hi := graph.EvenBook(d.m.TotalNodes(), d.P).Range(d.c.Rank())
	for id := lo; id < hi; id++ {
		want.ids.Add(idHash(saltNode, id))
	}
	g, err := given.ids.Total(d.c)
	if err != nil {
		return err
	}
	w, err := want.ids.Total(d.c)
	if err != nil {
		return err
	}
	if g != w {
		return errorf("relabel: the new IDs are not a permutation of [0,%d) (checksum %#x, want %#x)", d.m.TotalNodes(), g, w)
	}
	return nil
}

// evenOwner returns the rank of EvenBook(n, parts) that holds ID i, by
// arithmetic rather than search: the first n%parts ranks hold one more.
func evenOwner(i, n int64, parts int) int {
	q, rem := n/int64(parts), n%int64(parts)
	if i < rem*(q+1) {
		return int(i / (q + 1))
	}
	return int(rem + (i-rem*(q+1))/q)
}
