package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"gnnrun/collective"
	"gnnrun/internal/proc"
	"gnnrun/rank"
	"gnnrun/sampler"
	"gnnrun/shard"
)

type workerOptions struct {
	parts, transport, fanouts string
	task, mask                string
	cpuProfile                string
	batch, batches, samplers  int
	hostGraph                 bool
}

// workerResult is what every rank measured, indexed by rank.
type workerResult struct {
	Secs         []float64 `json:"secs"`          // in SampleTask
	Edges        []int64   `json:"edges"`         // sampled
	LocalNodes   []int64   `json:"local_nodes"`   // frontier nodes drawn here
	RemoteNodes  []int64   `json:"remote_nodes"`  // ... at or from other ranks
	LocalSecs    []float64 `json:"local_secs"`    // drawing the local ones
	RemoteSecs   []float64 `json:"remote_secs"`   // in the remote step
	AnswerSecs   []float64 `json:"answer_secs"`   // ... drawing other ranks' nodes (alltoall)
	ExchangeSecs []float64 `json:"exchange_secs"` // ... in the exchanges (alltoall), waiting for the other ranks included
	Bytes        []int64   `json:"bytes"`         // sent and received for remote nodes
	LimitSecs    []float64 `json:"limit_secs"`    // the random-access loop
	LimitReads   []int64   `json:"limit_reads"`   // indices entries it read
	// The same loop also reading the edge_ids entry at each position:
	// what a sampler that must return edge IDs reads at the least.
	LimitEIDSecs []float64 `json:"limit_eid_secs"`
	LocalEdges   []int64   `json:"local_edges"` // edges drawn for local nodes
	Batches      int       `json:"batches"`
	// Samplers is the samplers side by side per rank (runs before the
	// field was recorded: 1).
	Samplers int `json:"samplers,omitempty"`
}

func (r *workerResult) edgesPerRank() float64 {
	s := 0.0
	for i := range r.Secs {
		s += float64(r.Edges[i]) / r.Secs[i]
	}
	return s / float64(len(r.Secs))
}

// batchesPerRank is the batches each rank sampled a second, the mean
// over ranks.
func (r *workerResult) batchesPerRank() float64 {
	s := 0.0
	for _, secs := range r.Secs {
		s += float64(r.Batches) / secs
	}
	return s / float64(len(r.Secs))
}

func (r *workerResult) limitPerRank() float64 {
	s := 0.0
	for i := range r.LimitSecs {
		s += float64(r.LimitReads[i]) / r.LimitSecs[i]
	}
	return s / float64(len(r.LimitSecs))
}

func (r *workerResult) limitEIDPerRank() float64 {
	s := 0.0
	for i := range r.LimitEIDSecs {
		s += float64(r.LimitReads[i]) / r.LimitEIDSecs[i]
	}
	return s / float64(max(1, len(r.LimitEIDSecs)))
}

func (r *workerResult) remoteShare() float64 {
	var l, m int64
	for i := range r.LocalNodes {
		l += r.LocalNodes[i]
		m += r.RemoteNodes[i]
	}
	return float64(m) / float64(max(1, l+m))
}

// perNode returns the seconds per node summed over ranks, in µs.
func perNode(secs []float64, nodes []int64) float64 {
	var s float64
	var n int64
	for i := range secs {
		s += secs[i]
		n += nodes[i]
	}
	if n == 0 {
		return 0
	}
	return 1e6 * s / float64(n)
}

// visit is a local destination node of a batch and how many edges were
// drawn for it: what the limit loop reads again.
type visit struct {
	p     *shard.Partition
	local int64
	count int32
}

