package shard

import (
	"gnnrun/atomicfile"
	"gnnrun/graphio"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"gnnrun/graph"
)

// createFile starts an atomicfile at path, making its directory first.
func createFile(path string) (*atomicfile.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, errorf("%w", err)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, errorf("%w", err)
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
// ".npy.zst" compressed), atomically.
func writeArray(path string, d graph.DType, shape []int64, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return errorf("%w", err)
	}
	err := atomicfile.WriteFunc(path, func(w io.Writer) error {
		if !isZstd(path) {
			return encodeArray(w, d, shape, data)
		}
		enc, err := newEncoder(w)
		if err != nil {
			return err
		}
		if err := encodeArray(enc, d, shape, data); err != nil {
			enc.Close()
			return err
		}
		return enc.Close()
	})
	if err != nil {
		return errorf("%w", err)
	}
	return nil
}

// encodeArray writes the .npy header and data of an array to w, the data
// in pieces of 8 MiB so a compressing w never holds a whole array twice.
func encodeArray(w io.Writer, d graph.DType, shape []int64, data []byte) error {
	if _, err := w.Write(graphio.EncodeNpyHeader(d, shape)); err != nil {
		return err
	}
	for len(data) > 0 {
		k := min(len(data), 8<<20)
		if _, err := w.Write(data[:k]); err != nil {
			return err
		}
		data = data[k:]
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
// by pwrite, then moved into place (or compressed into the .npy.zst) on
// close.
type rowFile struct {
	path     string
	f        *atomicfile.File
	hdr      int64
	rowBytes int64
	rows     int64
}

// createRowFile starts an array of dtype d and shape at path.
func createRowFile(path string, d graph.DType, shape []int64) (*rowFile, error) {
	f, err := createFile(path)
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
	if err := rf.f.Commit(); err != nil {
		return errorf("%w", err)
	}
	return nil
}

// compress streams the finished temporary .npy into a compressed one; the
// uncompressed one is discarded either way.
func (rf *rowFile) compress() error {
	defer rf.abort()
	err := atomicfile.WriteFunc(rf.path, func(w io.Writer) error {
		enc, err := newEncoder(w)
		if err != nil {
			return err
		}
		if _, err := io.Copy(enc, io.NewSectionReader(rf.f, 0, rf.hdr+rf.rows*rf.rowBytes)); err != nil {
			enc.Close()
			return err
		}
		return enc.Close()
	})
	if err != nil {
		return errorf("%w", err)
	}
	return nil
}

// abort discards the temporary file.
func (rf *rowFile) abort() { rf.f.Abort() }
