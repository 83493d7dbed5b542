// Command serialpart compares the serial multilevel partitioner (package
// parmetis/serial) with METIS' gpmetis (k-way and recursive bisection) on
// the same graph files in the same run: cut and imbalance of both are
// recomputed here from the .part files, and the table reports medians over
// seeds.
//
//	go run ./bench/serialpart -graphs 4elt,finan512,rmat:18 -k 2,8,32,64 -seeds 3
//
// A graph is a METIS file path, a name in -dir (4elt stands for
// -dir/4elt.graph), or rmat:SCALE[:EDGEFACTOR] for a generated Graph500
// R-MAT graph (edge factor 16 by default), written as a METIS file to a
// temporary directory for gpmetis.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gnnrun/internal/proc"
	"gnnrun/parmetis/serial"
)

func main() {
	graphs := flag.String("graphs", "4elt,finan512,wing,bcsstk33,rmat:18", "comma-separated graphs: METIS file, name in -dir, or rmat:SCALE[:EF]")
	dir := flag.String("dir", "/work/shared/data/graphs", "directory of named graphs")
	ks := flag.String("k", "2,8,32,64", "comma-separated part counts")
	seeds := flag.Int("seeds", 3, "seeds per configuration (1..seeds)")
	gp := flag.String("gpmetis", "gpmetis", "gpmetis binary; empty to skip")
	out := flag.String("out", "bench/results/serialpart.md", "markdown report; empty for none")
	work := flag.String("work", "", "directory for graph copies and .part files, kept afterwards (default: a temporary one, removed)")
	flag.IntVar(&threads, "threads", 0, "Options.Threads for ours (0: GOMAXPROCS)")
	flag.Parse()
	if err := run(*graphs, *dir, *ks, *seeds, *gp, *out, *work); err != nil {
		fmt.Fprintln(os.Stderr, "serialpart:", err)
		os.Exit(1)
	}
}

func run(graphs, dir, ks string, seeds int, gp, out, work string) error {
	var kv []int
	for _, s := range strings.Split(ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return fmt.Errorf("bad -k entry %q", s)
		}
		kv = append(kv, k)
	}
	tmp := work
	if tmp == "" {
		var err error
		if tmp, err = os.MkdirTemp("", "serialpart"); err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
	} else if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	var rows []row
	for _, spec := range strings.Split(graphs, ",") {
		in, err := loadInput(strings.TrimSpace(spec), dir, tmp)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: %d vertices, %d edges\n", in.name, in.g.N(), len(in.g.Adjncy)/2)
		for _, k := range kv {
			r, err := compare(in, k, seeds, gp, tmp)
			if err != nil {
				return err
			}
			fmt.Fprintln(os.Stderr, r.line())
			rows = append(rows, r)
		}
	}
	report := render(rows, graphs, ks, seeds)
	fmt.Print(report)
	if out == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, []byte(report), 0o644)
}

// input is a graph in memory and as a METIS file gpmetis can write next to.
type input struct {
	name string
	path string // in the temp dir, so gpmetis' .part output lands there
	g    *serial.Graph
}

func loadInput(spec, dir, tmp string) (*input, error) {
	if rest, ok := strings.CutPrefix(spec, "rmat:"); ok {
		f := strings.Split(rest, ":")
		scale, err := strconv.Atoi(f[0])
		ef := 16
		if err == nil && len(f) > 1 {
			ef, err = strconv.Atoi(f[1])
		}
		if err != nil || scale < 1 || scale > 30 {
			return nil, fmt.Errorf("bad R-MAT spec %q (want rmat:SCALE[:EF])", spec)
		}
		name := fmt.Sprintf("rmat%d-ef%d", scale, ef)
		in := &input{name: name, path: filepath.Join(tmp, name+".graph"), g: rmat(scale, ef, 1)}
		return in, writeMetis(in.path, in.g)
	}
	src := spec
	if !strings.ContainsAny(spec, "/.") {
		src = filepath.Join(dir, spec+".graph")
	}
	g, err := readMetis(src)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(src), ".graph")
	in := &input{name: name, path: filepath.Join(tmp, name+".graph"), g: g}
	return in, copyFile(src, in.path)
}

