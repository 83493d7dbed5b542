package main

import (
	"fmt"
	"image/color"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// render writes the results as markdown tables and an SVG plot of the
// trainer's wait against the stand-in trainer's time per batch.
func render(out string, results []result) error {
	if len(results) == 0 {
		return fmt.Errorf("no results to render")
	}
	r0 := results[0]
	var b strings.Builder
	fmt.Fprintf(&b, "# The mini-batch pipeline (bench/loader)\n\n")
	fmt.Fprintf(&b, "R-MAT (`gnnrun gen --feat-dim 128`: 128 float32 features, 512 B a row) in K = 4 partitions (`gnnrun partition --balance "+balance+"`), "+
		"`gnnrun loader` with fanouts %s, batches of %d training nodes, %d batches per rank per epoch, 2 epochs a run, host device, default depths "+
		"(%d sample workers, sample 8, gather 2 (copy workers: %d), device 1), alltoall transport. Times are the slowest rank's.\n\n",
		r0.Fanouts, r0.Batch, r0.PerEpoch, r0.Runs["alone"].SampleWorkers, r0.Runs["alone"].GatherWorkers)
	b.WriteString("## Throughput: the pipeline against its stages alone\n\n")
	b.WriteString("*generation*: the pipeline's time per batch with no trainer (`--compute-ms 0`); *alone*: each stage run by itself over the same first batches (`--stages-alone`), its wall time and the CPU time the rank's process took (all threads); the pipeline keeps pace with its slowest stage at ratio 1, but no faster than its stages' CPU time over the cores each rank has (the machine's over its ranks): *bound* is the larger of the two, *set by* says which (a stage, or the cores). *run CPU*: the CPU time per batch the rank's process took during the pipeline's run itself, and *cores busy* the share of the rank's cores it kept busy: near 1, the cores set the pace.\n\n")
	b.WriteString("| scale | ranks | generation ms/batch | sample alone | gather alone | device alone | CPU ms (sample+gather+device) | cores per rank | bound ms | set by | bound / generation | slowest / generation | sum / generation | run CPU ms/batch | cores busy | host buffers peak MB | device peak MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		g := r.Runs["alone"]
		a := g.Alone
		if a == nil {
			return fmt.Errorf("scale %d P=%d: no stages-alone figures", r.Scale, r.Ranks)
		}
		slowest := max(a.Sample, a.Gather, a.Device)
		fmt.Fprintf(&b, "| %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f+%.1f+%.1f | %.2g | %.1f | %s | %.2f | %.2f | %.2f | %s | %s | %.0f | %.0f |\n", r.Scale, r.Ranks, 1e3*g.perBatch(),
			1e3*a.Sample, 1e3*a.Gather, 1e3*a.Device, 1e3*a.SampleCPU, 1e3*a.GatherCPU, 1e3*a.DeviceCPU, a.Cores, 1e3*a.Bound, a.BoundBy,
			a.Bound/g.perBatch(), slowest/g.perBatch(), (a.Sample+a.Gather+a.Device)/g.perBatch(), orDash("%.1f", 1e3*g.CPUPerBatch), orDash("%.2f", g.CoresBusy),
			g.PeakHost/1e6, g.PeakDevice/1e6)
	}
	b.WriteString("\n## The trainer's wait\n\n")
	b.WriteString("A stand-in trainer holds each batch for a multiple of the generation time (`--compute-ms`); *wait*: the time it spent in `Next` after its first batch, over the run after its first batch (the first epoch's start included); *last epoch*: the same over the second epoch alone (the steady state); *startup*: its wait for the first batch, while the pipeline filled; *first of epoch*: the mean wait for the first batch of the second epoch, against the mean of the other batches.\n\n")
	b.WriteString("| scale | ranks | trainer ms/batch | × generation | wait | last epoch | startup ms | first of epoch ms | others ms |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		for _, c := range computeRuns {
			x := r.Runs[c.name]
			fmt.Fprintf(&b, "| %d | %d | %.1f | %.1f | %.1f%% | %.1f%% | %.0f | %.2f | %.2f |\n", r.Scale, r.Ranks, r.ComputeMS[c.name], c.factor, 100*x.Wait, 100*x.LastWait, 1e3*x.Startup, 1e3*x.FirstWait, 1e3*x.OtherWait)
		}
	}
	b.WriteString("\n## The device cache\n\n")
	b.WriteString("Input rows of all batches, the share kept on the device from the batch before (`--cache reuse`, the default), the bytes copied to the device with it and without it (`--cache none`), and with a hot cache of the highest in-degree 10% of the nodes' rows (`--hot-cache`). *exact*: the bytes saved equal the rows kept (and served by the hot cache) times 512 B, in each run and between the runs with and without the cache.\n\n")
	b.WriteString("| scale | ranks | input rows | reused | to device MB, reuse | without cache MB | saved | hot cache MB | hot hits | reused (hot run) | to device MB, reuse + hot | exact |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		re, no, hot := r.Runs["alone"], r.Runs["nocache"], r.Runs["hot"]
		rb := float64(r.RowBytes)
		exact := re.BytesNone-re.Bytes == (re.Reused+re.Hot)*rb && hot.BytesNone-hot.Bytes == (hot.Reused+hot.Hot)*rb &&
			no.Bytes == no.BytesNone && no.Bytes == re.BytesNone && no.Reused == 0
		fmt.Fprintf(&b, "| %d | %d | %.0f | %.1f%% | %.0f | %.0f | %.1f%% | %.0f | %.1f%% | %.1f%% | %.0f | %v |\n", r.Scale, r.Ranks, re.Input,
			100*re.Reused/re.Input, re.Bytes/1e6, no.Bytes/1e6, 100*(1-re.Bytes/no.Bytes), float64(r.HotBytes)/1e6,
			100*hot.Hot/hot.Input, 100*hot.Reused/hot.Input, hot.Bytes/1e6, exact)
	}
	if err := os.WriteFile(out+".md", []byte(b.String()), 0o644); err != nil {
		return err
	}
	return plotWait(out+".svg", results)
}

