package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"gnnrun/collective"
	"gnnrun/graphio"
	"gnnrun/rank"
	"gnnrun/report"
	"gnnrun/shard"
)

type workerOptions struct {
	graph, assignment, partDir, cpuProfile string
	pullAssignment, pullDir                string
	budget, pullRows                       int
}

// workerResult is what the worker's rank 0 prints as one JSON line.
type workerResult struct {
	Ranks           int                `json:"ranks"`
	Nodes           int64              `json:"nodes"`
	Edges           int64              `json:"edges"`
	FeatureBytes    int64              `json:"feature_bytes"`
	ReadSeconds     float64            `json:"read_seconds"`
	DispatchSeconds float64            `json:"dispatch_seconds"`
	EdgesPerSec     float64            `json:"edges_per_s"`
	FeatureMBps     float64            `json:"feature_mb_per_s"`
	Seconds         map[string]float64 `json:"phase_seconds"`
	WireMBps        map[string]float64 `json:"wire_mb_per_s"`
	CommMBps        map[string]float64 `json:"in_mpi_mb_per_s"`
	SkewSeconds     map[string]float64 `json:"skew_seconds"`
	RawAlltoallMBps float64            `json:"raw_alltoallv_mb_per_s"`
	RawWriteMBps    float64            `json:"raw_write_mb_per_s"`
	PlainMBps       float64            `json:"plain_shuffle_mb_per_s"`
	PlainWireMBps   float64            `json:"plain_shuffle_wire_mb_per_s"`
	PeakRSS         []int64            `json:"peak_rss_bytes"`
	PeakRSSRead     []int64            `json:"peak_rss_read_bytes"`
	PeakRSSDispatch []int64            `json:"peak_rss_dispatch_bytes"`
	Pull            map[string]float64 `json:"pull_mb_per_s"`
	Load            float64            `json:"load_average"`
}

// loadAverage returns the 1-minute load average of the machine.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var v float64
	fmt.Sscan(string(b), &v)
	return v
}

func runWorker(o workerOptions) error {
	w, err := rank.World()
	if err != nil {
		return err
	}
	c, err := collective.New(w, collective.MaxMessage(o.budget))
	if err != nil {
		return err
	}
	if err := work(c, o); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: %v\n", c.Rank(), err)
		c.Abort(1)
	}
	return rank.Finalize()
}

