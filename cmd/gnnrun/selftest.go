package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/collective"
)

var selftestFlags struct {
	seed   uint64
	scales string
	soak   time.Duration
}

func init() {
	register(&command{
		name:    "selftest",
		summary: "check every collective and window operation on this world",
		usage:   "selftest [--scales LIST] [--seed S] [--soak DURATION]",
		help: `Runs every typed collective (exchange, all-to-all, all-gather, broadcast,
reductions, request/reply), every raw collective, split/dup/node-local
communicators and one-sided window reads on pseudo-random data, with empty
and uneven messages and with message limits of a few bytes that force many
rounds, and checks every result against values recomputed independently on
each rank. Exits non-zero on the first mismatch.

With --soak it repeats the checks with new seeds until the duration has
passed: a soak test, and a long-running job for fault tests.`,
		flags: func(fs *pflag.FlagSet) {
			fs.Uint64Var(&selftestFlags.seed, "seed", 1, "seed of the test data")
			fs.StringVar(&selftestFlags.scales, "scales", "0,1,100,20000", "comma-separated largest message sizes, in elements, to test")
			fs.DurationVar(&selftestFlags.soak, "soak", 0, "repeat the checks for this long (e.g. 60s)")
		},
		run: runSelftest,
	})
}

func runSelftest(e *env, _ []string) error {
	scales, err := parseInts(selftestFlags.scales)
	if err != nil {
		return fmt.Errorf("--scales: %w", err)
	}
	defer e.stage("selftest")()
	start := time.Now()
	seed := selftestFlags.seed
	rounds := 0
	for {
		for _, s := range scales {
			if err := collective.SelfTest(e.comm, seed, s); err != nil {
				return err
			}
			if err := e.faultPoint("selftest"); err != nil {
				return err
			}
		}
		rounds++
		seed++
		// Every rank must agree to stop, or one would wait for the others.
		more := time.Since(start) < selftestFlags.soak
		moreAny, err := collective.Any(e.comm, more)
		if err != nil {
			return err
		}
		if !moreAny {
			break
		}
		if rounds%10 == 0 {
			e.log.Info("soak", "rounds", rounds, "elapsed", time.Since(start).Round(time.Second))
		}
	}
	e.printf("selftest passed: %d rounds of %d scales on %d ranks in %v\n", rounds, len(scales), e.comm.Size(), time.Since(start).Round(time.Millisecond))
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a non-negative integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}