// plotWait draws the trainer's wait fraction in the last epoch (the
// steady state) against its time per batch as a multiple of the
// generation time, a line per scale and rank count, with the 5% goal
// dashed.
func plotWait(path string, results []result) error {
	p := plot.New()
	p.Title.Text = "Trainer's wait, R-MAT with 128 features, fanouts 15,10,5, batch 1024"
	p.X.Label.Text = "stand-in trainer's time per batch / pipeline's generation time"
	p.Y.Label.Text = "share of the last epoch the trainer waited"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	colors := []color.Color{color.RGBA{0, 90, 181, 255}, color.RGBA{220, 50, 32, 255}, color.RGBA{0, 140, 70, 255}, color.RGBA{150, 80, 180, 255}}
	for i, r := range results {
		xy := plotter.XYs{{X: 0, Y: r.Runs["alone"].LastWait}}
		for _, c := range computeRuns {
			xy = append(xy, plotter.XY{X: c.factor, Y: r.Runs[c.name].LastWait})
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color, pts.Color = colors[i%len(colors)], colors[i%len(colors)]
		p.Add(l, pts)
		p.Legend.Add(fmt.Sprintf("scale %d, %d ranks", r.Scale, r.Ranks), l, pts)
	}
	goal, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0.05}, {X: 2, Y: 0.05}})
	if err != nil {
		return err
	}
	goal.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	goal.Color = color.Gray{Y: 90}
	p.Add(goal)
	p.Legend.Add("goal: 5% from 1.2x on", goal)
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// orDash formats v, or "–" where the run did not record it (0: a report
// from before the figure).
func orDash(format string, v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf(format, v)
}
