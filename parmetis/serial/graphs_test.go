package serial

import (
	"bufio"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// buildGraph makes a symmetric unit-weight Graph with one constraint from an
// undirected edge list, dropping self loops and duplicates.
func buildGraph(n int, edges [][2]int32) *Graph {
	adj := make([][]int32, n)
	for _, e := range edges {
		if e[0] == e[1] {
			continue
		}
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	g := &Graph{NCon: 1, Xadj: make([]int64, n+1), Vwgt: make([]int64, n)}
	for v := range n {
		slices.Sort(adj[v])
		adj[v] = slices.Compact(adj[v])
		g.Adjncy = append(g.Adjncy, adj[v]...)
		g.Xadj[v+1] = int64(len(g.Adjncy))
		g.Vwgt[v] = 1
	}
	g.Adjwgt = make([]int32, len(g.Adjncy))
	for i := range g.Adjwgt {
		g.Adjwgt[i] = 1
	}
	return g
}

// gridGraph returns the w x h grid graph.
func gridGraph(w, h int) *Graph {
	var edges [][2]int32
	id := func(x, y int) int32 { return int32(y*w + x) }
	for y := range h {
		for x := range w {
			if x+1 < w {
				edges = append(edges, [2]int32{id(x, y), id(x+1, y)})
			}
			if y+1 < h {
				edges = append(edges, [2]int32{id(x, y), id(x, y+1)})
			}
		}
	}
	return buildGraph(w*h, edges)
}

// plantedGraph returns k blocks of size vertices each, every block dense
// (each vertex linked to deg random others of its block), and `links`
// random edges between consecutive blocks; it also returns the block of
// every vertex. The vertices are shuffled so block membership is not
// visible in the numbering.
func plantedGraph(k, size, deg, links int, seed uint64) (*Graph, []int32, int64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := k * size
	label := make([]int32, n)
	for i := range label {
		label[i] = int32(i)
	}
	rng.Shuffle(n, func(i, j int) { label[i], label[j] = label[j], label[i] })
	block := make([]int32, n)
	var edges [][2]int32
	for b := range k {
		for i := range size {
			v := label[b*size+i]
			block[v] = int32(b)
			next := label[b*size+(i+1)%size] // a ring keeps the block connected
			edges = append(edges, [2]int32{v, next})
			for range deg {
				edges = append(edges, [2]int32{v, label[b*size+rng.IntN(size)]})
			}
		}
	}
	cut := map[[2]int32]bool{}
	for b := range k {
		for len(cut) < (b+1)*links {
			u := label[b*size+rng.IntN(size)]
			v := label[((b+1)%k)*size+rng.IntN(size)]
			if u > v {
				u, v = v, u
			}
			if !cut[[2]int32{u, v}] {
				cut[[2]int32{u, v}] = true
				edges = append(edges, [2]int32{u, v})
			}
		}
	}
	return buildGraph(n, edges), block, int64(len(cut))
}

// readMetis reads an unweighted METIS graph file, for tests only.
func readMetis(tb testing.TB, path string) *Graph {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var g *Graph
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "%") {
			continue
		}
		fs := strings.Fields(line)
		if g == nil {
			n, _ = strconv.Atoi(fs[0])
			g = &Graph{NCon: 1, Xadj: make([]int64, 1, n+1), Vwgt: make([]int64, n)}
			continue
		}
		for _, s := range fs {
			u, err := strconv.Atoi(s)
			if err != nil {
				tb.Fatalf("%s: vertex %d: %v", path, g.N()+1, err)
			}
			g.Adjncy = append(g.Adjncy, int32(u-1))
			g.Adjwgt = append(g.Adjwgt, 1)
		}
		g.Vwgt[g.N()] = 1
		g.Xadj = append(g.Xadj, int64(len(g.Adjncy)))
	}
	if g == nil || g.N() != n {
		tb.Fatalf("%s: bad METIS file", path)
	}
	return g
}

// rmatGraph returns a Graph500 R-MAT graph (a=0.57, b=c=0.19) of 2^scale
// vertices and ef*2^scale generated edges, labels scrambled, symmetrised,
// without self loops and duplicates.
func rmatGraph(scale, ef int, seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 0x524d4154))
	n := 1 << scale
	perm := rng.Perm(n)
	var edges [][2]int32
	for range ef * n {
		var u, v int
		for range scale {
			r := rng.Float64()
			u, v = u<<1, v<<1
			switch {
			case r < 0.57:
			case r < 0.76:
				v |= 1
			case r < 0.95:
				u |= 1
			default:
				u, v = u|1, v|1
			}
		}
		edges = append(edges, [2]int32{int32(perm[u]), int32(perm[v])})
	}
	return buildGraph(n, edges)
}
