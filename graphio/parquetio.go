package graphio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"gnnrun/atomicfile"
	"gnnrun/graph"
)

// pqFile is an open Parquet file with the leaf columns that carry data, in
// array order: pandas' index columns are skipped, and columns named by
// integers ("0", "1", ..., as pandas writes a DataFrame of an array) are
// put in numeric order.
type pqFile struct {
	path string
	os   *os.File
	f    *parquet.File
	cols []parquet.LeafColumn
	// rowStart[g] is the first row of row group g; rowStart[len] = NumRows.
	rowStart []int64
}

func openParquet(path string) (*pqFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileErr(path, "%v", unwrapPathError(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileErr(path, "%v", err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(1<<20))
	if err != nil {
		f.Close()
		return nil, fileErr(path, "not a readable Parquet file: %v", err)
	}
	p := &pqFile{path: path, os: f, f: pf}
	for _, c := range pf.Schema().Columns() {
		if strings.HasPrefix(c[0], "__index_level_") {
			continue
		}
		leaf, ok := pf.Schema().Lookup(c...)
		if !ok {
			continue
		}
		p.cols = append(p.cols, leaf)
	}
	numeric := true
	for _, c := range p.cols {
		if _, err := strconv.Atoi(c.Path[0]); err != nil {
			numeric = false
		}
	}
	if numeric {
		sort.SliceStable(p.cols, func(i, j int) bool {
			a, _ := strconv.Atoi(p.cols[i].Path[0])
			b, _ := strconv.Atoi(p.cols[j].Path[0])
			return a < b
		})
	}
	p.rowStart = []int64{0}
	for _, rg := range pf.RowGroups() {
		p.rowStart = append(p.rowStart, p.rowStart[len(p.rowStart)-1]+rg.NumRows())
	}
	return p, nil
}

func (p *pqFile) close() error { return p.os.Close() }

// rows returns the number of rows of the file.
func (p *pqFile) rows() int64 { return p.rowStart[len(p.rowStart)-1] }

// groupOffset returns the byte offset where row group g starts in the file.
func (p *pqFile) groupOffset(g int) int64 {
	rg := p.f.Metadata().RowGroups[g]
	if rg.FileOffset > 0 {
		return rg.FileOffset
	}
	if len(rg.Columns) > 0 {
		md := rg.Columns[0].MetaData
		if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < md.DataPageOffset {
			return md.DictionaryPageOffset
		}
		return md.DataPageOffset
	}
	return 0
}

// columnDType maps a leaf column's Parquet type to a dtype.
func columnDType(leaf parquet.LeafColumn) (graph.DType, error) {
	t := leaf.Node.Type()
	var it *format.IntType
	if lt := t.LogicalType(); lt != nil {
		switch v := lt.Value.(type) {
		case *format.IntType:
			it = v
		case *format.Float16Type:
			if t.Kind() == parquet.FixedLenByteArray && t.Length() == 2 {
				return graph.Float16, nil
			}
		}
	}
	switch t.Kind() {
	case parquet.Boolean:
		return graph.Bool, nil
	case parquet.Int32:
		if it != nil {
			switch {
			case it.BitWidth == 8 && it.IsSigned:
				return graph.Int8, nil
			case it.BitWidth == 8:
				return graph.Uint8, nil
			case it.BitWidth == 16 && it.IsSigned:
				return graph.Int16, nil
			case it.BitWidth == 16:
				return graph.Uint16, nil
			case !it.IsSigned:
				return graph.Uint32, nil
			}
		}
		return graph.Int32, nil
	case parquet.Int64:
		if it != nil && !it.IsSigned {
			return graph.Uint64, nil
		}
		return graph.Int64, nil
	case parquet.Float:
		return graph.Float32, nil
	case parquet.Double:
		return graph.Float64, nil
	}
	return graph.InvalidDType, fmt.Errorf("column %q has Parquet type %v, which is not a number", strings.Join(leaf.Path, "."), t)
}

// pqValues is one page of one column, decoded: exactly one slice is set.
type pqValues struct {
	i32 []int32
	i64 []int64
	f32 []float32
	f64 []float64
	b   []bool
	raw []byte // fixed-length values, back to back
	n   int
	// rowLens is, for a repeated (list) column, the number of values of each
	// row that starts in this page.
	rowLens []int
}

// eachPage decodes column col of row group g page by page. A null value is
// an error: arrays have no missing entries.
func (p *pqFile) eachPage(g, col int, fn func(v *pqValues) error) error {
	leaf := p.cols[col]
	cc := p.f.RowGroups()[g].ColumnChunks()[leaf.ColumnIndex]
	pages := cc.Pages()
	defer pages.Close()
	var vbuf []parquet.Value
	for {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fileErr(p.path, "row group %d, column %q: %v", g, strings.Join(leaf.Path, "."), err)
		}
		if page.NumNulls() > 0 {
			parquet.Release(page)
			return rowErr(p.path, p.rowStart[g], "column %q holds %d null values in row group %d; arrays must not have missing entries", strings.Join(leaf.Path, "."), page.NumNulls(), g)
		}
		v := &pqValues{}
		if leaf.MaxRepetitionLevel > 0 {
			reps := page.RepetitionLevels()
			for _, r := range reps {
				if r == 0 {
					v.rowLens = append(v.rowLens, 0)
				}
				if len(v.rowLens) > 0 {
					v.rowLens[len(v.rowLens)-1]++
				}
			}
		}
		if dict := page.Dictionary(); dict != nil || page.Type().Kind() == parquet.Boolean {
			// Dictionary-encoded and boolean pages go through the generic
			// value reader, a bounded buffer at a time.
			if cap(vbuf) == 0 {
				vbuf = make([]parquet.Value, 4096)
			}
			r := page.Values()
			for {
				n, err := r.ReadValues(vbuf)
				if n > 0 {
					v.appendValues(vbuf[:n], page.Type().Kind())
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					parquet.Release(page)
					return fileErr(p.path, "row group %d, column %q: %v", g, strings.Join(leaf.Path, "."), err)
				}
			}
		} else {
			d := page.Data()
			switch page.Type().Kind() {
			case parquet.Int32:
				v.i32 = d.Int32()
				v.n = len(v.i32)
			case parquet.Int64:
				v.i64 = d.Int64()
				v.n = len(v.i64)
			case parquet.Float:
				v.f32 = d.Float()
				v.n = len(v.f32)
			case parquet.Double:
				v.f64 = d.Double()
				v.n = len(v.f64)
			case parquet.FixedLenByteArray:
				data, size := d.FixedLenByteArray()
				v.raw = data
				if size > 0 {
					v.n = len(data) / size
				}
			default:
				parquet.Release(page)
				return fileErr(p.path, "column %q: unsupported Parquet type %v", strings.Join(leaf.Path, "."), page.Type())
			}
		}
		err = fn(v)
		parquet.Release(page)
		if err != nil {
			return err
		}
	}
}

func (v *pqValues) appendValues(vals []parquet.Value, k parquet.Kind) {
	for _, x := range vals {
		switch k {
		case parquet.Boolean:
			v.b = append(v.b, x.Boolean())
		case parquet.Int32:
			v.i32 = append(v.i32, x.Int32())
		case parquet.Int64:
			v.i64 = append(v.i64, x.Int64())
		case parquet.Float:
			v.f32 = append(v.f32, x.Float())
		case parquet.Double:
			v.f64 = append(v.f64, x.Double())
		case parquet.FixedLenByteArray:
			v.raw = append(v.raw, x.ByteArray()...)
		}
	}
	v.n += len(vals)
}

// int64At returns value i as an int64 (integer columns only).
func (v *pqValues) int64At(i int) int64 {
	if v.i64 != nil {
		return v.i64[i]
	}
	return int64(v.i32[i])
}

// putElem stores value i into dst as one element of dtype d.
func (v *pqValues) putElem(dst []byte, i int, d graph.DType) {
	switch {
	case v.i64 != nil:
		binary.LittleEndian.PutUint64(dst, uint64(v.i64[i]))
	case v.i32 != nil:
		x := uint32(v.i32[i])
		switch d.Size() {
		case 1:
			dst[0] = byte(x)
		case 2:
			binary.LittleEndian.PutUint16(dst, uint16(x))
		default:
			binary.LittleEndian.PutUint32(dst, x)
		}
	case v.f32 != nil:
		binary.LittleEndian.PutUint32(dst, math.Float32bits(v.f32[i]))
	case v.f64 != nil:
		binary.LittleEndian.PutUint64(dst, math.Float64bits(v.f64[i]))
	case v.b != nil:
		dst[0] = 0
		if v.b[i] {
			dst[0] = 1
		}
	case v.raw != nil:
		copy(dst[:d.Size()], v.raw[i*d.Size():])
	}
}

// pqLayout is how a Parquet file stores an array: one column per element
// of a row, or one list column holding each row.
type pqLayout struct {
	dtype  graph.DType
	rowLen int64 // elements per row
	list   bool
}

// layout checks that the file holds a numeric array and returns how.
func (p *pqFile) layout() (pqLayout, error) {
	if len(p.cols) == 0 {
		return pqLayout{}, fileErr(p.path, "Parquet file has no data columns")
	}
	d0, err := columnDType(p.cols[0])
	if err != nil {
		return pqLayout{}, fileErr(p.path, "%v", err)
	}
	if p.cols[0].MaxRepetitionLevel > 0 {
		if len(p.cols) != 1 {
			return pqLayout{}, fileErr(p.path, "a list column must be the only column, found %d columns", len(p.cols))
		}
		l := pqLayout{dtype: d0, list: true}
		// The row length is the length of the first row; every row is
		// checked against it as it is read.
		if p.rows() > 0 {
			err := p.eachPage(0, 0, func(v *pqValues) error {
				if len(v.rowLens) > 0 && l.rowLen == 0 {
					l.rowLen = int64(v.rowLens[0])
				}
				return io.EOF
			})
			if err != nil && !errors.Is(err, io.EOF) {
				return pqLayout{}, err
			}
		}
		return l, nil
	}
	for _, c := range p.cols[1:] {
		d, err := columnDType(c)
		if err != nil {
			return pqLayout{}, fileErr(p.path, "%v", err)
		}
		if d != d0 {
			return pqLayout{}, fileErr(p.path, "column %q is %s but column %q is %s; all columns of an array must share one type", strings.Join(c.Path, "."), d, strings.Join(p.cols[0].Path, "."), d0)
		}
	}
	return pqLayout{dtype: d0, rowLen: int64(len(p.cols))}, nil
}

// readRows reads rows [lo, hi) of the array the file holds into dst (row
// major, (hi-lo)*rowLen elements of l.dtype).
func (p *pqFile) readRows(l pqLayout, lo, hi int64, dst []byte) error {
	es := l.dtype.Size()
	for g := range len(p.rowStart) - 1 {
		gLo, gHi := p.rowStart[g], p.rowStart[g+1]
		if gHi <= lo || gLo >= hi {
			continue
		}
		for c := range p.cols {
			row := gLo // row of the next value
			k := int64(0)
			err := p.eachPage(g, c, func(v *pqValues) error {
				if l.list {
					for _, n := range v.rowLens {
						if int64(n) != l.rowLen {
							return rowErr(p.path, row, "list column row holds %d values, the first row holds %d", n, l.rowLen)
						}
						row++
					}
					for i := 0; i < v.n; i++ {
						r, j := gLo+k/l.rowLen, k%l.rowLen
						k++
						if r >= lo && r < hi {
							v.putElem(dst[((r-lo)*l.rowLen+j)*int64(es):], i, l.dtype)
						}
					}
					return nil
				}
				for i := 0; i < v.n; i++ {
					r := gLo + k
					k++
					if r >= lo && r < hi {
						v.putElem(dst[((r-lo)*l.rowLen+int64(c))*int64(es):], i, l.dtype)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if l.list {
				break
			}
		}
	}
	return nil
}

// pqShape returns the array shape recorded in the file's "shape" metadata
// (written by DGL's tools as a Python tuple), or nil.
func (p *pqFile) pqShape() []int64 {
	s, ok := p.f.Lookup("shape")
	if !ok {
		return nil
	}
	s = strings.Trim(strings.TrimSpace(s), "()[]")
	var out []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// pqColumnNode returns the Parquet node that stores elements of dtype d.
func pqColumnNode(d graph.DType) (parquet.Node, error) {
	switch d {
	case graph.Bool:
		return parquet.Leaf(parquet.BooleanType), nil
	case graph.Int8:
		return parquet.Int(8), nil
	case graph.Int16:
		return parquet.Int(16), nil
	case graph.Int32:
		return parquet.Leaf(parquet.Int32Type), nil
	case graph.Int64:
		return parquet.Leaf(parquet.Int64Type), nil
	case graph.Uint8:
		return parquet.Uint(8), nil
	case graph.Uint16:
		return parquet.Uint(16), nil
	case graph.Uint32:
		return parquet.Uint(32), nil
	case graph.Uint64:
		return parquet.Uint(64), nil
	case graph.Float32:
		return parquet.Leaf(parquet.FloatType), nil
	case graph.Float64:
		return parquet.Leaf(parquet.DoubleType), nil
	}
	return nil, fmt.Errorf("graphio: dtype %s cannot be written to Parquet; use NumPy", d)
}

// pqRowGroup is the number of rows per row group we write: row groups are
// the unit by which a Parquet file is split between ranks.
const pqRowGroup = 1 << 20

// PqWriter writes an array to a Parquet file, one column per element of a
// row (named "0", "1", ... zero-padded so name order is column order), the
// way DGL's tools write arrays, with the array's shape in the file's
// key-value metadata. Like NpyWriter, the file appears only on Close.
type PqWriter struct {
	path   string
	f      *atomicfile.File
	w      *parquet.Writer
	buf    *parquet.Buffer
	d      graph.DType
	rowLen int
	rows   int64
	want   int64
}

// CreateParquet starts writing an array of dtype d and shape to path.
func CreateParquet(path string, d graph.DType, shape ...int64) (*PqWriter, error) {
	node, err := pqColumnNode(d)
	if err != nil {
		return nil, err
	}
	t := graph.Tensor{DType: d, Shape: shape}
	rowLen := int(t.RowLen())
	width := len(strconv.Itoa(max(rowLen-1, 0)))
	group := parquet.Group{}
	for j := range rowLen {
		group[fmt.Sprintf("%0*d", width, j)] = parquet.Required(node)
	}
	schema := parquet.NewSchema("array", group)
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("graphio: %w", err)
	}
	w := &PqWriter{path: path, f: f, d: d, rowLen: rowLen, want: t.Rows()}
	w.w = parquet.NewWriter(f, schema, parquet.KeyValueMetadata("shape", graph.ShapeString(shape)),
		parquet.Compression(&parquet.Snappy), parquet.PageBufferSize(1<<20))
	w.buf = parquet.NewBuffer(schema)
	return w, nil
}

// Write appends whole rows of raw little-endian data.
func (w *PqWriter) Write(p []byte) (int, error) {
	es := w.d.Size()
	rb := es * w.rowLen
	if rb == 0 || len(p)%rb != 0 {
		return 0, fmt.Errorf("graphio: %s: write of %d bytes is not whole rows of %d bytes", w.path, len(p), rb)
	}
	for off := 0; off < len(p); {
		n := min((len(p)-off)/rb, pqRowGroup-int(w.buf.NumRows()))
		if err := w.appendRows(p[off : off+n*rb]); err != nil {
			return off, err
		}
		off += n * rb
		if w.buf.NumRows() >= pqRowGroup {
			if err := w.flushGroup(); err != nil {
				return off, err
			}
		}
	}
	return len(p), nil
}

func (w *PqWriter) appendRows(p []byte) error {
	es := w.d.Size()
	n := len(p) / (es * w.rowLen)
	cols := w.buf.ColumnBuffers()
	for j := range w.rowLen {
		// Columns are in name order, which is element order.
		col := make([]byte, 0, n*max(es, 4))
		for i := range n {
			e := p[(i*w.rowLen+j)*es : (i*w.rowLen+j+1)*es]
			switch w.d {
			case graph.Int8:
				col = binary.LittleEndian.AppendUint32(col, uint32(int32(int8(e[0]))))
			case graph.Uint8, graph.Bool:
				col = binary.LittleEndian.AppendUint32(col, uint32(e[0]))
			case graph.Int16:
				col = binary.LittleEndian.AppendUint32(col, uint32(int32(int16(binary.LittleEndian.Uint16(e)))))
			case graph.Uint16:
				col = binary.LittleEndian.AppendUint32(col, uint32(binary.LittleEndian.Uint16(e)))
			default:
				col = append(col, e...)
			}
		}
		var err error
		if w.d == graph.Bool {
			bs := make([]bool, n)
			for i := range bs {
				bs[i] = col[4*i] != 0
			}
			_, err = cols[j].(parquet.BooleanWriter).WriteBooleans(bs)
		} else {
			_, err = cols[j].(io.Writer).Write(col)
		}
		if err != nil {
			return fmt.Errorf("graphio: %s: %w", w.path, err)
		}
	}
	w.rows += int64(n)
	return nil
}

func (w *PqWriter) flushGroup() error {
	if w.buf.NumRows() == 0 {
		return nil
	}
	if _, err := w.w.WriteRowGroup(w.buf); err != nil {
		return fmt.Errorf("graphio: %s: %w", w.path, err)
	}
	w.buf.Reset()
	return nil
}

// Close checks the row count, finishes the file and moves it to its name.
func (w *PqWriter) Close() error {
	if w.rows != w.want {
		w.Abort()
		return fmt.Errorf("graphio: %s: %d of %d rows written", w.path, w.rows, w.want)
	}
	if err := w.flushGroup(); err != nil {
		w.Abort()
		return err
	}
	if err := w.w.Close(); err != nil {
		w.Abort()
		return fmt.Errorf("graphio: %s: %w", w.path, err)
	}
	if err := w.f.Commit(); err != nil {
		return fmt.Errorf("graphio: %w", err)
	}
	return nil
}

// Abort discards the file.
func (w *PqWriter) Abort() { w.f.Abort() }

// WriteParquet writes t to path as a Parquet file, atomically.
func WriteParquet(path string, t *graph.Tensor) error {
	w, err := CreateParquet(path, t.DType, t.Shape...)
	if err != nil {
		return err
	}
	if _, err := w.Write(t.Data); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
