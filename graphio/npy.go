package graphio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/sbinet/npyio/npy"

	"gnnrun/atomicfile"
	"gnnrun/graph"
)

// NpyHeader describes a .npy array: element type, shape (C order) and where
// its data starts.
type NpyHeader struct {
	Major, Minor byte
	DType        graph.DType
	Shape        []int64
	// Offset is the byte offset of the data from the start of the .npy
	// bytes (the header's length).
	Offset int64
	// Fortran is set only by readers that accept Fortran order (.npz
	// graphs): the array was stored column-major, and Shape is then the
	// reversed shape, so that the data reads as C order.
	Fortran bool
}

// Rows returns Shape[0], or 1 for a 0-d array.
func (h *NpyHeader) Rows() int64 {
	if len(h.Shape) == 0 {
		return 1
	}
	return h.Shape[0]
}

// RowBytes returns the bytes of one row.
func (h *NpyHeader) RowBytes() int64 {
	n := int64(h.DType.Size())
	for _, s := range h.Shape[min(1, len(h.Shape)):] {
		n *= s
	}
	return n
}

// DataBytes returns the bytes of the whole array.
func (h *NpyHeader) DataBytes() int64 { return h.Rows() * h.RowBytes() }

// maxNpyHeader bounds the header length we accept, so a corrupt length
// field cannot make us allocate gigabytes.
const maxNpyHeader = 1 << 20

// ReadNpyHeader reads and checks the .npy header at the start of r; name is
// used in errors. Format versions 1.0, 2.0 and 3.0 are accepted; Fortran
// order, object arrays, big-endian and structured dtypes are refused with an
// error saying so.
func ReadNpyHeader(r io.Reader, name string) (*NpyHeader, error) {
	return readNpyHeader(r, name, false)
}

// readNpyHeader is ReadNpyHeader; with fortranOK, a Fortran-order array is
// accepted as the C-order array of the reversed shape (its transpose).
func readNpyHeader(r io.Reader, name string, fortranOK bool) (*NpyHeader, error) {
	var pre [12]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		return nil, fileErr(name, "broken .npy header: file too short for the magic string (%v)", err)
	}
	if !bytes.Equal(pre[:6], npy.Magic[:]) {
		return nil, fileErr(name, "broken .npy header: bad magic %q, not a NumPy file", pre[:6])
	}
	h := &NpyHeader{Major: pre[6], Minor: pre[7]}
	var hdrLen int64
	switch h.Major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, fileErr(name, "broken .npy header: truncated length field")
		}
		hdrLen = int64(binary.LittleEndian.Uint16(pre[8:10]))
		h.Offset = 10 + hdrLen
	case 2, 3:
		if _, err := io.ReadFull(r, pre[8:12]); err != nil {
			return nil, fileErr(name, "broken .npy header: truncated length field")
		}
		hdrLen = int64(binary.LittleEndian.Uint32(pre[8:12]))
		h.Offset = 12 + hdrLen
	default:
		return nil, fileErr(name, "broken .npy header: format version %d.%d, want 1.0, 2.0 or 3.0", h.Major, h.Minor)
	}
	if hdrLen > maxNpyHeader {
		return nil, fileErr(name, "broken .npy header: header length %d exceeds %d bytes", hdrLen, maxNpyHeader)
	}
	dict := make([]byte, hdrLen)
	if _, err := io.ReadFull(r, dict); err != nil {
		return nil, fileErr(name, "broken .npy header: %d header bytes announced, file ends before (%v)", hdrLen, err)
	}
	descr, fortran, shape, err := parseNpyDict(pre[:h.Offset-hdrLen], dict)
	if err != nil {
		return nil, fileErr(name, "broken .npy header: %v (header %q)", err, strings.TrimSpace(string(dict)))
	}
	if fortran && !fortranOK {
		return nil, fileErr(name, "array is in Fortran order; only C order is supported (save it with np.ascontiguousarray)")
	}
	if strings.Contains(descr, "O") {
		return nil, fileErr(name, "object dtype %q (pickled Python objects) cannot be read; save a numeric array", descr)
	}
	if h.DType, err = graph.ParseDType(descr); err != nil {
		return nil, fileErr(name, "%v", strings.TrimPrefix(err.Error(), "graph: "))
	}
	for _, s := range shape {
		if s < 0 {
			return nil, fileErr(name, "broken .npy header: negative dimension in shape %v", shape)
		}
		h.Shape = append(h.Shape, int64(s))
	}
	if fortran {
		h.Fortran = true
		slices.Reverse(h.Shape)
	}
	return h, nil
}