func copyFile(src, dst string) error {
	r, err := os.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

var threads int

// result is one run of one tool: cut and imbalance recomputed here; secs is
// CPU time (gpmetis reports CPU time; ours is measured with getrusage, all
// goroutines included), wall our wall-clock time.
type result struct {
	cut  int64
	imb  float64
	secs float64
	wall float64
}

// row is one (graph, K) comparison over the seeds.
type row struct {
	graph        string
	n, m, k      int
	ours, kw, rb []result
	phases       string
}

func compare(in *input, k, seeds int, gp, tmp string) (row, error) {
	r := row{graph: in.name, n: in.g.N(), m: len(in.g.Adjncy) / 2, k: k}
	for s := 1; s <= seeds; s++ {
		res, phases, err := runOurs(in, k, s, tmp)
		if err != nil {
			return r, err
		}
		r.ours, r.phases = append(r.ours, res), phases
		if gp == "" {
			continue
		}
		for _, rb := range []bool{false, true} {
			res, err := runGpmetis(gp, in, k, s, rb)
			if err != nil {
				return r, err
			}
			if rb {
				r.rb = append(r.rb, res)
			} else {
				r.kw = append(r.kw, res)
			}
		}
	}
	return r, nil
}

func runOurs(in *input, k, seed int, tmp string) (result, string, error) {
	runtime.GC()
	c0, t0 := proc.CPU().Seconds(), time.Now()
	part, st, err := serial.PartitionStats(in.g, serial.Options{Parts: k, Seed: uint64(seed), Threads: threads})
	wall, secs := time.Since(t0).Seconds(), proc.CPU().Seconds()-c0
	if err != nil {
		return result{}, "", fmt.Errorf("%s k=%d seed %d: %v", in.name, k, seed, err)
	}
	path := filepath.Join(tmp, "ours.part")
	if err := writePart(path, part); err != nil {
		return result{}, "", err
	}
	res, err := measure(in, path, k)
	res.secs, res.wall = secs, wall
	return res, st.Timers.String(), err
}

// measure recomputes cut and imbalance from a .part file, without the
// serial package's metrics.
func measure(in *input, path string, k int) (result, error) {
	part, err := readPart(path, in.g.N())
	if err != nil {
		return result{}, err
	}
	g := in.g
	var cut int64
	w := make([]int64, k)
	for v := range g.N() {
		p := part[v]
		if p < 0 || int(p) >= k {
			return result{}, fmt.Errorf("%s: vertex %d in part %d", path, v, p)
		}
		w[p] += g.Vwgt[v]
		for e := g.Xadj[v]; e < g.Xadj[v+1]; e++ {
			if part[g.Adjncy[e]] != p {
				cut += int64(g.Adjwgt[e])
			}
		}
	}
	var tot int64
	for _, x := range g.Vwgt {
		tot += x
	}
	return result{cut: cut / 2, imb: float64(slices.Max(w)) * float64(k) / float64(tot)}, nil
}

func median(rs []result, f func(result) float64) float64 {
	if len(rs) == 0 {
		return 0
	}
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func maxImb(rs []result) float64 {
	m := 0.0
	for _, r := range rs {
		m = max(m, r.imb)
	}
	return m
}

func goMaxProcs() int { return runtime.GOMAXPROCS(0) }

func cutOf(r result) float64  { return float64(r.cut) }
func secsOf(r result) float64 { return r.secs }
func wallOf(r result) float64 { return r.wall }

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", a/b)
}

func (r row) line() string {
	return fmt.Sprintf("%s k=%d ours %.0f (cpu %.3fs wall %.3fs imb %.4f) kway %.0f (%.3fs imb %.4f) rb %.0f (%.3fs imb %.4f) [%s]",
		r.graph, r.k, median(r.ours, cutOf), median(r.ours, secsOf), median(r.ours, wallOf), maxImb(r.ours),
		median(r.kw, cutOf), median(r.kw, secsOf), maxImb(r.kw),
		median(r.rb, cutOf), median(r.rb, secsOf), maxImb(r.rb), r.phases)
}
