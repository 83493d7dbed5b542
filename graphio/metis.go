package graphio

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
	"gnnrun/report"
)

// A METIS graph file starts with "n m [fmt [ncon]]" after any "%" comment
// lines; then line i (1-based, comments not counted) describes vertex i:
// its size when fmt's first digit is 1, its ncon weights when the second is
// 1, then its neighbours (1-based), each followed by the edge's weight when
// the third digit is 1. A blank line is a vertex without neighbours. Every
// edge appears in the lists of both its ends and m counts edges, so the
// lists hold 2m entries; we keep them as 2m arcs.

// metisHeader is the parsed header line.
type metisHeader struct {
	n, m        int64
	vsize, vwgt bool
	ewgt        bool
	ncon        int
	line        int64 // line number of the header
	end         int64 // byte offset after the header line
}

func readMETISHeader(path string) (*metisHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileErr(path, "%v", unwrapPathError(err))
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var off, line int64
	for {
		s, err := br.ReadString('\n')
		line++
		off += int64(len(s))
		t := strings.TrimSpace(s)
		if t != "" && t[0] != '%' {
			return parseMETISHeader(path, t, line, off)
		}
		if errors.Is(err, io.EOF) {
			return nil, fileErr(path, "no header line \"n m [fmt [ncon]]\": the file is empty or all comments")
		}
		if err != nil {
			return nil, fileErr(path, "%v", err)
		}
	}
}

func parseMETISHeader(path, t string, line, end int64) (*metisHeader, error) {
	h := &metisHeader{line: line, end: end, ncon: 1}
	f := strings.Fields(t)
	if len(f) < 2 || len(f) > 4 {
		return nil, lineErr(path, line, "header %q: want \"n m [fmt [ncon]]\"", t)
	}
	var err error
	if h.n, err = strconv.ParseInt(f[0], 10, 64); err != nil || h.n < 0 {
		return nil, lineErr(path, line, "header: vertex count %q is not a non-negative integer", f[0])
	}
	if h.m, err = strconv.ParseInt(f[1], 10, 64); err != nil || h.m < 0 {
		return nil, lineErr(path, line, "header: edge count %q is not a non-negative integer", f[1])
	}
	if len(f) >= 3 {
		fm := f[2]
		if len(fm) > 3 || strings.Trim(fm, "01") != "" {
			return nil, lineErr(path, line, "header: fmt %q must be up to three 0/1 digits (vertex sizes, vertex weights, edge weights)", fm)
		}
		fm = strings.Repeat("0", 3-len(fm)) + fm
		h.vsize, h.vwgt, h.ewgt = fm[0] == '1', fm[1] == '1', fm[2] == '1'
	}
	if len(f) == 4 {
		nc, err := strconv.Atoi(f[3])
		if err != nil || nc < 1 {
			return nil, lineErr(path, line, "header: ncon %q must be a positive integer", f[3])
		}
		if !h.vwgt {
			return nil, lineErr(path, line, "header: ncon %d given but fmt %q has no vertex weights", nc, f[2])
		}
		h.ncon = nc
	}
	return h, nil
}

// metisPart is what one rank parsed: its vertex lines and their arcs with
// local vertex indices.
type metisPart struct {
	verts     int64 // vertex lines read
	lastData  int64 // local index of the last line that was not blank, or -1
	src       []int64
	dst       []int64
	w         []float32
	vwgt      []int64 // verts*ncon
	vsize     []int64
	firstLine int64 // line number of the range's first line (0 if none)
}

