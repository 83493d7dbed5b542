package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gnnrun/internal/kernelharness"
)

// rowCase is one launch of gnnrun_copy_rows as a Stream operation issues
// it: rows of rowBytes from a source placed srcOff bytes after a 16-byte
// boundary into a destination placed dstOff bytes after one.
type rowCase struct {
	name           string
	op             string // scatter, copy, move or gather
	rowBytes       int
	dstOff, srcOff int
	dst, src       []byte  // the contents before; src is nil for a move
	dstRows        []int32 // distinct: rows are copied in parallel
	srcRows        []int32 // nil for a scatter (row k of the host rows)
	want           []byte  // dst after the host backend ran the operation
}

// The widths of the rows: bytes, 4-byte, 8-byte and 16-byte words, and
// rows of several words for each.
var harnessWidths = []int{1, 3, 4, 8, 12, 16, 20, 32, 100, 256, 1000}

// The buffers' offsets from a 16-byte boundary (dst, src): aligned, 8-byte
// aligned, 4-byte aligned, and unaligned on either side.
var harnessOffsets = [][2]int{{0, 0}, {8, 8}, {4, 12}, {0, 1}, {3, 0}}

// The row kernel on the CPU (kernels/harness/rows.cc under ASan and
// UBSan) against the host backend, byte for byte: the scatter of host rows
// into slots, copies by index between buffers, moves within a buffer and
// gathers from registered host memory, at every width and offset, each
// launch with its threads in ascending and in descending order. Every row
// must have been copied in the widest word its alignment allows, and each
// operation must have taken all four word sizes.
func TestRowKernelHarness(t *testing.T) {
	bin := kernelharness.Build(t, "rows")
	rng := rand.New(rand.NewPCG(23, 1))
	d, err := Open(Host, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	var cases []*rowCase
	for _, op := range []string{"scatter", "copy", "move", "gather"} {
		for _, w := range harnessWidths {
			for _, off := range harnessOffsets {
				c := newRowCase(rng, op, w, off[0], off[1])
				c.want = runOnHost(t, d, s, c)
				cases = append(cases, c)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	var lines strings.Builder
	for _, c := range cases {
		for _, reverse := range []int{0, 1} {
			lines.WriteString(writeRowCase(t, dir, c, reverse))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cases"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := kernelharness.Run(t, bin, dir)
	if want := fmt.Sprintf("%d launches\n", 2*len(cases)); string(out) != want {
		t.Fatalf("the harness says %q, want %q", out, want)
	}

	words := map[string]map[int]int{} // op -> word size -> rows
	for _, c := range cases {
		if words[c.op] == nil {
			words[c.op] = map[int]int{}
		}
		for _, reverse := range []int{0, 1} {
			at := filepath.Join(dir, fmt.Sprintf("%s-r%d", c.name, reverse))
			got, err := os.ReadFile(at + ".out")
			if err != nil {
				t.Fatal(err)
			}
			if i := firstDiff(got, c.want); i >= 0 {
				t.Errorf("%s, threads reversed %d: byte %d (row %d) is %d, the host backend's %d", c.name, reverse, i, i/c.rowBytes, got[i], c.want[i])
			}
			word, err := os.ReadFile(at + ".word")
			if err != nil {
				t.Fatal(err)
			}
			for k, w := range word {
				if want := c.word(k); int(w) != want {
					t.Errorf("%s: row %d copied in words of %d bytes; its alignment allows %d", c.name, k, w, want)
				}
				words[c.op][int(w)]++
			}
		}
	}
	for op, byWord := range words {
		for _, w := range []int{16, 8, 4, 1} {
			if byWord[w] == 0 {
				t.Errorf("%s: no row was copied in words of %d bytes", op, w)
			}
		}
		t.Logf("%s: rows by word size %v", op, byWord)
	}
}

// newRowCase makes random rows and indexes for op: 40 destination rows, up
// to 20 of them written; sources may repeat, destinations do not (moves
// read none of the rows they write).
func newRowCase(rng *rand.Rand, op string, w, dstOff, srcOff int) *rowCase {
	const dstN, srcN = 40, 30
	n := 1 + rng.IntN(dstN/2)
	c := &rowCase{name: fmt.Sprintf("%s-w%d-d%d-s%d", op, w, dstOff, srcOff), op: op, rowBytes: w, dstOff: dstOff, srcOff: srcOff}
	c.dst = randomBytes(rng, dstN*w)
	perm := rng.Perm(dstN)
	for _, r := range perm[:n] {
		c.dstRows = append(c.dstRows, int32(r))
	}
	switch op {
	case "scatter":
		c.src = randomBytes(rng, n*w)
	case "move":
		c.srcOff = dstOff
		for range n {
			c.srcRows = append(c.srcRows, int32(perm[n+rng.IntN(dstN-n)]))
		}
	default:
		c.src = randomBytes(rng, srcN*w)
		for range n {
			c.srcRows = append(c.srcRows, int32(rng.IntN(srcN)))
		}
	}
	return c
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// word returns the word size row k's copy may take: the widest that
// divides the row's width and both rows' addresses.
func (c *rowCase) word(k int) int {
	s := k
	if c.srcRows != nil {
		s = int(c.srcRows[k])
	}
	align := (c.srcOff + s*c.rowBytes) | (c.dstOff + int(c.dstRows[k])*c.rowBytes) | c.rowBytes
	for _, w := range []int{16, 8, 4} {
		if align%w == 0 {
			return w
		}
	}
	return 1
}

// runOnHost runs the case's operation on the host backend and returns the
// destination after it.
func runOnHost(t *testing.T, d Device, s Stream, c *rowCase) []byte {
	t.Helper()
	dst, err := d.Alloc(int64(len(c.dst)))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Free()
	if err := s.CopyToDevice(dst, 0, c.dst); err != nil {
		t.Fatal(err)
	}
	switch c.op {
	case "scatter":
		err = s.ScatterRows(dst, c.dstRows, c.src, c.rowBytes)
	case "copy":
		src, aerr := d.Alloc(int64(len(c.src)))
		if aerr != nil {
			t.Fatal(aerr)
		}
		defer src.Free()
		if err := s.CopyToDevice(src, 0, c.src); err != nil {
			t.Fatal(err)
		}
		err = s.CopyRows(dst, c.dstRows, src, c.srcRows, c.rowBytes)
	case "move":
		err = s.MoveRows(dst, c.srcRows, c.dstRows, c.rowBytes)
	case "gather":
		p, rerr := d.Register(c.src)
		if rerr != nil {
			t.Fatal(rerr)
		}
		defer p.Unregister()
		err = s.GatherPinned(dst, c.dstRows, p, c.srcRows, c.rowBytes)
	}
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	got := make([]byte, len(c.dst))
	if err := s.CopyToHost(got, dst, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return got
}

// writeRowCase writes the case's files for a launch with its threads in
// order (reverse 0) or reversed (1) and returns its line of the cases file
// (kernels/harness/rows.cc describes both).
func writeRowCase(t *testing.T, dir string, c *rowCase, reverse int) string {
	t.Helper()
	name := fmt.Sprintf("%s-r%d", c.name, reverse)
	at := filepath.Join(dir, name)
	files := map[string][]byte{".dst": c.dst, ".dst_rows": int32Bytes(c.dstRows)}
	srcLen, srcRows := -1, 0
	if c.src != nil {
		files[".src"], srcLen = c.src, len(c.src)
	}
	if c.srcRows != nil {
		files[".src_rows"], srcRows = int32Bytes(c.srcRows), 1
	}
	for ext, b := range files {
		if err := os.WriteFile(at+ext, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	grid, block := rowsGrid(len(c.dstRows))
	return fmt.Sprintf("%s %d %d %d %d %d %d %d %d %d %d\n", name, len(c.dstRows), c.rowBytes, grid, block, reverse,
		len(c.dst), c.dstOff, srcLen, c.srcOff, srcRows)
}

func int32Bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// firstDiff returns the first index where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
