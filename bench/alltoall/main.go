// Command alltoall measures the all-to-all bandwidth of collective.Alltoallv
// against a plain MPI_Alltoallv of the same bytes in the same run. Run it
// under mpirun:
//
//	mpirun -np 2 go-build-output/alltoall -sizes 65536,1048576,16777216
//
// The plain path is rank.PlainAlltoallv on one contiguous send and receive
// buffer, which the cgo layer hands to MPI_Alltoallv unchanged. The typed
// path is what every gnnrun stage uses: a size exchange (one small
// all-to-all), then the payload's, each as point-to-point messages
// completed by polling and napping (rank's Alltoallv), into a reused
// receive buffer (AlltoallvInto) or a fresh one per call (Alltoallv).
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"gnnrun/collective"
	"gnnrun/rank"
)

func main() {
	sizes := flag.String("sizes", "65536,1048576,16777216", "bytes sent to each peer, comma-separated")
	iters := flag.Int("iters", 20, "timed repetitions per size and path")
	out := flag.String("out", "", "append result rows to this CSV file (rank 0)")
	flag.Parse()
	w, err := rank.World()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c := collective.MustNew(w)
	if err := run(c, *sizes, *iters, *out); err != nil {
		fmt.Fprintf(os.Stderr, "alltoall: rank %d: %v\n", c.Rank(), err)
		c.Abort(1)
	}
	rank.Finalize()
}

func run(c *collective.Comm, sizeList string, iters int, out string) error {
	var rows []string
	if c.Rank() == 0 {
		fmt.Printf("%-5s %-12s %-12s %-12s %-7s %-12s %-7s\n", "ranks", "bytes/peer", "plain MB/s", "typed MB/s", "ratio", "alloc MB/s", "ratio")
	}
	for _, f := range strings.Split(sizeList, ",") {
		per, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || per < 4 {
			return fmt.Errorf("bad size %q", f)
		}
		// Small exchanges take microseconds: time more of them. The three
		// paths run in turn within every iteration, so they see the same
		// machine.
		n := iters * max(1, (1<<20)/per)
		ts, err := medians(c, n, plainFn(c, per), typedFn(c, per, true), typedFn(c, per, false))
		if err != nil {
			return err
		}
		plain, typed, alloc := ts[0], ts[1], ts[2]
		// Bandwidth: bytes each rank sends to other ranks per second.
		moved := float64(per) * float64(c.Size()-1)
		pb, tb, ab := moved/plain/1e6, moved/typed/1e6, moved/alloc/1e6
		if c.Rank() == 0 {
			fmt.Printf("%-5d %-12d %-12.1f %-12.1f %-7.3f %-12.1f %-7.3f\n", c.Size(), per, pb, tb, tb/pb, ab, ab/pb)
			rows = append(rows, fmt.Sprintf("%d,%d,%.1f,%.1f,%.3f,%.1f,%.3f", c.Size(), per, pb, tb, tb/pb, ab, ab/pb))
		}
	}
	if c.Rank() == 0 && out != "" {
		return appendRows(out, "ranks,bytes_per_peer,plain_mpi_alltoallv_MBps,collective_alltoallvinto_MBps,ratio,collective_alltoallv_alloc_MBps,alloc_ratio", rows)
	}
	return nil
}

func appendRows(path, header string, rows []string) error {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if os.IsNotExist(statErr) {
		fmt.Fprintln(f, header)
	}
	for _, r := range rows {
		fmt.Fprintln(f, r)
	}
	return nil
}

// medians times each of fns over iters runs after one warm-up, the fns
// taking turns within every run, and returns the median time of each; a
// run's time is the slowest rank's, as a collective finishes when its last
// rank does.
func medians(c *collective.Comm, iters int, fns ...func() error) ([]float64, error) {
	ts := make([][]float64, len(fns))
	for i := -1; i < iters; i++ {
		for f, fn := range fns {
			if err := c.Barrier(); err != nil {
				return nil, err
			}
			t0 := time.Now()
			if err := fn(); err != nil {
				return nil, err
			}
			dt, err := collective.Max(c, time.Since(t0).Seconds())
			if err != nil {
				return nil, err
			}
			if i >= 0 {
				ts[f] = append(ts[f], dt)
			}
		}
	}
	out := make([]float64, len(fns))
	for f := range ts {
		sort.Float64s(ts[f])
		out[f] = ts[f][len(ts[f])/2]
	}
	return out, nil
}

// plainFn returns one plain MPI_Alltoallv of per bytes to every rank.
func plainFn(c *collective.Comm, per int) func() error {
	n := c.Size()
	sbuf, rbuf := make([]byte, per*n), make([]byte, per*n)
	for i := range sbuf {
		sbuf[i] = byte(i)
	}
	send, recv := make([][]byte, n), make([][]byte, n)
	for j := range n {
		send[j] = sbuf[j*per : (j+1)*per]
		recv[j] = rbuf[j*per : (j+1)*per]
	}
	return func() error { return rank.PlainAlltoallv(c.Comm, send, recv) }
}

// typedFn returns one collective.AlltoallvInto with a reused receive buffer
// (reuse) or one collective.Alltoallv, which allocates one per call.
func typedFn(c *collective.Comm, per int, reuse bool) func() error {
	n := c.Size()
	k := per / 4
	send := make([]float32, k*n)
	for i := range send {
		send[i] = float32(i)
	}
	counts := make([]int, n)
	for j := range counts {
		counts[j] = k
	}
	var buf []float32
	return func() error {
		var recv []float32
		var err error
		if reuse {
			recv, _, err = collective.AlltoallvInto(c, send, counts, buf)
			buf = recv
		} else {
			recv, _, err = collective.Alltoallv(c, send, counts)
		}
		if err == nil && len(recv) != k*n {
			err = fmt.Errorf("received %d values, want %d", len(recv), k*n)
		}
		return err
	}
}
