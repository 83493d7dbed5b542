package pack

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Point is one packing to try in a sweep: a shape and an algorithm.
type Point struct {
	Limits    Limits
	Algo      Algo
	Heuristic Heuristic // of the reference packer
	Order     Order     // of the reference packer
	Effort    Effort    // of our packer
}

// Options returns the options of Pack that pack at pt.
func (pt Point) Options() []Option {
	return []Option{WithLimits(pt.Limits), WithAlgo(pt.Algo), WithHeuristic(pt.Heuristic), WithOrder(pt.Order), WithEffort(pt.Effort)}
}

// String describes the point for messages.
func (pt Point) String() string {
	if pt.Algo == Reference {
		return fmt.Sprintf("%v (reference, %v)", pt.Limits, pt.Heuristic)
	}
	return fmt.Sprintf("%v (ours, %v)", pt.Limits, pt.Effort)
}

// Result is how one point of a sweep packs. It holds no pointers, so results
// computed on different ranks can be gathered as plain bytes.
type Result struct {
	Index int // of the point in the sweep
	Point
	Efficiency
	LowerBound int
	Elapsed    time.Duration
}

// Range is the integers Lo, Lo+Step, ... up to Hi inclusive.
type Range struct{ Lo, Hi, Step int }

// ParseRange parses "LO:HI:STEP", "LO:HI" (step 1) or "N" (one value); every
// number must be positive and LO <= HI.
func ParseRange(s string) (Range, error) {
	f := strings.Split(s, ":")
	if len(f) > 3 {
		return Range{}, fmt.Errorf("pack: range %q: want LO:HI:STEP", s)
	}
	v := []int{0, 0, 1}
	for i, x := range f {
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || n < 1 {
			return Range{}, fmt.Errorf("pack: range %q: %q is not a positive integer", s, x)
		}
		v[i] = n
	}
	if len(f) == 1 {
		v[1] = v[0]
	}
	if v[0] > v[1] {
		return Range{}, fmt.Errorf("pack: range %q: LO > HI", s)
	}
	return Range{v[0], v[1], v[2]}, nil
}

// Values returns the integers of the range.
func (r Range) Values() []int {
	var out []int
	for v := r.Lo; v <= r.Hi; v += r.Step {
		out = append(out, v)
	}
	return out
}

// Grid returns a point for every node limit, edge limit and template (the
// algorithm, heuristic and effort of the point; its limits are replaced), in
// that nesting order, with graphs per pack capped at cap, or with cap 0 at
// min(nodes, edges) as the published code's "max".
func Grid(nodes, edges []int, cap int, templates []Point) []Point {
	var out []Point
	for _, n := range nodes {
		for _, e := range edges {
			for _, t := range templates {
				t.Limits = Limits{Nodes: n, Edges: e, Graphs: cap}
				if cap == 0 {
					t.Limits.Graphs = min(n, e)
				}
				out = append(out, t)
			}
		}
	}
	return out
}

// DefaultRange returns the limits a sweep tries when none are given, for a
// dataset whose largest graph has m nodes (or edges): m to 3m in steps of
// max(1, 2m/19), about 20 values.
func DefaultRange(m int) Range { return Range{Lo: m, Hi: 3 * m, Step: max(1, 2*m/19)} }

// DefaultRanges returns DefaultRange of the largest graph's nodes and edges
// (at least 1 edge) in h.
func DefaultRanges(h Histogram) (nodes, edges Range) {
	return DefaultRange(h.MaxNodes()), DefaultRange(max(h.MaxEdges(), 1))
}

// SweepWorkers returns the goroutines Sweep runs for workers: workers, or
// one per core when it is 0 or less.
func SweepWorkers(workers int) int {
	if workers <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return workers
}

// Deal returns the indices of the points rank r of size ranks packs out of
// n: every size-th from r. The cost of a point grows with its limits, and
// dealt round-robin every rank gets small and large limits alike.
func Deal(n, r, size int) []int {
	var out []int
	for i := r; i < n; i += size {
		out = append(out, i)
	}
	return out
}

