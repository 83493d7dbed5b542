package graphio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gnnrun/collective"
	"gnnrun/graph"
)

// An edge list is a text file of lines "src dst [weight]": columns split by
// any run of spaces, tabs or commas; "#" and "%" start comment lines; CRLF
// line ends are fine; a networkx attribute dict ("{...}") in the third
// column is ignored. The first non-comment line may be a header: "n m" (n
// nodes, m edge lines) or column names. A gzip file (.gz) is streamed by
// every rank, each keeping its blocks of lines. MatrixMarket coordinate
// files are read the same way, with their size line as the header and
// 1-based IDs.

// textHead is what every rank learns from the start of a text file before
// the ranks split it: where the first data line is and what it says, and
// counts stated in comments.
type textHead struct {
	firstOff   int64    // byte offset of the first data line (-1: none)
	first      []string // its fields
	nodesNote  int64    // "Nodes: N" in a comment (SNAP), or -1
	mtx        bool     // "%%MatrixMarket" banner
	mtxField   string   // real, integer, pattern
	mtxSym     string   // general, symmetric, ...
	firstLine  int64    // its 1-based line number
	compressed bool
}

var nodesNoteRe = regexp.MustCompile(`(?i)\bnodes:\s*(\d+)`)

// readHead scans the start of a text file up to its first data line.
func readHead(path string) (*textHead, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileErr(path, "%v", unwrapPathError(err))
	}
	defer f.Close()
	r, gz, err := openText(f, path)
	if err != nil {
		return nil, err
	}
	defer gz.Close()
	h := &textHead{firstOff: -1, nodesNote: -1}
	_, h.compressed = gz.(*gzip.Reader)
	br := bufio.NewReaderSize(r, 1<<16)
	var off, line int64
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A very long first line: it is data, read its start only.
			err = nil
		}
		line++
		s := strings.TrimRight(string(b), "\r\n")
		if line == 1 && strings.HasPrefix(s, "%%MatrixMarket") {
			f := strings.Fields(strings.ToLower(s))
			if len(f) < 5 || f[1] != "matrix" || f[2] != "coordinate" {
				return nil, lineErr(path, 1, "MatrixMarket banner %q: only \"matrix coordinate\" files hold graphs", s)
			}
			h.mtx, h.mtxField, h.mtxSym = true, f[3], f[4]
			if h.mtxField == "complex" {
				return nil, lineErr(path, 1, "complex MatrixMarket values cannot be edge weights")
			}
		}
		t := strings.TrimSpace(s)
		switch {
		case t == "" || t[0] == '#' || t[0] == '%':
			if m := nodesNoteRe.FindStringSubmatch(t); m != nil && t != "" && t[0] == '#' {
				h.nodesNote, _ = strconv.ParseInt(m[1], 10, 64)
			}
		default:
			h.firstOff, h.firstLine = off, line
			h.first = strings.FieldsFunc(t, isEdgeSep)
			return h, nil
		}
		off += int64(len(b))
		if err != nil {
			return h, nil // no data line at all
		}
	}
}

func isEdgeSep(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' }

// openText returns a reader of the file's text, decompressing gzip.
func openText(f *os.File, path string) (io.Reader, io.Closer, error) {
	var magic [2]byte
	n, _ := f.ReadAt(magic[:], 0)
	if n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<62), readBuffer))
		if err != nil {
			return nil, nil, fileErr(path, "broken gzip stream: %v", err)
		}
		return zr, zr, nil
	}
	return io.NewSectionReader(f, 0, 1<<62), io.NopCloser(nil), nil
}

// lineSource yields the lines one rank parses.
type lineSource interface {
	next() (line []byte, ok bool, err error)
	lineNo() int64
	offset() int64
	// index returns the global index of the last line among all lines of
	// the file when known (streams), or -1.
	index() int64
}

func (lr *lineReader) index() int64 { return -1 }

// gzLines streams a compressed file and yields the lines of the blocks
// assigned to this rank: block b of gzBlock lines goes to rank b mod P.
type gzLines struct {
	path        string
	br          *bufio.Reader
	rank, parts int
	line        int64 // 1-based number of the last line read
	long        []byte
}

const gzBlock = 1 << 16

