package main

import (
	"fmt"
	"image/color"
	"os"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// render writes the results as a markdown table and an SVG plot of the
// sampled edges/s per rank against the limit.
func render(out string, results []result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Neighbour sampling (bench/sample)\n\n")
	fmt.Fprintf(&b, "R-MAT (`gnnrun gen`, edge factor 16; seeds: its training nodes) and the largest real graph of the shared data (SNAP's soc-Slashdot0902, 82,168 nodes, 948,464 arcs as listed; seeds: every node) in K = 4 partitions (`gnnrun partition --balance %s`), fanouts 15,10,5, batches of 1024 seeds (node task) or 1024 positive edges with 4 uniform negatives each and their reverse edges excluded (link task), %d timed batches per rank after 2 untimed ones, in each of %s of every configuration (every configuration of a graph once a round: a slower spell of the machine falls on all of them alike); a row is its median run, by edges/s per rank, and *range* the lowest and highest edges/s per rank of its runs, *of 1 rank* and *of its cores* compare runs of the same round, seconds apart, and give the median over the rounds; *sampler / limit* and *sampler / it* are the medians over the runs of each run's ratio; *limit reads/s* is the median run's. *limit*: a plain loop reading, for the same local destination nodes, their indptr entries and as many random entries of their indices ranges as were drawn, turn by turn with the timed batches: each round of %d batches' nodes read after the next round's batches (so a slower spell of the machine weighs on both rates alike, and the caches hold neither round for the other); *limit with edge IDs*: the same loop also reading the edge_ids entry at each position, which a sampler that returns edge IDs must read too. *alltoall* and *rma* rows sample every other rank's nodes through that transport; *alltoall, host graph* rows sample the partitions of the host's other ranks as the rank's own (gnnrun's default, `--host-graph`; these ranks share one host, so nothing is remote), their limit loop reading those partitions too. Rates per rank are means over ranks; µs per node are summed seconds over summed nodes; *of 1 rank* is the rate per rank over the one-rank rate of the same graph and task on core 0 (where mpirun binds a lone rank); the one-rank run is repeated on each core the other runs use, and *of its cores* is a run's rate summed over its ranks over the sum of the one-rank rates on the cores its ranks run on (rank r on core r; 4 ranks share 2 cores): the same figure where the cores are alike, and the fair one where they are not (a VM's vCPUs can differ in speed, as the one-rank rows of each core show).\n\n", balanceOf(results), results[0].Batches, runsOf(results), limitRound)
	b.WriteString("| graph | task | ranks | transport | edges/s per rank | range | of 1 rank | of its cores | limit reads/s per rank | sampler / limit | limit with edge IDs | sampler / it | remote share | µs per local node | µs per remote node | batches/s per rank | exchanged MB per batch per rank |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	one := map[string]map[int]result{}
	for _, r := range results {
		if r.Ranks == 1 {
			if one[r.series()] == nil {
				one[r.series()] = map[int]result{}
			}
			one[r.series()][r.Core] = r
		}
	}
	for _, r := range results {
		var bytes int64
		for _, x := range r.Bytes {
			bytes += x
		}
		ofCores := "–"
		if f := r.ofCores(one); f > 0 {
			ofCores = fmt.Sprintf("%.2f", f)
		}
		fmt.Fprintf(&b, "| %s | %s | %d%s | %s | %.3g | %s | %.2f | %s | %.3g | %.2f | %.3g | %.2f | %.1f%% | %.2f | %.2f | %.2f | %.2f |\n", r.graphName(), r.task(), r.Ranks, r.onCore(), r.way(),
			r.edgesPerRank(), r.rateRange(), r.ofOne(one), ofCores, r.limitPerRank(), r.ofLimit(r.Limits, r.limitPerRank()), r.limitEIDPerRank(), r.ofLimit(r.LimitsEID, r.limitEIDPerRank()), 100*r.remoteShare(),
			perNode(r.LocalSecs, r.LocalNodes), perNode(r.RemoteSecs, r.RemoteNodes), r.batchesPerRank(), float64(bytes)/1e6/float64(r.Ranks*r.Batches))
	}
	if err := os.WriteFile(out+".md", []byte(b.String()), 0o644); err != nil {
		return err
	}
	return plotRates(out+".svg", results)
}

// rateRange gives the lowest and highest edges/s per rank of the
// result's runs ("–" for a result of one run).
func (r result) rateRange() string {
	if len(r.Rates) < 2 {
		return "–"
	}
	return fmt.Sprintf("%.3g–%.3g", slices.Min(r.Rates), slices.Max(r.Rates))
}

// ofLimit returns the median over the result's runs of each one's
// edges/s per rank over its limit loop's reads/s (limits, as many as the
// runs), or the median run's rate over limit where they were not
// recorded.
func (r result) ofLimit(limits []float64, limit float64) float64 {
	if len(limits) == 0 || len(limits) != len(r.Rates) {
		return r.edgesPerRank() / limit
	}
	ratios := make([]float64, len(limits))
	for i, l := range limits {
		ratios[i] = r.Rates[i] / l
	}
	return medianOf(ratios)
}

// medianOf returns the median of x (the lower of the two middle values
// of an even count); x is sorted in place.
func medianOf(x []float64) float64 {
	slices.Sort(x)
	return x[(len(x)-1)/2]
}

// runsOf says how many runs of each configuration the results hold: "one
// run", "3 runs", or a range where they differ.
func runsOf(results []result) string {
	lo, hi := len(results[0].Rates), len(results[0].Rates)
	for _, r := range results {
		lo, hi = min(lo, len(r.Rates)), max(hi, len(r.Rates))
	}
	lo, hi = max(lo, 1), max(hi, 1)
	switch {
	case lo != hi:
		return fmt.Sprintf("%d to %d runs", lo, hi)
	case lo == 1:
		return "one run"
	}
	return fmt.Sprintf("%d runs", lo)
}

// way names how the result's remote nodes were sampled: the transport,
// and whether the host's partitions were sampled as the rank's own.
func (r result) way() string {
	if r.HostGraph {
		return r.Transport + ", host graph"
	}
	return r.Transport
}

// graphName names the result's graph.
func (r result) graphName() string {
	if r.Graph != "" {
		return r.Graph
	}
	return fmt.Sprintf("R-MAT %d", r.Scale)
}

// task is the result's task (runs before the field was recorded are node
// tasks).
func (r result) task() string {
	if r.Task == "" {
		return "node"
	}
	return r.Task
}

// onCore names the core of a one-rank run ("" for other runs).
func (r result) onCore() string {
	if r.Ranks != 1 {
		return ""
	}
	return fmt.Sprintf(" (core %d)", r.Core)
}

// ofCores returns the run's edges/s over all its ranks over the sum of
// the one-rank rates (one, per series and core) on the cores its ranks
// run on, or 0 where one of them was not measured (or the run is older
// than the record of the cores): with cores of equal speed, the rate per
// rank over the one-rank rate. Where each was measured in the same rounds,
// it is the median over the rounds of each round's figure, the runs
// compared seconds apart.
func (r result) ofCores(one map[string]map[int]result) float64 {
	if r.Cores == 0 {
		return 0 // a run from before the cores were recorded
	}
	var refs []result
	for c := range min(r.Ranks, r.Cores) {
		ref, ok := one[r.series()][c]
		if !ok {
			return 0
		}
		refs = append(refs, ref)
	}
	return r.against(refs, float64(r.Ranks))
}

// ofOne returns the run's edges/s per rank over the one-rank rate on core
// 0 (0 where that was not measured), by rounds as ofCores.
func (r result) ofOne(one map[string]map[int]result) float64 {
	ref, ok := one[r.series()][0]
	if !ok {
		return 0
	}
	return r.against([]result{ref}, 1)
}

// against returns the median over rounds of weight times r's rate over
// the sum of refs' rates in the same round; or, where one of them was not
// run in as many rounds, the same of their median runs.
func (r result) against(refs []result, weight float64) float64 {
	rounds := len(r.Rates)
	for _, ref := range refs {
		if len(ref.Rates) != rounds {
			rounds = 0
		}
	}
	if rounds == 0 {
		var sum float64
		for _, ref := range refs {
			sum += ref.edgesPerRank()
		}
		return weight * r.edgesPerRank() / sum
	}
	ratios := make([]float64, rounds)
	for i := range ratios {
		var sum float64
		for _, ref := range refs {
			sum += ref.Rates[i]
		}
		ratios[i] = weight * r.Rates[i] / sum
	}
	return medianOf(ratios)
}

// series names the result's graph and task.
func (r result) series() string { return r.graphName() + ", " + r.task() }

// balanceOf returns the partitions' balance constraints of the results
// (runs before the field was recorded balanced on nodes and training
// nodes).
func balanceOf(results []result) string {
	if b := results[0].Balance; b != "" {
		return b
	}
	return "nodes,train"
}

// plotRates draws edges/s per rank against ranks, one line per scale and
// transport, and each scale's limit at one rank as a dashed line.
func plotRates(path string, results []result) error {
	p := plot.New()
	p.Title.Text = "Neighbour sampling, fanouts 15,10,5, batch 1024, K = 4 (node task)"
	p.X.Label.Text = "ranks (2 cores: 4 ranks share them)"
	p.Y.Label.Text = "sampled edges/s per rank (millions, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Left = true
	p.Legend.Top = false
	p.Legend.YOffs = vg.Points(10)
	series := map[string]plotter.XYs{}
	limits := map[string]float64{}
	var graphs []string
	for _, r := range results {
		if r.task() != "node" || (r.Ranks == 1 && r.Core != 0) {
			continue // the table has them (link tasks, the other cores); the plot stays readable
		}
		key := r.graphName() + ", " + r.way()
		series[key] = append(series[key], plotter.XY{X: float64(r.Ranks), Y: r.edgesPerRank() / 1e6})
		if r.Ranks == 1 {
			limits[r.graphName()] = r.limitPerRank() / 1e6
			graphs = append(graphs, r.graphName())
			// One rank has nothing remote: both transports start there.
			other := r.graphName() + ", rma"
			series[other] = append(series[other], plotter.XY{X: 1, Y: r.edgesPerRank() / 1e6})
		}
	}
	keys := make([]string, 0, len(series))
	for k := range series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	colors := []color.Color{color.RGBA{0, 90, 181, 255}, color.RGBA{220, 50, 32, 255}, color.RGBA{0, 140, 70, 255}, color.RGBA{150, 80, 180, 255}, color.RGBA{230, 140, 0, 255}, color.RGBA{0, 160, 170, 255}}
	maxX := 1.0
	for i, k := range keys {
		xy := series[k]
		sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
		maxX = max(maxX, xy[len(xy)-1].X)
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color, pts.Color = colors[i%len(colors)], colors[i%len(colors)]
		if strings.HasSuffix(k, "rma") {
			pts.Shape = draw.BoxGlyph{}
		}
		p.Add(l, pts)
		p.Legend.Add(k, l, pts)
	}
	sort.Strings(graphs)
	for i, g := range graphs {
		l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: limits[g]}, {X: maxX, Y: limits[g]}})
		if err != nil {
			return err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Color = color.Gray{Y: uint8(60 + 60*i)}
		p.Add(l)
		p.Legend.Add(g+" limit: random reads, 1 rank", l)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}