// readMETIS reads a METIS graph file.
func readMETIS(c *collective.Comm, path string, o *options) (*Graph, error) {
	h, err := readMETISHeader(path)
	if err != nil {
		return nil, err
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
	lo, hi := h.end, h.end
	if p := splitBytes([]int64{st.Size() - h.end}, c.Rank(), c.Size()); len(p) == 1 {
		lo, hi = h.end+p[0].lo, h.end+p[0].hi
	}
	// The header says how many arcs there are: this rank's share of the
	// bytes holds about its share of them (sizing the arrays once; growing
	// them by append took most of the read on R-MAT scale 20).
	est := int64(0)
	if size := st.Size() - h.end; size > 0 {
		est = int64(float64(2*h.m)*float64(hi-lo)/float64(size)*1.02) + 1024
	}
	part, err := parseMETISRange(f, path, h, lo, hi, est)
	if err != nil {
		return nil, err
	}
	before, total, err := collective.Offset(c, part.verts)
	if err != nil {
		return nil, err
	}
	// Lines after the n-th vertex line may only be blank.
	lastData := int64(-1)
	if part.lastData >= 0 {
		lastData = before + part.lastData
	}
	lastData, err = collective.Max(c, lastData)
	if err != nil {
		return nil, err
	}
	if lastData >= h.n {
		line, _ := metisVertexLine(path, h, lastData)
		return nil, lineErr(path, line, "vertex line %d, but the header says %d vertices", lastData+1, h.n)
	}
	if total < h.n {
		return nil, fileErr(path, "%d vertex lines, but the header (line %d) says %d vertices", total, h.line, h.n)
	}
	for i := range part.src {
		part.src[i] += before
	}
	if err := checkSelfLoops(c, path, h, part); err != nil {
		return nil, err
	}
	arcs, err := collective.Sum(c, int64(len(part.src)))
	if err != nil {
		return nil, err
	}
	if arcs != 2*h.m {
		return nil, lineErr(path, h.line, "the header says %d edges, so the adjacency lists must hold %d entries (each edge in both lists), but they hold %d", h.m, 2*h.m, arcs)
	}
	if err := checkSymmetric(c, path, h, part); err != nil {
		return nil, err
	}
	e := &graph.Edges{Src: part.src, Dst: part.dst, Weight: part.w}
	arcBefore, _, err := collective.Offset(c, int64(len(e.Src)))
	if err != nil {
		return nil, err
	}
	e.ID = make([]int64, len(e.Src))
	for i := range e.ID {
		e.ID[i] = arcBefore + int64(i)
	}
	meta := graph.Meta{Name: graphName(path), NodeTypes: []string{"_N"}, NumNodes: []int64{h.n},
		EdgeTypes: []graph.EdgeType{{Src: "_N", Rel: "_E", Dst: "_N"}}, NumEdges: []int64{2 * h.m}}
	g := &Graph{Meta: meta, Edges: e}
	g.Steps = append(g.Steps, Step{Name: "metis", Count: h.m, Text: "read " + report.Count(h.m) + " undirected edges as " + report.Count(2*h.m) + " arcs"})
	if o.skipData || (!h.vwgt && !h.vsize) {
		return g, nil
	}
	g.Nodes = graph.NewNodeData(&meta, c.Rank(), c.Size())
	keep := min(part.verts, max(h.n-before, 0)) // drop trailing blank lines
	if h.vwgt {
		t := graph.TensorOf(part.vwgt[:keep*int64(h.ncon)], h.ncon)
		if t, err = redistributeRows(c, t, before, g.Nodes.Books[0]); err != nil {
			return nil, err
		}
		g.Nodes.Arrays[0]["vwgt"] = t
	}
	if h.vsize {
		t := graph.TensorOf(part.vsize[:keep], 0)
		if t, err = redistributeRows(c, t, before, g.Nodes.Books[0]); err != nil {
			return nil, err
		}
		g.Nodes.Arrays[0]["vsize"] = t
	}
	return g, nil
}

// parseMETISRange parses the vertex lines starting in [lo, hi), sizing
// its arc arrays for est arcs.
func parseMETISRange(f *os.File, path string, h *metisHeader, lo, hi, est int64) (*metisPart, error) {
	lr, err := newLineReader(f, path, lo, hi)
	if err != nil {
		return nil, err
	}
	p := &metisPart{lastData: -1}
	p.src = make([]int64, 0, est)
	p.dst = make([]int64, 0, est)
	if h.ewgt {
		p.w = make([]float32, 0, est)
	}
	var sep [256]bool
	sep[' '], sep['\t'], sep['\r'] = true, true, true
	var fs [][]byte
	lead := boolTo[int](h.vsize) + boolTo[int](h.vwgt)*h.ncon
	step := 1 + boolTo[int](h.ewgt)
	for {
		line, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return p, nil
		}
		fs = fields(line, &sep, fs)
		if len(fs) > 0 && fs[0][0] == '%' {
			continue
		}
		v := p.verts
		p.verts++
		if len(fs) == 0 {
			if lead > 0 {
				p.vsize = append(p.vsize, 1)
				for range boolTo[int](h.vwgt) * h.ncon {
					p.vwgt = append(p.vwgt, 1)
				}
			}
			continue
		}
		p.lastData = v
		if len(fs) < lead || (len(fs)-lead)%step != 0 {
			return nil, lineErr(path, lr.lineNo(), "%d numbers: fmt says %d leading vertex numbers then %d per neighbour", len(fs), lead, step)
		}
		k := 0
		if h.vsize {
			x, err := parseInt(fs[k])
			if err != nil || x < 0 {
				return nil, lineErr(path, lr.lineNo(), "vertex size %q is not a non-negative integer", fs[k])
			}
			p.vsize = append(p.vsize, x)
			k++
		}
		if h.vwgt {
			for range h.ncon {
				x, err := parseInt(fs[k])
				if err != nil || x < 0 {
					return nil, lineErr(path, lr.lineNo(), "vertex weight %q is not a non-negative integer", fs[k])
				}
				p.vwgt = append(p.vwgt, x)
				k++
			}
		}
		for ; k < len(fs); k += step {
			u, err := parseInt(fs[k])
			if err != nil {
				return nil, lineErr(path, lr.lineNo(), "neighbour %q: %v", fs[k], err)
			}
			if u < 1 || u > h.n {
				return nil, lineErr(path, lr.lineNo(), "neighbour %d is out of range: vertices are numbered 1..%d", u, h.n)
			}
			p.src = append(p.src, v)
			p.dst = append(p.dst, u-1)
			if h.ewgt {
				w, err := parseInt(fs[k+1])
				if err != nil || w < 0 || w > 1<<24 {
					return nil, lineErr(path, lr.lineNo(), "edge weight %q is not an integer in 0..2^24", fs[k+1])
				}
				p.w = append(p.w, float32(w))
			}
		}
	}
}

