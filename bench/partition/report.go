package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// row is one (graph, K, rank count) of the comparison.
type row struct {
	graph      string
	k, np      int
	ours       result // median cut and time over seeds; worst imbalance; largest RSS
	kway, rb   result // gpmetis, medians over the same seeds
	random     int64
	seedsCount int
	// wallRatios is ours/gpmetis k-way in process wall time, one per run
	// of ours, each against the gpmetis run just before it.
	wallRatios []float64
}

// wallRatio returns the median of r's wall-time ratios and their range.
func (r row) wallRatio() (med, lo, hi float64) {
	xs := slices.Sorted(slices.Values(r.wallRatios))
	if len(xs) == 0 {
		return 0, 0, 0
	}
	return xs[len(xs)/2], xs[0], xs[len(xs)-1]
}

// median summarises runs: median cut and times, worst imbalance, largest RSS.
func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	m := result{
		cut:  int64(pick(func(r result) float64 { return float64(r.cut) })),
		wall: pick(func(r result) float64 { return r.wall }),
		algo: pick(func(r result) float64 { return r.algo }),
	}
	for _, r := range rs {
		m.imb = max(m.imb, r.imb)
		m.peakRSS = max(m.peakRSS, r.peakRSS)
	}
	return m
}

func (b *bench) run(names []string, seeds, rounds int, out string) error {
	var rows []row
	for _, name := range names {
		file, err := b.graphFile(name)
		if err != nil {
			return err
		}
		g, err := load(file)
		if err != nil {
			return err
		}
		ns := seeds
		if strings.HasPrefix(name, "rmat") {
			ns = 1
		}
		for _, k := range b.ks {
			rs, err := b.compare(name, g, file, k, ns, rounds)
			if err != nil {
				return err
			}
			rows = append(rows, rs...)
		}
	}
	return write(out, rows, seeds, rounds)
}

