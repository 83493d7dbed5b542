package graphio

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"

	"gnnrun/collective"
	"gnnrun/graph"
)

// multiArray is one array of a graph (a node feature, a label, an edge
// feature) stored in chunk files whose rows concatenate in order.
type multiArray struct {
	what     string // for errors: `node_data "paper"/"feat"`
	format   Format
	paths    []string
	info     []arrayInfo // per file, once probed
	start    []int64     // first row of each file; start[len] = rows
	dtype    graph.DType
	rowShape []int64
}

// arrayInfo is what probing one chunk file finds; fixed-size, so it travels
// in one all-gather.
type arrayInfo struct {
	Rows  int64
	DType int64
	NDim  int64 // dimensions of a row
	Dims  [6]int64
	Float int64 // CSV: some value is not an integer
}

func (ai *arrayInfo) rowShape() []int64 { return append([]int64(nil), ai.Dims[:ai.NDim]...) }

// probeArray reads the header (NumPy), footer (Parquet) or the whole text
// (CSV) of one chunk file.
func probeArray(path string, f Format) (arrayInfo, error) {
	var ai arrayInfo
	setShape := func(rows int64, d graph.DType, rowShape []int64) error {
		if len(rowShape) > len(ai.Dims) {
			return fileErr(path, "arrays of more than %d dimensions are not supported", len(ai.Dims)+1)
		}
		ai.Rows, ai.DType, ai.NDim = rows, int64(d), int64(len(rowShape))
		copy(ai.Dims[:], rowShape)
		return nil
	}
	switch f.Name {
	case FormatNumPy:
		a, err := OpenNpy(path)
		if err != nil {
			return ai, err
		}
		defer a.Close()
		if len(a.Header.Shape) == 0 {
			return ai, fileErr(path, "a 0-d array cannot hold rows")
		}
		return ai, setShape(a.Header.Rows(), a.Header.DType, a.Header.Shape[1:])
	case FormatParquet:
		pf, err := openParquet(path)
		if err != nil {
			return ai, err
		}
		defer pf.close()
		l, err := pf.layout()
		if err != nil {
			return ai, err
		}
		shape := []int64{l.rowLen}
		if s := pf.pqShape(); len(s) >= 1 {
			n := int64(1)
			for _, d := range s[1:] {
				n *= d
			}
			if n == l.rowLen {
				shape = s[1:]
			}
		} else if l.rowLen == 1 && !l.list {
			shape = nil
		}
		return ai, setShape(pf.rows(), l.dtype, shape)
	case FormatCSV:
		rows, cols, float, err := scanCSVArray(path, f.Delimiter)
		if err != nil {
			return ai, err
		}
		d := graph.Int64
		if float {
			d = graph.Float64
			ai.Float = 1
		}
		var shape []int64
		if cols > 1 {
			shape = []int64{cols}
		}
		return ai, setShape(rows, d, shape)
	}
	return ai, fileErr(path, "unknown format %q", f.Name)
}

// probeArrays probes every chunk file of every array, spreading the files
// over the ranks, and checks that the chunks of each array agree on dtype
// and row shape.
func probeArrays(c *collective.Comm, arrays []*multiArray) error {
	type job struct{ a, f int }
	var jobs []job
	for i, a := range arrays {
		for j := range a.paths {
			jobs = append(jobs, job{i, j})
		}
	}
	var mine []arrayInfo
	for k := c.Rank(); k < len(jobs); k += c.Size() {
		a := arrays[jobs[k].a]
		ai, err := probeArray(a.paths[jobs[k].f], a.format)
		if err != nil {
			return err
		}
		mine = append(mine, ai)
	}
	all, counts, err := collective.Allgatherv(c, mine)
	if err != nil {
		return err
	}
	// Rank r probed jobs r, r+P, ...: undo the interleaving.
	off := make([]int, len(counts))
	for r := 1; r < len(counts); r++ {
		off[r] = off[r-1] + counts[r-1]
	}
	for i := range arrays {
		arrays[i].info = make([]arrayInfo, len(arrays[i].paths))
	}
	for k, j := range jobs {
		r := k % c.Size()
		arrays[j.a].info[j.f] = all[off[r]+k/c.Size()]
	}
	for _, a := range arrays {
		if err := a.reconcile(); err != nil {
			return err
		}
	}
	return nil
}

// reconcile checks that the chunks agree and computes the row offsets. CSV
// chunks of integers and of decimals together make a float64 array.
func (a *multiArray) reconcile() error {
	a.start = []int64{0}
	anyFloat := false
	for _, ai := range a.info {
		anyFloat = anyFloat || ai.Float != 0
	}
	for j, ai := range a.info {
		d := graph.DType(ai.DType)
		if anyFloat {
			d = graph.Float64
		}
		if j == 0 {
			a.dtype, a.rowShape = d, ai.rowShape()
		} else if d != a.dtype {
			return fileErr(a.paths[j], "%s: chunk %d has dtype %s but chunk 0 (%s) has %s", a.what, j, d, a.paths[0], a.dtype)
		} else if graph.ShapeString(ai.rowShape()) != graph.ShapeString(a.rowShape) {
			return fileErr(a.paths[j], "%s: chunk %d has rows of shape %s but chunk 0 (%s) has %s", a.what, j, graph.ShapeString(ai.rowShape()), a.paths[0], graph.ShapeString(a.rowShape))
		}
		a.start = append(a.start, a.start[j]+ai.Rows)
	}
	return nil
}