// SweepShare packs h at rank r's share of points (Deal) with workers
// goroutines and returns its results, Index set to the position in points.
// The ranks' results together are what Collect takes.
func SweepShare(h Histogram, points []Point, r, size, workers int) ([]Result, error) {
	index := Deal(len(points), r, size)
	mine := make([]Point, len(index))
	for k, i := range index {
		mine[k] = points[i]
	}
	out, err := Sweep(h, mine, workers)
	if err != nil {
		return nil, err
	}
	for k := range out {
		out[k].Index = index[k]
	}
	return out, nil
}

// Collect returns the results of a sweep of n points gathered from every
// rank, in the order of the points. It fails unless every point has
// exactly one result.
func Collect(all []Result, n int) ([]Result, error) {
	if len(all) != n {
		return nil, fmt.Errorf("pack: sweep gathered %d results for %d points", len(all), n)
	}
	out := make([]Result, n)
	seen := make([]bool, n)
	for _, r := range all {
		if r.Index < 0 || r.Index >= n || seen[r.Index] {
			return nil, fmt.Errorf("pack: sweep result for point %d of %d is out of range or repeated", r.Index, n)
		}
		out[r.Index], seen[r.Index] = r, true
	}
	return out, nil
}

// Sweep packs h at every point with workers goroutines (0: one per core)
// and returns the results in the order of points, Index set to the position
// in points. It fails on the first point that cannot be packed (limits below
// the largest graph). A panic in a worker becomes its point's error, with
// the worker's stack, so the caller's failure path (naming the rank and
// aborting the job) handles it like any other error.
func Sweep(h Histogram, points []Point, workers int) ([]Result, error) {
	return sweep(h, points, workers, sweepOne)
}

// sweep is Sweep with the packing of one point given, so a test can make
// a worker panic.
func sweep(h Histogram, points []Point, workers int, one func(Histogram, Point) (Result, error)) ([]Result, error) {
	workers = SweepWorkers(workers)
	out := make([]Result, len(points))
	errs := make([]error, len(points))
	var wg sync.WaitGroup
	for w := range min(workers, len(points)) {
		wg.Go(func() {
			i := w
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				}
			}()
			for ; i < len(points); i += workers {
				out[i], errs[i] = one(h, points[i])
				out[i].Index = i
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("pack: sweep point %v: %s", points[i], trimPrefix(err))
		}
	}
	return out, nil
}

func sweepOne(h Histogram, pt Point) (Result, error) {
	start := time.Now()
	p, err := Pack(h, pt.Options()...)
	if err != nil {
		return Result{}, err
	}
	return Result{Point: pt, Efficiency: p.Efficiency(), LowerBound: LowerBound(h, pt.Limits), Elapsed: time.Since(start)}, nil
}

// Pareto returns the results no other result beats in both true node and
// true edge efficiency, by decreasing node efficiency.
func Pareto(rs []Result) []Result {
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b Result) int {
		if a.Nodes != b.Nodes {
			return cmpDesc(a.Nodes, b.Nodes)
		}
		return cmpDesc(a.Edges, b.Edges)
	})
	var out []Result
	for _, r := range sorted {
		if len(out) == 0 || r.Edges > out[len(out)-1].Edges {
			out = append(out, r)
		}
	}
	return out
}

// Smallest returns the results whose true node and edge efficiencies both
// reach target (in percent) and whose limits are minimal among those: no
// other such result has node and edge limits both at most theirs. They are
// sorted by node limit.
func Smallest(rs []Result, target float64) []Result {
	var ok []Result
	for _, r := range rs {
		if r.Nodes >= target && r.Edges >= target {
			ok = append(ok, r)
		}
	}
	var out []Result
	for _, r := range ok {
		if !slices.ContainsFunc(ok, func(o Result) bool { return dominatesLimits(o.Limits, r.Limits) }) {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Result) int { return a.Limits.Nodes - b.Limits.Nodes })
	return out
}

// dominatesLimits reports whether a is no larger than b in nodes and edges
// and smaller in one.
func dominatesLimits(a, b Limits) bool {
	return a.Nodes <= b.Nodes && a.Edges <= b.Edges && (a.Nodes < b.Nodes || a.Edges < b.Edges)
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
