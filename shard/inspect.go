package shard

import (
	"fmt"
	"sort"
	"strings"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/rank"
)

// PartReport is what Inspect found in one partition.
type PartReport struct {
	Part                    int
	Inner, Halo, Edges, Cut int64
	// Train counts the inner nodes whose train_mask is set; -1 when the
	// partition has no train_mask.
	Train int64
}

// InspectReport is the result of Inspect, the same on every rank.
type InspectReport struct {
	Config     *Config
	ConfigPath string
	Parts      []PartReport
	// Checked lists what was verified.
	Checked []string
	// Violations holds up to a few messages per rank of what is wrong;
	// NumViolations counts them all. The directory is sound when it is 0.
	Violations    []string
	NumViolations int64
}

// Balance returns the largest over the mean, over the partitions, of the
// inner nodes, the edges and the training nodes (0 without train_mask).
func (r *InspectReport) Balance() (nodes, edges, train float64) {
	ratio := func(f func(PartReport) int64) float64 {
		var sum, top int64
		for _, p := range r.Parts {
			v := f(p)
			if v < 0 {
				return 0
			}
			sum += v
			top = max(top, v)
		}
		if sum == 0 {
			return 0
		}
		return float64(top) * float64(len(r.Parts)) / float64(sum)
	}
	return ratio(func(p PartReport) int64 { return p.Inner }), ratio(func(p PartReport) int64 { return p.Edges }),
		ratio(func(p PartReport) int64 { return p.Train })
}

// maxMessages bounds the violation messages each rank keeps.
const maxMessages = 8

// inspector carries one inspection.
type inspector struct {
	c    *collective.Comm
	o    options
	path string
	cfg  *Config
	book *Book
	m    graph.Meta
	in   *graphio.Graph
	P, K int

	msgs  []string
	nviol int64

	// Tables over this rank's even ranges: input node IDs per type, new
	// node IDs, input edge IDs per type.
	nodeHits  [][]uint8
	newOrig   []int64 // homogeneous input ID of each new ID here (-1: none)
	edgeHits  [][]uint8
	inEdge    [][]uint64 // hash of the input edge's endpoints
	inEdgeRow [][]uint64 // hash of the input edge's rows
	rowsOK    bool       // the partitions and the input hold the same arrays

	parts []PartReport
}

func (in *inspector) violation(format string, args ...any) {
	in.nviol++
	if len(in.msgs) < maxMessages {
		in.msgs = append(in.msgs, fmt.Sprintf(format, args...))
	}
}

