package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"gnnrun/cuda"
	"gnnrun/prefetch"
	"gnnrun/shard"
)

// pipelineFlags are the flags of the commands that run the mini-batch
// pipeline (loader, train): what to sample, and the pipeline's device,
// cache and depths.
type pipelineFlags struct {
	batchFlags
	device, cache, feat      string
	hotBytes                 int64
	workers, sampleDepth     int
	gatherDepth, deviceDepth int
}

func (f *pipelineFlags) register(fs *pflag.FlagSet) {
	f.batchFlags.register(fs)
	fs.StringVar(&f.device, "device", "host", "where the batches go: host, cuda or auto (cuda when a GPU is bound to the rank)")
	fs.StringVar(&f.cache, "cache", "reuse", "reuse the rows already on the device (reuse) or copy every row (none)")
	fs.Int64Var(&f.hotBytes, "hot-cache", 0, "device bytes for a static cache of the highest in-degree nodes' rows (0: none)")
	fs.StringVar(&f.feat, "feat", "feat", "node array gathered for the input nodes")
	fs.IntVar(&f.workers, "sample-workers", 2, "samplers running side by side on each rank")
	fs.IntVar(&f.sampleDepth, "sample-depth", 8, "batches sampled ahead of the gather")
	fs.IntVar(&f.gatherDepth, "gather-depth", 2, "batches gathered on the host ahead of the device copy")
	fs.IntVar(&f.deviceDepth, "device-depth", 1, "batches on the device ahead of the trainer")
}

// options turns the flags into the pipeline's options, failing on bad
// values before any work.
func (f *pipelineFlags) options() (prefetch.Options, error) {
	so, err := f.batchFlags.options()
	if err != nil {
		return prefetch.Options{}, err
	}
	o := prefetch.Options{Sampler: so, Epochs: f.epochs, Feature: f.feat, HotBytes: f.hotBytes,
		SampleWorkers: f.workers, SampleDepth: f.sampleDepth, GatherDepth: f.gatherDepth, DeviceDepth: f.deviceDepth}
	for _, d := range []struct {
		name string
		v    int
	}{{"--sample-workers", f.workers}, {"--sample-depth", f.sampleDepth}, {"--gather-depth", f.gatherDepth}, {"--device-depth", f.deviceDepth}} {
		if d.v < 1 {
			return o, fmt.Errorf("%s %d: must be at least 1", d.name, d.v)
		}
	}
	if f.hotBytes < 0 {
		return o, fmt.Errorf("--hot-cache %d: must be >= 0", f.hotBytes)
	}
	if o.Cache, err = prefetch.ParseCacheMode(f.cache); err != nil {
		return o, err
	}
	return o, nil
}

// open opens the rank's device (the GPU binding made it device 0) and
// serves the partition directory. It is collective: every rank fails if
// one cannot open its device. The caller closes both only after a clean
// run: after an error the pipeline's stages may still read them until the
// job ends (prefetch.Loader.Next).
func (f *pipelineFlags) open(e *env, dir string, opts ...cuda.OpenOption) (cuda.Device, *shard.Served, error) {
	kind, err := cuda.ParseKind(f.device)
	if err != nil {
		return nil, nil, err
	}
	dev, err := cuda.Open(kind, 0, opts...)
	if err = agreeErr(e.comm, err); err != nil {
		return nil, nil, err
	}
	end := e.stage("open")
	served, err := shard.Serve(e.comm, dir)
	end()
	return dev, served, err
}
