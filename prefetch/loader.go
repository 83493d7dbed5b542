package prefetch

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/graph"
	"gnnrun/sampler"
	"gnnrun/shard"
)

// Batch is a mini-batch whose input features are on the device, in slot
// order: row InputSlots[i] of Features holds the features of input node i
// (Blocks[0].Nodes[i]). The outermost block's destinations, its first
// NumDst nodes, sit in rows 0..NumDst-1 in order (InputSlots[i] = i), and
// Blocks[0].Src has been renumbered to slots, so a trainer reads edge e's
// endpoints as Features rows Src[e] and Dst[e] directly, DGL's and PyG's
// layout; the other input nodes sit wherever the device cache keeps them.
// Labels stay in seed order: they go with the model's outputs, the last
// block's destinations, not with the input rows. Release it when done:
// the device stage reuses its buffer for a later batch.
type Batch struct {
	*sampler.Batch
	Features   cuda.Buffer
	Buffer     int // which of the loader's device buffers Features is
	Rows       int // rows of Features the batch uses
	RowBytes   int
	InputSlots []int32
	// Kind is TrainKind or the name of the evaluation set the batch is of.
	Kind string
	// EndOfEpoch marks the last training batch of its epoch, LastOfEpoch
	// the epoch's last batch of any kind (its last evaluation batch after
	// an epoch that evaluates).
	EndOfEpoch, LastOfEpoch bool
	// Seq is the batch's place in the rank's stream: 0, 1, 2, ...
	Seq int64
	// Padding marks a training batch that pads a rank with items
	// repeated from the epoch's start (sampler.Plan.Pad).
	Padding bool
	// Checkpoint, on the batch after which the trainers checkpoint
	// (Options.CheckpointDue), is how far its epoch got then: the batches
	// of the epoch up to it, on every rank.
	Checkpoint []sampler.Segment
	// FinalCheckpoint: the run stops after that checkpoint.
	FinalCheckpoint bool
	// Where the rows came from: kept on the device from an earlier batch,
	// copied from the static hot cache on the device, copied from the
	// host, or zeroed on the device (nodes of types without features).
	Reused, Hot, Fetched, Zero int
	// RowTypes and RowTypeIDs are, per row of Features, its node's type
	// and type ID (Types.NumNodes); nil when the graph has one node type.
	RowTypes   []int16
	RowTypeIDs []int64
	// Update is what turned the buffer's rows of its previous batch (the
	// batch DeviceBuffers() before) into this batch's: the moves within
	// it, the rows copied from the hot cache (HotBuffer) and from the
	// host, and the rows zeroed. A mirror of the buffer elsewhere (the
	// trainer's persistent tensor on its GPU) applies exactly it to stay
	// equal, copying only Fetched rows from here.
	Update *Update

	release func()
	src0    []int32 // block 0's sources before renumbering (Options.Verify)
	index   int64   // a training batch's place among its epoch's on this rank
}

// NodeSources returns block 0's sources as indices into its nodes, as the
// sampler made them (Blocks[0].Src holds slots).
func (b *Batch) NodeSources() []int32 {
	if len(b.Blocks) == 0 {
		return nil
	}
	inv := make([]int32, b.Rows)
	for i, s := range b.InputSlots {
		inv[s] = int32(i)
	}
	src := make([]int32, len(b.Blocks[0].Src))
	for k, s := range b.Blocks[0].Src {
		src[k] = inv[s]
	}
	return src
}

// Release gives the batch's device buffer back to the pipeline; the batch
// must not be used afterwards. Releasing twice does nothing.
func (b *Batch) Release() {
	if b.release != nil {
		b.release()
		b.release = nil
	}
}