// parseNpyDict parses the header dictionary with npyio, turning its panics
// on malformed text into errors.
func parseNpyDict(prefix, dict []byte) (descr string, fortran bool, shape []int, err error) {
	if len(dict) == 0 || dict[len(dict)-1] != '\n' || !bytes.HasPrefix(bytes.TrimSpace(dict), []byte("{")) {
		return "", false, nil, errors.New("header dictionary must start with '{' and end with a newline")
	}
	full := append(append([]byte(nil), prefix...), dict...)
	if full[6] == 3 {
		full[6] = 2 // 3.0 differs from 2.0 only by allowing UTF-8 in the header
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed header dictionary")
		}
	}()
	rd, err := npy.NewReader(bytes.NewReader(full))
	if err != nil {
		return "", false, nil, errors.New(strings.TrimPrefix(err.Error(), "npy: "))
	}
	return rd.Header.Descr.Type, rd.Header.Descr.Fortran, rd.Header.Descr.Shape, nil
}

// EncodeNpyHeader returns the .npy header of an array of dtype d and shape: format
// 1.0 when it fits, else 2.0, padded with spaces so the data starts at a
// multiple of 64 bytes (what NumPy writes), which keeps every element type
// aligned when the file is memory-mapped.
func EncodeNpyHeader(d graph.DType, shape []int64) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", d.Descr(), graph.ShapeString(shape))
	for _, pre := range []int{10, 12} {
		total := (pre + len(dict) + 1 + 63) / 64 * 64
		hdrLen := total - pre
		if pre == 10 && hdrLen > 0xffff {
			continue
		}
		b := make([]byte, 0, total)
		b = append(b, npy.Magic[:]...)
		if pre == 10 {
			b = append(b, 1, 0)
			b = binary.LittleEndian.AppendUint16(b, uint16(hdrLen))
		} else {
			b = append(b, 2, 0)
			b = binary.LittleEndian.AppendUint32(b, uint32(hdrLen))
		}
		b = append(b, dict...)
		for len(b) < total-1 {
			b = append(b, ' ')
		}
		return append(b, '\n')
	}
	panic("unreachable")
}

// NpyWriter streams the rows of one array into a new .npy file. The file
// appears at its path only when Close succeeds: it is written to a temporary
// name in the same directory and renamed, so a reader never sees a partial
// array and a crashed writer leaves no file behind under the final name.
type NpyWriter struct {
	path      string
	f         *atomicfile.File
	w         *bufio.Writer
	want, got int64
}

// CreateNpy starts writing an array of dtype d and the given shape to path.
func CreateNpy(path string, d graph.DType, shape ...int64) (*NpyWriter, error) {
	if d.Size() == 0 {
		return nil, fmt.Errorf("graphio: cannot write dtype %v", d)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("graphio: %w", err)
	}
	w := &NpyWriter{path: path, f: f, w: bufio.NewWriterSize(f, 1<<20)}
	h := NpyHeader{DType: d, Shape: shape}
	w.want = h.DataBytes()
	if _, err := w.w.Write(EncodeNpyHeader(d, shape)); err != nil {
		w.Abort()
		return nil, fmt.Errorf("graphio: %s: %w", path, err)
	}
	return w, nil
}

// Write appends raw little-endian row data; the total must equal the
// array's size by Close.
func (w *NpyWriter) Write(p []byte) (int, error) {
	if w.got+int64(len(p)) > w.want {
		return 0, fmt.Errorf("graphio: %s: writing %d bytes past the array's %d", w.path, w.got+int64(len(p))-w.want, w.want)
	}
	n, err := w.w.Write(p)
	w.got += int64(n)
	if err != nil {
		return n, fmt.Errorf("graphio: %s: %w", w.path, err)
	}
	return n, nil
}

// Close checks that every byte of the array was written, then moves the
// file to its final name. On an error the temporary file is removed.
func (w *NpyWriter) Close() error {
	if w.got != w.want {
		w.Abort()
		return fmt.Errorf("graphio: %s: %d of %d data bytes written", w.path, w.got, w.want)
	}
	if err := w.w.Flush(); err != nil {
		w.Abort()
		return fmt.Errorf("graphio: %s: %w", w.path, err)
	}
	if err := w.f.Commit(); err != nil {
		return fmt.Errorf("graphio: %w", err)
	}
	return nil
}

// Abort discards the file.
func (w *NpyWriter) Abort() { w.f.Abort() }

