package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"gnnrun/rank"
	"gnnrun/report"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/collective"
	"gnnrun/graphio"
	"gnnrun/shard"
)

type fetchArgs struct {
	ntype, name, transport, ids, in string
	rows, batch                     int
	seed                            uint64
}

var fetchFlags fetchArgs

func init() {
	register(&command{
		name:    "fetch",
		summary: "serve a partition directory and time (or verify) feature pulls",
		usage:   "fetch PARTDIR [--ntype T] [--name feat] [--transport alltoall,rma] [--ids random|remote|local] [--rows N] [--batch B] [--in GRAPH]",
		help: `Opens PARTDIR with every rank (with P ranks over K partitions, rank r
serves partitions floor(r*K/P) .. when P < K, and partition floor(r*K/P)
when P >= K, which must then be a multiple of K; all ranks of a host share
one memory-mapped copy, and a compressed partition is decompressed once per
host into /dev/shm), then pulls --rows
rows of node array --name of node type --ntype per rank, --batch rows per
Pull, by global node IDs drawn at random (--ids random: from all partitions,
remote: from the other partitions only, local: from this rank's own) over
each transport given, and prints rows/s and bytes/s. A plain memcpy gather
of as many random rows of the rank's own array, copied to the heap first, is
timed beside as the ceiling.

Every transport must return the same bytes: they are compared with each
other, and with --in GRAPH with the input's row of each node's original ID.`,
		flags: func(fs *pflag.FlagSet) {
			f := &fetchFlags
			fs.StringVar(&f.ntype, "ntype", "", "node type (default: the first)")
			fs.StringVar(&f.name, "name", "feat", "node array to pull")
			fs.StringVar(&f.transport, "transport", "alltoall,rma", "transports to time, comma-separated: alltoall, rma")
			fs.StringVar(&f.ids, "ids", "random", "which nodes: random (all partitions), remote (other partitions), local (own)")
			fs.IntVar(&f.rows, "rows", 1<<20, "rows pulled per rank")
			fs.IntVar(&f.batch, "batch", 1<<16, "rows per Pull")
			fs.Uint64Var(&f.seed, "seed", 1, "seed of the random IDs")
			fs.StringVar(&f.in, "in", "", "input graph: check every pulled row against it")
		},
		run: runFetch,
	})
}

