package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gnnrun/parteval"
)

// The partition tests judge an assignment by what parteval measures from
// the files partition wrote and the input graph, never by the cut and
// imbalance partition prints about itself: a constraint whose weights the
// partitioner got wrong (all zero, say) is "balanced" by its own count.

// imbalanceBound is partition's default --imbalance; the slack absorbs
// rounding in the partitioner's own float comparison.
const imbalanceBound = 1.03 + 1e-9

// evaluate measures the assignment asg of the graph in with parteval.
func evaluate(t *testing.T, in, asg string, opts ...parteval.Option) *parteval.Result {
	t.Helper()
	res, err := parteval.EvaluateFiles(in, asg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// imbalanceOf returns the measured imbalance of the named constraint.
func imbalanceOf(t *testing.T, res *parteval.Result, name string) float64 {
	t.Helper()
	b := res.Of(name)
	if b == nil {
		t.Fatalf("constraint %s was not measured", name)
	}
	return b.Imbalance
}

// checkBalanced fails unless every named constraint is within 1.03.
func checkBalanced(t *testing.T, what string, res *parteval.Result, names ...string) {
	t.Helper()
	for _, name := range names {
		if x := imbalanceOf(t, res, name); x > imbalanceBound {
			t.Errorf("%s: %s imbalance %.4f above 1.03 (measured: %v)", what, name, x, res.Of(name).Parts)
		}
	}
}

// partitionReport is what partition's --report says of its result.
type partitionReport struct {
	Cut         int64     `json:"cut"`
	Imbalance   []float64 `json:"imbalance"`
	Constraints []string  `json:"constraints"`
}

func readPartitionReport(t *testing.T, path string) partitionReport {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Results partitionReport `json:"results"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r.Results
}

// checkReport fails unless the cut and the imbalance of every constraint
// partition balanced, as its report says, are those the evaluator
// measured (same definitions, same files).
func checkReport(t *testing.T, what string, rep partitionReport, res *parteval.Result) {
	t.Helper()
	if rep.Cut != res.Cut {
		t.Errorf("%s: partition reports cut %d, the assignment has cut %d", what, rep.Cut, res.Cut)
	}
	if len(rep.Imbalance) != len(rep.Constraints) || len(rep.Constraints) == 0 {
		t.Fatalf("%s: report has imbalances %v for constraints %v", what, rep.Imbalance, rep.Constraints)
	}
	for i, name := range rep.Constraints {
		if got := imbalanceOf(t, res, name); math.Abs(rep.Imbalance[i]-got) > 1e-9 {
			t.Errorf("%s: partition reports %s imbalance %.6f, the assignment has %.6f", what, name, rep.Imbalance[i], got)
		}
	}
}

// partitionAndMeasure runs partition of in into out on np ranks (0:
// without mpirun) with --report and the extra args, measures the
// constraints in measure (which must include those balanced), and checks
// that the report agrees with the measure.
func partitionAndMeasure(t *testing.T, np int, in, out, measure string, args ...string) *parteval.Result {
	t.Helper()
	rep := out + "-report.json"
	mustRun(t, np, append([]string{"partition", "--in", in, "--out", out, "--report", rep}, args...)...)
	res := evaluate(t, in, out, parteval.Measure(measure))
	checkReport(t, out, readPartitionReport(t, rep), res)
	return res
}

// writeWeightedMesh writes a side x side grid as a METIS file with two
// vertex weights (1 + (x+y) mod 3, and 1 left of the middle, 3 right of
// it) and edge weights (1 + x mod 3 along rows, 2 along columns).
func writeWeightedMesh(t *testing.T, dir string, side int) string {
	t.Helper()
	id := func(x, y int) int { return y*side + x + 1 }
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d 011 2\n", side*side, 2*side*(side-1))
	for y := range side {
		for x := range side {
			w1 := 1
			if x >= side/2 {
				w1 = 3
			}
			fmt.Fprintf(&b, "%d %d", 1+(x+y)%3, w1)
			if x > 0 {
				fmt.Fprintf(&b, " %d %d", id(x-1, y), 1+(x-1)%3)
			}
			if x+1 < side {
				fmt.Fprintf(&b, " %d %d", id(x+1, y), 1+x%3)
			}
			if y > 0 {
				fmt.Fprintf(&b, " %d 2", id(x, y-1))
			}
			if y+1 < side {
				fmt.Fprintf(&b, " %d 2", id(x, y+1))
			}
			b.WriteByte('\n')
		}
	}
	path := filepath.Join(dir, "wmesh.graph")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPartitionConstraintsMeasured covers, measured from the files and
// compared with what partition reports, the inputs and constraints the
// other tests leave out: a METIS mesh with two vertex weights and edge
// weights (balanced on vwgt by default; its cut counts each edge once),
// uneven --tpwgts, and a two-type R-MAT balanced on node types, training
// nodes and in-degree by the multilevel partitioner, and measured on every
// constraint for the random baseline, whose imbalances partition computes
// with code of its own.
func TestPartitionConstraintsMeasured(t *testing.T) {
	dir := t.TempDir()
	mesh := writeWeightedMesh(t, dir, 40)
	vw := partitionAndMeasure(t, 2, mesh, filepath.Join(dir, "vwgt"), "vwgt", "--parts", "4")
	checkBalanced(t, "vwgt", vw, "vwgt[0]", "vwgt[1]")

	out := filepath.Join(dir, "tpwgts")
	mustRun(t, 2, "partition", "--in", mesh, "--out", out, "--report", out+"-report.json", "--parts", "4", "--balance", "nodes", "--tpwgts", "0.1,0.2,0.3,0.4")
	tp := evaluate(t, mesh, out, parteval.Measure("nodes"), parteval.Targets(0.1, 0.2, 0.3, 0.4))
	checkReport(t, out, readPartitionReport(t, out+"-report.json"), tp)
	checkBalanced(t, "tpwgts", tp, "nodes")

	g := genSmall(t, true)
	ml := partitionAndMeasure(t, 2, g, filepath.Join(dir, "hetero"), "ntypes,train,edges", "--parts", "2", "--balance", "ntypes,train,edges")
	checkBalanced(t, "hetero", ml, "ntype:user", "ntype:item", "train", "edges")
	all := "ntypes,train,val,test,edges"
	rnd := partitionAndMeasure(t, 2, g, filepath.Join(dir, "random"), all, "--parts", "3", "--algo", "random", "--balance", all)
	t.Logf("cuts: weighted mesh %d, two-type R-MAT %d (random baseline %d)", vw.Cut, ml.Cut, rnd.Cut)
}