// Loader runs the pipeline on one rank: schedule, sample, gather, copy to
// the device, hand to the trainer. Every rank makes one, in the same order,
// and every rank's trainer takes the same number of batches.
type Loader struct {
	o      Options
	cores  float64          // the rank's CPUs (rankCores)
	c      *collective.Comm // the loader's own: setup, from which the samplers and stores take theirs
	served *shard.Served
	plan   *sampler.Plan

	samplers [][]*sampler.Sampler // per worker: train's, then each evaluation set's
	stores   []*shard.Store       // per node type: its feature rows (nil without)
	verify   []*shard.Store       // per node type, for Verify (own communicator)
	rows     rowLayout            // of the device buffers' rows
	rowBytes int                  // rows.bytes
	types    *typeIndex           // nil with one node type
	hot      *hotCache
	zero     *zeroRows       // the source of featureless nodes' rows (nil when every type has features)
	devs     []*deviceBuffer // the device stage's buffers, used in turn
	free     []chan struct{} // per buffer: a token while no batch holds it
	stream   cuda.Stream
	vstream  cuda.Stream      // Verify's (the trainer's goroutine)
	hostPool chan *hostBuffer // gathered rows whose copies completed, for reuse
	spare    []*hostBuffer    // buffers made ahead (MeasureStagesAlone), taken before new ones
	touched  byte             // what MeasureStagesAlone read of the stores, kept so that it reads

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errMu  sync.Mutex
	err    error
	out    chan *Batch

	total    int64            // tasks of the whole run
	sc       *collective.Comm // the scheduler's: its agreement to stop
	stopping atomic.Bool      // this rank's trainer stopped (Close)
	marked   atomic.Int64     // checkpoints marked (Options.CheckpointDue)
	nexted   atomic.Int64     // batches Next returned
	finalAt  atomic.Int64     // the final checkpoint's place in the stream (-1: none asked)
	// finalMarked: Next marked the final checkpoint (its goroutine's alone).
	finalMarked bool
	closed      bool

	stats statsRecorder

	trainedMu sync.Mutex
	trained   []int64 // per epoch: the training items of the training batches Next returned
}

// New starts the pipeline over the partitions s serves, drawing the tasks
// of plan. It is collective.
func New(c *collective.Comm, s *shard.Served, plan *sampler.Plan, o Options) (*Loader, error) {
	l, err := newLoader(c, s, plan, o)
	if err != nil {
		return nil, err
	}
	l.start()
	return l, nil
}

