package graphio

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"sort"
	"strings"

	"gnnrun/collective"
	"gnnrun/graph"
)

// An .npz is a zip archive of .npy arrays. Stored (uncompressed) entries
// are read in place by offset; deflated ones are streamed from their start,
// each rank keeping only the rows it needs.

// NpzEntry is one array of an .npz archive.
type NpzEntry struct {
	Name   string // the key, without ".npy"
	Header NpyHeader
	z      *zip.File
	path   string
	off    int64 // stored entries: offset of the array data in the archive
}

// Npz is an open .npz archive.
type Npz struct {
	Path    string
	Entries []*NpzEntry
	// Skipped lists the entries that are not numeric arrays (object or
	// string dtypes) and why.
	Skipped []string
	f       *os.File
	zr      *zip.Reader
}

// OpenNpz opens an archive and reads the header of every entry. Entries
// holding pickled objects or strings are skipped and listed in Skipped;
// a broken header in any entry is an error.
func OpenNpz(path string) (*Npz, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileErr(path, "%v", unwrapPathError(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileErr(path, "%v", err)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fileErr(path, "not an .npz (zip) archive: %v", err)
	}
	z := &Npz{Path: path, f: f, zr: zr}
	for _, zf := range zr.File {
		name := strings.TrimSuffix(zf.Name, ".npy")
		where := path + ":" + zf.Name
		rc, err := zf.Open()
		if err != nil {
			z.Close()
			return nil, fileErr(where, "%v", err)
		}
		h, err := readNpyHeader(rc, where, true)
		rc.Close()
		if err != nil {
			var ie *InputError
			if errors.As(err, &ie) && (strings.Contains(ie.Msg, "object dtype") || strings.Contains(ie.Msg, "unsupported dtype")) {
				z.Skipped = append(z.Skipped, name+": "+ie.Msg)
				continue
			}
			z.Close()
			return nil, err
		}
		e := &NpzEntry{Name: name, Header: *h, z: zf, path: where}
		if zf.Method == zip.Store {
			off, err := zf.DataOffset()
			if err != nil {
				z.Close()
				return nil, fileErr(where, "%v", err)
			}
			e.off = off + h.Offset
		}
		if int64(zf.UncompressedSize64) < h.Offset+h.DataBytes() {
			z.Close()
			return nil, fileErr(where, "truncated: header announces %d data bytes, the entry holds %d", h.DataBytes(), int64(zf.UncompressedSize64)-h.Offset)
		}
		z.Entries = append(z.Entries, e)
	}
	return z, nil
}

// Entry returns the named array, or nil.
func (z *Npz) Entry(name string) *NpzEntry {
	for _, e := range z.Entries {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Close closes the archive.
func (z *Npz) Close() error { return z.f.Close() }

// ReadBytes reads bytes [lo, hi) of the entry's array data into dst.
func (z *Npz) ReadBytes(e *NpzEntry, lo, hi int64, dst []byte) error {
	if hi <= lo {
		return nil
	}
	if e.z.Method == zip.Store {
		if _, err := z.f.ReadAt(dst[:hi-lo], e.off+lo); err != nil {
			return fileErr(e.path, "%v", err)
		}
		return nil
	}
	rc, err := e.z.Open()
	if err != nil {
		return fileErr(e.path, "%v", err)
	}
	defer rc.Close()
	if _, err := io.CopyN(io.Discard, rc, e.Header.Offset+lo); err != nil {
		return fileErr(e.path, "%v", err)
	}
	if _, err := io.ReadFull(rc, dst[:hi-lo]); err != nil {
		return fileErr(e.path, "%v", err)
	}
	return nil
}

// ReadRows reads rows [lo, hi) of the entry into a new tensor.
func (z *Npz) ReadRows(e *NpzEntry, lo, hi int64) (*graph.Tensor, error) {
	h := &e.Header
	rb := h.RowBytes()
	t := &graph.Tensor{DType: h.DType, Shape: append([]int64{hi - lo}, h.Shape[min(1, len(h.Shape)):]...), Data: make([]byte, (hi-lo)*rb)}
	return t, z.ReadBytes(e, lo*rb, hi*rb, t.Data)
}

// readInt64s reads elements [lo, hi) of a 1-D integer entry as int64.
func (z *Npz) readInt64s(e *NpzEntry, lo, hi int64) ([]int64, error) {
	t, err := z.ReadRows(e, lo, hi)
	if err != nil {
		return nil, err
	}
	return toInt64s(t, e.path)
}

// toInt64s converts an integer tensor to int64 values.
func toInt64s(t *graph.Tensor, where string) ([]int64, error) {
	n := t.Rows() * t.RowLen()
	out := make([]int64, n)
	switch t.DType {
	case graph.Int8, graph.Int16, graph.Int32, graph.Int64, graph.Uint8, graph.Uint16, graph.Uint32, graph.Uint64:
	default:
		return nil, fileErr(where, "dtype %s: node IDs must be integers", t.DType)
	}
	for i := range n {
		out[i] = int64(t.Float64At(0, i))
		if t.DType == graph.Int64 || t.DType == graph.Uint64 {
			v, _ := graph.ViewBytes[int64](t.Data[8*i : 8*i+8])
			out[i] = v[0]
		}
	}
	return out, nil
}

// readNpyGraph reads a .npy holding an N×2 edge array.
func readNpyGraph(c *collective.Comm, path string, o *options) (*Graph, error) {
	a, err := OpenNpy(path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	st, err := a.f.Stat()
	if err != nil {
		return nil, fileErr(path, "%v", err)
	}
	p := piece{}
	if ps := splitBytes([]int64{st.Size()}, c.Rank(), c.Size()); len(ps) == 1 {
		p = ps[0]
	}
	if err := checkEdgeArray(path, &a.Header); err != nil {
		return nil, err
	}
	r0, r1 := npyEdgeRows(&a.Header, p)
	sink := &edgeSink{src: make([]int64, 0, r1-r0), dst: make([]int64, 0, r1-r0), nSrc: 1<<63 - 1, nDst: 1<<63 - 1}
	if _, err := readNpyEdges(a, p, sink); err != nil {
		return nil, err
	}
	e := &graph.Edges{Src: sink.src, Dst: sink.dst, ID: make([]int64, len(sink.src))}
	for i := range e.ID {
		e.ID[i] = r0 + int64(i)
	}
	n, err := maxNode(c, e)
	if err != nil {
		return nil, err
	}
	return &Graph{Meta: homogeneousMeta(path, n+1, a.Header.Rows()), Edges: e}, nil
}

// maxNode returns the largest node ID of the edges on all ranks (-1: none).
func maxNode(c *collective.Comm, e *graph.Edges) (int64, error) {
	m := int64(-1)
	for i := range e.Src {
		m = max(m, e.Src[i], e.Dst[i])
	}
	return collective.Max(c, m)
}

func homogeneousMeta(path string, nodes, edges int64) graph.Meta {
	return graph.Meta{Name: graphName(path), NodeTypes: []string{"_N"}, NumNodes: []int64{nodes},
		EdgeTypes: []graph.EdgeType{{Src: "_N", Rel: "_E", Dst: "_N"}}, NumEdges: []int64{edges}}
}

// The keys of the .npz layouts we know: an edge array, or a CSR adjacency
// (scipy's sparse matrix saved by key prefix).
var (
	npzEdgeKeys = []string{"edges", "edge_index", "edge_list"}
	npzCSRKeys  = []string{"adj", "adj_matrix", "adjacency"}
	npzAttrKeys = []string{"attr", "attr_matrix", "features", "feat"}
	npzNodeKeys = []string{"labels", "node_labels", "node_features", "features", "feat", "x", "y"}
)

// csrKeys returns the entries of a CSR matrix stored under prefix p with
// either "p_" or "p." separators, or nils.
func (z *Npz) csrKeys(p string) (indptr, indices, data, shape *NpzEntry) {
	for _, sep := range []string{"_", "."} {
		if ip, ix := z.Entry(p+sep+"indptr"), z.Entry(p+sep+"indices"); ip != nil && ix != nil {
			return ip, ix, z.Entry(p + sep + "data"), z.Entry(p + sep + "shape")
		}
	}
	return nil, nil, nil, nil
}

// readNpzGraph reads an .npz with an edge array ("edges": M×2 or 2×M) or a
// CSR adjacency ("adj_indptr"/"adj_indices", or "adj_matrix.indptr"...),
// plus node arrays: every numeric array whose first dimension is the node
// count (or whose second is, for split masks stored as splits×N, which are
// transposed), and a CSR feature matrix ("attr_*") made dense.
func readNpzGraph(c *collective.Comm, path string, o *options) (*Graph, error) {
	z, err := OpenNpz(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	if c.Rank() == 0 {
		for _, s := range z.Skipped {
			o.log.Warn("skipping .npz entry", "file", path, "entry", s)
		}
	}
	used := map[string]bool{}
	e, nodes, edges, err := z.readNpzEdges(c, used)
	if err != nil {
		return nil, err
	}
	for _, k := range npzNodeKeys {
		if en := z.Entry(k); en != nil && len(en.Header.Shape) >= 1 && !en.Header.Fortran {
			nodes = max(nodes, en.Header.Shape[0])
		}
	}
	g := &Graph{Meta: homogeneousMeta(path, nodes, edges), Edges: e}
	if o.skipData {
		return g, nil
	}
	g.Nodes = graph.NewNodeData(&g.Meta, c.Rank(), c.Size())
	lo, hi := g.Nodes.Range(0)
	for _, p := range npzAttrKeys {
		ip, ix, data, shape := z.csrKeys(p)
		if ip == nil || ip.Header.Rows() != nodes+1 {
			continue
		}
		t, err := z.denseRows(c, ip, ix, data, shape, lo, hi)
		if err != nil {
			return nil, err
		}
		g.Nodes.Arrays[0]["feat"] = t
		for _, en := range []*NpzEntry{ip, ix, data, shape} {
			if en != nil {
				used[en.Name] = true
			}
		}
		break
	}
	names := make([]string, 0, len(z.Entries))
	for _, en := range z.Entries {
		names = append(names, en.Name)
	}
	sort.Strings(names)
	for _, name := range names {
		en := z.Entry(name)
		sh := en.Header.Shape
		switch {
		case used[name]:
		case en.Header.Fortran && len(sh) == 2 && sh[0] == nodes:
			// A K×N array stored column-major holds one row per node.
			t, err := z.ReadRows(en, lo, hi)
			if err != nil {
				return nil, err
			}
			g.Nodes.Arrays[0][name] = t
		case en.Header.Fortran && len(sh) > 1:
			if c.Rank() == 0 {
				o.log.Warn("skipping Fortran-order .npz entry", "file", path, "entry", name)
			}
		case len(sh) >= 1 && sh[0] == nodes:
			t, err := z.ReadRows(en, lo, hi)
			if err != nil {
				return nil, err
			}
			g.Nodes.Arrays[0][name] = t
		case len(sh) == 2 && sh[1] == nodes:
			t, err := z.transposedRows(en, lo, hi)
			if err != nil {
				return nil, err
			}
			g.Nodes.Arrays[0][name] = t
		default:
			if c.Rank() == 0 {
				o.log.Warn("skipping .npz entry that is not one row per node", "file", path, "entry", name, "shape", graph.ShapeString(sh), "nodes", nodes)
			}
		}
	}
	return g, nil
}

// readNpzEdges reads this rank's share of the edges and returns them with
// the node count they imply and the edge count.
func (z *Npz) readNpzEdges(c *collective.Comm, used map[string]bool) (*graph.Edges, int64, int64, error) {
	for _, k := range npzEdgeKeys {
		en := z.Entry(k)
		if en == nil {
			continue
		}
		used[k] = true
		sh := en.Header.Shape
		if len(sh) != 2 || (sh[1] != 2 && sh[0] != 2) {
			return nil, 0, 0, fileErr(en.path, "shape %s: an edge array must be M×2 or 2×M", graph.ShapeString(sh))
		}
		var m int64
		var src, dst []int64
		var lo int64
		if sh[1] == 2 {
			m = sh[0]
			b := graph.EvenBook(m, c.Size())
			var hi int64
			lo, hi = b.Range(c.Rank())
			ids, err := z.readInt64s(en, lo, hi)
			if err != nil {
				return nil, 0, 0, err
			}
			src, dst = make([]int64, hi-lo), make([]int64, hi-lo)
			for i := range src {
				src[i], dst[i] = ids[2*i], ids[2*i+1]
			}
		} else {
			m = sh[1]
			b := graph.EvenBook(m, c.Size())
			var hi int64
			lo, hi = b.Range(c.Rank())
			es := int64(en.Header.DType.Size())
			rowsT := &graph.Tensor{DType: en.Header.DType, Shape: []int64{hi - lo}}
			for k := range int64(2) {
				rowsT.Data = make([]byte, (hi-lo)*es)
				if err := z.ReadBytes(en, (k*m+lo)*es, (k*m+hi)*es, rowsT.Data); err != nil {
					return nil, 0, 0, err
				}
				ids, err := toInt64s(rowsT, en.path)
				if err != nil {
					return nil, 0, 0, err
				}
				if k == 0 {
					src = ids
				} else {
					dst = ids
				}
			}
		}
		e := &graph.Edges{Src: src, Dst: dst, ID: make([]int64, len(src))}
		for i := range e.ID {
			e.ID[i] = lo + int64(i)
			if src[i] < 0 || dst[i] < 0 {
				return nil, 0, 0, rowErr(en.path, lo+int64(i), "negative node ID in edge (%d, %d)", src[i], dst[i])
			}
		}
		n, err := maxNode(c, e)
		return e, n + 1, m, err
	}
	for _, p := range npzCSRKeys {
		ip, ix, data, shape := z.csrKeys(p)
		if ip == nil {
			continue
		}
		for _, en := range []*NpzEntry{ip, ix, data, shape} {
			if en != nil {
				used[en.Name] = true
			}
		}
		nodes := ip.Header.Rows() - 1
		if shape != nil {
			s, err := z.readInt64s(shape, 0, shape.Header.Rows())
			if err != nil {
				return nil, 0, 0, err
			}
			if len(s) == 2 && s[0] != nodes {
				return nil, 0, 0, fileErr(ip.path, "indptr has %d entries but the shape says %d rows", nodes+1, s[0])
			}
			if len(s) == 2 {
				nodes = max(nodes, s[1])
			}
		}
		b := graph.EvenBook(ip.Header.Rows()-1, c.Size())
		lo, hi := b.Range(c.Rank())
		ptr, err := z.readInt64s(ip, lo, hi+1)
		if err != nil {
			return nil, 0, 0, err
		}
		cols, err := z.readInt64s(ix, ptr[0], ptr[len(ptr)-1])
		if err != nil {
			return nil, 0, 0, err
		}
		e := &graph.Edges{Src: make([]int64, len(cols)), Dst: cols, ID: make([]int64, len(cols))}
		for r := lo; r < hi; r++ {
			for k := ptr[r-lo]; k < ptr[r-lo+1]; k++ {
				e.Src[k-ptr[0]] = r
				e.ID[k-ptr[0]] = k
				if cols[k-ptr[0]] < 0 || cols[k-ptr[0]] >= nodes {
					return nil, 0, 0, rowErr(ix.path, k, "column index %d outside 0..%d", cols[k-ptr[0]], nodes-1)
				}
			}
		}
		return e, nodes, ix.Header.Rows(), nil
	}
	var keys []string
	for _, en := range z.Entries {
		keys = append(keys, en.Name)
	}
	return nil, 0, 0, fileErr(z.Path, "no edges: want an array %q (M×2 or 2×M) or a CSR adjacency (%q and %q); the archive holds %v", "edges", "adj_indptr", "adj_indices", keys)
}

// denseRows returns rows [lo, hi) of a CSR matrix as dense rows of its data
// dtype (float32 when there is no data: a binary matrix).
func (z *Npz) denseRows(c *collective.Comm, ip, ix, data, shape *NpzEntry, lo, hi int64) (*graph.Tensor, error) {
	ptr, err := z.readInt64s(ip, lo, hi+1)
	if err != nil {
		return nil, err
	}
	cols, err := z.readInt64s(ix, ptr[0], ptr[len(ptr)-1])
	if err != nil {
		return nil, err
	}
	var width int64
	for _, cI := range cols {
		width = max(width, cI+1)
	}
	// Every rank must agree on the width.
	if width, err = collective.Max(c, width); err != nil {
		return nil, err
	}
	if shape != nil {
		if s, err := z.readInt64s(shape, 0, shape.Header.Rows()); err == nil && len(s) == 2 {
			width = max(width, s[1])
		}
	}
	d := graph.Float32
	var vals *graph.Tensor
	if data != nil {
		d = data.Header.DType
		if vals, err = z.ReadRows(data, ptr[0], ptr[len(ptr)-1]); err != nil {
			return nil, err
		}
	}
	t := graph.NewTensor(d, hi-lo, width)
	es := int64(d.Size())
	one := graph.TensorOf([]float32{1}, 0)
	for r := range hi - lo {
		for k := ptr[r]; k < ptr[r+1]; k++ {
			dst := t.Data[(r*width+cols[k-ptr[0]])*es:]
			if vals != nil {
				copy(dst[:es], vals.Data[(k-ptr[0])*es:])
			} else {
				copy(dst[:es], one.Data)
			}
		}
	}
	return t, nil
}

// transposedRows returns rows [lo, hi) of the transpose of a K×N entry.
func (z *Npz) transposedRows(e *NpzEntry, lo, hi int64) (*graph.Tensor, error) {
	k, n := e.Header.Shape[0], e.Header.Shape[1]
	es := int64(e.Header.DType.Size())
	t := graph.NewTensor(e.Header.DType, hi-lo, k)
	buf := make([]byte, (hi-lo)*es)
	for j := range k {
		if err := z.ReadBytes(e, (j*n+lo)*es, (j*n+hi)*es, buf); err != nil {
			return nil, err
		}
		for i := range hi - lo {
			copy(t.Data[(i*k+j)*es:(i*k+j+1)*es], buf[i*es:(i+1)*es])
		}
	}
	return t, nil
}