func work(c *collective.Comm, o workerOptions) error {
	res := workerResult{Ranks: c.Size(), Pull: map[string]float64{}, WireMBps: map[string]float64{}, CommMBps: map[string]float64{}, SkewSeconds: map[string]float64{}, Load: loadAverage()}
	rec := report.NewRecorder(c)
	if err := c.Barrier(); err != nil {
		return err
	}
	end := rec.Stage("read")
	t0 := time.Now()
	g, err := graphio.Read(c, o.graph)
	if err != nil {
		return err
	}
	a, err := graphio.ReadAssignment(c, o.assignment, &g.Meta, 0)
	if err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	res.ReadSeconds = time.Since(t0).Seconds()
	end()
	res.Nodes, res.Edges = g.Meta.TotalNodes(), g.Meta.TotalEdges()
	for t := range g.Meta.NodeTypes {
		if f := g.Nodes.Get(t, "feat"); f != nil {
			res.FeatureBytes += g.Meta.NumNodes[t] * int64(f.RowBytes())
		}
	}
	stop := func() {}
	if c.Rank() == 0 {
		stop = startProfile(o.cpuProfile)
	}
	end = rec.Stage("dispatch")
	t0 = time.Now()
	dr, err := shard.Dispatch(c, g, a, o.partDir, shard.Budget(o.budget), shard.Overwrite(true))
	if err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	res.DispatchSeconds = time.Since(t0).Seconds()
	end()
	stop()
	g.Close()
	res.EdgesPerSec = float64(res.Edges) / res.DispatchSeconds
	res.FeatureMBps = float64(res.FeatureBytes) / dr.Seconds["nodes"] / 1e6
	res.Seconds = dr.Seconds
	for _, ph := range []string{"endpoints", "nodes", "edges"} {
		// Bytes a rank sent to other ranks per second of the phase, and per
		// second inside its all-to-alls once all ranks reached them (the
		// slowest rank's, as a collective ends with it); and the longest
		// wait for the others to reach them.
		all, err := collective.Allgather(c, [3]float64{float64(dr.Traffic[ph].Sent), dr.Seconds[ph+"-comm"], dr.Seconds[ph+"-skew"]})
		if err != nil {
			return err
		}
		wall, err := collective.Max(c, dr.Seconds[ph])
		if err != nil {
			return err
		}
		var sent, comm float64
		for _, v := range all {
			sent, comm = max(sent, v[0]), max(comm, v[1])
			res.SkewSeconds[ph] = max(res.SkewSeconds[ph], v[2])
		}
		if wall > 0 {
			res.WireMBps[ph] = sent / wall / 1e6
		}
		if comm > 0 { // one rank: its own rows never enter an all-to-all
			res.CommMBps[ph] = sent / comm / 1e6
		}
	}
	st := rec.Stages()
	for _, s := range st {
		all, err := collective.Allgather(c, s.PeakRSS)
		if err != nil {
			return err
		}
		if s.Name == "read" {
			res.PeakRSSRead = all
		} else {
			res.PeakRSSDispatch = all
		}
	}
	for i := range res.PeakRSSRead {
		res.PeakRSS = append(res.PeakRSS, max(res.PeakRSSRead[i], res.PeakRSSDispatch[i]))
	}
	if res.RawAlltoallMBps, err = rawAlltoall(c); err != nil {
		return err
	}
	// The limits of the node shuffle, best of two turns each: the first
	// turns after a dispatch run slower while the kernel writes its
	// partitions back.
	share := min(res.FeatureBytes/int64(c.Size()), 512<<20)
	for range 2 {
		w, err := rawWrite(c, filepath.Dir(o.partDir), share)
		if err != nil {
			return err
		}
		p, pw, err := plainShuffle(c, filepath.Dir(o.partDir), share, o.budget)
		if err != nil {
			return err
		}
		res.RawWriteMBps = max(res.RawWriteMBps, w)
		if p > res.PlainMBps {
			res.PlainMBps, res.PlainWireMBps = p, pw
		}
	}
	if o.pullAssignment != "" {
		if err := dispatchForPull(c, o); err != nil {
			return err
		}
		o.partDir = o.pullDir
	}
	if err := pullBench(c, o, &res); err != nil {
		return err
	}
	if c.Rank() == 0 {
		blob, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Println(string(blob))
	}
	return nil
}

// onSlowest runs fn on every rank at once, after a barrier, and returns
// its wall time on the slowest rank. An error on any rank is returned on
// all of them. It is collective.
func onSlowest(c *collective.Comm, fn func() error) (float64, error) {
	if err := c.Barrier(); err != nil {
		return 0, err
	}
	t0 := time.Now()
	err := fn()
	dt := time.Since(t0).Seconds()
	if err := collective.Agree(c, err); err != nil {
		return 0, err
	}
	return collective.Max(c, dt)
}

// rawPerPeer is the message size of the raw all-to-all.
const rawPerPeer = 16 << 20

// rawAlltoall returns the bytes per second each rank sends to the other
// ranks with a plain MPI_Alltoallv of rawPerPeer bytes per peer (best of
// five, each timed on the slowest rank), as bench/alltoall measures it; on
// one rank, the rate of the copy to itself.
func rawAlltoall(c *collective.Comm) (float64, error) {
	n := c.Size()
	sbuf, rbuf := make([]byte, rawPerPeer*n), make([]byte, rawPerPeer*n)
	for i := range sbuf {
		sbuf[i] = byte(i)
	}
	send, recv := make([][]byte, n), make([][]byte, n)
	for j := range n {
		send[j] = sbuf[j*rawPerPeer : (j+1)*rawPerPeer]
		recv[j] = rbuf[j*rawPerPeer : (j+1)*rawPerPeer]
	}
	best := 0.0
	for range 6 {
		dt, err := onSlowest(c, func() error { return c.Comm.Alltoallv(send, recv) })
		if err != nil {
			return 0, err
		}
		best = max(best, float64(rawPerPeer*max(n-1, 1))/dt/1e6)
	}
	return best, nil
}