// newLoader makes a loader with its resources open and its stages not
// started. It is collective.
func newLoader(c *collective.Comm, s *shard.Served, plan *sampler.Plan, o Options) (*Loader, error) {
	o.setDefault()
	cores, err := rankCores(c)
	if err != nil {
		return nil, err
	}
	if o.SampleWorkers == 0 {
		o.SampleWorkers = sampleWorkersFor(cores, o.SampleDepth)
	}
	if o.GatherWorkers == 0 {
		o.GatherWorkers = gatherWorkersFor(cores)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	cc, err := c.Dup()
	if err != nil {
		return nil, err
	}
	l := &Loader{o: o, cores: cores, c: cc, served: s, plan: plan, out: make(chan *Batch, o.DeviceDepth), trained: make([]int64, o.Epochs)}
	for e := o.StartEpoch; e < o.Epochs; e++ {
		l.total += plan.BatchesIn(e)
		if o.evaluates(e) {
			for _, set := range o.Eval {
				l.total += set.Plan.BatchesPerEpoch()
			}
		}
	}
	l.finalAt.Store(-1)
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if l.sc, err = c.Dup(); err != nil {
		cc.Free()
		return nil, err
	}
	if err := l.open(); err != nil {
		l.closeResources()
		return nil, err
	}
	return l, nil
}

// open makes the samplers, the feature stores, the hot cache and the
// device buffers. It is collective.
func (l *Loader) open() error {
	kinds := append([]EvalSet{{Name: TrainKind, Plan: l.plan, Sampler: l.o.Sampler}}, l.o.Eval...)
	for w := range l.o.SampleWorkers {
		l.samplers = append(l.samplers, nil) // closeResources closes what is made
		for _, k := range kinds {
			o := k.Sampler
			o.Transport = l.o.Sampler.Transport
			sm, err := sampler.New(l.c, l.served, o)
			if err != nil {
				return err
			}
			l.samplers[w] = append(l.samplers[w], sm)
			if err := sm.CheckPlan(k.Plan); err != nil {
				return err
			}
		}
	}
	var err error
	if l.stores, err = openStores(l.c, l.served, l.o.Feature, l.o.Sampler.Transport, shard.StoreCopyWorkers(l.o.GatherWorkers)); err != nil {
		return err
	}
	if l.rows, err = storesLayout(l.served, l.o.Feature, l.stores); err != nil {
		return err
	}
	l.rowBytes = l.rows.bytes
	if nt := len(l.served.Config.NodeTypes); nt > 1 {
		l.types = newTypeIndex(l.served.Book, nt)
	}
	if l.o.Verify {
		// The rows to check come over the transport, not from the host's
		// files the gather may copy them from.
		if l.verify, err = openStores(l.c, l.served, l.o.Feature, l.o.Sampler.Transport, shard.StoreHostRows(false)); err != nil {
			return err
		}
		if l.vstream, err = l.o.Device.NewStream(); err != nil {
			return err
		}
	}
	if l.stream, err = l.o.Device.NewStream(); err != nil {
		return err
	}
	if l.o.HotBytes > 0 {
		if l.hot, err = newHotCache(l.c, l.served, l.stores, l.rowBytes, l.o.HotBytes, l.o.Device, l.stream); err != nil {
			return err
		}
		l.stats.copied(0, 0, l.hot.buf.Len())
	}
	if l.rows.anyBlank {
		if l.zero, err = newZeroRows(l.o.Device, l.stream, l.rowBytes); err != nil {
			return err
		}
		l.stats.copied(0, 0, int64(l.rowBytes))
	}
	for range l.o.DeviceDepth + 1 {
		l.devs = append(l.devs, newDeviceBuffer(l.o.Device))
		token := make(chan struct{}, 1)
		token <- struct{}{}
		l.free = append(l.free, token)
	}
	l.hostPool = make(chan *hostBuffer, l.o.GatherDepth+2)
	return nil
}

// fail records the first error of any stage and stops every stage.
func (l *Loader) fail(err error) {
	l.errMu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.errMu.Unlock()
	l.cancel()
}

func (l *Loader) firstErr() error {
	l.errMu.Lock()
	defer l.errMu.Unlock()
	return l.err
}

// Next returns the next batch, waiting for it; io.EOF after the last.
//
// An error from Next is fatal for the job, not just for the loader: a
// stage of this rank may still be inside an exchange with the other ranks,
// which ends only when the job does. End the job (fail with MPI_Abort, or
// return from a local world's rank) and do not free what the loader reads
// (the Served partitions) on the way out.
func (l *Loader) Next() (*Batch, error) {
	t0 := time.Now()
	b, ok := <-l.out
	l.stats.trainerWait(time.Since(t0), ok)
	if !ok {
		if err := l.firstErr(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	l.nexted.Add(1)
	b.Padding = b.Kind == TrainKind && l.plan.IsPadding(b.Number) && b.Items() > 0
	if at := l.finalAt.Load(); at >= 0 && b.Seq >= at && b.Kind == TrainKind && !l.finalMarked {
		// The final checkpoint: on the first training batch at or past
		// the agreed place, the same on every rank (see agree).
		l.finalMarked = true
		b.Checkpoint, b.FinalCheckpoint = l.plan.Progress(b.Epoch, b.index+1), true
		l.marked.Add(1)
	}
	if b.Kind == TrainKind && !l.plan.IsPadding(b.Number) {
		l.trainedMu.Lock()
		l.trained[b.Epoch] += int64(b.Items())
		l.trainedMu.Unlock()
	}
	return b, nil
}

// Trained returns, per epoch, the training items (seed nodes, or positive
// edges of a link task) that the training batches Next returned held, not
// counting the batches that pad ranks (sampler.Plan.Pad), and the training
// items of the plan: every one of them each epoch unless the plan was
// truncated or the trainer stopped early.
func (l *Loader) Trained() (perEpoch []int64, items int64) {
	l.trainedMu.Lock()
	defer l.trainedMu.Unlock()
	return slices.Clone(l.trained), l.plan.Stats().Items
}

// Stop says this rank's trainer takes no more batches: once every rank
// has said so (Stop or Close), the pipeline schedules no more, and Next
// returns io.EOF after the batches on their way.
func (l *Loader) Stop() { l.stopping.Store(true) }

// CheckpointsMarked returns how many checkpoints the scheduler marked: the
// same on every rank once the loader is closed.
func (l *Loader) CheckpointsMarked() int64 { return l.marked.Load() }

// Err returns the error that stopped the pipeline, if any.
func (l *Loader) Err() error { return l.firstErr() }

// HostGraphOff is the samplers' sampler.Sampler.HostGraphOff.
func (l *Loader) HostGraphOff() string { return l.samplers[0][0].HostGraphOff() }

// BatchesPerRank returns how many batches every rank's trainer gets.
func (l *Loader) BatchesPerRank() int64 { return l.total }

// MaxInFlight returns how many batches the pipeline holds at most beyond
// the trainer's: the sample queue and workers, the gather's (one being
// classified, one classified, one pulled) and its buffers, the device
// buffers.
func (l *Loader) MaxInFlight() int {
	o := l.o
	return o.SampleDepth + o.SampleWorkers + o.GatherDepth + 3 + o.DeviceDepth + 1
}

// DeviceBuffers returns how many device buffers the batches use in turn
// (Batch.Buffer): the most batches a trainer can hold at once.
func (l *Loader) DeviceBuffers() int { return len(l.devs) }

// HotBuffer returns the hot cache's rows (Batch.Update's HotRows index
// them), nil without a hot cache.
func (l *Loader) HotBuffer() cuda.Buffer {
	if l.hot == nil {
		return nil
	}
	return l.hot.buf
}

// RowBytes returns the bytes of one feature row of the device buffers
// (the widest node type's row).
func (l *Loader) RowBytes() int { return l.rowBytes }

// Types returns the graph's node and edge types and their feature rows.
func (l *Loader) Types() Types {
	cfg := l.served.Config
	t := Types{NodeTypes: cfg.NodeTypes, EdgeTypes: cfg.EdgeTypes, FeatureShapes: l.rows.shapes}
	if l.types != nil {
		t.NumNodes = l.types.count
	} else {
		t.NumNodes = []int64{l.served.Book.NumNodes()}
	}
	return t
}

// Close stops the pipeline and releases it. When the trainer stopped
// before the last batch, the pipeline goes on, discarding its batches,
// until the trainers of all ranks have stopped: the scheduler asks the
// ranks before every task whether all want to stop, so every rank stops
// at the same task and every exchange in flight finds its partners. It is
// collective. After an error it only returns the error: see Next.
func (l *Loader) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	if err := l.firstErr(); err != nil {
		l.cancel() // the stages may be stuck in exchanges: see Next
		return err
	}
	l.stopping.Store(true)
	for b := range l.out { // what the trainer will not take
		b.Release()
	}
	l.wg.Wait()
	if err := l.firstErr(); err != nil {
		return err
	}
	return l.closeResources()
}

// closeResources releases the samplers, stores and device memory; the
// samplers and stores are collective.
func (l *Loader) closeResources() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, mine := range l.samplers {
		for _, sm := range mine {
			keep(sm.Close())
		}
	}
	for _, st := range append(l.stores, l.verify...) {
		if st != nil {
			keep(st.Close())
		}
	}
	if l.hot != nil {
		keep(l.hot.free())
	}
	keep(l.zero.free())
	for _, d := range l.devs {
		keep(d.free())
	}
	for _, st := range []cuda.Stream{l.stream, l.vstream} {
		if st != nil {
			keep(st.Close())
		}
	}
	keep(l.sc.Free())
	keep(l.c.Free())
	if l.cancel != nil {
		l.cancel()
	}
	return first
}

// Cores returns the CPUs the rank has: its machine's over the ranks on it.
func (l *Loader) Cores() float64 { return l.cores }

// GatherWorkers returns the goroutines the gather's row copies are split
// over: Options.GatherWorkers, or what the rank's cores gave for 0.
func (l *Loader) GatherWorkers() int { return l.o.GatherWorkers }

// SampleWorkers returns the samplers running side by side:
// Options.SampleWorkers, or what the rank's cores gave for 0.
func (l *Loader) SampleWorkers() int { return l.o.SampleWorkers }

// sampleWorkersFor returns the sample workers for a rank with cores CPUs
// and a sample depth of depth: a quarter of the cores, at least 2 and at
// most depth. On the H100 host's 16 cores one rank ran 100-108 batches/s
// with 4 against 80-93 with 2 (R-MAT 20, 128 features; the gather with
// its 4 copy workers is then the slowest stage).
func sampleWorkersFor(cores float64, depth int) int {
	return min(depth, max(2, int(cores/4)))
}

// gatherWorkersFor returns the gather's copy workers for a rank with cores
// CPUs: a quarter of them, 1 to maxGatherWorkers. The sample workers and
// the other stages take the rest. On a 16-core Xeon with an H100 the
// gather (one goroutine) was the pipeline's slowest stage, 14.6 ms a batch
// against 6.9 for sampling (R-MAT 20, 128 float32 features, 1 rank).
func gatherWorkersFor(cores float64) int {
	return max(1, min(maxGatherWorkers, int(cores/4)))
}

// maxGatherWorkers bounds the default gather workers: a few cores' copies
// reach the memory system's bandwidth.
const maxGatherWorkers = 8

// rankCores returns the CPUs the rank may run on, or its share of the
// machine's where its ranks share them. It is collective.
func rankCores(c *collective.Comm) (float64, error) {
	node, err := c.SplitShared()
	if err != nil {
		return 0, err
	}
	cores := min(float64(runtime.NumCPU()), float64(machineCPUs())/float64(node.Size()))
	return cores, node.Free()
}

// openStores opens, for every node type with the feature array, a store
// of its rows on its own communicator, with opts. It is collective.
func openStores(c *collective.Comm, s *shard.Served, name string, t shard.Transport, opts ...shard.StoreOption) ([]*shard.Store, error) {
	stores := make([]*shard.Store, len(s.Config.NodeTypes))
	var err error
	found := false
	for ti, nt := range s.Config.NodeTypes {
		has, herr := s.HasNodeArray(c, nt, name)
		if herr != nil {
			return nil, herr
		}
		if !has {
			continue
		}
		found = true
		if stores[ti], err = shard.NewStore(c, s, nt, name, t, opts...); err != nil {
			break
		}
	}
	if err == nil && !found {
		err = fmt.Errorf("prefetch: no node type has the node array %q to gather (%s)", name, s.ConfigPath)
	}
	if err != nil {
		closeStores(stores)
		return nil, err
	}
	return stores, nil
}

func closeStores(stores []*shard.Store) {
	for _, st := range stores {
		if st != nil {
			st.Close()
		}
	}
}

// storesLayout lays out the device rows of the stores' node types
// (newRowLayout).
func storesLayout(s *shard.Served, name string, stores []*shard.Store) (rowLayout, error) {
	types := s.Config.NodeTypes
	dtypes, shapes := make([]graph.DType, len(types)), make([][]int64, len(types))
	for ti, st := range stores {
		if st != nil {
			ten := s.Parts[0].NodeFeat(types[ti], name)
			dtypes[ti], shapes[ti] = ten.DType, append([]int64{}, ten.RowShape()...) // not nil: the type has features
		}
	}
	return newRowLayout(name, types, dtypes, shapes)
}

// FeatureRow returns the type and shape of one feature row of the device
// buffers (the shape of a batch's rows is its Rows followed by this): the
// widest node type's, narrower types' rows at its start and zero beyond.
func (l *Loader) FeatureRow() (graph.DType, []int64) { return l.rows.dtype, l.rows.shape }