// Inspect re-verifies the partition directory dir from its files: the
// config's ranges tile the node and edge ID spaces; every partition's
// arrays are consistent (local2global, inner flags, node and edge types,
// CSC bounds, indices, edge IDs a permutation of its range, halo nodes
// outside it and used); the original node IDs of every type and the
// original edge IDs of every type are permutations (every input node and
// edge in exactly one partition). With the input graph g (as read by
// graphio.Read on every rank, normalised as the config's "normalize" says)
// it also checks that each partition edge joins the input edge's endpoints
// and that every node and edge row equals the input's row. Partition p is
// read by rank p mod P; the checks are distributed by ID, so no rank holds
// more than its share of either graph. It is collective; the error is for
// what stops the inspection (unreadable files), violations are in the
// report.
func Inspect(c *collective.Comm, dir string, g *graphio.Graph, opts ...Option) (*InspectReport, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	path, cfg, err := LoadConfig(c, dir)
	if err != nil {
		return nil, err
	}
	in := &inspector{c: c, o: o, path: path, cfg: cfg, book: cfg.Book(), m: cfg.Meta(), in: g, P: c.Size(), K: cfg.NumParts}
	rep := &InspectReport{Config: cfg, ConfigPath: path, Checked: []string{
		"node_map and edge_map ranges tile [0, num_nodes) and [0, num_edges)",
		"partition arrays: lengths, dtypes, local2global, inner_node, node_type, indptr, indices, edge_ids, edge_type, halo",
		"orig_nids of every node type are a permutation of the type's input IDs",
		"orig_eids of every edge type are a permutation of the type's input edge IDs",
	}}
	if len(cfg.Parts[0].Checksums) > 0 {
		rep.Checked = append(rep.Checked, "every file's CRC-32C equals the one recorded at dispatch")
	}
	in.allocTables()
	if g != nil {
		in.compareMeta()
		if err := in.loadInputEdges(); err != nil {
			return nil, err
		}
		rep.Checked = append(rep.Checked, "every partition edge joins its input edge's endpoints")
		if in.rowsOK {
			rep.Checked = append(rep.Checked, "every node and edge row equals the input's row")
		}
	}
	if err := in.waves(); err != nil {
		return nil, err
	}
	in.checkHits()
	if err := in.gather(rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// allocTables sizes the per-rank tables.
func (in *inspector) allocTables() {
	me := in.c.Rank()
	for t := range in.m.NodeTypes {
		in.nodeHits = append(in.nodeHits, make([]uint8, graph.EvenBook(in.m.NumNodes[t], in.P).Size(me)))
	}
	in.newOrig = make([]int64, graph.EvenBook(in.cfg.NumNodes, in.P).Size(me))
	for i := range in.newOrig {
		in.newOrig[i] = -1
	}
	for t := range in.m.EdgeTypes {
		n := graph.EvenBook(in.m.NumEdges[t], in.P).Size(me)
		in.edgeHits = append(in.edgeHits, make([]uint8, n))
		if in.in != nil {
			in.inEdge = append(in.inEdge, make([]uint64, n))
			in.inEdgeRow = append(in.inEdgeRow, make([]uint64, n))
		}
	}
}

// compareMeta records a violation for every difference between the
// config's types and counts and the input's, and decides whether rows can
// be compared.
func (in *inspector) compareMeta() {
	gm := &in.in.Meta
	same := fmt.Sprint(gm.NodeTypes, gm.NumNodes, gm.EdgeTypes, gm.NumEdges) == fmt.Sprint(in.m.NodeTypes, in.m.NumNodes, in.m.EdgeTypes, in.m.NumEdges)
	if !same {
		in.violation("the partitions hold types %v %v with %v nodes and %v edges; the input %v %v with %v and %v",
			in.m.NodeTypes, in.m.EdgeTypes, in.m.NumNodes, in.m.NumEdges, gm.NodeTypes, gm.EdgeTypes, gm.NumNodes, gm.NumEdges)
	}
	var want []string
	for t, nt := range gm.NodeTypes {
		for _, name := range in.in.Nodes.Names(t) {
			want = append(want, nt+"/"+name)
		}
	}
	for _, k := range in.inputEdgeKeys() {
		want = append(want, k)
	}
	sort.Strings(want)
	var have []string
	for k := range in.cfg.Parts[0].NodeFeats {
		have = append(have, k)
	}
	for k := range in.cfg.Parts[0].EdgeFeats {
		have = append(have, k)
	}
	sort.Strings(have)
	in.rowsOK = same && fmt.Sprint(have) == fmt.Sprint(want)
	if same && !in.rowsOK {
		in.violation("the partitions hold arrays %v, the input %v", have, want)
	}
}

// inputEdgeKeys lists the input's edge arrays as "<etype>/<name>", with
// the edge weights as "<etype>/weight" for every type, as Dispatch names
// them.
func (in *inspector) inputEdgeKeys() []string {
	e := in.in.Edges
	keys := e.DataKeys()
	if e.Weight != nil {
		for _, et := range in.in.Meta.EdgeTypes {
			keys = append(keys, graph.EdgeDataKey(et, "weight"))
		}
	}
	sort.Strings(keys)
	return keys
}

// loadInputEdges sends every input edge's hashes to the rank holding its
// type-wise ID.
func (in *inspector) loadInputEdges() error {
	e := in.in.Edges
	var anyWeight int64
	if e.Weight != nil {
		anyWeight = 1
	}
	w, err := collective.Max(in.c, anyWeight)
	if err != nil {
		return err
	}
	if w == 1 && e.Weight == nil && e.Len() > 0 {
		e.Weight = make([]float32, e.Len())
		for i := range e.Weight {
			e.Weight[i] = 1
		}
	}
	arrays := make([][]*graph.Tensor, len(in.m.EdgeTypes))
	for t, et := range in.in.Meta.EdgeTypes {
		if t >= len(arrays) {
			break
		}
		for _, k := range in.inputEdgeKeys() {
			if ets, name, _ := strings.Cut(k, "/"); ets == et.String() {
				if name == "weight" && e.Weight != nil && e.Data[k] == nil {
					arrays[t] = append(arrays[t], graph.TensorOf(e.Weight, 0))
				} else {
					arrays[t] = append(arrays[t], e.Data[k])
				}
			}
		}
	}
	recs := make([]hashRec, 0, e.Len())
	for i := range e.Src {
		t := int(e.TypeOf(i))
		if t >= len(in.m.EdgeTypes) || e.ID[i] >= in.m.NumEdges[t] {
			continue // compareMeta reported the difference
		}
		r := hashRec{T: int64(t), ID: e.ID[i], H: graphio.EdgeHash(int16(t), e.Src[i], e.Dst[i])}
		var rows [][]byte
		for _, a := range arrays[t] {
			rows = append(rows, a.Row(int64(i)))
		}
		r.D = combineRows(e.ID[i], rows)
		recs = append(recs, r)
	}
	return exchangeRounds(in.c, recs, func(i int) int {
		return evenOwner(recs[i].ID, in.m.NumEdges[recs[i].T], in.P)
	}, in.o.budget, func(got []hashRec) error {
		for _, r := range got {
			lo, _ := graph.EvenBook(in.m.NumEdges[r.T], in.P).Range(in.c.Rank())
			in.inEdge[r.T][r.ID-lo] = r.H
			in.inEdgeRow[r.T][r.ID-lo] = r.D
		}
		return nil
	})
}

// hashRec carries an item's type, ID, and hashes to the rank checking it.
type hashRec struct {
	T, ID int64
	H, D  uint64
	G     int64 // a node's new ID
}

// combineRows hashes the rows of an item's arrays, in name order.
func combineRows(id int64, rows [][]byte) uint64 {
	h := uint64(0x636f6d62)
	for a, r := range rows {
		h = graph.Mix64(h ^ arrayRowHash(a, id, r))
	}
	return h
}

// waves reads the partitions P at a time, rank r reading partition
// w*P+r in wave w: once for their nodes, which fills the table of new IDs,
// then again for their edges, whose halo sources are looked up there.
func (in *inspector) waves() error {
	in.parts = make([]PartReport, in.K)
	for pass, check := range []func(*Partition) error{in.checkNodes, in.checkEdges} {
		for w := 0; w*in.P < in.K; w++ {
			part := w*in.P + in.c.Rank()
			var p *Partition
			var err error
			if part < in.K {
				p, err = in.open(part)
			}
			if err := collective.Agree(in.c, err); err != nil {
				return err
			}
			if p != nil && pass == 0 {
				verifyChecksums(in.path, part, in.cfg.Parts[part], in.violation)
				in.checkLocal(p)
			}
			err = check(p)
			if p != nil {
				p.Close()
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// open loads a partition: memory-mapped, or decompressed into memory.
func (in *inspector) open(part int) (*Partition, error) {
	return loadPartition(in.path, in.cfg, part, func(rel string) (*graph.Tensor, mapping, error) {
		if isZstd(rel) {
			t, err := readCompressed(resolve(in.path, rel))
			return t, nil, err
		}
		return mapArray(resolve(in.path, rel))
	})
}

// checkHits reports the input nodes and edges that are in no partition or
// in several, and new IDs that no partition holds.
func (in *inspector) checkHits() {
	me := in.c.Rank()
	for t, hits := range in.nodeHits {
		lo, _ := graph.EvenBook(in.m.NumNodes[t], in.P).Range(me)
		for i, h := range hits {
			if h != 1 {
				in.violation("input node %s/%d is in %d partitions (orig_nids is not a permutation)", in.m.NodeTypes[t], lo+int64(i), h)
			}
		}
	}
	lo, _ := graph.EvenBook(in.cfg.NumNodes, in.P).Range(me)
	for i, v := range in.newOrig {
		if v < 0 {
			in.violation("new node ID %d is held by no partition", lo+int64(i))
		}
	}
	for t, hits := range in.edgeHits {
		lo, _ := graph.EvenBook(in.m.NumEdges[t], in.P).Range(me)
		for i, h := range hits {
			if h != 1 {
				in.violation("input edge %s/%d is in %d partitions (orig_eids is not a permutation)", in.m.EdgeTypes[t], lo+int64(i), h)
			}
		}
	}
}

// gather collects the per-partition reports and the violations of every
// rank into rep.
func (in *inspector) gather(rep *InspectReport) error {
	vals := make([]int64, 5*in.K)
	for k, p := range in.parts {
		if k%in.P == in.c.Rank() { // this rank read partition k
			copy(vals[5*k:], []int64{p.Inner, p.Halo, p.Edges, p.Cut, p.Train})
		}
	}
	all, err := collective.Allreduce(in.c, vals, rank.Sum)
	if err != nil {
		return err
	}
	for k := range in.K {
		v := all[5*k:]
		rep.Parts = append(rep.Parts, PartReport{Part: k, Inner: v[0], Halo: v[1], Edges: v[2], Cut: v[3], Train: v[4]})
	}
	if rep.NumViolations, err = collective.Sum(in.c, in.nviol); err != nil {
		return err
	}
	blob := []byte(strings.Join(in.msgs, "\n"))
	msgs, counts, err := collective.Allgatherv(in.c, blob)
	if err != nil {
		return err
	}
	off := 0
	for r, n := range counts {
		if n > 0 {
			for _, m := range strings.Split(string(msgs[off:off+n]), "\n") {
				rep.Violations = append(rep.Violations, fmt.Sprintf("rank %d: %s", r, m))
			}
		}
		off += n
	}
	return nil
}
