package main

import (
	"fmt"
	"strconv"
	"strings"

	"gnnrun/graphio"
	"gnnrun/parmetis"
	"gnnrun/report"
)

// partitionGraph runs the chosen algorithm, flat or hierarchical.
func partitionGraph(dg *parmetis.DistGraph, do parmetis.Options, f partitionArgs) (*parmetis.Result, error) {
	o := do.Options
	if f.hierarchy == "" {
		return parmetis.Partition(dg, do)
	}
	a, b, err := parseHierarchy(f.hierarchy, o.Parts)
	if err != nil {
		return nil, err
	}
	return parmetis.PartitionHierarchical(dg, do, a, b)
}

// parseHierarchy parses "AxB" and checks A*B = K.
func parseHierarchy(s string, k int) (int, int, error) {
	x, y, ok := strings.Cut(strings.ToLower(s), "x")
	a, err1 := strconv.Atoi(x)
	b, err2 := strconv.Atoi(y)
	if !ok || err1 != nil || err2 != nil || a < 1 || b < 1 {
		return 0, 0, fmt.Errorf("--hierarchy %q: want AxB, e.g. 4x8 for 4 machines of 8 GPUs", s)
	}
	if a*b != k {
		return 0, 0, fmt.Errorf("--hierarchy %s gives %d parts, --parts is %d", s, a*b, k)
	}
	return a, b, nil
}

func printPartitionSummary(e *env, g *graphio.Graph, bst parmetis.BuildStats, res *parmetis.Result, names []string, o parmetis.Options, files []string) {
	m := &g.Meta
	e.printf("partition: %s: %s nodes, %s edges into %d parts on %d ranks (%s, seed %d)\n",
		g.Path, report.Count(m.TotalNodes()), report.Count(m.TotalEdges()), o.Parts, e.comm.Size(), partitionFlags.algo, o.Seed)
	if bst.SelfLoops+bst.Parallel+bst.ZeroWeights > 0 {
		e.printf("  graph: ignored %s self loops and %s zero-weight edges, merged %s parallel arcs\n", report.Count(bst.SelfLoops), report.Count(bst.ZeroWeights), report.Count(bst.Parallel))
	}
	for l, st := range res.Levels {
		e.printf("  level %d: %s vertices, %s arcs; cut %s projected, %s refined, %s balanced\n",
			l, report.Count(st.Vertices), report.Count(st.Arcs), report.Count(st.ProjectedCut), report.Count(st.RefinedCut), report.Count(st.BalancedCut))
	}
	var imb []string
	for k, x := range res.Imbalance {
		imb = append(imb, fmt.Sprintf("%s %.4f", names[k], x))
	}
	e.printf("  cut %s; imbalance %s (bound %v)\n", report.Count(res.Cut), strings.Join(imb, ", "), o.Imbalance)
	e.printf("  wrote %s\n", strings.Join(files, ", "))
	e.rec.Set("cut", res.Cut)
	e.rec.Set("imbalance", res.Imbalance)
	e.rec.Set("constraints", names)
	e.rec.Set("levels", res.Levels)
	e.rec.Set("phase_seconds", res.Seconds)
}