// checkSelfLoops fails on the first vertex that lists itself.
func checkSelfLoops(c *collective.Comm, path string, h *metisHeader, p *metisPart) error {
	selfLoop := int64(math.MaxInt64)
	for i := range p.src {
		if p.src[i] == p.dst[i] {
			selfLoop = min(selfLoop, p.src[i])
		}
	}
	selfLoop, err := collective.Min(c, selfLoop)
	if err != nil {
		return err
	}
	if selfLoop != math.MaxInt64 {
		line, _ := metisVertexLine(path, h, selfLoop)
		return lineErr(path, line, "vertex %d lists itself; METIS graphs have no self loops", selfLoop+1)
	}
	return nil
}

// metisArc is one adjacency entry sent to the rank that checks its pair.
type metisArc struct {
	A, B int64   // the pair, A <= B
	Fwd  int32   // 1 when the entry is in A's list (A -> B)
	W    float32 // its weight
}

// checkSymmetric checks that every entry u -> v has a matching v -> u with
// the same weight. The entries of a pair
// meet at the rank a hash of the pair picks; all ranks then agree on the
// smallest offending pair, so the error is the same at any rank count.
func checkSymmetric(c *collective.Comm, path string, h *metisHeader, p *metisPart) error {
	if ok, err := symmetricBySum(c, p); err != nil || ok {
		return err
	}
	send := make([][]metisArc, c.Size())
	for i := range p.src {
		u, v := p.src[i], p.dst[i]
		a := metisArc{A: min(u, v), B: max(u, v), Fwd: int32(boolTo[int](u < v))}
		if p.w != nil {
			a.W = p.w[i]
		}
		dst := int(graph.Mix64(uint64(a.A)*0x9e3779b97f4a7c15^uint64(a.B)) % uint64(c.Size()))
		send[dst] = append(send[dst], a)
	}
	got, err := collective.Exchange(c, send)
	if err != nil {
		return err
	}
	send = nil
	var arcs []metisArc
	for _, g := range got {
		arcs = append(arcs, g...)
	}
	got = nil
	slices.SortFunc(arcs, func(x, y metisArc) int {
		switch {
		case x.A != y.A:
			return cmpInt(x.A, y.A)
		case x.B != y.B:
			return cmpInt(x.B, y.B)
		case x.W != y.W:
			return cmpFloat(x.W, y.W)
		}
		return int(x.Fwd - y.Fwd)
	})
	// Within a pair, forward and backward entries must balance, and so must
	// they within each weight.
	badU, badV := int64(math.MaxInt64), int64(math.MaxInt64)
	weightMismatch := false
	for i := 0; i < len(arcs); {
		end := i
		for end < len(arcs) && arcs[end].A == arcs[i].A && arcs[end].B == arcs[i].B {
			end++
		}
		pairBal, wrongWeight := 0, false
		for k := i; k < end; {
			l, bal := k, 0
			for ; l < end && arcs[l].W == arcs[k].W; l++ {
				bal += 2*int(arcs[l].Fwd) - 1
			}
			pairBal += bal
			wrongWeight = wrongWeight || bal != 0
			k = l
		}
		if wrongWeight {
			u, v := arcs[i].A, arcs[i].B
			if pairBal < 0 {
				u, v = v, u
			}
			if u < badU || (u == badU && v < badV) {
				badU, badV, weightMismatch = u, v, pairBal == 0
			}
		}
		i = end
	}
	minU, err := collective.Min(c, badU)
	if err != nil {
		return err
	}
	if minU == math.MaxInt64 {
		return nil
	}
	if badU != minU {
		badV = math.MaxInt64
	}
	minV, err := collective.Min(c, badV)
	if err != nil {
		return err
	}
	wm, err := collective.Any(c, badU == minU && badV == minV && weightMismatch)
	if err != nil {
		return err
	}
	line, _ := metisVertexLine(path, h, minU)
	if wm {
		return lineErr(path, line, "the edge between vertices %d and %d has different weights in the two vertices' lists", minU+1, minV+1)
	}
	return lineErr(path, line, "vertex %d lists %d, but vertex %d does not list %d: the adjacency must be symmetric", minU+1, minV+1, minV+1, minU+1)
}