func (g *gzLines) next() ([]byte, bool, error) {
	for {
		b, err := g.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			g.long = append(g.long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = g.br.ReadSlice('\n')
				g.long = append(g.long, b...)
			}
			b = g.long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, fileErr(g.path, "after line %d: %v", g.line, err)
		}
		if len(b) == 0 {
			return nil, false, nil
		}
		g.line++
		if int((g.line-1)/gzBlock)%g.parts != g.rank {
			continue
		}
		b = bytes.TrimSuffix(b, []byte{'\n'})
		return bytes.TrimSuffix(b, []byte{'\r'}), true, nil
	}
}

func (g *gzLines) lineNo() int64 { return g.line }
func (g *gzLines) offset() int64 { return -1 }
func (g *gzLines) index() int64  { return g.line - 1 }

// textEdges is what one rank parsed from an edge list.
type textEdges struct {
	src, dst []int64
	w        []float32
	hasW     bool
	lineIdx  []int64 // gzip: the file line index of each edge
	cand     bool    // the header candidate is edge 0 here
	maxID    int64
	minID    int64
}

// readEdgeList reads an edge list or a MatrixMarket file.
func readEdgeList(c *collective.Comm, path string, o *options) (*Graph, error) {
	h, err := readHead(path)
	if err != nil {
		return nil, err
	}
	return readTextEdges(c, path, h, o)
}

// readMTX reads a MatrixMarket coordinate file.
func readMTX(c *collective.Comm, path string, o *options) (*Graph, error) {
	h, err := readHead(path)
	if err != nil {
		return nil, err
	}
	if !h.mtx {
		return nil, lineErr(path, 1, "no %%%%MatrixMarket banner")
	}
	return readTextEdges(c, path, h, o)
}

