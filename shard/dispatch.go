package shard

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"gnnrun/atomicfile"
	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
	"gnnrun/rank"
)

// Result is what Dispatch did: Config, Halo and Cut are the same on every
// rank, the counts and timings are this rank's.
type Result struct {
	Config     *Config
	ConfigPath string
	// Per partition: halo nodes, and in-edges whose source is a halo node
	// (the partition's share of the edge cut).
	Halo, Cut []int64
	// Rounds of each shuffle, summed over the waves.
	NodeRounds, EdgeRounds, LookupRounds int
	// Bytes this rank packed in each shuffle (records and rows, for all
	// ranks including itself).
	NodeBytes, EdgeBytes int64
	// Wall time of each phase on this rank: relabel, endpoints, arrays,
	// clear, waves (split into nodes, edges and write), config; and of
	// each shuffle (endpoints, nodes, edges) the time inside its
	// all-to-alls ("<name>-comm") and waiting for the other ranks to reach
	// them ("<name>-skew").
	Seconds map[string]float64
	// Bytes this rank sent to and received from other ranks in each phase.
	Traffic map[string]rank.Traffic
}

// comm runs fn, a collective of the named shuffle, once every rank has
// reached it: the wait for the last rank (load imbalance) is added to the
// phase's "<name>-skew" time, fn's wall time to its "<name>-comm" time,
// the transfer alone, to compare with a plain MPI_Alltoallv of the same
// bytes. (The barrier costs one latency; the all-to-all would wait for the
// last rank anyway.)
func (d *dispatcher) comm(name string, fn func() error) error {
	t0 := time.Now()
	if err := d.c.Barrier(); err != nil {
		return err
	}
	t1 := time.Now()
	d.res.Seconds[name+"-skew"] += t1.Sub(t0).Seconds()
	err := fn()
	d.res.Seconds[name+"-comm"] += time.Since(t1).Seconds()
	return err
}

// timed runs fn as part of the named phase, adding its wall time and this
// rank's traffic to the result.
func (d *dispatcher) timed(name string, fn func() error) error {
	t0, tr0 := time.Now(), d.c.Traffic()
	err := fn()
	tr := d.c.Traffic()
	d.res.Seconds[name] += time.Since(t0).Seconds()
	acc := d.res.Traffic[name]
	acc.Sent += tr.Sent - tr0.Sent
	acc.Received += tr.Received - tr0.Received
	d.res.Traffic[name] = acc
	return err
}

// nodeArray is one node array of the input: its node type, name, and this
// rank's rows (those of the type-wise IDs Nodes.Range(t)).
type nodeArray struct {
	t    int
	name string
	data *graph.Tensor
}

// edgeArray is one edge array of the input, with one row per edge this
// rank read (rows of edges of other types are ignored).
type edgeArray struct {
	t    int
	name string
	data *graph.Tensor
}

// dispatcher carries one dispatch through its phases.
type dispatcher struct {
	c       *collective.Comm
	o       options
	g       *graphio.Graph
	m       *graph.Meta
	a       *graphio.Assignment
	out     string
	K, P, T int
	E       int // edge types

	// relabel
	newIDs     [][]int64 // per node type: new ID of each node of this rank's even range
	nodeCounts [][]int64 // [K][T]
	partStart  []int64   // K+1 bounds of the partitions' new ID ranges

	// endpoints: g.Edges.Src/Dst hold new IDs afterwards
	epart      []int32   // partition of each local edge (its destination's)
	edgeCounts [][]int64 // [K][E]
	book       *Book

	nodeArrays []nodeArray // sorted by type, name
	edgeArrays []edgeArray // sorted by type, name
	nodeRow    []int       // bytes of all arrays of node type t, per node
	edgeRow    []int       // bytes of all arrays of edge type t, per edge

	// buf holds the buffers of the shuffle rounds, reused by every round
	// of every wave: at most a budget's worth each.
	buf struct {
		erecs, erecv []edgeRec
		nrecs, nrecv []nodeRec
		rows, recv   []byte
	}

	halo, cut []int64 // per partition, filled by the writing rank
	// sums[p*F+f] is the checksum of file f (allFiles order) of partition
	// p, filled by its writing rank.
	sums      []int64
	res       Result
	sent, got struct{ nodes, edges tally }
	files     []PartFiles
}