// rawWrite returns the bytes per second each rank writes to a new file in
// dir, all ranks at once, n bytes each in 1 MiB writes (timed on the
// slowest rank, file closed, not synced): the file system's side of the
// node shuffle, which writes every rank's share of the rows.
func rawWrite(c *collective.Comm, dir string, n int64) (float64, error) {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	path := filepath.Join(dir, fmt.Sprintf(".rawwrite.%d", c.Rank()))
	defer os.Remove(path)
	dt, err := onSlowest(c, func() error {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		for left := n; left > 0; left -= int64(len(buf)) {
			if _, err := f.Write(buf[:min(left, int64(len(buf)))]); err != nil {
				f.Close()
				return err
			}
		}
		return f.Close()
	})
	if err != nil {
		return 0, err
	}
	return float64(n) / dt / 1e6, nil
}

// plainShuffle moves n bytes per rank the way the node shuffle has to,
// and nothing more: no IDs, checks or layout. In rounds of budget bytes it
// copies the round's bytes from a source array into a send buffer, sends
// an equal share to every other rank with MPI_Alltoallv (the rank's own
// share stays), and writes what arrived and its own share to a new file
// in dir, all ranks at once, timed on the slowest. It returns the bytes
// per second of each rank's n, and the bytes per second each rank sent to
// the others: the physical limit of a node shuffle on these ranks and this
// file system, measured beside it.
func plainShuffle(c *collective.Comm, dir string, n int64, budget int) (perRank, wire float64, err error) {
	p, me := c.Size(), c.Rank()
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i * 13)
	}
	round := max(int64(budget)/int64(p)*int64(p), int64(p))
	sbuf, rbuf := make([]byte, round), make([]byte, round)
	send, recv := make([][]byte, p), make([][]byte, p)
	path := filepath.Join(dir, fmt.Sprintf(".plainshuffle.%d", me))
	defer os.Remove(path)
	var sent int64
	dt, err := onSlowest(c, func() error {
		f, err := os.Create(path)
		// A rank whose file fails goes on with the all-to-alls, so the
		// others do not wait for it, and reports the error at the end.
		write := func(b []byte) {
			if err == nil {
				_, err = f.Write(b)
			}
		}
		for off := int64(0); off < n; off += round {
			m := min(round, n-off)
			share := m / int64(p)
			copy(sbuf, src[off:off+m])
			for j := range p {
				send[j], recv[j] = sbuf[int64(j)*share:int64(j+1)*share], rbuf[int64(j)*share:int64(j+1)*share]
			}
			send[me], recv[me] = nil, nil
			if p > 1 {
				if err := c.Comm.Alltoallv(send, recv); err != nil {
					return err
				}
			}
			sent += share * int64(p-1)
			for j := range p {
				if j == me {
					write(sbuf[int64(j)*share : int64(j+1)*share])
				} else {
					write(recv[j])
				}
			}
			write(sbuf[share*int64(p) : m]) // the round's remainder stays
		}
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return float64(n) / dt / 1e6, float64(sent) / dt / 1e6, nil
}

// dispatchForPull dispatches the graph again, untimed, into K = P
// partitions, so every rank serves one in the Pull benchmark.
func dispatchForPull(c *collective.Comm, o workerOptions) error {
	g, err := graphio.Read(c, o.graph)
	if err != nil {
		return err
	}
	defer g.Close()
	a, err := graphio.ReadAssignment(c, o.pullAssignment, &g.Meta, 0)
	if err != nil {
		return err
	}
	_, err = shard.Dispatch(c, g, a, o.pullDir, shard.Budget(o.budget), shard.Overwrite(true))
	return err
}

// pullBench serves the partitions (shard.Serve: one per rank when K <= P) and
// times Pull of random rows: local, alltoall and rma (remote IDs only),
// and a memcpy gather from a heap copy.
func pullBench(c *collective.Comm, o workerOptions, res *workerResult) error {
	_, cfg, err := shard.LoadConfig(c, o.partDir)
	if err != nil {
		return err
	}
	if cfg.NumParts > c.Size() {
		// Not every partition can be served; time the local paths alone.
		return pullLocalOnly(c, o, cfg, res)
	}
	served, err := shard.Serve(c, o.partDir)
	if err != nil {
		return err
	}
	defer served.Close()
	p := served.Parts[0] // K <= P: one partition per rank
	nt := cfg.NodeTypes[0]
	warm(p.NodeFeat(nt, "feat").Data)
	local := randomIDs(p, nt, o.pullRows, true, uint64(c.Rank()))
	remote := randomIDs(p, nt, o.pullRows, false, uint64(c.Rank()))
	for _, run := range []struct {
		name string
		tr   shard.Transport
		ids  []int64
	}{{"local", shard.Alltoall, local}, {"alltoall", shard.Alltoall, remote}, {"rma", shard.RMA, remote}} {
		if run.ids == nil {
			continue
		}
		s, err := shard.NewStore(c, served, nt, "feat", run.tr, shard.StoreBudget(o.budget), shard.StoreHostRows(false))
		if err != nil {
			return err
		}
		mbps, err := timePull(c, s, run.ids)
		if err != nil {
			return err
		}
		res.Pull[run.name] = mbps
		if err := s.Close(); err != nil {
			return err
		}
	}
	lo, _ := p.Book.TypeRange(p.ID, 0)
	mbps, err := memcpyGather(c, p.NodeFeat(nt, "feat").Data, 512, local, lo)
	res.Pull["memcpy"] = mbps
	return err
}

func pullLocalOnly(c *collective.Comm, o workerOptions, cfg *shard.Config, res *workerResult) error {
	p, err := shard.Open(c, o.partDir, c.Rank())
	if err != nil {
		return err
	}
	defer p.Close()
	t := p.NodeFeat(cfg.NodeTypes[0], "feat")
	warm(t.Data)
	ids := randomIDs(p, cfg.NodeTypes[0], o.pullRows, true, uint64(c.Rank()))
	lo, _ := p.Book.TypeRange(p.ID, 0)
	mbps, err := memcpyGather(c, t.Data, t.RowBytes(), ids, lo)
	res.Pull["memcpy"] = mbps
	return err
}

// warm reads one byte of every page of a memory-mapped array, so the
// timings see a partition as a trainer does after its first pass: mapped.
func warm(b []byte) byte {
	var x byte
	for i := 0; i < len(b); i += 4096 {
		x ^= b[i]
	}
	return x
}

// randomIDs draws n IDs of node type nt from this rank's partition (local)
// or from the others; nil when there are none.
func randomIDs(p *shard.Partition, nt string, n int, local bool, seed uint64) []int64 {
	t := 0
	for i, x := range p.Config.NodeTypes {
		if x == nt {
			t = i
		}
	}
	var ranges [][2]int64
	var total int64
	for q := range p.Config.NumParts {
		if (q == p.ID) == local {
			lo, hi := p.Book.TypeRange(q, t)
			if hi > lo {
				ranges = append(ranges, [2]int64{lo, hi})
				total += hi - lo
			}
		}
	}
	if total == 0 {
		return nil
	}
	cum := []int64{0}
	for _, r := range ranges {
		cum = append(cum, cum[len(cum)-1]+r[1]-r[0])
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	ids := make([]int64, n)
	for i := range ids {
		u := rng.Int64N(total)
		k := sort.Search(len(ranges), func(k int) bool { return cum[k+1] > u })
		ids[i] = ranges[k][0] + u - cum[k]
	}
	return ids
}

// timePull pulls ids in batches of 64Ki rows, three times, and returns the
// best pass's MB/s (each pass timed on its slowest rank).
func timePull(c *collective.Comm, s *shard.Store, ids []int64) (float64, error) {
	rb := s.RowBytes()
	out := make([]byte, len(ids)*rb)
	for i := 0; i < len(out); i += 4096 {
		out[i] = 1
	}
	best := 0.0
	for range 3 {
		dt, err := onSlowest(c, func() error {
			const batch = 1 << 16
			for lo := 0; lo < len(ids); lo += batch {
				hi := min(lo+batch, len(ids))
				if err := s.PullInto(out[lo*rb:hi*rb], ids[lo:hi]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		best = max(best, float64(len(out))/dt/1e6)
	}
	return best, nil
}

// memcpyGather times a plain copy loop gathering the rows of ids (local
// IDs, row id-lo) from the rank's mapped array: the same rows as the local
// Pull, without the store. Best of three passes, slowest rank.
func memcpyGather(c *collective.Comm, data []byte, rb int, ids []int64, lo int64) (float64, error) {
	dst := make([]byte, len(ids)*rb)
	for i := 0; i < len(dst); i += 4096 {
		dst[i] = 1
	}
	best := 0.0
	for range 3 {
		dt, err := onSlowest(c, func() error {
			for i, id := range ids {
				r := int(id - lo)
				copy(dst[i*rb:(i+1)*rb], data[r*rb:(r+1)*rb])
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		best = max(best, float64(len(dst))/dt/1e6)
	}
	return best, nil
}
