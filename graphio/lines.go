package graphio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
)

// readBuffer is the size of the buffers files are read through: large
// enough that a read costs little per byte, small next to a rank's share.
const readBuffer = 4 << 20

// lineReader yields the lines of a text file that start in the byte range
// [lo, hi): a rank reading one range of a file and the rank reading the
// next see every line exactly once, whatever the range bounds cut.
type lineReader struct {
	f     *os.File
	path  string
	r     *bufio.Reader
	hi    int64
	pos   int64 // offset of the next line
	start int64 // offset of the current line
	first int64 // offset of the first line of the range
	k     int64 // lines returned so far
	long  []byte
	base  int64 // line number of the first line; 0 until computed
}

// newLineReader positions a reader at the first line starting at or after
// lo. A line starts at offset 0 or right after a '\n'.
func newLineReader(f *os.File, path string, lo, hi int64) (*lineReader, error) {
	lr := &lineReader{f: f, path: path, hi: hi}
	start := max(lo-1, 0)
	lr.r = bufio.NewReaderSize(io.NewSectionReader(f, start, 1<<62), readBuffer)
	lr.pos = start
	if lo > 0 {
		// Skip the tail of the line that began before lo, unless lo is a
		// line start (the byte before it is '\n').
		for {
			b, err := lr.r.ReadSlice('\n')
			lr.pos += int64(len(b))
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fileErr(path, "%v", err)
		}
	}
	lr.first = lr.pos
	return lr, nil
}

// next returns the next line without its line end ("\n" or "\r\n"), or ok
// false at the end of the range.
func (lr *lineReader) next() (line []byte, ok bool, err error) {
	if lr.pos >= lr.hi {
		return nil, false, nil
	}
	lr.start = lr.pos
	b, err := lr.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the buffer: gather it.
		lr.long = append(lr.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = lr.r.ReadSlice('\n')
			lr.long = append(lr.long, b...)
		}
		b = lr.long
	}
	lr.pos += int64(len(b))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fileErr(lr.path, "%v", err)
	}
	if len(b) == 0 {
		return nil, false, nil // end of file
	}
	lr.k++
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, true, nil
}

// lineNo returns the 1-based line number of the line last returned. It
// counts the lines before the range on first use: errors are rare, and a
// rank in the middle of a file does not know where it is otherwise.
func (lr *lineReader) lineNo() int64 {
	if lr.base == 0 {
		lr.base = 1 + countNewlines(lr.f, lr.first)
	}
	return lr.base + lr.k - 1
}

// offset returns the byte offset of the line last returned.
func (lr *lineReader) offset() int64 { return lr.start }

// countNewlines counts the '\n' bytes in the first n bytes of f.
func countNewlines(f io.ReaderAt, n int64) int64 {
	buf := make([]byte, 1<<20)
	var c int64
	for off := int64(0); off < n; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n-off)], off)
		c += int64(bytes.Count(buf[:k], []byte{'\n'}))
		off += int64(k)
		if err != nil || k == 0 {
			break
		}
	}
	return c
}

// countLines counts the lines starting in [lo, hi) of f, an upper bound on
// the records a range holds, so columns can be allocated once.
func countLines(f *os.File, lo, hi int64) int64 {
	if hi <= lo {
		return 0
	}
	return countNewlines(io.NewSectionReader(f, lo, hi-lo), hi-lo) + 1
}

// fields splits a line at any byte for which sep is true, dropping empty
// fields, into dst.
func fields(line []byte, sep *[256]bool, dst [][]byte) [][]byte {
	dst = dst[:0]
	i := 0
	for i < len(line) {
		for i < len(line) && sep[line[i]] {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !sep[line[j]] {
			j++
		}
		dst = append(dst, line[i:j])
		i = j
	}
	return dst
}

// separators returns the separator table of a delimiter: the delimiter's
// bytes plus spaces, tabs and '\r'.
func separators(delim string) *[256]bool {
	var t [256]bool
	t[' '], t['\t'], t['\r'], t['\v'], t['\f'] = true, true, true, true, true
	for i := 0; i < len(delim); i++ {
		t[delim[i]] = true
	}
	return &t
}

// twoInts parses a line of exactly two decimal integers between
// separators, the common case of an edge line, without splitting it; ok is
// false for anything else, which the caller then parses field by field to
// say what is wrong.
func twoInts(line []byte, sep *[256]bool) (u, v int64, ok bool) {
	i := 0
	var x [2]int64
	for k := range 2 {
		for i < len(line) && sep[line[i]] {
			i++
		}
		neg := false
		if i < len(line) && line[i] == '-' {
			neg = true
			i++
		}
		start := i
		var n uint64
		for i < len(line) && line[i]-'0' <= 9 {
			n = n*10 + uint64(line[i]-'0')
			i++
		}
		if i == start || i-start > 18 || (i < len(line) && !sep[line[i]]) {
			return 0, 0, false
		}
		x[k] = int64(n)
		if neg {
			x[k] = -x[k]
		}
	}
	for i < len(line) && sep[line[i]] {
		i++
	}
	return x[0], x[1], i == len(line)
}

// errNotInt is returned by parseInt for a field that is not an integer.
var errNotInt = errors.New("not an integer")

// parseInt parses a decimal integer (optional sign) without allocating.
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errNotInt
	}
	neg := false
	switch b[0] {
	case '-':
		neg = true
		b = b[1:]
	case '+':
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		if len(b) > 19 {
			for _, c := range b {
				if c < '0' || c > '9' {
					return 0, errNotInt
				}
			}
			return 0, errors.New("integer out of the int64 range")
		}
		return 0, errNotInt
	}
	var n uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, errNotInt
		}
		n = n*10 + uint64(d)
	}
	if n > 1<<63-1 {
		return 0, errors.New("integer out of the int64 range")
	}
	if neg {
		return -int64(n), nil
	}
	return int64(n), nil
}