// Dispatch turns the graph g (as read by graphio.Read on every rank of c)
// and the assignment a (graphio.ReadAssignment) into the partition
// directory out: relabel, map edge endpoints, shuffle node rows and edges
// to the rank writing their partition, build each partition's CSC with its
// halo, write the files, and last the config <graph_name>.json. Partition
// p is written by rank p mod P; with K > P partitions they are built in
// waves of P, so a rank holds one partition at a time. It consumes g's
// edges (their endpoints are replaced by new IDs). Conservation of nodes,
// edges and rows is checked after every shuffle. It is collective; on any
// error every rank returns one and no config is written.
func Dispatch(c *collective.Comm, g *graphio.Graph, a *graphio.Assignment, out string, opts ...Option) (*Result, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	if g.Nodes == nil {
		// An edge list or a .npy of edges has no node arrays: each rank
		// still holds its even share of every type's nodes.
		g.Nodes = graph.NewNodeData(&g.Meta, c.Rank(), c.Size())
	}
	d := &dispatcher{c: c, o: o, g: g, m: &g.Meta, a: a, out: out, K: a.NumParts, P: c.Size(),
		T: len(g.Meta.NodeTypes), E: len(g.Meta.EdgeTypes), res: Result{Seconds: map[string]float64{}, Traffic: map[string]rank.Traffic{}}}
	if err := collective.Agree(c, d.check()); err != nil {
		return nil, err
	}
	if err := CheckOutput(c, out, g.Meta.Name, o.overwrite); err != nil {
		return nil, err
	}
	phases := []struct {
		name string
		run  func() error
	}{
		{"relabel", d.relabel},
		{"endpoints", d.mapEndpoints},
		{"arrays", d.collectArrays},
		{"clear", func() error { return clearOutput(c, out, g.Meta.Name) }},
		{"waves", d.waves},
		{"config", d.writeConfig},
	}
	for _, ph := range phases {
		err := d.timed(ph.name, func() error { return collective.Agree(c, ph.run()) })
		if err != nil {
			return nil, err
		}
		if d.edgeCounts != nil {
			release(d.workingSet())
		}
		o.log.Debug("dispatch phase done", "phase", ph.name, "seconds", d.res.Seconds[ph.name])
	}
	return &d.res, nil
}

// release collects the garbage of the phase that ended, so the next one
// reuses its memory: the collector would otherwise let the heap grow to
// twice what is live before it runs. The heap is big slices without
// pointers, so a collection costs little. (Returning the memory to the
// system as well, debug.FreeOSMemory, costs page faults when the next
// phase takes it back, for no lower peak.)
//
// A collection is only worth it when the garbage is: release(n) collects
// when about n bytes were just dropped and n is at least 32 MiB.
func release(n int64) {
	if n >= 32<<20 {
		runtime.GC()
	}
}

// workingSet estimates the bytes this rank's dispatch holds beside its
// input at a time: a partition's edges and a round's buffers, the garbage
// each phase leaves.
func (d *dispatcher) workingSet() int64 {
	var top int64
	for p := range d.K {
		var n int64
		for _, c := range d.edgeCounts[p] {
			n += c
		}
		top = max(top, n)
	}
	return 24*top + 4*int64(d.o.budget)
}

// check validates what every later phase assumes.
func (d *dispatcher) check() error {
	if d.K < 1 {
		return errorf("the assignment has %d parts", d.K)
	}
	if len(d.a.Parts) != d.T {
		return errorf("the assignment covers %d node types, the graph has %d", len(d.a.Parts), d.T)
	}
	for t := range d.T {
		lo, hi := d.g.Nodes.Range(t)
		if int64(len(d.a.Parts[t])) != hi-lo {
			return errorf("the assignment holds %d parts of node type %q here, the graph %d nodes", len(d.a.Parts[t]), d.m.NodeTypes[t], hi-lo)
		}
	}
	e := d.g.Edges
	if e.ID == nil && e.Len() > 0 {
		return errorf("the input's edges carry no type-wise edge IDs")
	}
	n := d.m.TotalNodes()
	for i := range e.Src {
		if u, v := e.Src[i], e.Dst[i]; u < 0 || u >= n || v < 0 || v >= n {
			return errorf("edge %d -> %d has an endpoint outside the graph's %d nodes", u, v, n)
		}
		if t := e.TypeOf(i); t < 0 || int(t) >= d.E {
			return errorf("edge %d -> %d has type %d; the graph has %d edge types", e.Src[i], e.Dst[i], t, d.E)
		}
	}
	for t, n := range d.m.NumEdges {
		if n >= 1<<47 {
			return errorf("edge type %s has %d edges; dispatch supports up to 2^47 per type", d.m.EdgeTypes[t], n)
		}
	}
	for _, n := range d.m.NodeTypes {
		if strings.ContainsAny(n, "/\\") || n == "" || n == "." || n == ".." {
			return errorf("node type %q cannot name a directory", n)
		}
	}
	return nil
}

