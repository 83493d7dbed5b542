package serial

// workspace holds buffers reused across levels and bisections, so the hot
// loops allocate only the graphs they build.
type workspace struct {
	perm, match, tperm []int32
	htable             []int32
	id, ed             []int64
	bndPtr, bndInd     []int32
	qnum, rename       []int32
	hsmall             []int32
	heads              []int32 // a vertex's coarse neighbours (contract)
	moved, swaps       []int32
	mark               []int32
	queues             []gainQueue
	conn               []int64
	wgts               []int32 // a vertex's edge weights (sparsify)
	touched            []int32
	status             []int8
	arena              arena
}

// grow32 returns (*b)[:n], reallocating when the capacity is short. The
// contents are not cleared.
func grow32(b *[]int32, n int) []int32 {
	if cap(*b) < n {
		*b = make([]int32, n, n+n/8)
	}
	return (*b)[:n]
}

func grow64(b *[]int64, n int) []int64 {
	if cap(*b) < n {
		*b = make([]int64, n, n+n/8)
	}
	return (*b)[:n]
}

func grow8(b *[]int8, n int) []int8 {
	if cap(*b) < n {
		*b = make([]int8, n, n+n/8)
	}
	return (*b)[:n]
}

// fill32 sets every element of b to x.
func fill32(b []int32, x int32) {
	for i := range b {
		b[i] = x
	}
}

// gainQueuesFor returns k empty queues able to hold vertices 0..n-1.
func (w *workspace) gainQueuesFor(k, n int) []gainQueue {
	for len(w.queues) < k {
		w.queues = append(w.queues, gainQueue{})
	}
	qs := w.queues[:k]
	for i := range qs {
		qs[i].reset(n)
	}
	return qs
}

// arena recycles the large arrays of the graphs the partitioner builds and
// drops again (coarse levels, subgraphs of a bisection, coarse maps), so a
// recursive bisection allocates about as much as its largest hierarchy
// instead of the sum of all of them, and the garbage collector has little
// to do. Slices come back with arbitrary contents.
type arena struct {
	i32 [][]int32
	i64 [][]int64
}

func (a *arena) get32(n int) []int32 {
	best := -1
	for i, s := range a.i32 {
		if cap(s) >= n && (best < 0 || cap(s) < cap(a.i32[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]int32, n)
	}
	s := a.i32[best]
	a.i32[best] = a.i32[len(a.i32)-1]
	a.i32 = a.i32[:len(a.i32)-1]
	return s[:n]
}

func (a *arena) get64(n int) []int64 {
	best := -1
	for i, s := range a.i64 {
		if cap(s) >= n && (best < 0 || cap(s) < cap(a.i64[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]int64, n)
	}
	s := a.i64[best]
	a.i64[best] = a.i64[len(a.i64)-1]
	a.i64 = a.i64[:len(a.i64)-1]
	return s[:n]
}

func (a *arena) put32(s []int32) {
	if cap(s) > 0 {
		a.i32 = append(a.i32, s[:0])
	}
}

func (a *arena) put64(s []int64) {
	if cap(s) > 0 {
		a.i64 = append(a.i64, s[:0])
	}
}

// newGraph returns a graph of n vertices with room for m adjacency entries
// from the arena; Xadj[0] and the vertex weights are zero, the rest is not
// cleared.
func (a *arena) newGraph(n int, m int64, ncon int) *Graph {
	g := &Graph{NCon: ncon, Xadj: a.get64(n + 1), Adjncy: a.get32(int(m)), Adjwgt: a.get32(int(m)), Vwgt: a.get64(n * ncon)}
	g.Xadj[0] = 0
	clear(g.Vwgt)
	return g
}

// freeGraph gives g's arrays back; g must be one the partitioner built.
func (a *arena) freeGraph(g *Graph) {
	if g == nil {
		return
	}
	a.put64(g.Xadj)
	a.put32(g.Adjncy)
	a.put32(g.Adjwgt)
	a.put64(g.Vwgt)
}
