package graphio

import (
	"fmt"
	"os"

	"gnnrun/graph"
)

// edgeSink receives the edges of one piece as type-wise IDs, checked
// against the node counts of their endpoint types.
type edgeSink struct {
	src, dst         []int64
	nSrc, nDst       int64
	srcType, dstType string
	step             func(bytes int64) // progress: bytes read since the last call
}

func (s *edgeSink) progress(n int64) {
	if s.step != nil && n > 0 {
		s.step(n)
	}
}

// bad returns why edge (u, v) is invalid, or "".
func (s *edgeSink) bad(u, v int64) string {
	switch {
	case u < 0:
		return fmt.Sprintf("negative source node ID %d", u)
	case v < 0:
		return fmt.Sprintf("negative destination node ID %d", v)
	case u >= s.nSrc:
		return fmt.Sprintf("source node ID %d is out of range: node type %q has %d nodes (IDs 0..%d)", u, s.srcType, s.nSrc, s.nSrc-1)
	case v >= s.nDst:
		return fmt.Sprintf("destination node ID %d is out of range: node type %q has %d nodes (IDs 0..%d)", v, s.dstType, s.nDst, s.nDst-1)
	}
	return ""
}

// readCSVEdges reads the edges of the lines starting in the piece: two
// integer columns, source then destination. Blank lines are skipped, as
// DGL's reader skips them.
func readCSVEdges(f *os.File, path, delim string, p piece, s *edgeSink) (int64, error) {
	lr, err := newLineReader(f, path, p.lo, p.hi)
	if err != nil {
		return 0, err
	}
	sep := separators(delim)
	var fs [][]byte
	var rows int64
	reported := lr.pos
	defer func() { s.progress(lr.pos - reported) }()
	for {
		line, ok, err := lr.next()
		if err != nil {
			return rows, err
		}
		if !ok {
			return rows, nil
		}
		if rows&0xffff == 0 {
			s.progress(lr.pos - reported)
			reported = lr.pos
		}
		if u, v, ok := twoInts(line, sep); ok && u >= 0 && v >= 0 && u < s.nSrc && v < s.nDst {
			s.src = append(s.src, u)
			s.dst = append(s.dst, v)
			rows++
			continue
		}
		fs = fields(line, sep, fs)
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 2 {
			return rows, lineErr(path, lr.lineNo(), "%d columns, want 2 (source and destination node IDs separated by %q)", len(fs), delim)
		}
		u, err := parseInt(fs[0])
		if err != nil {
			return rows, lineErr(path, lr.lineNo(), "source node ID %q: %v", fs[0], err)
		}
		v, err := parseInt(fs[1])
		if err != nil {
			return rows, lineErr(path, lr.lineNo(), "destination node ID %q: %v", fs[1], err)
		}
		if msg := s.bad(u, v); msg != "" {
			return rows, lineErr(path, lr.lineNo(), "%s", msg)
		}
		s.src = append(s.src, u)
		s.dst = append(s.dst, v)
		rows++
	}
}

// npyEdgeRows returns the rows [r0, r1) of an N×2 edge array whose first
// byte falls in the piece.
func npyEdgeRows(h *NpyHeader, p piece) (r0, r1 int64) {
	rb := h.RowBytes()
	ceil := func(off int64) int64 {
		if off <= h.Offset {
			return 0
		}
		return min((off-h.Offset+rb-1)/rb, h.Rows())
	}
	return ceil(p.lo), ceil(p.hi)
}

// checkEdgeArray checks that a NumPy edge chunk is an N×2 integer array.
func checkEdgeArray(path string, h *NpyHeader) error {
	switch h.DType {
	case graph.Int32, graph.Int64, graph.Uint32, graph.Uint64:
	default:
		return fileErr(path, "dtype %s: edge chunks must hold int32 or int64 node IDs", h.DType)
	}
	if len(h.Shape) != 2 || h.Shape[1] != 2 {
		return fileErr(path, "shape %s: edge chunks must be N×2 arrays (one source, destination pair per row)", graph.ShapeString(h.Shape))
	}
	return nil
}

// readNpyEdges reads the rows of an N×2 int32/int64 array whose first byte
// falls in the piece, a buffer at a time.
func readNpyEdges(a *Npy, p piece, s *edgeSink) (int64, error) {
	h := &a.Header
	if err := checkEdgeArray(a.Path, h); err != nil {
		return 0, err
	}
	r0, r1 := npyEdgeRows(h, p)
	rb := h.RowBytes()
	step := max(int64(readBuffer)/rb, 1)
	buf := make([]byte, min(step, max(r1-r0, 1))*rb)
	for lo := r0; lo < r1; lo += step {
		hi := min(lo+step, r1)
		b := buf[:(hi-lo)*rb]
		if err := a.ReadRows(lo, hi, b); err != nil {
			return lo - r0, err
		}
		if err := appendIDPairs(a.Path, h.DType, b, lo, s); err != nil {
			return lo - r0, err
		}
		s.progress(int64(len(b)))
	}
	return r1 - r0, nil
}

