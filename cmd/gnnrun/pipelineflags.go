package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/prefetch"
	"gnnrun/report"
	"gnnrun/shard"
)

// pipelineFlags are the flags of the commands that run the mini-batch
// pipeline (loader, train): what to sample, and the pipeline's device,
// cache and depths.
type pipelineFlags struct {
	batchFlags
	serveFlags
	cache, feat              string
	hotBytes                 int64
	workers, sampleDepth     int
	gatherDepth, deviceDepth int
	gatherWorkers            int
}

func (f *pipelineFlags) register(fs *pflag.FlagSet) {
	f.batchFlags.register(fs)
	f.serveFlags.register(fs)
	fs.StringVar(&f.cache, "cache", "reuse", "reuse the rows already on the device (reuse) or copy every row (none)")
	fs.Int64Var(&f.hotBytes, "hot-cache", 0, "device bytes for a static cache of the highest in-degree nodes' rows (0: none)")
	fs.StringVar(&f.feat, "feat", "feat", "node array gathered for the input nodes")
	fs.IntVar(&f.workers, "sample-workers", 0, "samplers running side by side on each rank (0: a quarter of the rank's cores, at least 2 and at most --sample-depth)")
	fs.IntVar(&f.sampleDepth, "sample-depth", 8, "batches sampled ahead of the gather")
	fs.IntVar(&f.gatherDepth, "gather-depth", 2, "batches gathered on the host ahead of the device copy")
	fs.IntVar(&f.deviceDepth, "device-depth", 1, "batches on the device ahead of the trainer")
	fs.IntVar(&f.gatherWorkers, "gather-workers", 0, "goroutines each rank's gather splits its row copies over (0: a quarter of the rank's cores, 1 to 8)")
}

// options turns the flags into the pipeline's options, failing on bad
// values before any work.
func (f *pipelineFlags) options() (prefetch.Options, error) {
	so, err := f.batchFlags.options()
	if err != nil {
		return prefetch.Options{}, err
	}
	o := prefetch.Options{Sampler: so, Epochs: f.epochs, Feature: f.feat, HotBytes: f.hotBytes,
		SampleWorkers: f.workers, SampleDepth: f.sampleDepth, GatherDepth: f.gatherDepth, DeviceDepth: f.deviceDepth, GatherWorkers: f.gatherWorkers}
	for _, d := range []struct {
		name string
		v    int
	}{{"--sample-depth", f.sampleDepth}, {"--gather-depth", f.gatherDepth}, {"--device-depth", f.deviceDepth}} {
		if d.v < 1 {
			return o, fmt.Errorf("%s %d: must be at least 1", d.name, d.v)
		}
	}
	if f.workers < 0 {
		return o, fmt.Errorf("--sample-workers %d: must be >= 0 (0: from the rank's cores)", f.workers)
	}
	if f.gatherWorkers < 0 {
		return o, fmt.Errorf("--gather-workers %d: must be >= 0 (0: from the rank's cores)", f.gatherWorkers)
	}
	if f.hotBytes < 0 {
		return o, fmt.Errorf("--hot-cache %d: must be >= 0", f.hotBytes)
	}
	if o.Cache, err = prefetch.ParseCacheMode(f.cache); err != nil {
		return o, err
	}
	return o, nil
}

// open opens the rank's device of kind (the GPU binding made it device
// 0) and serves the partition directory. It is collective: every rank fails if
// one cannot open its device. The caller closes both only after a clean
// run: after an error the pipeline's stages may still read them until the
// job ends (prefetch.Loader.Next).
func (f *pipelineFlags) open(e *env, dir string, kind cuda.Kind, opts ...cuda.OpenOption) (cuda.Device, *shard.Served, error) {
	dev, err := cuda.Open(kind, 0, opts...)
	if err = agreeErr(e.comm, err); err != nil {
		return nil, nil, err
	}
	served, err := f.serve(e, dir)
	return dev, served, err
}

// serveFlags are the flags of the commands that serve a partition
// directory to sample it (sample, loader, train).
type serveFlags struct{ skipChecksums bool }

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.skipChecksums, "skip-checksums", false, "do not compare the partitions' files with the CRC-32C their config records as they are opened: the check reads every byte once, about as long as cat takes; skip it where the storage is trusted. Indices are bounds-checked either way")
}

// serve serves the partition directory, its files checked (shard.Serve),
// and reports what the checks cost. It is collective; its errors are the
// same on every rank.
func (f *serveFlags) serve(e *env, dir string) (*shard.Served, error) {
	end := e.stage("open")
	served, err := shard.Serve(e.comm, dir, shard.Checksums(!f.skipChecksums))
	end()
	if err != nil {
		return nil, agreed{err}
	}
	if err := f.report(e, served.Checks); err != nil {
		served.Close()
		return nil, err
	}
	return served, nil
}

// report prints on rank 0 what the checks of every rank cost (times of
// the slowest rank) and records it under results.open.
func (f *serveFlags) report(e *env, st shard.OpenStats) error {
	checked := 0.0
	if st.Checksums {
		checked = 1
	}
	mine := []float64{float64(st.Files), float64(st.Bytes), st.ChecksumTime.Seconds(), st.BoundsTime.Seconds(), checked}
	all, _, err := collective.Allgatherv(e.comm, mine)
	if err != nil {
		return err
	}
	var files, bytes, crcS, boundsS, anyChecked float64
	var perCRC, perBounds []float64
	for r := range e.comm.Size() {
		v := all[r*len(mine) : (r+1)*len(mine)]
		files, bytes, anyChecked = files+v[0], bytes+v[1], max(anyChecked, v[4])
		crcS, boundsS = max(crcS, v[2]), max(boundsS, v[3])
		perCRC, perBounds = append(perCRC, v[2]), append(perBounds, v[3])
	}
	what := "checked"
	switch {
	case f.skipChecksums:
		what = "skipped"
		e.printf("open: checksums skipped (--skip-checksums); bounds checked in %.3fs (the slowest rank)\n", boundsS)
	case anyChecked == 0:
		what = "none recorded"
		e.printf("open: the config records no checksums (written before them); bounds checked in %.3fs (the slowest rank)\n", boundsS)
	default:
		e.printf("open: CRC-32C of %s files (%s) checked in %.3fs (%s/s), bounds in %.3fs (the slowest rank; %d worker(s) per rank)\n",
			report.Count(int64(files)), report.Bytes(int64(bytes)), crcS, report.Bytes(int64(bytes/max(crcS, 1e-9))), boundsS, st.Workers)
	}
	e.rec.Set("open", map[string]any{"checksums": what, "checksum_files": files, "checksum_bytes": bytes,
		"checksum_s": crcS, "bounds_s": boundsS, "checksum_s_per_rank": perCRC, "bounds_s_per_rank": perBounds, "workers_per_rank": st.Workers})
	return nil
}