// collectArrays lists the node and edge arrays to ship, checks that every
// rank holds the same ones, and sizes the per-node and per-edge rows.
func (d *dispatcher) collectArrays() error {
	for t := range d.T {
		for _, name := range d.g.Nodes.Names(t) {
			if strings.ContainsAny(name, "/\\") {
				return errorf("node array %q of type %q cannot name a file", name, d.m.NodeTypes[t])
			}
			d.nodeArrays = append(d.nodeArrays, nodeArray{t: t, name: name, data: d.g.Nodes.Arrays[t][name]})
		}
	}
	e := d.g.Edges
	names := map[string]bool{}
	for _, key := range e.DataKeys() {
		ets, name, ok := strings.Cut(key, "/")
		t := d.edgeType(ets)
		if !ok || t < 0 || strings.ContainsAny(name, "/\\") {
			return errorf("edge array %q is not named <src:rel:dst>/<name>", key)
		}
		names[key] = true
		d.edgeArrays = append(d.edgeArrays, edgeArray{t: t, name: name, data: e.Data[key]})
	}
	hasWeight, err := collective.Any(d.c, e.Weight != nil)
	if err != nil {
		return err
	}
	if hasWeight {
		w := e.Weight
		if w == nil {
			w = make([]float32, e.Len())
			for i := range w {
				w[i] = 1
			}
		}
		for t, et := range d.m.EdgeTypes {
			if names[graph.EdgeDataKey(et, "weight")] {
				return errorf("the input has edge weights and an edge array %q", graph.EdgeDataKey(et, "weight"))
			}
			d.edgeArrays = append(d.edgeArrays, edgeArray{t: t, name: "weight", data: graph.TensorOf(w, 0)})
		}
	}
	sortArrays(d.nodeArrays, d.edgeArrays)
	d.nodeRow = make([]int, d.T)
	for _, a := range d.nodeArrays {
		d.nodeRow[a.t] += a.data.RowBytes()
	}
	d.edgeRow = make([]int, d.E)
	for _, a := range d.edgeArrays {
		d.edgeRow[a.t] += a.data.RowBytes()
		if int(a.data.Rows()) != e.Len() {
			return errorf("edge array %s/%s has %d rows for %d edges", d.m.EdgeTypes[a.t], a.name, a.data.Rows(), e.Len())
		}
	}
	return d.sameArrays()
}

func (d *dispatcher) edgeType(s string) int {
	return slices.IndexFunc(d.m.EdgeTypes, func(et graph.EdgeType) bool { return et.String() == s })
}

// sortArrays orders arrays by type, then name: the order of the files, of
// the rows on the wire, and of the hashes Inspect combines.
func sortArrays(na []nodeArray, ea []edgeArray) {
	less := func(t1 int, n1 string, t2 int, n2 string) bool {
		if t1 != t2 {
			return t1 < t2
		}
		return n1 < n2
	}
	for i := 1; i < len(na); i++ {
		for j := i; j > 0 && less(na[j].t, na[j].name, na[j-1].t, na[j-1].name); j-- {
			na[j], na[j-1] = na[j-1], na[j]
		}
	}
	for i := 1; i < len(ea); i++ {
		for j := i; j > 0 && less(ea[j].t, ea[j].name, ea[j-1].t, ea[j-1].name); j-- {
			ea[j], ea[j-1] = ea[j-1], ea[j]
		}
	}
}

// sameArrays fails unless every rank lists the same arrays with the same
// dtypes and row shapes: receivers size files from their own view.
func (d *dispatcher) sameArrays() error {
	var b strings.Builder
	for _, a := range d.nodeArrays {
		fmt.Fprintf(&b, "n%d/%s/%s%v;", a.t, a.name, a.data.DType, a.data.RowShape())
	}
	for _, a := range d.edgeArrays {
		fmt.Fprintf(&b, "e%d/%s/%s%v;", a.t, a.name, a.data.DType, a.data.RowShape())
	}
	h := fnv.New64a()
	h.Write([]byte(b.String()))
	v := int64(h.Sum64() >> 1)
	lo, err := collective.Min(d.c, v)
	if err != nil {
		return err
	}
	hi, err := collective.Max(d.c, v)
	if err != nil {
		return err
	}
	if lo != hi {
		return errorf("ranks hold different node or edge arrays (this rank: %s)", b.String())
	}
	return nil
}

