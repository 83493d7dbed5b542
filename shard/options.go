package shard

import (
	"fmt"
	"log/slog"

	"gnnrun/collective"
)

// Option configures Dispatch and Inspect.
type Option func(*options) error

type options struct {
	budget     int
	compress   bool
	overwrite  bool
	partMethod string
	normalize  []string
	log        *slog.Logger
	progress   func(stage string, done, total int64)
}

func (o *options) setDefault() {
	o.budget = collective.DefaultMaxMessage
	o.partMethod = "metis"
	o.log = slog.New(slog.DiscardHandler)
	o.progress = func(string, int64, int64) {}
}

func applyOptions(opts []Option) (options, error) {
	var o options
	o.setDefault()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// Budget bounds the payload each rank puts in flight in one round of a
// shuffle or lookup, in bytes (default 1 GiB, the collective layer's
// message limit). Peak memory grows with it, by about four times the
// budget for the buffers of one round; a smaller budget means more rounds.
func Budget(n int) Option {
	return func(o *options) error {
		if n < 64 {
			return fmt.Errorf("shard: round budget must be at least 64 bytes, got %d", n)
		}
		o.budget = n
		return nil
	}
}

// Compress writes every array as a zstd-compressed .npy.zst file, for
// shipping over a shared file system; Open decompresses it once per host
// into /dev/shm.
func Compress(on bool) Option { return func(o *options) error { o.compress = on; return nil } }

// Overwrite lets Dispatch replace a partition already in the output
// directory; without it Dispatch refuses to touch one.
func Overwrite(on bool) Option { return func(o *options) error { o.overwrite = on; return nil } }

// PartMethod sets the config's part_method (default "metis", DGL's name for
// an assignment from any tool).
func PartMethod(name string) Option {
	return func(o *options) error {
		if name == "" {
			return fmt.Errorf("shard: empty part method")
		}
		o.partMethod = name
		return nil
	}
}

// Normalized records what was done to the input's edges before dispatch
// ("undirected", "dedup", "drop-self-loops"), so that Inspect compares the
// partitions with the input read the same way.
func Normalized(steps []string) Option {
	return func(o *options) error { o.normalize = append([]string(nil), steps...); return nil }
}

// Logger sets where progress notes go (default: nowhere).
func Logger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return fmt.Errorf("shard: nil logger")
		}
		o.log = l
		return nil
	}
}

// Progress sets a function called as each rank moves data, with the
// stage's name, the units done and the rank's total for the stage.
func Progress(fn func(stage string, done, total int64)) Option {
	return func(o *options) error {
		if fn == nil {
			return fmt.Errorf("shard: nil progress function")
		}
		o.progress = fn
		return nil
	}
}
