package pack

import (
	"reflect"
	"strings"
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