func readTextEdges(c *collective.Comm, path string, h *textHead, o *options) (*Graph, error) {
	if h.firstOff < 0 {
		return nil, fileErr(path, "no edges: every line is blank or a comment")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fileErr(path, "%v", unwrapPathError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileErr(path, "%v", err)
	}
	var src lineSource
	var est int64
	if h.compressed {
		r, closer, err := openText(f, path)
		if err != nil {
			return nil, err
		}
		defer closer.Close()
		src = &gzLines{path: path, br: bufio.NewReaderSize(r, readBuffer), rank: c.Rank(), parts: c.Size()}
	} else {
		p := splitBytes([]int64{st.Size()}, c.Rank(), c.Size())
		lo, hi := int64(0), int64(0)
		if len(p) == 1 {
			lo, hi = p[0].lo, p[0].hi
		}
		est = countLines(f, lo, hi)
		lr, err := newLineReader(f, path, lo, hi)
		if err != nil {
			return nil, err
		}
		src = lr
	}
	te, err := parseTextEdges(src, path, h, est, o)
	if err != nil {
		return nil, err
	}
	if h.mtx && h.mtxSym != "general" && c.Rank() == 0 {
		o.log.Warn("MatrixMarket "+h.mtxSym+" matrix: edges are read as stored (one triangle); --undirected adds the other", "file", path)
	}
	return finishTextEdges(c, path, h, te, o.header, o.log)
}

// parseTextEdges parses this rank's lines.
func parseTextEdges(src lineSource, path string, h *textHead, est int64, o *options) (*textEdges, error) {
	te := &textEdges{src: make([]int64, 0, est), dst: make([]int64, 0, est), maxID: -1, minID: math.MaxInt64}
	var sep [256]bool
	sep[' '], sep['\t'], sep[','], sep['\r'] = true, true, true, true
	var fs [][]byte
	base := int64(0)
	if h.mtx {
		base = 1
	}
	var done int64
	for {
		line, ok, err := src.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		done += int64(len(line)) + 1
		if done > 64<<20 {
			o.progress("read edges", done, 0)
			done = 0
		}
		fs = fields(line, &sep, fs)
		if len(fs) == 0 || fs[0][0] == '#' || fs[0][0] == '%' {
			continue
		}
		isFirst := src.offset() == h.firstOff || src.index() == h.firstLine-1
		if isFirst {
			skip, err := headerLine(path, h, o.header)
			if err != nil {
				return nil, err
			}
			if skip {
				continue
			}
			te.cand = true // "n m" that may be a header: decided later
		}
		if len(fs) < 2 {
			return nil, lineErr(path, src.lineNo(), "1 column, want 2 or 3 (source, destination[, weight])")
		}
		var ids [2]int64
		for k := range 2 {
			v, err := parseInt(fs[k])
			if err != nil {
				what := [2]string{"source", "destination"}[k]
				return nil, lineErr(path, src.lineNo(), "%s node ID %q: %v", what, fs[k], err)
			}
			v -= base
			if v < 0 {
				what := [2]string{"source", "destination"}[k]
				if base == 1 {
					return nil, lineErr(path, src.lineNo(), "%s node ID %d: MatrixMarket indices start at 1", what, v+1)
				}
				return nil, lineErr(path, src.lineNo(), "negative %s node ID %d", what, v)
			}
			ids[k] = v
			te.maxID = max(te.maxID, v)
			te.minID = min(te.minID, v)
		}
		w := float32(1)
		switch {
		case len(fs) == 2:
		case fs[2][0] == '{': // networkx attribute dict
		case len(fs) > 3:
			return nil, lineErr(path, src.lineNo(), "%d columns, want 2 or 3 (source, destination[, weight])", len(fs))
		case h.mtx && h.mtxField == "pattern":
		default:
			x, err := strconv.ParseFloat(string(fs[2]), 32)
			if err != nil {
				return nil, lineErr(path, src.lineNo(), "weight %q is not a number", fs[2])
			}
			w = float32(x)
			if !te.hasW {
				te.hasW = true
				te.w = make([]float32, len(te.src), cap(te.src))
				for i := range te.w {
					te.w[i] = 1
				}
			}
		}
		te.src = append(te.src, ids[0])
		te.dst = append(te.dst, ids[1])
		if te.hasW {
			te.w = append(te.w, w)
		}
		if i := src.index(); i >= 0 {
			te.lineIdx = append(te.lineIdx, i)
		}
	}
	return te, nil
}

// headerLine decides what to do with the first data line: skip it (a
// header for sure), or parse it (an edge, or an "n m" header decided once
// the line count is known).
func headerLine(path string, h *textHead, mode string) (skip bool, err error) {
	// Only the ID columns say whether this is data: a weight or an
	// attribute dict in the third column does not make a header.
	ints := len(h.first) >= 2
	for _, f := range h.first[:min(2, len(h.first))] {
		if _, err := parseInt([]byte(f)); err != nil {
			ints = false
		}
	}
	switch {
	case h.mtx:
		if len(h.first) != 3 || !ints {
			return false, lineErr(path, h.firstLine, "MatrixMarket size line %q: want \"rows columns entries\"", strings.Join(h.first, " "))
		}
		return true, nil
	case mode == "yes":
		return true, nil
	case !ints && mode == "auto":
		return true, nil // column names
	}
	return false, nil
}

// finishTextEdges agrees on the header, the node count and the edge IDs.
func finishTextEdges(c *collective.Comm, path string, h *textHead, te *textEdges, mode string, log *slog.Logger) (*Graph, error) {
	n := int64(len(te.src))
	total, err := collective.Sum(c, n)
	if err != nil {
		return nil, err
	}
	// The header candidate's owner excludes it from the ID bounds it
	// reports, so the decision below can use the others' IDs.
	maxOther := te.maxID
	if te.cand {
		maxOther = -1
		for i := 1; i < len(te.src); i++ {
			maxOther = max(maxOther, te.src[i], te.dst[i])
		}
	}
	maxOther, err = collective.Max(c, maxOther)
	if err != nil {
		return nil, err
	}
	maxID, err := collective.Max(c, te.maxID)
	if err != nil {
		return nil, err
	}
	anyW, err := collective.Any(c, te.hasW)
	if err != nil {
		return nil, err
	}
	header := false
	var nodes int64 = -1
	var declaredEdges int64 = -1
	switch {
	case h.mtx:
		rows, _ := strconv.ParseInt(h.first[0], 10, 64)
		cols, _ := strconv.ParseInt(h.first[1], 10, 64)
		declaredEdges, _ = strconv.ParseInt(h.first[2], 10, 64)
		if rows != cols {
			return nil, lineErr(path, h.firstLine, "matrix is %d×%d: a graph's adjacency matrix must be square", rows, cols)
		}
		nodes = rows
	case len(h.first) == 2 && mode == "yes":
		// A header for sure, skipped while parsing: if it is "n m", use it.
		a, errA := strconv.ParseInt(h.first[0], 10, 64)
		b, errB := strconv.ParseInt(h.first[1], 10, 64)
		if errA == nil && errB == nil {
			nodes, declaredEdges = a, b
		}
	case len(h.first) == 2 && mode == "auto":
		a, errA := strconv.ParseInt(h.first[0], 10, 64)
		b, errB := strconv.ParseInt(h.first[1], 10, 64)
		if errA == nil && errB == nil && b == total-1 && maxOther <= a && a > 0 {
			header, nodes, declaredEdges = true, a, b
		}
	}
	if header && te.cand {
		te.src, te.dst = te.src[1:], te.dst[1:]
		if te.hasW {
			te.w = te.w[1:]
		}
		if te.lineIdx != nil {
			te.lineIdx = te.lineIdx[1:]
		}
		n--
	}
	if header {
		total--
		maxID = maxOther
	}
	if declaredEdges >= 0 && total != declaredEdges {
		return nil, lineErr(path, h.firstLine, "header says %d edges but the file has %d edge lines", declaredEdges, total)
	}
	switch {
	case nodes >= 0 && !h.mtx && maxID == nodes:
		// "n m" over IDs 1..n: keep them, node 0 has no edges.
		if c.Rank() == 0 {
			log.Warn("node IDs reach the header's node count: read as 1-based, node 0 has no edges; --compact renumbers from 0", "file", path, "nodes", nodes)
		}
		nodes++
	case nodes >= 0:
		if maxID >= nodes {
			return nil, fileErr(path, "node ID %d is out of range: the header says %d nodes", maxID+boolTo[int64](h.mtx), nodes)
		}
	case h.nodesNote > maxID:
		nodes = h.nodesNote
	default:
		nodes = maxID + 1
	}
	e := &graph.Edges{Src: te.src, Dst: te.dst}
	if anyW {
		e.Weight = te.w
		if e.Weight == nil {
			e.Weight = make([]float32, len(e.Src))
			for i := range e.Weight {
				e.Weight[i] = 1
			}
		}
	}
	e.ID = make([]int64, len(e.Src))
	if te.lineIdx != nil || h.compressed {
		// Streams: ranks hold interleaved blocks of lines.
		if err := streamEdgeIDs(c, te, e); err != nil {
			return nil, err
		}
	} else {
		before, _, err := collective.Offset(c, n)
		if err != nil {
			return nil, err
		}
		for i := range e.ID {
			e.ID[i] = before + int64(i)
		}
	}
	meta := graph.Meta{Name: graphName(path), NodeTypes: []string{"_N"}, NumNodes: []int64{nodes},
		EdgeTypes: []graph.EdgeType{{Src: "_N", Rel: "_E", Dst: "_N"}}, NumEdges: []int64{total}}
	return &Graph{Meta: meta, Edges: e}, nil
}

// streamEdgeIDs numbers the edges of a streamed file in file order: the
// ranks hold interleaved blocks of lines, so each block's edge count is
// gathered and prefix-summed.
func streamEdgeIDs(c *collective.Comm, te *textEdges, e *graph.Edges) error {
	// Edges per block held here, as (block, count) pairs.
	type blockCount struct{ Block, Count int64 }
	var mine []blockCount
	for _, li := range te.lineIdx {
		b := li / gzBlock
		if len(mine) == 0 || mine[len(mine)-1].Block != b {
			mine = append(mine, blockCount{b, 0})
		}
		mine[len(mine)-1].Count++
	}
	all, _, err := collective.Allgatherv(c, mine)
	if err != nil {
		return err
	}
	// The number of blocks is the file's lines over 64Ki: small.
	var blocks int64
	for _, bc := range all {
		blocks = max(blocks, bc.Block+1)
	}
	start := make([]int64, blocks+1)
	for _, bc := range all {
		start[bc.Block+1] += bc.Count
	}
	for b := int64(1); b <= blocks; b++ {
		start[b] += start[b-1]
	}
	k := int64(0)
	prev := int64(-1)
	for i, li := range te.lineIdx {
		b := li / gzBlock
		if b != prev {
			prev, k = b, 0
		}
		e.ID[i] = start[b] + k
		k++
	}
	return nil
}

// graphName is the file name without directories and extensions.
func graphName(path string) string {
	base := path
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

func boolTo[T int64 | int](b bool) T {
	if b {
		return 1
	}
	return 0
}
