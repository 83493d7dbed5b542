package main

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"gnnrun/parteval"
)

// The partition tests judge an assignment by what parteval measures from
// the files partition wrote and the input graph, never by the cut and
// imbalance partition prints about itself: a constraint whose weights the
// partitioner got wrong (all zero, say) is "balanced" by its own count.

// bound is partition's default --imbalance; the slack absorbs rounding in
// the partitioner's own float comparison.
const bound = 1.03 + 1e-9

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

// checkBalanced fails unless every named constraint is within bound.
func checkBalanced(t *testing.T, what string, res *parteval.Result, names ...string) {
	t.Helper()
	for _, name := range names {
		if x := imbalanceOf(t, res, name); x > bound {
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
