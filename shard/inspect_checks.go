package shard

import (
	"sort"
	"strings"

	"gnnrun/graph"
	"gnnrun/graphio"
)

// checkLocal checks the arrays of one partition against each other and the
// book, and fills the partition's report.
func (in *inspector) checkLocal(p *Partition) {
	n, L, E := p.NumInner, p.NumLocal(), p.NumEdges()
	rep := PartReport{Part: p.ID, Inner: n, Halo: L - n, Edges: E, Train: -1}
	bad := func(format string, args ...any) {
		in.violation("partition %d: "+format, append([]any{p.ID}, args...)...)
	}
	for i := range n {
		if p.Local2Global[i] != p.Lo+i {
			bad("local2global[%d] = %d, want inner node %d", i, p.Local2Global[i], p.Lo+i)
			break
		}
	}
	for j := range L {
		if p.InnerNode[j] != (j < n) {
			bad("inner_node[%d] = %v; the partition has %d inner nodes", j, p.InnerNode[j], n)
			break
		}
	}
	N := in.cfg.NumNodes
	for j := n; j < L; j++ {
		g := p.Local2Global[j]
		switch {
		case g < 0 || g >= N:
			bad("halo node %d has global ID %d outside [0,%d)", j, g, N)
		case g >= p.Lo && g < p.Hi:
			bad("halo node %d has global ID %d, an inner node", j, g)
		case j > n && g <= p.Local2Global[j-1]:
			bad("halo nodes are not in increasing global ID order at %d", j)
		}
	}
	for j := range L {
		if g := p.Local2Global[j]; g >= 0 && g < N && int(p.NodeType[j]) != p.Book.NodeType(g) {
			bad("node_type[%d] = %d, node %d is of type %d", j, p.NodeType[j], g, p.Book.NodeType(g))
			break
		}
	}
	if p.Indptr[0] != 0 || p.Indptr[n] != E {
		bad("indptr runs from %d to %d, want 0 to %d", p.Indptr[0], p.Indptr[n], E)
		return // the CSC cannot be walked
	}
	for i := range n {
		if p.Indptr[i+1] < p.Indptr[i] {
			bad("indptr decreases at %d", i)
			return
		}
	}
	rep.Cut = in.checkCSC(p, bad)
	rep.Train = trainCount(p)
	in.parts[p.ID] = rep
}

// checkCSC checks every CSC entry and returns the number whose source is a
// halo node.
func (in *inspector) checkCSC(p *Partition, bad func(string, ...any)) int64 {
	n, L, E := p.NumInner, p.NumLocal(), p.NumEdges()
	elo, ehi := p.Book.EdgePartRange(p.ID)
	if ehi-elo != E {
		bad("%d CSC entries, its edge_map ranges %d", E, ehi-elo)
		return 0
	}
	seen := make([]bool, E)
	used := make([]bool, L-n)
	srcType := make([]int, len(in.m.EdgeTypes))
	dstType := make([]int, len(in.m.EdgeTypes))
	for t, et := range in.m.EdgeTypes {
		srcType[t], dstType[t] = in.m.NodeType(et.Src), in.m.NodeType(et.Dst)
	}
	var cut int64
	for i := range n {
		for q := p.Indptr[i]; q < p.Indptr[i+1]; q++ {
			s, et, eid := p.Index(q), int(p.EdgeType[q]), p.EdgeIDs[q]
			switch {
			case s < 0 || s >= L:
				bad("indices[%d] = %d outside [0,%d)", q, s, L)
				continue
			case et < 0 || et >= len(in.m.EdgeTypes):
				bad("edge_type[%d] = %d outside [0,%d)", q, et, len(in.m.EdgeTypes))
				continue
			case eid < elo || eid >= ehi:
				bad("edge_ids[%d] = %d outside the partition's [%d,%d)", q, eid, elo, ehi)
				continue
			case seen[eid-elo]:
				bad("edge ID %d appears twice", eid)
				continue
			}
			seen[eid-elo] = true
			if _, t, _ := p.Book.EdgeLocate(eid); t != et {
				bad("edge %d has edge_type %d, its edge_map range says %d", eid, et, t)
			}
			if int(p.NodeType[s]) != srcType[et] || int(p.NodeType[i]) != dstType[et] {
				bad("edge %d of type %s joins node types %d -> %d", eid, in.m.EdgeTypes[et], p.NodeType[s], p.NodeType[i])
			}
			if o := p.OrigEIDs[q]; o < 0 || o >= in.m.NumEdges[et] {
				bad("orig_eids[%d] = %d outside [0,%d)", q, o, in.m.NumEdges[et])
			}
			if s >= n {
				used[s-n] = true
				cut++
			}
		}
	}
	for j, u := range used {
		if !u {
			bad("halo node %d (global %d) is the source of none of its edges", n+int64(j), p.Local2Global[n+int64(j)])
			break
		}
	}
	return cut
}

