package graphio

import (
	"fmt"
	"os"
	"sort"

	"gnnrun/collective"
	"gnnrun/graph"
)

// edgeSource is one edge chunk file.
type edgeSource struct {
	path   string
	format Format
	etype  int
	chunk  int
}

// readChunked reads a graph in DGL's chunked format.
func readChunked(c *collective.Comm, path string, o *options) (*Graph, error) {
	raw, err := readSmallFile(c, path)
	if err != nil {
		return nil, err
	}
	md, err := ParseMetadata(raw, path)
	if err != nil {
		return nil, err
	}
	meta := md.Meta()
	var srcs []edgeSource
	for t, et := range md.EdgeType {
		spec := md.Edges[et]
		for k, p := range spec.Data {
			srcs = append(srcs, edgeSource{path: md.Resolve(p), format: spec.Format, etype: t, chunk: k})
		}
	}
	sizes, err := statFiles(c, srcs, md)
	if err != nil {
		return nil, err
	}
	g := &Graph{Meta: meta, Edges: &graph.Edges{}}
	pieces := splitBytes(sizes, c.Rank(), c.Size())
	infos, pieceStart, err := readEdgePieces(c, srcs, pieces, &meta, g.Edges, o)
	if err != nil {
		return nil, err
	}
	all, _, err := collective.Allgatherv(c, infos)
	if err != nil {
		return nil, err
	}
	rows, first := fileRows(all, len(srcs))
	if err := checkEdgeCounts(md, srcs, rows); err != nil {
		return nil, err
	}
	// My pieces are a contiguous run of the all-gathered list: find it.
	before, _, err := collective.Offset(c, int64(len(infos)))
	if err != nil {
		return nil, err
	}
	typeStart := make([]int64, len(srcs)) // first type-wise ID of each file
	next := make([]int64, len(md.EdgeType))
	for i, s := range srcs {
		typeStart[i] = next[s.etype]
		next[s.etype] += rows[i]
	}
	ranges := assignEdgeIDs(g.Edges, &meta, srcs, infos, pieceStart, first[before:], typeStart)
	if !o.skipData {
		if err := readChunkedData(c, md, g, ranges); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// statFiles returns the size of every edge chunk file. The files are
// spread over the ranks; a missing file is reported the same way by all.
func statFiles(c *collective.Comm, srcs []edgeSource, md *Metadata) ([]int64, error) {
	var mine []int64
	for i := c.Rank(); i < len(srcs); i += c.Size() {
		st, err := os.Stat(srcs[i].path)
		switch {
		case err != nil:
			mine = append(mine, -1)
		case st.IsDir():
			mine = append(mine, -2)
		default:
			mine = append(mine, st.Size())
		}
	}
	all, counts, err := collective.Allgatherv(c, mine)
	if err != nil {
		return nil, err
	}
	off := make([]int, len(counts))
	for r := 1; r < len(counts); r++ {
		off[r] = off[r-1] + counts[r-1]
	}
	sizes := make([]int64, len(srcs))
	for i := range srcs {
		sizes[i] = all[off[i%c.Size()]+i/c.Size()]
		if sizes[i] < 0 {
			s := srcs[i]
			what := "missing"
			if sizes[i] == -2 {
				what = "a directory, not a file"
			}
			return nil, &InputError{File: md.Path, Line: lineOfKey(md.raw, []string{"edges", md.EdgeType[s.etype]}), Row: -1,
				Msg: fmt.Sprintf("chunk %d of edge type %q: file %s is %s", s.chunk, md.EdgeType[s.etype], s.path, what)}
		}
	}
	return sizes, nil
}

// readEdgePieces reads this rank's pieces into e (type-wise IDs for now)
// and returns, per piece, its file and record count, and where its edges
// start in e.
func readEdgePieces(c *collective.Comm, srcs []edgeSource, pieces []piece, meta *graph.Meta, e *graph.Edges, o *options) ([]pieceInfo, []int, error) {
	var total int64
	for _, p := range pieces {
		total += p.hi - p.lo
	}
	infos := make([]pieceInfo, 0, len(pieces))
	starts := make([]int, 0, len(pieces))
	// Count first, so the columns are allocated once at their final size:
	// growing them by appending would hold two copies at the peak.
	var want int64
	for _, p := range pieces {
		want += estimatePiece(srcs[p.src], p)
	}
	e.Src = make([]int64, 0, want)
	e.Dst = make([]int64, 0, want)
	var done int64
	for _, p := range pieces {
		s := srcs[p.src]
		et := meta.EdgeTypes[s.etype]
		st, dt := meta.NodeType(et.Src), meta.NodeType(et.Dst)
		pieceStart := done
		sink := &edgeSink{src: e.Src, dst: e.Dst, nSrc: meta.NumNodes[st], nDst: meta.NumNodes[dt], srcType: et.Src, dstType: et.Dst,
			step: func(n int64) {
				done = min(done+n, pieceStart+p.hi-p.lo)
				o.progress("read edges", done, total)
			}}
		starts = append(starts, len(e.Src))
		n, err := readEdgePiece(s, p, sink)
		if err != nil {
			return nil, nil, err
		}
		e.Src, e.Dst = sink.src, sink.dst
		infos = append(infos, pieceInfo{Src: int64(p.src), Rows: n})
		done = pieceStart + p.hi - p.lo
		o.progress("read edges", done, total)
	}
	return infos, starts, nil
}

// readEdgePiece reads one piece of an edge chunk in its format.
func readEdgePiece(s edgeSource, p piece, sink *edgeSink) (int64, error) {
	switch s.format.Name {
	case FormatCSV:
		f, err := os.Open(s.path)
		if err != nil {
			return 0, fileErr(s.path, "%v", unwrapPathError(err))
		}
		defer f.Close()
		return readCSVEdges(f, s.path, delimiterOf(s.format), p, sink)
	case FormatNumPy:
		a, err := OpenNpy(s.path)
		if err != nil {
			return 0, err
		}
		defer a.Close()
		return readNpyEdges(a, p, sink)
	case FormatParquet:
		pf, err := openParquet(s.path)
		if err != nil {
			return 0, err
		}
		defer pf.close()
		return readParquetEdges(pf, p, sink)
	}
	return 0, fileErr(s.path, "unknown edge format %q", s.format.Name)
}

// estimatePiece returns an upper bound of the edges in a piece: lines for
// CSV, rows for NumPy and Parquet (0 when the file cannot be read; the read
// reports why).
func estimatePiece(s edgeSource, p piece) int64 {
	switch s.format.Name {
	case FormatCSV:
		f, err := os.Open(s.path)
		if err != nil {
			return 0
		}
		defer f.Close()
		return countLines(f, p.lo, p.hi)
	case FormatNumPy:
		a, err := OpenNpy(s.path)
		if err != nil {
			return 0
		}
		defer a.Close()
		r0, r1 := npyEdgeRows(&a.Header, p)
		return r1 - r0
	case FormatParquet:
		pf, err := openParquet(s.path)
		if err != nil {
			return 0
		}
		defer pf.close()
		var n int64
		for _, g := range pqEdgeGroups(pf, p) {
			n += pf.rowStart[g+1] - pf.rowStart[g]
		}
		return n
	}
	return 0
}

// delimiterOf returns a CSV chunk's delimiter: DGL's reader defaults to a
// comma.
func delimiterOf(f Format) string {
	if f.Delimiter == "" {
		return ","
	}
	return f.Delimiter
}

// checkEdgeCounts compares the records found in each file with the
// metadata's counts per chunk and per type.
func checkEdgeCounts(md *Metadata, srcs []edgeSource, rows []int64) error {
	perType := make([]int64, len(md.EdgeType))
	for i, s := range srcs {
		perType[s.etype] += rows[i]
		if md.NumEdgesPerChunk != nil {
			if want := md.NumEdgesPerChunk[s.etype][s.chunk]; rows[i] != want {
				return fileErr(s.path, "holds %d edges but num_edges_per_chunk says %d for chunk %d of edge type %q", rows[i], want, s.chunk, md.EdgeType[s.etype])
			}
		}
	}
	meta := md.Meta()
	for t, n := range perType {
		if n != meta.NumEdges[t] {
			key := "num_edges_per_type"
			if md.NumEdgesPerType == nil {
				key = "num_edges_per_chunk"
			}
			return md.keyErr(key, "edge type %q: its chunk files hold %d edges but %s says %d", md.EdgeType[t], n, key, meta.NumEdges[t])
		}
	}
	return nil
}

// idRange is a run of local edges [at, at+n) of one edge type with
// consecutive type-wise IDs from id.
type idRange struct {
	etype int
	at, n int
	id    int64
}

// assignEdgeIDs turns the type-wise node IDs of the pieces into homogeneous
// IDs and sets each edge's type and type-wise ID.
func assignEdgeIDs(e *graph.Edges, meta *graph.Meta, srcs []edgeSource, infos []pieceInfo, starts []int, first, typeStart []int64) []idRange {
	n := e.Len()
	e.ID = make([]int64, n)
	if len(meta.EdgeTypes) > 1 {
		e.Type = make([]int16, n)
	}
	var ranges []idRange
	for k, p := range infos {
		s := srcs[p.Src]
		et := meta.EdgeTypes[s.etype]
		so, do := meta.NodeOffset(meta.NodeType(et.Src)), meta.NodeOffset(meta.NodeType(et.Dst))
		at, cnt := starts[k], int(p.Rows)
		id0 := typeStart[p.Src] + first[k]
		for i := at; i < at+cnt; i++ {
			e.Src[i] += so
			e.Dst[i] += do
			e.ID[i] = id0 + int64(i-at)
			if e.Type != nil {
				e.Type[i] = int16(s.etype)
			}
		}
		ranges = append(ranges, idRange{etype: s.etype, at: at, n: cnt, id: id0})
	}
	return ranges
}

// readChunkedData reads node data (the rows of this rank's even range of
// each node type) and edge data (the rows of this rank's edges).
func readChunkedData(c *collective.Comm, md *Metadata, g *Graph, ranges []idRange) error {
	meta := &g.Meta
	g.Nodes = graph.NewNodeData(meta, c.Rank(), c.Size())
	type target struct {
		node bool
		t    int
		name string
	}
	var arrays []*multiArray
	var targets []target
	for t, nt := range md.NodeType {
		for _, name := range sortedKeys(md.NodeData[nt]) {
			s := md.NodeData[nt][name]
			arrays = append(arrays, newMultiArray(fmt.Sprintf("node_data %q/%q", nt, name), s, md))
			targets = append(targets, target{true, t, name})
		}
	}
	for t, et := range md.EdgeType {
		for _, name := range sortedKeys(md.EdgeData[et]) {
			s := md.EdgeData[et][name]
			arrays = append(arrays, newMultiArray(fmt.Sprintf("edge_data %q/%q", et, name), s, md))
			targets = append(targets, target{false, t, name})
		}
	}
	if len(arrays) == 0 {
		return nil
	}
	if err := probeArrays(c, arrays); err != nil {
		return err
	}
	for i, a := range arrays {
		tg := targets[i]
		if tg.node {
			if err := a.checkRows(meta.NumNodes[tg.t], "the node type has %d nodes"); err != nil {
				return err
			}
			if md.NumNodesPerChunk != nil && len(md.NumNodesPerChunk[tg.t]) == len(a.paths) {
				for j, want := range md.NumNodesPerChunk[tg.t] {
					if got := a.info[j].Rows; got != want {
						return fileErr(a.paths[j], "%s: chunk %d holds %d rows but num_nodes_per_chunk says %d", a.what, j, got, want)
					}
				}
			}
			lo, hi := g.Nodes.Range(tg.t)
			ten, closer, err := a.read(lo, hi)
			if err != nil {
				return err
			}
			g.closers = append(g.closers, closer)
			g.Nodes.Arrays[tg.t][tg.name] = ten
			continue
		}
		if err := a.checkRows(meta.NumEdges[tg.t], "the edge type has %d edges"); err != nil {
			return err
		}
		ten := graph.NewTensor(a.dtype, a.shape(int64(g.Edges.Len()))...)
		rb := a.rowBytes()
		for _, r := range ranges {
			if r.etype != tg.t || r.n == 0 {
				continue
			}
			if err := a.readInto(r.id, r.id+int64(r.n), ten.Data[int64(r.at)*rb:int64(r.at+r.n)*rb]); err != nil {
				return err
			}
		}
		if g.Edges.Data == nil {
			g.Edges.Data = map[string]*graph.Tensor{}
		}
		g.Edges.Data[graph.EdgeDataKey(meta.EdgeTypes[tg.t], tg.name)] = ten
	}
	return nil
}

func newMultiArray(what string, s ChunkSpec, md *Metadata) *multiArray {
	a := &multiArray{what: what, format: s.Format}
	if a.format.Name == FormatCSV {
		a.format.Delimiter = delimiterOf(s.Format)
	}
	for _, p := range s.Data {
		a.paths = append(a.paths, md.Resolve(p))
	}
	return a
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
