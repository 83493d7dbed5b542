package main

import (
	"fmt"
	"strings"
	"time"
)

// render writes the comparison as markdown: one summary row per graph and K
// (medians over seeds; imbalance is the worst over seeds), then the raw cuts.
func render(rows []row, graphs, ks string, seeds int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Serial partitioner vs gpmetis\n\n")
	fmt.Fprintf(&b, "Command: `go run ./bench/serialpart -graphs %s -k %s -seeds %d`", graphs, ks, seeds)
	if threads != 0 {
		fmt.Fprintf(&b, " `-threads %d`", threads)
	}
	fmt.Fprintf(&b, " (%s, GOMAXPROCS %d).\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), goMaxProcs())
	b.WriteString("Cut and imbalance are recomputed here from the .part files of both tools. Cut, CPU time and wall time are medians over seeds ")
	fmt.Fprintf(&b, "1..%d; imbalance is the worst seed (max part weight / average). ", seeds)
	b.WriteString("Times exclude file I/O: gpmetis' own \"Partitioning\" time (CPU time), ours the CPU time of the serial.PartitionStats call (all goroutines; getrusage) and its wall time. ")
	b.WriteString("gpmetis runs with default options (k-way: ufactor 30 = 1.03; rb: ufactor 1 per bisection). The machine is shared, so times carry noise.\n\n")
	b.WriteString("| graph | n | m | K | ours cut | kway cut | ours/kway | rb cut | ours/rb | imb ours | imb kway | imb rb | ours cpu (s) | ours wall (s) | kway (s) | rb (s) | ours cpu/kway |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		oc, kc, rc := median(r.ours, cutOf), median(r.kw, cutOf), median(r.rb, cutOf)
		ot, kt, rt := median(r.ours, secsOf), median(r.kw, secsOf), median(r.rb, secsOf)
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.0f | %.0f | %s | %.0f | %s | %.4f | %.4f | %.4f | %.3f | %.3f | %.3f | %.3f | %s |\n",
			r.graph, r.n, r.m, r.k, oc, kc, ratio(oc, kc), rc, ratio(oc, rc),
			maxImb(r.ours), maxImb(r.kw), maxImb(r.rb), ot, median(r.ours, wallOf), kt, rt, ratio(ot, kt))
	}
	b.WriteString("\n## Raw cuts per seed (ours / kway / rb) and our phase times (last seed, summed over goroutines)\n\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "- %s K=%d: %s / %s / %s — %s\n", r.graph, r.k, cuts(r.ours), cuts(r.kw), cuts(r.rb), r.phases)
	}
	return b.String()
}

func cuts(rs []result) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r.cut)
	}
	return strings.Join(s, ",")
}