func runWorker(o workerOptions) error {
	w, err := rank.World()
	if err != nil {
		return err
	}
	defer rank.Finalize()
	c := collective.MustNew(w)
	s, err := shard.Serve(c, o.parts)
	if err != nil {
		return err
	}
	defer s.Close()
	tr, err := shard.ParseTransport(o.transport)
	if err != nil {
		return err
	}
	fan, err := sampler.ParseFanouts(o.fanouts)
	if err != nil {
		return err
	}
	so := sampler.Options{Fanouts: fan, Transport: tr, Seed: 1, HostGraph: o.hostGraph}
	// The partitions the sampler draws from here, which the limit loop
	// reads: the served ones and, with the host's graph, the host's.
	parts := s.Parts
	if o.hostGraph {
		host, err := shard.OpenHostParts(c, s)
		if err != nil {
			return err
		}
		defer shard.CloseAll(host)
		parts = append(slices.Clip(parts), host...)
	}
	var plan *sampler.Plan
	switch o.task {
	case "node":
		plan, err = sampler.NewNodePlan(c, s, s.Config.NodeTypes[0], o.mask, o.batch)
	case "link":
		// The link task of the issue that asked for these figures: 4
		// uniform negatives per positive, each batch's positives and
		// their reverse edges kept out of its neighbourhoods.
		plan, err = sampler.NewEdgePlan(c, s, "", "", o.batch)
		so.Link = &sampler.LinkOptions{Negatives: 4, Exclude: sampler.ExcludeReverse}
	default:
		err = fmt.Errorf("-task %q: node or link", o.task)
	}
	if err != nil {
		return err
	}
	// The samplers, made in the same order on every rank (each on its own
	// communicator), take the batches in turn: sampler i batches i, i+n,
	// ... and all of them are timed together, as the loader's sample
	// workers run.
	sms := make([]*sampler.Sampler, o.samplers)
	for i := range sms {
		if sms[i], err = sampler.New(c, s, so); err != nil {
			return err
		}
	}
	// As many epochs as the batches need (a small graph has few per
	// epoch): the batches of epochs 0, 1, ... in turn; the warm-up
	// batches, the timed ones, and a last round that keeps the caches
	// from holding the final timed round when its limit loop reads it.
	warm := 2 * len(sms)
	round := limitRound * len(sms)
	var tasks []sampler.Task
	for e := 0; len(tasks) < warm+o.batches+round; e++ {
		more := plan.Epoch(1, e)
		if len(more) == 0 {
			return fmt.Errorf("no batches on rank %d", c.Rank())
		}
		tasks = append(tasks, more...)
	}
	touch(parts)
	if _, err := sampleRound(sms, tasks[:warm]); err != nil {
		return err
	}
	before := make([]sampler.Stats, len(sms))
	for i, sm := range sms {
		before[i] = sm.Stats()
	}
	stop, err := proc.StartCPUProfile(o.cpuProfile, c.Rank())
	if err != nil {
		return err
	}
	// The timed batches go in rounds, and the limit loop reads each
	// round's nodes after the next round's batches: the two rates are
	// measured turn by turn, so a slower spell of the machine (its memory
	// is reclaimed in the background) weighs on both alike, and the
	// caches hold neither round for the other.
	var rounds [][]sampler.Task
	for r := warm; r < warm+o.batches; r += round {
		rounds = append(rounds, tasks[r:min(r+round, warm+o.batches)])
	}
	rounds = append(rounds, tasks[warm+o.batches:warm+o.batches+round]) // untimed
	var secs, limitSecs, limitEIDSecs float64
	var reads, localEdges int64
	var st sampler.Stats
	var last []destinations
	for i, batches := range rounds {
		timed := i < len(rounds)-1
		// The ranks start a round together: none counts the time another
		// spent in its limit loop.
		if err := c.Barrier(); err != nil {
			return err
		}
		t0 := time.Now()
		dsts, err := sampleRound(sms, batches)
		if err != nil {
			return err
		}
		if timed {
			secs += time.Since(t0).Seconds()
		}
		if i == len(rounds)-2 {
			stop()
			for j, sm := range sms {
				st = st.Add(sm.Stats().Sub(before[j]))
			}
		}
		visits, edges := localVisits(s.Book, parts, last)
		ls, n := limitLoop(visits, false)
		le, _ := limitLoop(visits, true)
		limitSecs, limitEIDSecs, reads, localEdges = limitSecs+ls, limitEIDSecs+le, reads+n, localEdges+edges
		last = dsts
	}
	mine := workerResult{Secs: []float64{secs}, Edges: []int64{st.Edges},
		LocalNodes: []int64{st.LocalNodes}, RemoteNodes: []int64{st.RemoteNodes},
		LocalSecs: []float64{st.LocalSeconds}, RemoteSecs: []float64{st.RemoteSeconds},
		AnswerSecs: []float64{st.AnswerSeconds}, ExchangeSecs: []float64{st.ExchangeSeconds},
		Bytes: []int64{st.Sent + st.Received}, LimitSecs: []float64{limitSecs},
		LimitReads: []int64{reads}, LimitEIDSecs: []float64{limitEIDSecs}, LocalEdges: []int64{localEdges}, Batches: o.batches, Samplers: o.samplers}
	all, err := gather(c, mine)
	if err != nil {
		return err
	}
	for _, sm := range sms {
		if err := sm.Close(); err != nil {
			return err
		}
	}
	if c.Rank() == 0 {
		return json.NewEncoder(os.Stdout).Encode(all)
	}
	return nil
}

// limitRound is the batches per sampler of a round of the timed loop:
// about 0.1 s of sampling at one rank on R-MAT 20.
const limitRound = 4