func runFetch(e *env, args []string) error {
	f := fetchFlags
	if len(args) != 1 {
		return fmt.Errorf("want one partition directory (see gnnrun help fetch)")
	}
	if f.rows < 1 || f.batch < 1 {
		return fmt.Errorf("--rows and --batch must be positive")
	}
	var trs []shard.Transport
	for _, s := range strings.Split(f.transport, ",") {
		t, err := shard.ParseTransport(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		trs = append(trs, t)
	}
	end := e.stage("open")
	p, err := shard.Serve(e.comm, args[0])
	end()
	if err != nil {
		return err
	}
	defer p.Close()
	cfg := p.Config
	if f.ntype == "" {
		f.ntype = cfg.NodeTypes[0]
	}
	ids, err := fetchIDs(p, f.ntype, f.ids, f.rows, f.seed+uint64(e.comm.Rank()))
	if err = agreeErr(e.comm, err); err != nil {
		return err
	}
	e.printf("fetch: %s: %s/%s, %s rows per rank in batches of %s, ids %s, %d ranks, %d partitions\n",
		p.ConfigPath, f.ntype, f.name, report.Count(int64(f.rows)), report.Count(int64(f.batch)), f.ids, e.comm.Size(), cfg.NumParts)
	var ref []byte
	results := map[string]float64{}
	for _, tr := range trs {
		rows, rb, secs, err := timePull(e, p, tr, ids, f)
		if err != nil {
			return err
		}
		if ref == nil {
			ref = rows
		} else if !bytes.Equal(ref, rows) {
			return fmt.Errorf("transport %s returned different bytes than %s", tr, trs[0])
		}
		results[tr.String()] = reportRate(e, tr.String(), int64(len(rows)), rb, secs)
	}
	if err := memcpyBaseline(e, p, f, results); err != nil {
		return err
	}
	e.rec.Set("pull_bytes_per_s", results)
	if f.in != "" && ref != nil {
		return verifyRows(e, p, f, ids, ref)
	}
	return nil
}

// fetchIDs draws n node IDs of type ntype: from all partitions, from the
// others, or from this rank's own.
func fetchIDs(p *shard.Served, ntype, mode string, n int, seed uint64) ([]int64, error) {
	t := -1
	for i, nt := range p.Config.NodeTypes {
		if nt == ntype {
			t = i
		}
	}
	if t < 0 {
		return nil, fmt.Errorf("no node type %q", ntype)
	}
	var parts []int
	for q := range p.Config.NumParts {
		if mode == "random" || (mode == "remote") == (p.Local(q) == nil) {
			parts = append(parts, q)
		}
	}
	if mode != "random" && mode != "remote" && mode != "local" {
		return nil, fmt.Errorf("--ids %q: want random, remote or local", mode)
	}
	cum := []int64{0}
	for _, q := range parts {
		lo, hi := p.Book.TypeRange(q, t)
		cum = append(cum, cum[len(cum)-1]+hi-lo)
	}
	if cum[len(cum)-1] == 0 {
		return nil, fmt.Errorf("no %s nodes of type %q to pull (this rank serves partitions %v)", mode, ntype, partIDs(p))
	}
	rng := rand.New(rand.NewPCG(seed, 0x6665746368))
	ids := make([]int64, n)
	for i := range ids {
		u := rng.Int64N(cum[len(cum)-1])
		k := sort.Search(len(parts), func(k int) bool { return cum[k+1] > u })
		lo, _ := p.Book.TypeRange(parts[k], t)
		ids[i] = lo + u - cum[k]
	}
	return ids, nil
}

// timePull pulls ids in batches over one transport and returns the rows,
// the bytes of one, and this rank's time.
func timePull(e *env, p *shard.Served, tr shard.Transport, ids []int64, f fetchArgs) ([]byte, int, float64, error) {
	// fetch measures the transports: a row of another rank's partition is
	// asked of it, on this host too.
	s, err := shard.NewStore(e.comm, p, f.ntype, f.name, tr, shard.StoreBudget(e.flags.maxMessage), shard.StoreHostRows(false))
	if err != nil {
		return nil, 0, 0, err
	}
	defer s.Close()
	rb := s.RowBytes()
	out := make([]byte, len(ids)*rb)
	// Touch the output first, so page faults are not timed.
	for i := 0; i < len(out); i += 4096 {
		out[i] = 0
	}
	if err := e.comm.Barrier(); err != nil {
		return nil, 0, 0, err
	}
	end := e.stage("pull-" + tr.String())
	t0 := time.Now()
	for lo := 0; lo < len(ids); lo += f.batch {
		hi := min(lo+f.batch, len(ids))
		if err := s.PullInto(out[lo*rb:hi*rb], ids[lo:hi]); err != nil {
			end()
			return nil, 0, 0, err
		}
	}
	secs := time.Since(t0).Seconds()
	end()
	st := s.Stats()
	e.log.Debug("pull", "transport", tr, "local", st.LocalRows, "remote", st.RemoteRows, "steps", st.Steps)
	return out, rb, secs, nil
}

// reportRate prints the bytes per second of every rank (slowest and
// mean) and the aggregate over ranks, and returns the aggregate.
func reportRate(e *env, what string, bytes int64, rowBytes int, secs float64) float64 {
	all, err := collective.Allgather(e.comm, secs)
	if err != nil {
		return 0
	}
	var slowest float64
	for _, s := range all {
		slowest = max(slowest, s)
	}
	per := float64(bytes) / slowest
	agg := per * float64(len(all))
	rows := bytes / int64(max(1, rowBytes))
	e.printf("  %-9s %8.3fs (slowest rank)  %10.1f MB/s per rank  %10.1f MB/s all ranks  %10.3g rows/s per rank\n",
		what, slowest, per/1e6, agg/1e6, float64(rows)/slowest)
	return agg
}

// memcpyBaseline times a gather of as many random rows of the rank's
// (first) own array from a heap copy: the memory-bandwidth ceiling of any
// Pull.
func memcpyBaseline(e *env, p *shard.Served, f fetchArgs, results map[string]float64) error {
	t := p.Parts[0].NodeFeat(f.ntype, f.name)
	var rb int64
	var idx []int64
	var src []byte
	if t != nil && t.Rows() > 0 { // a rank without rows still takes part in the collectives
		rb = int64(t.RowBytes())
		src = append([]byte(nil), t.Data...)
		rng := rand.New(rand.NewPCG(f.seed, 7))
		idx = make([]int64, f.rows)
		for i := range idx {
			idx[i] = rng.Int64N(t.Rows())
		}
	}
	dst := make([]byte, int64(len(idx))*rb)
	for i := 0; i < len(dst); i += 4096 {
		dst[i] = 0
	}
	if err := e.comm.Barrier(); err != nil {
		return err
	}
	t0 := time.Now()
	for i, r := range idx {
		copy(dst[int64(i)*rb:int64(i+1)*rb], src[r*rb:(r+1)*rb])
	}
	results["memcpy"] = reportRate(e, "memcpy", int64(len(dst)), int(rb), time.Since(t0).Seconds())
	return nil
}

// verifyRows checks every pulled row against the input's row of the
// node's original ID, asked of the rank that read it.
func verifyRows(e *env, p *shard.Served, f fetchArgs, ids []int64, rows []byte) error {
	g, err := graphio.Read(e.comm, f.in, readOptions(e, "", p.Config.Normalize)...)
	if err != nil {
		return err
	}
	defer g.Close()
	t := g.Meta.NodeType(f.ntype)
	if t < 0 || g.Nodes.Get(t, f.name) == nil {
		return fmt.Errorf("%s has no node array %s/%s", f.in, f.ntype, f.name)
	}
	orig, err := shard.NewOrigIDStore(e.comm, p, shard.Alltoall)
	if err != nil {
		return err
	}
	defer orig.Close()
	origBytes, err := orig.Pull(ids)
	if err != nil {
		return err
	}
	origs := make([]int64, len(ids))
	for i := range origs {
		origs[i] = int64(binary.LittleEndian.Uint64(origBytes[8*i:]))
	}
	book := g.Nodes.Books[t]
	arr := g.Nodes.Get(t, f.name)
	want, err := collective.Request(e.comm, origs, func(o int64) int { return book.Owner(o) },
		func(_ int, keys []int64) ([][2]uint64, error) {
			lo, _ := g.Nodes.Range(t)
			out := make([][2]uint64, len(keys))
			for i, o := range keys {
				out[i] = rowDigest(arr.Row(o - lo))
			}
			return out, nil
		})
	if err != nil {
		return err
	}
	rb := arr.RowBytes()
	bad := int64(0)
	for i := range ids {
		if rowDigest(rows[i*rb:(i+1)*rb]) != want[i] {
			bad++
		}
	}
	sums, err := collective.Allreduce(e.comm, []int64{bad, int64(len(ids))}, rank.Sum)
	if err != nil {
		return err
	}
	if sums[0] > 0 {
		return fmt.Errorf("%d pulled rows differ from the input's rows", sums[0])
	}
	e.printf("  verified: all %s pulled rows equal the input's rows of their original IDs\n", report.Count(sums[1]))
	return nil
}

// partIDs lists the partitions a rank serves.
func partIDs(s *shard.Served) []int {
	var out []int
	for _, p := range s.Parts {
		out = append(out, p.ID)
	}
	return out
}

// rowDigest is a 128-bit digest of a row (FNV-1a, two lanes).
func rowDigest(b []byte) [2]uint64 {
	h1, h2 := uint64(14695981039346656037), uint64(0x9e3779b97f4a7c15)
	for _, c := range b {
		h1 = (h1 ^ uint64(c)) * 1099511628211
		h2 = (h2 ^ uint64(c)) * 0x100000001b3
		h2 ^= h2 >> 29
	}
	return [2]uint64{h1, h2}
}

// agreeErr makes every rank fail when one does.
func agreeErr(c *collective.Comm, err error) error {
	bad, e := collective.Any(c, err != nil)
	if e != nil {
		return e
	}
	if err != nil {
		return err
	}
	if bad {
		return fmt.Errorf("another rank failed")
	}
	return nil
}