// WriteNpy writes t to path as a .npy file, atomically (temporary file and
// rename).
func WriteNpy(path string, t *graph.Tensor) error {
	w, err := CreateNpy(path, t.DType, t.Shape...)
	if err != nil {
		return err
	}
	if _, err := w.Write(t.Data); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// WriteNpySlice writes s to path as a .npy array of the given shape (the
// length of s when shape is empty), atomically.
func WriteNpySlice[T any](path string, s []T, shape ...int64) error {
	t := graph.TensorOf(s, 0)
	if len(shape) > 0 {
		t.Shape = shape
	}
	if t.Rows()*int64(t.RowBytes()) != int64(len(t.Data)) {
		return fmt.Errorf("graphio: %s: shape %v does not hold %d elements", path, shape, len(s))
	}
	return WriteNpy(path, t)
}

// Npy is an open .npy file. Its rows are read by pread or memory-mapped at
// the data offset; mapped views stay valid until Close.
type Npy struct {
	Header NpyHeader
	Path   string
	f      *os.File
	maps   []*mapping
}

// OpenNpy opens path, checks its header and that the file holds all the
// data the header announces.
func OpenNpy(path string) (*Npy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileErr(path, "%v", unwrapPathError(err))
	}
	h, err := ReadNpyHeader(bufio.NewReaderSize(io.NewSectionReader(f, 0, maxNpyHeader+12), 4096), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileErr(path, "%v", err)
	}
	if need := h.Offset + h.DataBytes(); st.Size() < need {
		f.Close()
		return nil, fileErr(path, "truncated: header announces %s %s (%d data bytes) but the file holds %d of them", h.DType, graph.ShapeString(h.Shape), h.DataBytes(), max(0, st.Size()-h.Offset))
	}
	return &Npy{Header: *h, Path: path, f: f}, nil
}

// ReadRows reads rows [lo, hi) into dst, which must hold (hi-lo)*RowBytes
// bytes.
func (a *Npy) ReadRows(lo, hi int64, dst []byte) error {
	rb := a.Header.RowBytes()
	if lo < 0 || hi > a.Header.Rows() || lo > hi || int64(len(dst)) != (hi-lo)*rb {
		return fmt.Errorf("graphio: %s: bad row range [%d,%d) of %d rows", a.Path, lo, hi, a.Header.Rows())
	}
	if _, err := a.f.ReadAt(dst, a.Header.Offset+lo*rb); err != nil {
		return fileErr(a.Path, "reading rows [%d,%d): %v", lo, hi, err)
	}
	return nil
}

// MapRows returns rows [lo, hi) as a tensor viewing the memory-mapped file,
// without copying. When the file's data offset leaves the elements
// misaligned (headers not padded as NumPy pads them), the rows are copied
// into memory instead.
func (a *Npy) MapRows(lo, hi int64) (*graph.Tensor, error) {
	h := &a.Header
	rb := h.RowBytes()
	if lo < 0 || hi > h.Rows() || lo > hi {
		return nil, fmt.Errorf("graphio: %s: bad row range [%d,%d) of %d rows", a.Path, lo, hi, h.Rows())
	}
	shape := append([]int64{hi - lo}, h.Shape[min(1, len(h.Shape)):]...)
	if len(h.Shape) == 0 {
		shape = nil
	}
	t := &graph.Tensor{DType: h.DType, Shape: shape}
	off := h.Offset + lo*rb
	if off%int64(h.DType.Size()) != 0 {
		t.Data = make([]byte, (hi-lo)*rb)
		return t, a.ReadRows(lo, hi, t.Data)
	}
	m, err := mapFile(a.f, off, (hi-lo)*rb)
	if err != nil {
		return nil, fileErr(a.Path, "%v", err)
	}
	a.maps = append(a.maps, m)
	t.Data = m.data
	return t, nil
}

// Close unmaps every view and closes the file.
func (a *Npy) Close() error {
	var first error
	for _, m := range a.maps {
		if err := m.unmap(); err != nil && first == nil {
			first = err
		}
	}
	a.maps = nil
	if err := a.f.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// ReadNpy reads a whole .npy file into memory: for small arrays.
func ReadNpy(path string) (*graph.Tensor, error) {
	a, err := OpenNpy(path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	h := a.Header
	t := &graph.Tensor{DType: h.DType, Shape: h.Shape, Data: make([]byte, h.DataBytes())}
	if _, err := a.f.ReadAt(t.Data, h.Offset); err != nil && len(t.Data) > 0 {
		return nil, fileErr(path, "%v", err)
	}
	return t, nil
}

// unwrapPathError drops the "open PATH:" prefix the caller already prints.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