// appendIDPairs decodes interleaved (source, destination) pairs of dtype d
// and appends them; row0 is the file row of the first pair, for errors.
func appendIDPairs(path string, d graph.DType, b []byte, row0 int64, s *edgeSink) error {
	es := d.Size()
	n := len(b) / (2 * es)
	base := len(s.src)
	s.src = grow(s.src, n)
	s.dst = grow(s.dst, n)
	src, dst := s.src[base:base+n], s.dst[base:base+n]
	nSrc, nDst := uint64(s.nSrc), uint64(s.nDst)
	switch d {
	case graph.Int64, graph.Uint64:
		ids, err := graph.ViewBytes[int64](b)
		if err != nil {
			ids = make([]int64, len(b)/8)
			copy(graph.AsBytes(ids), b)
		}
		for i := range n {
			u, v := ids[2*i], ids[2*i+1]
			// One unsigned compare rejects negative IDs (and uint64 IDs
			// beyond int64) along with IDs past the node count.
			if uint64(u) >= nSrc || uint64(v) >= nDst {
				return badPair(path, d, row0+int64(i), u, v, s)
			}
			src[i], dst[i] = u, v
		}
	default:
		ids, err := graph.ViewBytes[int32](b)
		if err != nil {
			ids = make([]int32, len(b)/4)
			copy(graph.AsBytes(ids), b)
		}
		for i := range n {
			u, v := int64(ids[2*i]), int64(ids[2*i+1])
			if d == graph.Uint32 {
				u, v = int64(uint32(ids[2*i])), int64(uint32(ids[2*i+1]))
			}
			if uint64(u) >= nSrc || uint64(v) >= nDst {
				return badPair(path, d, row0+int64(i), u, v, s)
			}
			src[i], dst[i] = u, v
		}
	}
	return nil
}

// badPair explains why a pair of IDs was rejected.
func badPair(path string, d graph.DType, row int64, u, v int64, s *edgeSink) error {
	if d == graph.Uint64 && (u < 0 || v < 0) {
		return rowErr(path, row, "node ID %d does not fit in int64", uint64(min(u, v)))
	}
	return rowErr(path, row, "%s", s.bad(u, v))
}

// grow extends s by n elements, reallocating only when its capacity (set
// from the piece's size before reading) falls short.
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s[:len(s)+n]
	}
	return append(s, make([]T, n)...)
}

// pqEdgeGroups returns the row groups of a Parquet file whose first byte
// falls in the piece.
func pqEdgeGroups(pf *pqFile, p piece) []int {
	var out []int
	for g := range len(pf.rowStart) - 1 {
		if off := pf.groupOffset(g); off >= p.lo && off < p.hi {
			out = append(out, g)
		}
	}
	return out
}

// checkEdgeParquet checks that a Parquet edge chunk has two integer
// columns.
func checkEdgeParquet(pf *pqFile) error {
	if len(pf.cols) != 2 {
		return fileErr(pf.path, "%d data columns: edge chunks need exactly 2 (source and destination node IDs)", len(pf.cols))
	}
	for _, c := range pf.cols {
		d, err := columnDType(c)
		if err != nil {
			return fileErr(pf.path, "%v", err)
		}
		if d != graph.Int32 && d != graph.Int64 && d != graph.Uint32 && d != graph.Uint64 && d != graph.Int16 && d != graph.Int8 && d != graph.Uint8 && d != graph.Uint16 {
			return fileErr(pf.path, "column %q is %s: edge chunks must hold integer node IDs", c.Path[0], d)
		}
		if c.MaxRepetitionLevel > 0 {
			return fileErr(pf.path, "column %q is a list: edge chunks need two plain integer columns", c.Path[0])
		}
	}
	return nil
}

// readParquetEdges reads the row groups of the piece.
func readParquetEdges(pf *pqFile, p piece, s *edgeSink) (int64, error) {
	if err := checkEdgeParquet(pf); err != nil {
		return 0, err
	}
	var rows int64
	for _, g := range pqEdgeGroups(pf, p) {
		n := pf.rowStart[g+1] - pf.rowStart[g]
		base := len(s.src)
		s.src = grow(s.src, int(n))
		s.dst = grow(s.dst, int(n))
		for c, col := range [][]int64{s.src[base:], s.dst[base:]} {
			d, _ := columnDType(pf.cols[c])
			k := 0
			err := pf.eachPage(g, c, func(v *pqValues) error {
				if k+v.n > len(col) {
					return fileErr(pf.path, "row group %d holds more values than its %d rows", g, n)
				}
				switch {
				case v.i64 != nil:
					copy(col[k:], v.i64)
				case d == graph.Uint32:
					for i := 0; i < v.n; i++ {
						col[k+i] = int64(uint32(v.i32[i]))
					}
				default:
					for i := 0; i < v.n; i++ {
						col[k+i] = v.int64At(i)
					}
				}
				k += v.n
				return nil
			})
			if err != nil {
				return rows, err
			}
		}
		nSrc, nDst := uint64(s.nSrc), uint64(s.nDst)
		for i := base; i < len(s.src); i++ {
			if uint64(s.src[i]) >= nSrc || uint64(s.dst[i]) >= nDst {
				return rows, rowErr(pf.path, pf.rowStart[g]+int64(i-base), "%s", s.bad(s.src[i], s.dst[i]))
			}
		}
		rows += n
		s.progress(n * 16)
	}
	return rows, nil
}