// trainCount counts the inner nodes whose train_mask row is not zero, or
// returns -1 without train_mask.
func trainCount(p *Partition) int64 {
	count := int64(-1)
	for key, t := range p.NodeFeats {
		if !strings.HasSuffix(key, "/train_mask") {
			continue
		}
		count = max(count, 0)
		rb := int64(t.RowBytes())
		for i := range t.Rows() {
			for _, b := range t.Data[i*rb : (i+1)*rb] {
				if b != 0 {
					count++
					break
				}
			}
		}
	}
	return count
}

// partArrays returns the partition's arrays of one type (a node type's
// name or an edge type's "src:rel:dst"), in name order.
func partArrays(m map[string]*graph.Tensor, typ string) []*graph.Tensor {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, typ+"/") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]*graph.Tensor, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// checkNodes sends every inner node of p (nil: none) to the rank holding
// its input ID, which counts it and compares its rows with the input's,
// and to the rank holding its new ID, which records its input ID.
func (in *inspector) checkNodes(p *Partition) error {
	var recs []hashRec
	if p != nil {
		arrays := make([][]*graph.Tensor, len(in.m.NodeTypes))
		for t, nt := range in.m.NodeTypes {
			arrays[t] = partArrays(p.NodeFeats, nt)
		}
		rows := make([][]byte, 0, 8)
		for i := range p.NumInner {
			t, o, g := int(p.NodeType[i]), p.OrigNIDs[i], p.Lo+i
			if t < 0 || t >= len(in.m.NodeTypes) || o < 0 || o >= in.m.NumNodes[t] {
				in.violation("partition %d: inner node %d has type %d and input ID %d, outside the graph", p.ID, i, t, o)
				continue
			}
			lo, _ := p.Book.TypeRange(p.ID, t)
			rows = rows[:0]
			for _, a := range arrays[t] {
				rows = append(rows, a.Row(g-lo))
			}
			recs = append(recs, hashRec{T: int64(t), ID: o, G: g, D: combineRows(o, rows)})
		}
	}
	me := in.c.Rank()
	err := exchangeRounds(in.c, recs, func(i int) int {
		return evenOwner(recs[i].ID, in.m.NumNodes[recs[i].T], in.P)
	}, in.o.budget, func(got []hashRec) error {
		for _, r := range got {
			lo, _ := graph.EvenBook(in.m.NumNodes[r.T], in.P).Range(me)
			if h := &in.nodeHits[r.T][r.ID-lo]; *h < 255 {
				*h++
			}
			if in.in != nil && in.rowsOK {
				if want := in.inputNodeHash(int(r.T), r.ID, r.ID-lo); want != r.D {
					in.violation("node %s/%d (new ID %d): its rows differ from the input's", in.m.NodeTypes[r.T], r.ID, r.G)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return exchangeRounds(in.c, recs, func(i int) int {
		return evenOwner(recs[i].G, in.cfg.NumNodes, in.P)
	}, in.o.budget, func(got []hashRec) error {
		lo, _ := graph.EvenBook(in.cfg.NumNodes, in.P).Range(me)
		for _, r := range got {
			if in.newOrig[r.G-lo] >= 0 {
				in.violation("new node ID %d is an inner node of two partitions", r.G)
			}
			in.newOrig[r.G-lo] = in.m.NodeOffset(int(r.T)) + r.ID
		}
		return nil
	})
}

// inputNodeHash hashes the input rows of node o of type t, row i here.
func (in *inspector) inputNodeHash(t int, o, i int64) uint64 {
	names := in.in.Nodes.Names(t)
	rows := make([][]byte, len(names))
	for k, name := range names {
		rows[k] = in.in.Nodes.Arrays[t][name].Row(i)
	}
	return combineRows(o, rows)
}

// checkEdges sends every CSC entry of p (nil: none), with the input IDs of
// its endpoints, to the rank holding its input edge ID, which counts it
// and compares it with the input edge.
func (in *inspector) checkEdges(p *Partition) error {
	var halo []int64
	if p != nil {
		for j := p.NumInner; j < p.NumLocal(); j++ {
			if g := p.Local2Global[j]; g >= 0 && g < in.cfg.NumNodes {
				halo = append(halo, g)
			} else {
				halo = append(halo, 0) // reported by checkLocal
			}
		}
	}
	me := in.c.Rank()
	newLo, _ := graph.EvenBook(in.cfg.NumNodes, in.P).Range(me)
	haloOrig, err := requestRounds(in.c, halo, func(g int64) int { return evenOwner(g, in.cfg.NumNodes, in.P) },
		func(_ int, keys []int64) ([]int64, error) {
			out := make([]int64, len(keys))
			for i, g := range keys {
				out[i] = in.newOrig[g-newLo]
			}
			return out, nil
		}, in.o.budget)
	if err != nil {
		return err
	}
	var recs []hashRec
	if p != nil {
		recs = in.edgeRecords(p, haloOrig)
	}
	return exchangeRounds(in.c, recs, func(i int) int {
		return evenOwner(recs[i].ID, in.m.NumEdges[recs[i].T], in.P)
	}, in.o.budget, func(got []hashRec) error {
		for _, r := range got {
			lo, _ := graph.EvenBook(in.m.NumEdges[r.T], in.P).Range(me)
			i := r.ID - lo
			if h := &in.edgeHits[r.T][i]; *h < 255 {
				*h++
			}
			if in.in == nil {
				continue
			}
			if in.inEdge[r.T][i] != r.H {
				in.violation("edge %s/%d (new ID %d): its endpoints differ from the input edge's", in.m.EdgeTypes[r.T], r.ID, r.G)
			} else if in.rowsOK && in.inEdgeRow[r.T][i] != r.D {
				in.violation("edge %s/%d (new ID %d): its rows differ from the input's", in.m.EdgeTypes[r.T], r.ID, r.G)
			}
		}
		return nil
	})
}

// edgeRecords returns the hashes of every valid CSC entry of p.
func (in *inspector) edgeRecords(p *Partition, haloOrig []int64) []hashRec {
	n, L := p.NumInner, p.NumLocal()
	origOf := func(j int64) int64 { // homogeneous input ID of local node j
		if j < n {
			return in.m.NodeOffset(int(p.NodeType[j])) + p.OrigNIDs[j]
		}
		return haloOrig[j-n]
	}
	arrays := make([][]*graph.Tensor, len(in.m.EdgeTypes))
	for t, et := range in.m.EdgeTypes {
		arrays[t] = partArrays(p.EdgeFeats, et.String())
	}
	next := make([]int64, len(in.m.EdgeTypes)) // row of the next entry of each type
	recs := make([]hashRec, 0, p.NumEdges())
	rows := make([][]byte, 0, 8)
	for i := range n {
		for q := p.Indptr[i]; q < p.Indptr[i+1]; q++ {
			s, t, o := p.Index(q), int(p.EdgeType[q]), p.OrigEIDs[q]
			if s < 0 || s >= L || t < 0 || t >= len(in.m.EdgeTypes) || o < 0 || o >= in.m.NumEdges[t] {
				continue // reported by checkLocal
			}
			rows = rows[:0]
			for _, a := range arrays[t] {
				rows = append(rows, a.Row(next[t]))
			}
			next[t]++
			recs = append(recs, hashRec{T: int64(t), ID: o, G: p.EdgeIDs[q],
				H: graphio.EdgeHash(int16(t), origOf(s), origOf(i)), D: combineRows(o, rows)})
		}
	}
	return recs
}