// compare runs gpmetis and ours at every rank count for one K: per seed,
// rounds times over, gpmetis k-way and then ours at each rank count, so
// a machine whose speed drifts (this VM's does, by up to 1.3x between
// runs minutes apart) slows both alike, and each run of ours is timed
// against the gpmetis run just before it.
func (b *bench) compare(name string, g *graph, file string, k, seeds, rounds int) ([]row, error) {
	var kw, rb []result
	ours := make([][]result, len(b.nps))
	ratios := make([][]float64, len(b.nps))
	for s := 1; s <= seeds; s++ {
		r, err := b.runGpmetis(g, file, k, s, true)
		if err != nil {
			return nil, err
		}
		rb = append(rb, r)
		for range rounds {
			gp, err := b.runGpmetis(g, file, k, s, false)
			if err != nil {
				return nil, err
			}
			kw = append(kw, gp)
			for i, np := range b.nps {
				r, err := b.runOurs(g, file, k, np, s, "parmetis")
				if err != nil {
					return nil, err
				}
				ours[i] = append(ours[i], r)
				ratios[i] = append(ratios[i], r.wall/max(gp.wall, 1e-9))
			}
		}
	}
	rnd, err := b.runOurs(g, file, k, 1, 1, "random")
	if err != nil {
		return nil, err
	}
	var rows []row
	for i, np := range b.nps {
		rw := row{graph: name, k: k, np: np, ours: median(ours[i]), kway: median(kw), rb: median(rb), random: rnd.cut, seedsCount: seeds, wallRatios: ratios[i]}
		med, lo, hi := rw.wallRatio()
		fmt.Fprintf(os.Stderr, "%s k=%d np=%d: ours %d (%.3f of kway, %.3f of rb) imb %.3f %.2fs %dMB; kway %d %.2fs; rb %d; wall / kway %.2f (%.2f-%.2f)\n",
			name, k, np, rw.ours.cut, ratio(rw.ours.cut, rw.kway.cut), ratio(rw.ours.cut, rw.rb.cut), rw.ours.imb,
			rw.ours.algo, rw.ours.peakRSS>>20, rw.kway.cut, rw.kway.algo, rw.rb.cut, med, lo, hi)
		rows = append(rows, rw)
	}
	return rows, nil
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func write(out string, rows []row, seeds, rounds int) error {
	var md, csv strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&md, "# gnnrun partition vs gpmetis, %s, %s\n\n", host, time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&md, "Cuts and imbalances recomputed from the .part files; ours and gpmetis medians over %d seeds on meshes (1 on R-MAT). "+
		"`algo s`: gpmetis' own Partitioning time; ours, the slowest rank's build + partition stages. `wall s`: the whole process, reading and writing included. "+
		"RSS: gpmetis' maximum resident set; ours, the largest peak over ranks. "+
		"`wall / kway`: ours over gpmetis k-way in whole-process wall time, each run against the gpmetis run just before it, "+
		"the median and range over %d round(s) per seed.\n\n", seeds, rounds)
	md.WriteString("| graph | K | np | ours cut | /kway | /rb | imb | algo s | wall s | RSS MB | kway cut | kway algo s | kway wall s | kway RSS MB | rb cut | random cut | wall / kway | range |\n")
	md.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	csv.WriteString("graph,k,np,ours_cut,ratio_kway,ratio_rb,imbalance,algo_s,wall_s,rss_bytes,kway_cut,kway_algo_s,kway_wall_s,kway_rss_bytes,rb_cut,random_cut,wall_ratio_median,wall_ratio_min,wall_ratio_max\n")
	for _, r := range rows {
		med, lo, hi := r.wallRatio()
		fmt.Fprintf(&md, "| %s | %d | %d | %d | %.3f | %.3f | %.4f | %.2f | %.2f | %d | %d | %.2f | %.2f | %d | %d | %d | %.2f | %.2f-%.2f |\n",
			r.graph, r.k, r.np, r.ours.cut, ratio(r.ours.cut, r.kway.cut), ratio(r.ours.cut, r.rb.cut), r.ours.imb, r.ours.algo, r.ours.wall,
			r.ours.peakRSS>>20, r.kway.cut, r.kway.algo, r.kway.wall, r.kway.peakRSS>>20, r.rb.cut, r.random, med, lo, hi)
		fmt.Fprintf(&csv, "%s,%d,%d,%d,%.4f,%.4f,%.5f,%.3f,%.3f,%d,%d,%.3f,%.3f,%d,%d,%d,%.4f,%.4f,%.4f\n",
			r.graph, r.k, r.np, r.ours.cut, ratio(r.ours.cut, r.kway.cut), ratio(r.ours.cut, r.rb.cut), r.ours.imb, r.ours.algo, r.ours.wall,
			r.ours.peakRSS, r.kway.cut, r.kway.algo, r.kway.wall, r.kway.peakRSS, r.rb.cut, r.random, med, lo, hi)
	}
	md.WriteString(summary(rows))
	if err := os.WriteFile(out+".md", []byte(md.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(out+".csv", []byte(csv.String()), 0o644)
}

// summary states the goals next to what was measured.
func summary(rows []row) string {
	var b strings.Builder
	b.WriteString("\n## Goals\n\n")
	byKey := map[string]row{}
	for _, r := range rows {
		byKey[fmt.Sprintf("%s/%d/%d", r.graph, r.k, r.np)] = r
	}
	for _, r := range rows {
		if r.np != 2 {
			continue
		}
		one, ok := byKey[fmt.Sprintf("%s/%d/1", r.graph, r.k)]
		if !ok {
			continue
		}
		med1, _, _ := one.wallRatio()
		med2, lo2, hi2 := r.wallRatio()
		fmt.Fprintf(&b, "- %s K=%d: wall / gpmetis k-way np=1 %.2f (goal 1.0), np=2 %.2f, %.2f-%.2f (goal 0.6); peak RSS per rank at np=2 / gpmetis = %.2f (goal 0.6), / np=1 = %.2f\n",
			r.graph, r.k, med1, med2, lo2, hi2, float64(r.ours.peakRSS)/float64(max(r.kway.peakRSS, 1)), float64(r.ours.peakRSS)/float64(max(one.ours.peakRSS, 1)))
	}
	return b.String()
}
