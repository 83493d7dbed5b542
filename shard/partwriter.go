package shard

import (
	"path/filepath"

	"gnnrun/graph"
)

// partWriter is the receiving end of one wave on one rank: it collects the
// partition this rank builds in the wave (part < 0: none), writes node rows
// to their files as they arrive, keeps the edges, and writes the rest on
// finish.
type partWriter struct {
	d        *dispatcher
	part     int
	lo, hi   int64
	origNIDs []int64
	seen     int64
	rows     []*rowFile // per node array
	edges    []partEdge
	arr      []int64  // with edge arrays: each edge's row among its type's arrivals
	blobs    [][]byte // per edge type: data rows in arrival order
	arrivals []int64  // per edge type
	done     bool
}

// path returns the absolute path of a file named in the config.
func (pw *partWriter) path(rel string) string {
	return filepath.Join(pw.d.out, filepath.FromSlash(rel))
}

func (d *dispatcher) newPartWriter(part int) (*partWriter, error) {
	pw := &partWriter{d: d, part: part}
	if part < 0 {
		return pw, nil
	}
	pw.lo, pw.hi = d.book.PartRange(part)
	pw.origNIDs = make([]int64, pw.hi-pw.lo)
	for i := range pw.origNIDs {
		pw.origNIDs[i] = -1
	}
	files := d.files[part]
	for _, a := range d.nodeArrays {
		key := featKey{d.m.NodeTypes[a.t], a.name}
		shape := append([]int64{d.nodeCounts[part][a.t]}, a.data.RowShape()...)
		rf, err := createRowFile(pw.path(files.NodeFeats[key.String()]), a.data.DType, shape)
		if err != nil {
			pw.abort()
			return nil, err
		}
		pw.rows = append(pw.rows, rf)
	}
	var total int64
	pw.blobs = make([][]byte, d.E)
	pw.arrivals = make([]int64, d.E)
	for t, n := range d.edgeCounts[part] {
		total += n
		pw.blobs[t] = make([]byte, 0, n*int64(d.edgeRow[t]))
	}
	pw.edges = make([]partEdge, 0, total)
	if len(d.edgeArrays) > 0 {
		pw.arr = make([]int64, 0, total)
	}
	return pw, nil
}

// acceptNodes records the original IDs of arriving inner nodes.
func (pw *partWriter) acceptNodes(recs []nodeRec) error {
	d := pw.d
	if pw.part < 0 && len(recs) > 0 {
		return errorf("node shuffle: rank %d received %d nodes in a wave where it builds no partition", d.c.Rank(), len(recs))
	}
	for _, r := range recs {
		if r.New < pw.lo || r.New >= pw.hi {
			return errorf("node shuffle: node %d arrived at partition %d, whose nodes are [%d,%d)", r.New, pw.part, pw.lo, pw.hi)
		}
		if pw.origNIDs[r.New-pw.lo] >= 0 {
			return errorf("node shuffle: node %d arrived twice at partition %d", r.New, pw.part)
		}
		pw.origNIDs[r.New-pw.lo] = r.Orig
		pw.seen++
		d.got.nodes.n++
		d.got.nodes.ids.Add(graph.Mix64(idHash(saltNode, r.New) ^ uint64(r.Orig)))
	}
	return nil
}

// acceptNodeRows writes the rows of node array a at the head of rows: one
// row for each record of the array's type, in record order (the records
// came from one rank). Consecutive new IDs are written with one call. It
// returns the bytes it took. Unless counted (rows the rank kept, whose
// checksums pack counted on both sides), each row's checksum is added to
// the received tally.
func (pw *partWriter) acceptNodeRows(a int, recs []nodeRec, rows []byte, counted bool) (int64, error) {
	d := pw.d
	arr := d.nodeArrays[a]
	if pw.part < 0 {
		return 0, nil
	}
	rb := int64(arr.data.RowBytes())
	tlo, thi := d.book.TypeRange(pw.part, arr.t)
	var off, runStart, runRows int64
	flush := func() error {
		if runRows == 0 {
			return nil
		}
		err := pw.rows[a].writeRows(runStart-tlo, rows[off-runRows*rb:off])
		runRows = 0
		return err
	}
	for _, r := range recs {
		if r.New < tlo || r.New >= thi {
			continue
		}
		if off+rb > int64(len(rows)) {
			return 0, errorf("node shuffle: array %s/%s: %d bytes arrived for more rows", d.m.NodeTypes[arr.t], arr.name, len(rows))
		}
		if !counted {
			d.got.nodes.rows.Add(arrayRowHash(a, r.New, rows[off:off+rb]))
		}
		if runRows > 0 && r.New != runStart+runRows {
			if err := flush(); err != nil {
				return 0, err
			}
		}
		if runRows == 0 {
			runStart = r.New
		}
		runRows++
		off += rb
	}
	return off, flush()
}

