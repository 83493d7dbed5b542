package shard

import (
	"bufio"
	"gnnrun/graphio"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"gnnrun/graph"
)

// tempFile creates a temporary file beside path, so a rename moves it into
// place atomically.
func tempFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, errorf("%v", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, errorf("%v", err)
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes files private
		f.Close()
		os.Remove(f.Name())
		return nil, errorf("%v", err)
	}
	return f, nil
}

// newEncoder returns a zstd encoder over w: one goroutine, so the bytes
// written depend only on the input.
func newEncoder(w io.Writer) (*zstd.Encoder, error) {
	return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
}

// isZstd reports whether a file name is that of a compressed array.
func isZstd(path string) bool { return strings.HasSuffix(path, ".zst") }

// writeArray writes a whole array held in memory to path (".npy", or
// ".npy.zst" compressed), through a temporary file renamed at the end.
func writeArray(path string, d graph.DType, shape []int64, data []byte) error {
	f, err := tempFile(path)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(f.Name())
		return errorf("%s: %v", path, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var enc *zstd.Encoder
	if isZstd(path) {
		if enc, err = newEncoder(bw); err != nil {
			return fail(err)
		}
		w = enc
	}
	if _, err := w.Write(graphio.EncodeNpyHeader(d, shape)); err != nil {
		return fail(err)
	}
	for len(data) > 0 {
		k := min(len(data), 8<<20)
		if _, err := w.Write(data[:k]); err != nil {
			return fail(err)
		}
		data = data[k:]
	}
	if enc != nil {
		if err := enc.Close(); err != nil {
			return fail(err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return errorf("%s: %v", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return errorf("%s: %v", path, err)
	}
	return nil
}

// writeSlice writes s as a one-dimensional array.
func writeSlice[T any](path string, s []T) error {
	t := graph.TensorOf(s, 0)
	return writeArray(path, t.DType, t.Shape, t.Data)
}

// rowFile is an array written by rows at any position, as node rows arrive
// from many ranks in any order: a temporary .npy of the final size, filled
// by pwrite, then renamed (or compressed into the .npy.zst) on Close.
type rowFile struct {
	path     string
	f        *os.File
	hdr      int64
	rowBytes int64
	rows     int64
}

// createRowFile starts an array of dtype d and shape at path.
func createRowFile(path string, d graph.DType, shape []int64) (*rowFile, error) {
	f, err := tempFile(path)
	if err != nil {
		return nil, err
	}
	hdr := graphio.EncodeNpyHeader(d, shape)
	t := graph.Tensor{DType: d, Shape: shape}
	rf := &rowFile{path: path, f: f, hdr: int64(len(hdr)), rowBytes: int64(t.RowBytes()), rows: t.Rows()}
	if _, err := f.Write(hdr); err != nil {
		rf.abort()
		return nil, errorf("%s: %v", path, err)
	}
	if err := f.Truncate(rf.hdr + rf.rows*rf.rowBytes); err != nil {
		rf.abort()
		return nil, errorf("%s: %v", path, err)
	}
	return rf, nil
}

// writeRows writes consecutive rows starting at row.
func (rf *rowFile) writeRows(row int64, data []byte) error {
	if row < 0 || int64(len(data))%max(rf.rowBytes, 1) != 0 || row+int64(len(data))/max(rf.rowBytes, 1) > rf.rows {
		return errorf("%s: rows [%d, +%d bytes) outside the array's %d rows", rf.path, row, len(data), rf.rows)
	}
	if _, err := rf.f.WriteAt(data, rf.hdr+row*rf.rowBytes); err != nil {
		return errorf("%s: %v", rf.path, err)
	}
	return nil
}

// close moves the array into place, compressing it first for a .zst path.
func (rf *rowFile) close() error {
	if isZstd(rf.path) {
		return rf.compress()
	}
	if err := rf.f.Close(); err != nil {
		os.Remove(rf.f.Name())
		return errorf("%s: %v", rf.path, err)
	}
	if err := os.Rename(rf.f.Name(), rf.path); err != nil {
		os.Remove(rf.f.Name())
		return errorf("%s: %v", rf.path, err)
	}
	return nil
}

// compress streams the finished temporary .npy into a compressed one.
func (rf *rowFile) compress() error {
	defer rf.abort()
	out, err := tempFile(rf.path)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		out.Close()
		os.Remove(out.Name())
		return errorf("%s: %v", rf.path, err)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	enc, err := newEncoder(bw)
	if err != nil {
		return fail(err)
	}
	if _, err := io.Copy(enc, io.NewSectionReader(rf.f, 0, rf.hdr+rf.rows*rf.rowBytes)); err != nil {
		return fail(err)
	}
	if err := enc.Close(); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := out.Close(); err != nil {
		os.Remove(out.Name())
		return errorf("%s: %v", rf.path, err)
	}
	if err := os.Rename(out.Name(), rf.path); err != nil {
		os.Remove(out.Name())
		return errorf("%s: %v", rf.path, err)
	}
	return nil
}

// abort discards the temporary file.
func (rf *rowFile) abort() {
	rf.f.Close()
	os.Remove(rf.f.Name())
}
