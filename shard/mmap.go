package shard

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"gnnrun/graph"
	"gnnrun/graphio"
)

// mapping is a read-only, shared memory map of a whole file: every process
// of a host that maps the same file reads the same page-cache pages.
type mapping []byte

func (m mapping) unmap() error {
	if len(m) == 0 {
		return nil
	}
	return unix.Munmap(m)
}

// mapArray memory-maps the .npy file at path and returns its array viewing
// the map, and the mapping to release. An array whose data offset leaves
// its elements misaligned (a header not padded as NumPy pads it) is read
// into memory instead.
func mapArray(path string) (*graph.Tensor, mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, errorf("%v", err)
	}
	defer f.Close()
	h, err := graphio.ReadNpyHeader(bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<21), 4096), path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, nil, errorf("%v", err)
	}
	need, ok := fileBytes(h)
	switch {
	case !ok:
		return nil, nil, errorf("%s: the header's shape %v of %s needs more than 2^63 bytes", path, h.Shape, h.DType)
	case st.Size() < need:
		return nil, nil, errorf("%s: truncated: %d bytes, the header announces %d", path, st.Size(), need)
	case st.Size() > need:
		return nil, nil, errorf("%s: %d bytes, the header announces %d: the file does not hold the array the header describes", path, st.Size(), need)
	}
	t := &graph.Tensor{DType: h.DType, Shape: h.Shape}
	if h.DataBytes() == 0 {
		t.Data = []byte{}
		return t, nil, nil
	}
	if h.Offset%8 != 0 {
		t.Data = make([]byte, h.DataBytes())
		if _, err := f.ReadAt(t.Data, h.Offset); err != nil {
			return nil, nil, errorf("%s: %v", path, err)
		}
		return t, nil, nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(need), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, errorf("mmap %s: %v", path, err)
	}
	t.Data = m[h.Offset:need:need]
	return t, m, nil
}

// fileBytes returns the size of a .npy file with header h: its offset and
// data bytes, or false when they overflow (a corrupt shape).
func fileBytes(h *graphio.NpyHeader) (int64, bool) {
	n := int64(h.DType.Size())
	for _, d := range h.Shape {
		if d != 0 && n > (math.MaxInt64-h.Offset)/d {
			return 0, false
		}
		n *= d
	}
	return h.Offset + n, true
}

// readCompressed decompresses a .npy.zst file into memory and returns its
// array.
func readCompressed(path string) (*graph.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errorf("%v", err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, errorf("%s: %v", path, err)
	}
	defer dec.Close()
	br := bufio.NewReaderSize(dec, 1<<16)
	h, err := graphio.ReadNpyHeader(br, path)
	if err != nil {
		return nil, err
	}
	need, ok := fileBytes(h)
	if !ok {
		return nil, errorf("%s: the header's shape %v of %s needs more than 2^63 bytes", path, h.Shape, h.DType)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, errorf("%v", err)
	}
	data, err := readGrowing(br, need-h.Offset, 8*st.Size()+64<<20)
	if err != nil {
		return nil, errorf("%s: decompressing: %v", path, err)
	}
	return &graph.Tensor{DType: h.DType, Shape: h.Shape, Data: data}, nil
}

// readGrowing reads exactly n bytes from r. It allocates at most guess
// bytes before it has read them, doubling from there, so that a corrupt
// header announcing terabytes fails on the short stream instead of on the
// allocation.
func readGrowing(r io.Reader, n, guess int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, guess))
	for {
		k, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%d bytes of data, the header announces %d", len(buf), n)
		}
		if err != nil {
			return nil, err
		}
		if int64(len(buf)) == n {
			return buf, nil
		}
		buf = slices.Grow(buf, int(min(n, 2*int64(cap(buf)))-int64(len(buf))))
	}
}

// decompressFile writes the decompressed bytes of the .zst file src to dst,
// atomically, making dst's directory first.
func decompressFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return errorf("%v", err)
	}
	defer in.Close()
	dec, err := zstd.NewReader(bufio.NewReaderSize(in, 1<<20))
	if err != nil {
		return errorf("%s: %v", src, err)
	}
	defer dec.Close()
	out, err := createFile(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, dec); err != nil {
		out.Abort()
		return errorf("%s: decompressing: %v", src, err)
	}
	if err := out.Commit(); err != nil {
		return errorf("%w", err)
	}
	return nil
}