// featKeys returns the keys of the node and edge arrays, as the config
// names them.
func (d *dispatcher) featKeys() (nodes, edges []featKey) {
	for _, a := range d.nodeArrays {
		nodes = append(nodes, featKey{d.m.NodeTypes[a.t], a.name})
	}
	for _, a := range d.edgeArrays {
		edges = append(edges, featKey{d.m.EdgeTypes[a.t].String(), a.name})
	}
	return nodes, edges
}

// waves builds the partitions P at a time: in wave w, rank r builds and
// writes partition w*P+r.
func (d *dispatcher) waves() error {
	d.halo = make([]int64, d.K)
	d.cut = make([]int64, d.K)
	no, nb := d.nodeOrder()
	eo := d.edgeOrder()
	nk, ek := d.featKeys()
	d.files = make([]PartFiles, d.K)
	for p := range d.K {
		d.files[p] = partFiles(p, nk, ek, d.o.compress)
	}
	d.sums = make([]int64, d.K*len(d.files[0].allFiles()))
	for w := 0; w*d.P < d.K; w++ {
		first, last := w*d.P, min((w+1)*d.P, d.K)
		part := first + d.c.Rank()
		if part >= last {
			part = -1
		}
		pw, err := d.newPartWriter(part)
		if err != nil {
			return err
		}
		err = d.timed("nodes", func() error { return d.shuffleNodes(pw, no[nb[first]:nb[last]], waveGroups(nb, first, last), first) })
		release(d.workingSet())
		if err == nil {
			err = d.timed("edges", func() error { return d.shuffleEdges(pw, eo, first, last) })
		}
		release(d.workingSet())
		if err == nil {
			err = d.timed("write", pw.finish)
		}
		if err = collective.Agree(d.c, err); err != nil {
			pw.abort()
			return err
		}
		release(d.workingSet())
	}
	if err := conserved(d.c, "node shuffle", &d.sent.nodes, &d.got.nodes); err != nil {
		return err
	}
	if err := conserved(d.c, "edge shuffle", &d.sent.edges, &d.got.edges); err != nil {
		return err
	}
	for _, v := range [][]int64{d.halo, d.cut, d.sums} {
		all, err := collective.Allreduce(d.c, v, rank.Sum)
		if err != nil {
			return err
		}
		copy(v, all)
	}
	d.res.Halo, d.res.Cut = d.halo, d.cut
	return nil
}

// writeConfig writes <graph_name>.json on rank 0, after every partition
// is complete: its presence says the directory is.
func (d *dispatcher) writeConfig() error {
	cfg := &Config{GraphName: d.m.Name, NumParts: d.K, NumNodes: d.m.TotalNodes(), NumEdges: d.m.TotalEdges(),
		PartMethod: d.o.partMethod, HaloHops: 1, NodeTypes: d.m.NodeTypes, EdgeTypes: d.m.EdgeTypes,
		NodeMap: map[string][][2]int64{}, EdgeMap: map[string][][2]int64{}, Compression: "none", Normalize: d.o.normalize}
	if d.o.compress {
		cfg.Compression = "zstd"
	}
	for p := range d.K {
		for t, n := range d.m.NodeTypes {
			lo, hi := d.book.TypeRange(p, t)
			cfg.NodeMap[n] = append(cfg.NodeMap[n], [2]int64{lo, hi})
		}
		for t, et := range d.m.EdgeTypes {
			lo, hi := d.book.EdgeTypeRange(p, t)
			cfg.EdgeMap[et.String()] = append(cfg.EdgeMap[et.String()], [2]int64{lo, hi})
		}
		pf := d.files[p]
		lo, hi := d.book.PartRange(p)
		elo, ehi := d.book.EdgePartRange(p)
		pf.InnerNodes, pf.HaloNodes, pf.Edges = hi-lo, d.halo[p], ehi-elo
		pf.IndexDType = indexDType(pf.InnerNodes + pf.HaloNodes).String()
		pf.Checksums = map[string]string{}
		nf := len(pf.allFiles())
		for f, rel := range pf.allFiles() {
			pf.Checksums[rel] = formatChecksum(uint32(d.sums[p*nf+f]))
		}
		cfg.Parts = append(cfg.Parts, pf)
	}
	d.res.Config = cfg
	d.res.ConfigPath = filepath.Join(d.out, ConfigName(d.m.Name))
	if err := d.c.Barrier(); err != nil {
		return err
	}
	if d.c.Rank() != 0 {
		return nil
	}
	blob, err := cfg.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(d.res.ConfigPath, blob); err != nil {
		return errorf("%w", err)
	}
	return nil
}
