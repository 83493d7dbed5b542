package shard

import (
	"fmt"

	"gnnrun/report"
)

// The structural checks Serve and Open make on every partition they open,
// checksums or not: a file changed together with its checksum, or opened
// with Checksums(false), must still end in an error naming the file and
// the position, never in an index out of range deep inside the sampler.
// Each check is one pass over one array whose values a reader uses as
// indices:
//
//	indptr        starts at 0, never decreases, ends at the CSC entries
//	indices       local node IDs: within [0, local nodes)
//	edge_type     within [0, edge types), each type as often as edge_map
//	              says (edge arrays are indexed by an edge's rank in its
//	              type); read only with several edge types, checked only then
//	local2global  an inner node's own new ID; a halo node's within the graph
//	node_type     within [0, node types)
//
// Lengths and dtypes of these arrays, and the row counts of the node and
// edge arrays, are checked as they are loaded (loadPartition). The arrays
// whose values are only reported, never followed — edge_ids, orig_nids,
// orig_eids, inner_node — are left to the checksums: edge_ids alone would
// be half the bytes of these passes (8 per edge).

// boundsChecks returns the structural checks of partition p, one per
// array, to run side by side.
func (p *Partition) boundsChecks() []func() error {
	return []func() error{p.checkIndptr, p.checkIndices, p.checkEdgeTypes, p.checkLocal2Global, p.checkNodeTypes}
}

// fileError returns an error naming file rel of the partition.
func (p *Partition) fileError(rel, format string, args ...any) error {
	return errorf("%s: %s", resolve(p.ConfigPath, rel), fmt.Sprintf(format, args...))
}

func (p *Partition) files() *PartFiles { return &p.Config.Parts[p.ID] }

func (p *Partition) checkIndptr() error {
	ip, rel := p.Indptr, p.files().Indptr
	if ip[0] != 0 {
		return p.fileError(rel, "entry 0 is %d; indptr starts at 0", ip[0])
	}
	for i := 1; i < len(ip); i++ {
		if ip[i] < ip[i-1] {
			return p.fileError(rel, "entry %d is %d, below entry %d's %d; indptr never decreases", i, ip[i], i-1, ip[i-1])
		}
	}
	if last := ip[len(ip)-1]; last != p.NumEdges() {
		return p.fileError(rel, "ends at %d; the partition has %s CSC entries", last, report.Count(p.NumEdges()))
	}
	return nil
}

func (p *Partition) checkIndices() error {
	L := p.NumLocal()
	if p.Indices32 != nil {
		if q := outside(p.Indices32, 0, L); q >= 0 {
			return p.indexError(int64(q), int64(p.Indices32[q]))
		}
		return nil
	}
	if q := outside(p.Indices64, 0, L); q >= 0 {
		return p.indexError(int64(q), p.Indices64[q])
	}
	return nil
}

func (p *Partition) indexError(q, v int64) error {
	return p.fileError(p.files().Indices, "entry %d is %d, outside the partition's %s local nodes", q, v, report.Count(p.NumLocal()))
}

// outside returns the first position of s whose value lies outside
// [lo, hi), or -1: one unsigned comparison per value (below lo wraps
// around to above the span), a loop that runs at about the speed of memory.
func outside[T int16 | int32 | int64](s []T, lo, hi int64) int {
	span := uint64(hi - lo)
	for i, v := range s {
		if uint64(int64(v)-lo) >= span {
			return i
		}
	}
	return -1
}

func (p *Partition) checkEdgeTypes() error {
	T, rel := len(p.Config.EdgeTypes), p.files().EdgeType
	if T <= 1 {
		return nil
	}
	if q := outside(p.EdgeType, 0, int64(T)); q >= 0 {
		return p.fileError(rel, "entry %d is %d, outside the graph's %d edge types", q, p.EdgeType[q], T)
	}
	counts := make([]int64, T)
	for _, t := range p.EdgeType {
		counts[t]++
	}
	for t, n := range counts {
		if lo, hi := p.Book.EdgeTypeRange(p.ID, t); n != hi-lo {
			return p.fileError(rel, "%s entries of edge type %d (%s), edge_map gives the partition %s", report.Count(n), t, p.Config.EdgeTypes[t], report.Count(hi-lo))
		}
	}
	return nil
}

func (p *Partition) checkLocal2Global() error {
	rel := p.files().Local2Global
	for i, g := range p.Local2Global[:p.NumInner] {
		if g != p.Lo+int64(i) {
			return p.fileError(rel, "entry %d is %d; inner node %d has new ID %d", i, g, i, p.Lo+int64(i))
		}
	}
	N := p.Book.NumNodes()
	if j := outside(p.Local2Global[p.NumInner:], 0, N); j >= 0 {
		q := p.NumInner + int64(j)
		return p.fileError(rel, "entry %d is %d, outside the graph's %s nodes", q, p.Local2Global[q], report.Count(N))
	}
	return nil
}

func (p *Partition) checkNodeTypes() error {
	T := int64(len(p.Config.NodeTypes))
	if q := outside(p.NodeType, 0, T); q >= 0 {
		return p.fileError(p.files().NodeType, "entry %d is %d, outside the graph's %d node types", q, p.NodeType[q], T)
	}
	return nil
}