// acceptEdges keeps the arriving edges and their data rows. Unless
// counted (edges the rank kept, whose checksums pack counted on both
// sides), their checksums are added to the received tally.
func (pw *partWriter) acceptEdges(recs []edgeRec, rows []byte, arraysOf [][]int, counted bool) error {
	d := pw.d
	if pw.part < 0 && len(recs) > 0 {
		return errorf("edge shuffle: rank %d received %d edges in a wave where it builds no partition", d.c.Rank(), len(recs))
	}
	var off int
	for _, r := range recs {
		t := keyType(r.Key)
		if int(t) >= d.E || t < 0 {
			return errorf("edge shuffle: edge of type %d arrived; the graph has %d types", t, d.E)
		}
		if r.Dst < pw.lo || r.Dst >= pw.hi {
			return errorf("edge shuffle: edge %d -> %d arrived at partition %d, whose nodes are [%d,%d)", r.Src, r.Dst, pw.part, pw.lo, pw.hi)
		}
		if len(pw.edges) == cap(pw.edges) {
			return errorf("edge shuffle: more edges arrived at partition %d than the %d counted", pw.part, cap(pw.edges))
		}
		pw.edges = append(pw.edges, r)
		if pw.arr != nil {
			pw.arr = append(pw.arr, pw.arrivals[t])
		}
		pw.arrivals[t]++
		d.got.edges.n++
		rb := d.edgeRow[t]
		if off+rb > len(rows) {
			return errorf("edge shuffle: %d data bytes arrived for more edges", len(rows))
		}
		pw.blobs[t] = append(pw.blobs[t], rows[off:off+rb]...)
		if !counted {
			d.got.edges.ids.Add(edgeHash(r))
			at := off
			for _, a := range arraysOf[t] {
				n := d.edgeArrays[a].data.RowBytes()
				d.got.edges.rows.Add(arrayRowHash(a, r.Key, rows[at:at+n]))
				at += n
			}
		}
		off += rb
	}
	if off != len(rows) {
		return errorf("edge shuffle: %d data bytes arrived for %d", len(rows), off)
	}
	return nil
}

// finish checks that the whole partition arrived, then writes its files.
func (pw *partWriter) finish() error {
	if pw.part < 0 {
		return nil
	}
	d := pw.d
	if pw.seen != pw.hi-pw.lo {
		return errorf("partition %d: %d of its %d inner nodes arrived", pw.part, pw.seen, pw.hi-pw.lo)
	}
	if len(pw.edges) != cap(pw.edges) {
		return errorf("partition %d: %d of its %d edges arrived", pw.part, len(pw.edges), cap(pw.edges))
	}
	for _, rf := range pw.rows {
		if err := rf.close(); err != nil {
			return err
		}
	}
	pw.rows = nil
	files := d.files[pw.part]
	if err := writeSlice(pw.path(files.OrigNIDs), pw.origNIDs); err != nil {
		return err
	}
	pw.origNIDs = nil
	sortEdges(pw.edges, pw.arr)
	l := buildCSC(pw.edges, pw.lo, pw.hi)
	release(16 * int64(len(pw.edges)))
	d.halo[pw.part], d.cut[pw.part] = int64(len(l.halo)), l.cut
	if err := pw.writeNodes(l, files); err != nil {
		return err
	}
	if err := pw.writeEdges(l, files); err != nil {
		return err
	}
	sums, err := partChecksums(filepath.Join(d.out, ConfigName(d.m.Name)), files)
	if err != nil {
		return err
	}
	for f, sum := range sums {
		d.sums[pw.part*len(sums)+f] = int64(sum)
	}
	pw.done = true
	pw.edges, pw.blobs, pw.arr = nil, nil, nil
	return nil
}

