package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gnnrun/atomicfile"
	"gnnrun/collective"
	"gnnrun/graphio"
	"gnnrun/rank"
)

// graph is what the bench needs to judge a partition: the arcs of the
// symmetric graph, both directions.
type graph struct {
	n        int64
	src, dst []int64
}

// load reads a METIS file with graphio on a world of one.
func load(path string) (*graph, error) {
	var g *graph
	err := rank.RunLocal(1, func(rc rank.Comm) error {
		r, err := graphio.Read(collective.MustNew(rc), path, graphio.SkipData(true))
		if err != nil {
			return err
		}
		g = &graph{n: r.Meta.TotalNodes(), src: r.Edges.Src, dst: r.Edges.Dst}
		return nil
	}, rank.Timeout(time.Hour))
	return g, err
}

// quality returns the cut and the node imbalance of a partition read from a
// .part file, computed here, independently of both tools.
func (g *graph) quality(partFile string, k int) (cut int64, imb float64, err error) {
	f, err := os.Open(partFile)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	part := make([]int32, 0, g.n)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p, err := strconv.Atoi(sc.Text())
		if err != nil || p < 0 || p >= k {
			return 0, 0, fmt.Errorf("%s:%d: bad part %q", partFile, len(part)+1, sc.Text())
		}
		part = append(part, int32(p))
	}
	if int64(len(part)) != g.n {
		return 0, 0, fmt.Errorf("%s: %d lines for %d nodes", partFile, len(part), g.n)
	}
	for i := range g.src {
		if part[g.src[i]] != part[g.dst[i]] {
			cut++
		}
	}
	size := make([]int64, k)
	for _, p := range part {
		size[p]++
	}
	return cut / 2, float64(slices.Max(size)) / (float64(g.n) / float64(k)), sc.Err()
}

// rmat generates the R-MAT graph of the given scale (edge factor 16) with
// gnnrun gen and writes it as a METIS file: symmetrised, without self loops
// or duplicate edges, as the gpmetis measurements were made. With
// planted, 8 classes are planted as communities (gen --planted 0.7
// --classes 8): the graphs whose coarsening finds the communities.
func (b *bench) rmat(scale int, planted bool) (string, error) {
	name := fmt.Sprintf("rmat%d", scale)
	args := []string{"gen", "--scale", strconv.Itoa(scale), "--edge-factor", "16", "--seed", "1"}
	if planted {
		name += "p"
		args = append(args, "--planted", "0.7", "--classes", "8")
	}
	dir := filepath.Join(b.tmp, name)
	out := dir + ".graph"
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	gen := exec.Command(b.bin, append(args, "--out", dir)...)
	gen.Stderr = os.Stderr
	if err := gen.Run(); err != nil {
		return "", fmt.Errorf("gnnrun gen: %w", err)
	}
	err := rank.RunLocal(1, func(rc rank.Comm) error {
		r, err := graphio.Read(collective.MustNew(rc), dir, graphio.SkipData(true),
			graphio.DropSelfLoops(true), graphio.Undirected(true), graphio.Dedup(true))
		if err != nil {
			return err
		}
		return writeMetis(out, r.Meta.TotalNodes(), r.Edges.Src, r.Edges.Dst)
	}, rank.Timeout(time.Hour)) // scale 22: minutes
	return out, err
}

// writeMetis writes symmetric arcs as a METIS graph file.
func writeMetis(path string, n int64, src, dst []int64) error {
	order := make([]int, len(src))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if src[a] != src[b] {
			return int(src[a] - src[b])
		}
		return int(dst[a] - dst[b])
	})
	return atomicfile.WriteFunc(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w) // w itself: WriteFunc buffers 1 MiB
		fmt.Fprintf(bw, "%d %d\n", n, len(src)/2)
		next := 0
		for v := range n {
			first := true
			for ; next < len(order) && src[order[next]] == v; next++ {
				if !first {
					bw.WriteByte(' ')
				}
				bw.WriteString(strconv.FormatInt(dst[order[next]]+1, 10))
				first = false
			}
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
}