// metisVertexLine returns the line number of vertex v (0-based) by scanning
// the file: for error messages only.
func metisVertexLine(path string, h *metisHeader, v int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.NewSectionReader(f, h.end, 1<<62), 1<<20)
	line, k := h.line, int64(-1)
	for {
		b, err := br.ReadSlice('\n')
		// Only the line's first non-blank byte matters: is it a comment?
		head := strings.TrimSpace(string(b[:min(len(b), 64)]))
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		if len(b) == 0 && err != nil {
			return 0, err
		}
		line++
		if head == "" || head[0] != '%' {
			k++
		}
		if k == v {
			return line, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// redistributeRows moves the rows [first, first+rows) this rank holds to
// the owners the book gives them; every rank gets its own range, in order.
func redistributeRows(c *collective.Comm, t *graph.Tensor, first int64, book graph.Book) (*graph.Tensor, error) {
	rb := int64(t.RowBytes())
	send := make([][]byte, c.Size())
	for p := range c.Size() {
		lo, hi := book.Range(p)
		a, b := max(lo, first), min(hi, first+t.Rows())
		if a < b {
			send[p] = t.Data[(a-first)*rb : (b-first)*rb]
		}
	}
	got, err := collective.Exchange(c, send)
	if err != nil {
		return nil, err
	}
	lo, hi := book.Range(c.Rank())
	out := &graph.Tensor{DType: t.DType, Shape: append([]int64{hi - lo}, t.RowShape()...), Data: make([]byte, 0, (hi-lo)*rb)}
	for _, g := range got {
		out.Data = append(out.Data, g...)
	}
	if int64(len(out.Data)) != (hi-lo)*rb {
		return nil, errors.New("graphio: redistributing node rows lost rows")
	}
	return out, nil
}

// mix64 is splitmix64's finaliser: a bijective 64-bit hash.
// symmetricBySum is the quick test of symmetry: every arc u->v adds
// +H(min, max, weight) if u < v and -H(...) if u > v, modulo 2^64, with H a
// 64-bit hash. A symmetric adjacency sums to exactly 0; an asymmetric one
// sums to 0 with probability 2^-64. It costs one pass and one reduction;
// only a graph that fails it pays for the sort that names the bad edge.
func symmetricBySum(c *collective.Comm, p *metisPart) (bool, error) {
	var sum uint64
	for i := range p.src {
		u, v := p.src[i], p.dst[i]
		if u == v {
			continue // checkSelfLoops reports these
		}
		h := graph.Mix64(uint64(min(u, v))*0x9e3779b97f4a7c15 ^ graph.Mix64(uint64(max(u, v))))
		if p.w != nil {
			h = graph.Mix64(h ^ uint64(math.Float32bits(p.w[i])))
		}
		if u < v {
			sum += h
		} else {
			sum -= h
		}
	}
	// Sum the halves as int64, which cannot overflow, then recombine.
	halves, err := collective.Allreduce(c, []int64{int64(sum & 0xffffffff), int64(sum >> 32)}, rank.Sum)
	if err != nil {
		return false, err
	}
	total := uint64(halves[0]) + uint64(halves[1])<<32
	return total == 0, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