// written collects the garbage of an array just written: the next one is
// as big, and the partition's edges are still live.
func (pw *partWriter) written(err error) error {
	release(8 * int64(len(pw.edges)))
	return err
}

// writeNodes writes the per-local-node arrays.
func (pw *partWriter) writeNodes(l *cscLayout, files PartFiles) error {
	d := pw.d
	n, h := l.n, int64(len(l.halo))
	l2g := make([]int64, n+h)
	for i := range n {
		l2g[i] = pw.lo + i
	}
	copy(l2g[n:], l.halo)
	if err := pw.written(writeSlice(pw.path(files.Local2Global), l2g)); err != nil {
		return err
	}
	inner := make([]bool, n+h)
	for i := range n {
		inner[i] = true
	}
	if err := pw.written(writeSlice(pw.path(files.InnerNode), inner)); err != nil {
		return err
	}
	types := make([]int16, n+h)
	for i, id := range l2g {
		types[i] = int16(d.book.NodeType(id))
	}
	return pw.written(writeSlice(pw.path(files.NodeType), types))
}

// writeEdges writes the CSC and the edge arrays.
func (pw *partWriter) writeEdges(l *cscLayout, files PartFiles) error {
	d := pw.d
	es := pw.edges
	if err := pw.written(writeSlice(pw.path(files.Indptr), l.indptr)); err != nil {
		return err
	}
	ind := l.indices(es)
	if err := pw.written(writeArray(pw.path(files.Indices), ind.DType, ind.Shape, ind.Data)); err != nil {
		return err
	}
	elo, _ := d.book.EdgePartRange(pw.part)
	if err := pw.written(writeSlice(pw.path(files.EdgeIDs), scatter(l, es, func(k int, _ partEdge) int64 { return elo + int64(k) }))); err != nil {
		return err
	}
	if err := pw.written(writeSlice(pw.path(files.EdgeType), scatter(l, es, func(_ int, e partEdge) int16 { return keyType(e.Key) }))); err != nil {
		return err
	}
	if err := pw.written(writeSlice(pw.path(files.OrigEIDs), scatter(l, es, func(_ int, e partEdge) int64 { return keyID(e.Key) }))); err != nil {
		return err
	}
	if len(d.edgeArrays) == 0 {
		return nil
	}
	inv := l.inverse()
	offsets := make([]int, len(d.edgeArrays)) // offset of each array's row in its type's row
	at := make([]int, d.E)
	for a, arr := range d.edgeArrays {
		offsets[a] = at[arr.t]
		at[arr.t] += arr.data.RowBytes()
	}
	for a, arr := range d.edgeArrays {
		rb := arr.data.RowBytes()
		stride := int64(d.edgeRow[arr.t])
		data := make([]byte, 0, d.edgeCounts[pw.part][arr.t]*int64(rb))
		for _, k := range inv {
			e := es[k]
			if int(keyType(e.Key)) != arr.t {
				continue
			}
			from := pw.arr[k]*stride + int64(offsets[a])
			data = append(data, pw.blobs[arr.t][from:from+int64(rb)]...)
		}
		key := featKey{d.m.EdgeTypes[arr.t].String(), arr.name}
		shape := append([]int64{d.edgeCounts[pw.part][arr.t]}, arr.data.RowShape()...)
		if err := pw.written(writeArray(pw.path(files.EdgeFeats[key.String()]), arr.data.DType, shape, data)); err != nil {
			return err
		}
	}
	return nil
}

// abort discards the files still being written.
func (pw *partWriter) abort() {
	for _, rf := range pw.rows {
		if rf != nil {
			rf.abort()
		}
	}
	pw.rows = nil
}