// sampleRound samples batches with the samplers side by side, sampler i
// taking batches i, i+n, ..., and returns the destinations of their
// blocks.
func sampleRound(sms []*sampler.Sampler, batches []sampler.Task) ([]destinations, error) {
	dsts := make([][]destinations, len(sms))
	errs := make([]error, len(sms))
	var wg sync.WaitGroup
	for i, sm := range sms {
		wg.Go(func() {
			for k := i; k < len(batches); k += len(sms) {
				b, err := sm.SampleTask(batches[k])
				if err != nil {
					errs[i] = err
					return
				}
				dsts[i] = appendDestinations(dsts[i], b)
			}
		})
	}
	wg.Wait()
	return slices.Concat(dsts...), errors.Join(errs...)
}

// touch reads one byte of every page of the served CSC arrays, so the
// timings see partitions a trainer has already mapped.
func touch(parts []*shard.Partition) byte {
	var x byte
	for _, p := range parts {
		for _, b := range [][]int64{p.Indptr, p.EdgeIDs, p.Local2Global} {
			for i := 0; i < len(b); i += 512 {
				x ^= byte(b[i])
			}
		}
		for i := 0; i < len(p.Indices32); i += 1024 {
			x ^= byte(p.Indices32[i])
		}
		for i := 0; i < len(p.Indices64); i += 512 {
			x ^= byte(p.Indices64[i])
		}
	}
	return x
}

// destinations is one block's destination nodes and the number of edges
// drawn for each.
type destinations struct {
	nodes  []int64
	counts []int32
}

// appendDestinations appends the destinations of every block of b.
func appendDestinations(dsts []destinations, b *sampler.Batch) []destinations {
	for _, bl := range b.Blocks {
		counts := make([]int32, bl.NumDst)
		for _, d := range bl.Dst {
			counts[d]++
		}
		dsts = append(dsts, destinations{bl.Nodes[:bl.NumDst], counts})
	}
	return dsts
}

// localVisits returns the local destination nodes of the blocks with the
// number of edges drawn for each, and how many edges that is.
func localVisits(book *shard.Book, parts []*shard.Partition, dsts []destinations) ([]visit, int64) {
	byID := map[int]*shard.Partition{}
	for _, p := range parts {
		byID[p.ID] = p
	}
	var visits []visit
	var edges int64
	for _, d := range dsts {
		for i, v := range d.nodes {
			p := byID[book.Part(v)]
			if p == nil {
				continue
			}
			visits = append(visits, visit{p: p, local: v - p.Lo, count: d.counts[i]})
			edges += int64(d.counts[i])
		}
	}
	return visits, edges
}

// limitLoop reads, for every visit, the node's indptr entries and count
// random entries of its indices range (and, with eids, of its edge_ids
// range at the same positions): the random-access rate any sampler of these
// nodes is bounded by. It returns the seconds and the entries read.
func limitLoop(visits []visit, eids bool) (float64, int64) {
	x := uint64(0x9e3779b97f4a7c15)
	var sum, reads int64
	t0 := time.Now()
	for _, v := range visits {
		p := v.p
		a, b := p.Indptr[v.local], p.Indptr[v.local+1]
		n := uint64(b - a)
		for range v.count {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			q := a + int64((x>>32)*n>>32)
			if p.Indices32 != nil {
				sum += int64(p.Indices32[q])
			} else {
				sum += p.Indices64[q]
			}
			if eids {
				sum += p.EdgeIDs[q]
			}
		}
		reads += int64(v.count)
	}
	secs := time.Since(t0).Seconds()
	if sum == 42 { // keep the reads
		fmt.Fprint(os.Stderr, "")
	}
	return secs, reads
}

// gather collects every rank's single-element slices into one result on
// rank 0.
func gather(c *collective.Comm, r workerResult) (workerResult, error) {
	out := workerResult{Batches: r.Batches, Samplers: r.Samplers}
	fl := [][]float64{r.Secs, r.LocalSecs, r.RemoteSecs, r.AnswerSecs, r.ExchangeSecs, r.LimitSecs, r.LimitEIDSecs}
	dst := []*[]float64{&out.Secs, &out.LocalSecs, &out.RemoteSecs, &out.AnswerSecs, &out.ExchangeSecs, &out.LimitSecs, &out.LimitEIDSecs}
	for i, v := range fl {
		all, _, err := collective.Allgatherv(c, v)
		if err != nil {
			return out, err
		}
		*dst[i] = all
	}
	in := [][]int64{r.Edges, r.LocalNodes, r.RemoteNodes, r.Bytes, r.LimitReads, r.LocalEdges}
	idst := []*[]int64{&out.Edges, &out.LocalNodes, &out.RemoteNodes, &out.Bytes, &out.LimitReads, &out.LocalEdges}
	for i, v := range in {
		all, _, err := collective.Allgatherv(c, v)
		if err != nil {
			return out, err
		}
		*idst[i] = all
	}
	return out, nil
}