// rows returns the rows of all chunks.
func (a *multiArray) rows() int64 { return a.start[len(a.start)-1] }

// shape returns the array's shape for n rows.
func (a *multiArray) shape(n int64) []int64 { return append([]int64{n}, a.rowShape...) }

// rowBytes returns the bytes of one row.
func (a *multiArray) rowBytes() int64 {
	t := graph.Tensor{DType: a.dtype, Shape: a.shape(1)}
	return int64(t.RowBytes())
}

// read returns rows [lo, hi). When they lie in one NumPy chunk the tensor
// views the memory-mapped file (closed by the returned function); otherwise
// they are copied.
func (a *multiArray) read(lo, hi int64) (*graph.Tensor, func() error, error) {
	if a.format.Name == FormatNumPy && hi > lo {
		for j := range a.paths {
			if a.start[j] <= lo && hi <= a.start[j+1] {
				f, err := OpenNpy(a.paths[j])
				if err != nil {
					return nil, nil, err
				}
				t, err := f.MapRows(lo-a.start[j], hi-a.start[j])
				if err != nil {
					f.Close()
					return nil, nil, err
				}
				return t, f.Close, nil
			}
		}
	}
	t := &graph.Tensor{DType: a.dtype, Shape: a.shape(hi - lo), Data: make([]byte, (hi-lo)*a.rowBytes())}
	return t, func() error { return nil }, a.readInto(lo, hi, t.Data)
}

// readInto copies rows [lo, hi) into dst.
func (a *multiArray) readInto(lo, hi int64, dst []byte) error {
	rb := a.rowBytes()
	for j, path := range a.paths {
		flo, fhi := max(lo, a.start[j]), min(hi, a.start[j+1])
		if flo >= fhi {
			continue
		}
		out := dst[(flo-lo)*rb : (fhi-lo)*rb]
		r0, r1 := flo-a.start[j], fhi-a.start[j]
		var err error
		switch a.format.Name {
		case FormatNumPy:
			var f *Npy
			if f, err = OpenNpy(path); err == nil {
				err = f.ReadRows(r0, r1, out)
				f.Close()
			}
		case FormatParquet:
			var pf *pqFile
			if pf, err = openParquet(path); err == nil {
				var l pqLayout
				if l, err = pf.layout(); err == nil {
					err = pf.readRows(l, r0, r1, out)
				}
				pf.close()
			}
		case FormatCSV:
			err = readCSVArray(path, a.format.Delimiter, a.dtype, r0, r1, out)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scanCSVArray counts the rows and columns of a CSV array file and tells
// whether any value is not an integer.
func scanCSVArray(path, delim string) (rows, cols int64, float bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false, fileErr(path, "%v", unwrapPathError(err))
	}
	defer f.Close()
	lr, err := newLineReader(f, path, 0, 1<<62)
	if err != nil {
		return 0, 0, false, err
	}
	sep := separators(delim)
	var fs [][]byte
	for {
		line, ok, err := lr.next()
		if err != nil || !ok {
			return rows, cols, float, err
		}
		fs = fields(line, sep, fs)
		if len(fs) == 0 {
			continue
		}
		if rows == 0 {
			cols = int64(len(fs))
		} else if int64(len(fs)) != cols {
			return 0, 0, false, lineErr(path, lr.lineNo(), "%d columns, the first row has %d", len(fs), cols)
		}
		for _, x := range fs {
			if _, err := parseInt(x); err == nil {
				continue
			}
			if _, err := strconv.ParseFloat(string(x), 64); err != nil {
				return 0, 0, false, lineErr(path, lr.lineNo(), "value %q is not a number", x)
			}
			float = true
		}
		rows++
	}
}

// readCSVArray parses rows [r0, r1) of a CSV array file into dst as int64
// or float64 values.
func readCSVArray(path, delim string, d graph.DType, r0, r1 int64, dst []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return fileErr(path, "%v", unwrapPathError(err))
	}
	defer f.Close()
	lr, err := newLineReader(f, path, 0, 1<<62)
	if err != nil {
		return err
	}
	sep := separators(delim)
	var fs [][]byte
	var row int64
	k := 0
	for row < r1 {
		line, ok, err := lr.next()
		if err != nil {
			return err
		}
		if !ok {
			return fileErr(path, "ended at row %d, before row %d", row, r1)
		}
		fs = fields(line, sep, fs)
		if len(fs) == 0 {
			continue
		}
		if row >= r0 {
			for _, x := range fs {
				if d == graph.Int64 {
					v, err := parseInt(x)
					if err != nil {
						return lineErr(path, lr.lineNo(), "value %q: %v", x, err)
					}
					binary.LittleEndian.PutUint64(dst[8*k:], uint64(v))
				} else {
					v, err := strconv.ParseFloat(string(x), 64)
					if err != nil {
						return lineErr(path, lr.lineNo(), "value %q is not a number", x)
					}
					binary.LittleEndian.PutUint64(dst[8*k:], math.Float64bits(v))
				}
				k++
			}
		}
		row++
	}
	return nil
}

// checkRows fails unless the array has want rows, naming the metadata count.
func (a *multiArray) checkRows(want int64, of string) error {
	if a.rows() != want {
		return fileErr(a.paths[0], "%s: its %d chunk files hold %d rows, but %s", a.what, len(a.paths), a.rows(), fmt.Sprintf(of, want))
	}
	return nil
}
