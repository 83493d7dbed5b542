package main

import "fmt"

// pipelineDevice is the device of gnnrun loader's device stage: the GPU,
// or the host backend in a dry run.
func (c *checker) pipelineDevice() string {
	if c.o.dryRun {
		return "host"
	}
	return "cuda"
}

// loader is step 3: gnnrun loader with its device stage on the GPU,
// every batch copied back and checked (--verify), with the reuse and hot
// caches; it passes when gnnrun exits 0, and records what the report says
// of the bytes copied, the rows reused and the stages.
func (c *checker) loader(st *Step) error {
	g, err := c.graph(st)
	if err != nil {
		return err
	}
	rep, err := c.reportPath("3-loader")
	if err != nil {
		return err
	}
	if _, err := c.run(st, c.gnnrunCmd("3-loader", "loader", g.parts, "--fanouts", "10,5", "--batch-size", "512", "--epochs", "2",
		"--device", c.pipelineDevice(), "--verify", "--hot-cache", "1000000", "--report", rep)); err != nil {
		return err
	}
	r, err := readReport(rep)
	if err != nil {
		return err
	}
	l := r.Results.Loader
	if l == nil || len(l.Batches) == 0 || l.Batches[0] == 0 || l.RowsInput == 0 {
		return fmt.Errorf("%s: no loader results, or no batches", rep)
	}
	st.detail("loader", l)
	batches := float64(l.Batches[0])
	st.Figures = append(st.Figures,
		fig("batches", batches, "").withNote("%s batches/s with --verify's checks", num(batches/l.SecondsSlowest)),
		fig("bytes to the device", float64(l.BytesToDevice)/(1<<20), "MiB").
			ratio("bytes / bytes without the cache", float64(l.BytesToDevice)/float64(l.BytesToDeviceWithoutCache), "", 0).
			withNote("%s MiB without the cache", num(float64(l.BytesToDeviceWithoutCache)/(1<<20))),
		fig("input rows reused on the device", float64(l.RowsReused), "").
			ratio("reused / input rows", float64(l.RowsReused)/float64(l.RowsInput), "", 0).
			withNote("%d from the hot cache, %d copied, of %d", l.RowsHot, l.RowsFetched, l.RowsInput))
	for _, name := range []string{"sample", "gather", "device"} {
		s, ok := l.Stages[name]
		if !ok {
			continue
		}
		st.Figures = append(st.Figures, fig(name+" stage busy", 1e3*s.BusyS/batches, "ms per batch").
			withNote("%s batches/s when busy, its queue %.0f%% full", num(batches/s.BusyS), 100*s.MeanQueueFill))
	}
	st.Figures = append(st.Figures, fig("stand-in trainer's wait", l.TrainerWaitFraction, "of the run"))
	return nil
}
