package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// median of a non-empty slice.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// scores returns a dataset's scores at a rank count, by seed order.
func scores(runs []run, d dataset, np int) []float64 {
	var out []float64
	for _, r := range runs {
		if r.Dataset == d.Name && r.Ranks == np {
			out = append(out, r.Result[d.Metric])
		}
	}
	return out
}

// render writes the table (medians over seeds at 1 and 4 ranks against
// the goal, and their gap) and a plot of every run's score.
func render(out string, runs []run) error {
	var b strings.Builder
	b.WriteString("# Accuracy of GraphSAGE trained on gnnrun's batches (bench/accuracy)\n\n")
	b.WriteString("`gnnrun train` (K = 4 partitions, `--balance nodes,train`) feeding `examples/graphsage.py` (mean-aggregator GraphSAGE in plain PyTorch on the split loaders, gradients averaged over ranks, ranks past the last seeds padded with repeated seeds (`--pad repeat`); the test score at the epoch of the best validation score), 5 seeds (gnnrun's `--seed` and the model's alike) at 1 and 4 ranks. Scores are accuracy, or ROC-AUC for Tolokers (binary). Gap: |median at P=1 − median at P=4| in points (goal ≤ 1.5).\n\n")
	b.WriteString("| dataset | metric | goal | median P=1 | median P=4 | gap (points) | seeds P=1 | seeds P=4 | s per run P=1 | s per run P=4 | flags |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range datasets {
		one, four := scores(runs, d, 1), scores(runs, d, 4)
		if len(one) == 0 && len(four) == 0 {
			continue
		}
		med := func(v []float64) string {
			if len(v) == 0 {
				return "–"
			}
			return fmt.Sprintf("%.3f", median(v))
		}
		gap := "–"
		if len(one) > 0 && len(four) > 0 {
			gap = fmt.Sprintf("%.1f", 100*math.Abs(median(one)-median(four)))
		}
		goal := "–"
		if d.Goal > 0 {
			goal = fmt.Sprintf("≥ %.2f", d.Goal)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | `%s -- %s` |\n", d.Name, strings.TrimPrefix(d.Metric, "test_"), goal,
			med(one), med(four), gap, list(one), list(four), meanSeconds(runs, d, 1), meanSeconds(runs, d, 4),
			strings.Join(d.Train, " "), strings.Join(d.Model, " "))
	}
	if err := os.WriteFile(out+".md", []byte(b.String()), 0o644); err != nil {
		return err
	}
	return plotScores(out+".svg", runs)
}

func list(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(s, " ")
}

func meanSeconds(runs []run, d dataset, np int) float64 {
	var s float64
	var n int
	for _, r := range runs {
		if r.Dataset == d.Name && r.Ranks == np {
			s += r.Result["seconds"]
			n++
		}
	}
	return s / math.Max(1, float64(n))
}

// plotScores draws every run's score, a column per dataset, P=1 left of
// P=4, each dataset's goal as a short dashed line.
func plotScores(path string, runs []run) error {
	p := plot.New()
	p.Title.Text = "GraphSAGE on gnnrun's batches: test score per seed"
	p.Y.Label.Text = "test accuracy (Tolokers: ROC-AUC)"
	p.Legend.Top = true
	var names []string
	colors := map[int]color.Color{1: color.RGBA{0, 90, 181, 255}, 4: color.RGBA{220, 50, 32, 255}}
	pts := map[int]plotter.XYs{}
	for i, d := range datasets {
		if len(scores(runs, d, 1))+len(scores(runs, d, 4)) == 0 {
			continue
		}
		x := float64(len(names))
		names = append(names, d.Name)
		for _, np := range []int{1, 4} {
			for k, s := range scores(runs, d, np) {
				off := -0.15
				if np == 4 {
					off = 0.15
				}
				pts[np] = append(pts[np], plotter.XY{X: x + off + 0.03*float64(k-2), Y: s})
			}
		}
		if d.Goal > 0 {
			l, err := plotter.NewLine(plotter.XYs{{X: x - 0.35, Y: d.Goal}, {X: x + 0.35, Y: d.Goal}})
			if err != nil {
				return err
			}
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			l.Color = color.Gray{Y: 80}
			p.Add(l)
			if i == 0 {
				p.Legend.Add("goal", l)
			}
		}
	}
	for _, np := range []int{1, 4} {
		if len(pts[np]) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts[np])
		if err != nil {
			return err
		}
		s.Color = colors[np]
		if np == 4 {
			s.Shape = draw.BoxGlyph{}
		}
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("%d rank(s)", np), s)
	}
	p.NominalX(names...)
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}
