package pack

import (
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"222:300:40", []int{222, 262}, ""},
		{"5:7", []int{5, 6, 7}, ""},
		{"9", []int{9}, ""},
		{"7:5", nil, "LO > HI"},
		{"0:5", nil, `"0" is not a positive integer`},
		{"1:2:3:4", nil, "want LO:HI:STEP"},
		{"a:5", nil, `"a" is not a positive integer`},
	} {
		r, err := ParseRange(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(r.Values(), tc.want) {
			t.Errorf("%q: got %v %v, want %v", tc.in, r.Values(), err, tc.want)
		}
	}
}

func TestSweep(t *testing.T) {
	h := mustReadCSV(t, "tu-MUTAG.csv")
	templates := []Point{{Algo: Ours, Effort: Quick}, {Algo: Reference, Heuristic: NodesOnly}}
	points := Grid([]int{28, 40}, []int{66, 90, 120}, 0, templates)
	if len(points) != 12 || points[11].Limits != (Limits{40, 120, 40}) {
		t.Fatalf("grid: %d points, last %v", len(points), points[len(points)-1])
	}
	one, err := Sweep(h, points, 1)
	if err != nil {
		t.Fatal(err)
	}
	many, err := Sweep(h, points, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range one {
		p := mustPack(t, h, points[i].Options()...)
		if one[i].Index != i || one[i].Point != points[i] || one[i].Efficiency != p.Efficiency() || one[i].Efficiency != many[i].Efficiency {
			t.Fatalf("point %d: %+v, 3 workers %+v, alone %+v", i, one[i], many[i], p.Efficiency())
		}
	}
	if _, err := Sweep(h, Grid([]int{20}, []int{66}, 5, templates), 2); err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Errorf("limits below the largest graph: %v", err)
	}
}

func TestParetoAndSmallest(t *testing.T) {
	r := func(i, n, e int, nodes, edges float64) Result {
		return Result{Index: i, Point: Point{Limits: Limits{n, e, 9}}, Efficiency: Efficiency{Nodes: nodes, Edges: edges}}
	}
	rs := []Result{
		r(0, 10, 20, 90, 80),
		r(1, 12, 20, 96, 95), // on the front, reaches 95
		r(2, 10, 30, 85, 97), // on the front
		r(3, 14, 22, 95, 96), // on the front, reaches 95, larger than 1 in both? no: edges 22 > 20
		r(4, 16, 24, 95, 95), // reaches 95 but 1 is smaller in both
		r(5, 20, 40, 99, 60), // on the front
	}
	var got []int
	for _, p := range Pareto(rs) {
		got = append(got, p.Index)
	}
	if want := []int{5, 1, 3, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("Pareto %v, want %v", got, want)
	}
	got = nil
	for _, s := range Smallest(rs, 95) {
		got = append(got, s.Index)
	}
	if want := []int{1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Smallest %v, want %v", got, want)
	}
}

func TestDefaultLimits(t *testing.T) {
	h, err := HistogramOf([]Tuple{{Nodes: 30, Edges: 4}, {Nodes: 5, Edges: 60}, {Nodes: 7, Edges: 0}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want Limits }{
		{Limits{}, Limits{30, 60, 30}},
		{Limits{Nodes: 100}, Limits{100, 60, 60}},
		{Limits{Edges: 200, Graphs: 7}, Limits{30, 200, 7}},
		{Limits{40, 50, 9}, Limits{40, 50, 9}},
	} {
		if got := DefaultLimits(h, tc.in); got != tc.want {
			t.Errorf("DefaultLimits(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	edgeless, err := HistogramOf([]Tuple{{Nodes: 3, Edges: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := DefaultLimits(edgeless, Limits{}); got != (Limits{3, 1, 1}) {
		t.Errorf("edgeless dataset: %v, want at least one edge per pack", got)
	}
}

func TestDefaultRanges(t *testing.T) {
	h, err := HistogramOf([]Tuple{{Nodes: 28, Edges: 66}, {Nodes: 3, Edges: 0}})
	if err != nil {
		t.Fatal(err)
	}
	nodes, edges := DefaultRanges(h)
	if nodes != (Range{28, 84, 2}) || edges != (Range{66, 198, 6}) {
		t.Fatalf("ranges %v %v", nodes, edges)
	}
	if v := DefaultRange(1).Values(); !reflect.DeepEqual(v, []int{1, 2, 3}) {
		t.Errorf("DefaultRange(1) = %v: the step must stay at least 1", v)
	}
	if n := len(DefaultRange(190).Values()); n != 20 {
		t.Errorf("DefaultRange(190) has %d values, want 20", n)
	}
}

func TestDealCoversEveryPointOnce(t *testing.T) {
	for _, size := range []int{1, 2, 3, 7, 20} {
		seen := make([]int, 17)
		for r := range size {
			last := -1
			for _, i := range Deal(len(seen), r, size) {
				if i <= last || i%size != r {
					t.Fatalf("size %d rank %d: index %d after %d", size, r, i, last)
				}
				seen[i]++
				last = i
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("size %d: point %d dealt %d times", size, i, n)
			}
		}
	}
}

func TestSweepShareCollect(t *testing.T) {
	h := mustReadCSV(t, "tu-MUTAG.csv")
	points := Grid([]int{28, 40, 52}, []int{66, 90}, 0, []Point{{Algo: Ours, Effort: Quick}, {Algo: Reference, Heuristic: Product}})
	whole, err := Sweep(h, points, 2)
	if err != nil {
		t.Fatal(err)
	}
	var all []Result
	for r := 2; r >= 0; r-- { // gathered out of rank order
		mine, err := SweepShare(h, points, r, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, mine...)
	}
	got, err := Collect(all, len(points))
	if err != nil {
		t.Fatal(err)
	}
	for i := range whole {
		if got[i].Index != i || got[i].Point != whole[i].Point || got[i].Efficiency != whole[i].Efficiency {
			t.Fatalf("point %d: shared %+v, whole %+v", i, got[i], whole[i])
		}
	}
	if _, err := Collect(all[1:], len(points)); err == nil || !strings.Contains(err.Error(), "gathered 11 results for 12 points") {
		t.Errorf("a missing result: %v", err)
	}
	dup := append(slices.Clone(all[1:]), all[2])
	if _, err := Collect(dup, len(points)); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Errorf("a repeated result: %v", err)
	}
}

// TestSweepWorkerPanicIsAnError fails, by crashing the test binary, if a
// worker's panic is not recovered: it must come back as the sweep's error,
// naming the point and carrying the worker's stack, with the other workers
// finished.
func TestSweepWorkerPanicIsAnError(t *testing.T) {
	h := mustReadCSV(t, "tu-MUTAG.csv")
	points := Grid([]int{28, 40}, []int{66, 90, 120}, 0, []Point{{Algo: Ours, Effort: Quick}})
	var done atomic.Int64
	one := func(h Histogram, pt Point) (Result, error) {
		if pt.Limits == points[3].Limits {
			var bins []Bin
			_ = bins[pt.Limits.Nodes] // index out of range
		}
		done.Add(1)
		return sweepOne(h, pt)
	}
	_, err := sweep(h, points, 3, one)
	if err == nil {
		t.Fatal("a panicking worker gave no error")
	}
	msg := err.Error()
	for _, want := range []string{"pack: sweep point " + points[3].String(), "panic: runtime error: index out of range", "sweep_test.go", "goroutine"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if n := done.Load(); n != int64(len(points))-1 {
		t.Errorf("%d points packed besides the panicking one, want %d", n, len(points)-1)
	}
}
