package train

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"gnnrun/cuda"
	"gnnrun/graph"
	"gnnrun/prefetch"
)

// Protocol is the version of the control messages (README, Formats).
const Protocol = 4

// Array is one array of a batch as the trainer sees it.
type Array struct {
	Name  string
	DType graph.DType
	Shape []int64
	Data  []byte
}

// ArrayOf makes an Array of a slice of numbers.
func ArrayOf[T any](name string, s []T) Array {
	t := graph.TensorOf(s, 0)
	return Array{Name: name, DType: t.DType, Shape: t.Shape, Data: t.Data}
}

// Options say how to run the trainer.
type Options struct {
	Child ChildSpec
	// Hello is sent to the trainer first, with the protocol version and
	// the feature rows' type and shape added: rank, world, task, classes.
	Hello map[string]any
	// Extra, when set, adds arrays to each batch (input IDs for checks).
	Extra func(b *prefetch.Batch) ([]Array, error)
	// Monitor, when set, hears what the trainer says: the batches it is
	// done with and the figures it logs (gnnrun.log).
	Monitor Monitor
	// Checkpoints, when set, takes the trainer's checkpoints.
	Checkpoints Checkpoints
}

// Checkpoints are a run's checkpoints as the hand-off sees them: it names
// the checkpoint marked on a batch (prefetch.Batch.Checkpoint) for the
// trainer, hears the trainer's part of it, and may take the first SIGTERM
// or SIGUSR1 (a checkpoint first, then Stop).
type Checkpoints interface {
	// Name names the checkpoint after batch b.
	Name(b *prefetch.Batch) string
	// Part: the trainer saved its part of checkpoint name as file, of
	// size bytes, in seconds; file is "" when it did not save one.
	Part(name, file string, size int64, seconds float64)
	// Signal is told of SIGTERM or SIGUSR1: true when the run goes on to
	// a checkpoint (Stop closes after it), false to stop now.
	Signal(s os.Signal) bool
	// Stop closes when the run must end: its last checkpoint is written.
	Stop() <-chan struct{}
}

// ErrCheckpointStop is Run's error when the run stopped after the
// checkpoint a signal asked for (Checkpoints.Stop).
var ErrCheckpointStop = errors.New("train: stopped after a checkpoint, as a signal asked")

// Monitor hears the trainer, on the hand-off's goroutine, in the order
// the trainer spoke.
type Monitor interface {
	// Done: the trainer is done with batch b (handed or skipped); wait is
	// its seconds waiting for batches so far.
	Done(b BatchInfo, wait float64)
	// Logged: the trainer logged values during epoch (its last training
	// epoch begun; -1 before any).
	Logged(epoch int, values map[string]float64, wait float64)
}

// BatchInfo names a batch the trainer was handed.
type BatchInfo struct {
	Kind  string
	Epoch int
}

// Stats is what a Run did.
type Stats struct {
	Batches int64
	// Handoff is gnnrun's time writing the slots and sending the messages,
	// over all batches; SlotBytes the bytes it wrote (the features are not
	// copied: the trainer maps the device buffers).
	Handoff   time.Duration
	SlotBytes int64
	// FeatureBytes are the bytes of the feature rows the batches handed
	// (in place in the device buffers: a copying hand-off would move them).
	FeatureBytes int64
	// StoppedEarly says the trainer exited 0 before the last batch.
	StoppedEarly bool
	// StrayAcks counts acknowledgements of batches no slot held (repeated,
	// or of a batch already released).
	StrayAcks int64
}

// ErrSignal is wrapped by Run's error when gnnrun was told to stop.
var ErrSignal = errors.New("stopped by a signal")

func signalled(s os.Signal) error {
	return fmt.Errorf("train: %w (%v): the trainer is stopped", ErrSignal, s)
}

// Run starts the trainer and hands it l's batches, each once the trainer
// is done with an earlier one in its slot, until the last, then waits for
// the trainer to exit. It returns when the trainer exited 0 after taking
// every batch or stopped early (Stats.StoppedEarly: close l to stop the
// pipeline), or with the first failure: the trainer exiting non-zero or
// killed, the loader failing, SIGTERM or SIGINT (the trainer is stopped
// then). The loader's device must be opened cuda.Shared.
func Run(l *prefetch.Loader, o Options) (Stats, error) {
	h, err := newHandoff(l, o)
	if err != nil {
		return Stats{}, err
	}
	st, err := h.run()
	stopped := errors.Is(err, errStoppedEarly) || errors.Is(err, ErrCheckpointStop)
	if errors.Is(err, errStoppedEarly) {
		err = nil
	}
	if errors.Is(err, ErrCheckpointStop) {
		// The trainer exits on this message (status 75) when it asks for
		// its next batch; one that does not within the grace is stopped.
		if h.ch.send(map[string]any{"type": "stop"}) == nil {
			select {
			case <-h.child.done:
			case <-time.After(killGrace):
			}
		}
	}
	if err != nil {
		h.child.stop()
	}
	if stopped && h.o.Extra != nil {
		// The trainer is gone: the batches it held free their device
		// buffers for the pipeline's last ones.
		for k := range h.slots {
			h.releaseSlot(k)
		}
		if derr := h.drain(); derr != nil {
			err = derr
		}
	}
	if h.quit != nil {
		close(h.quit)
	}
	if cerr := h.close(); err == nil {
		err = cerr
	}
	return st, err
}

// handoff is one Run.
type handoff struct {
	l     *prefetch.Loader
	o     Options
	ch    *channel
	child *child
	meta  cuda.Device // shared host memory of the slots
	slots []*slot
	free  chan int // slots the trainer is done with
	bufs  bufferIDs
	stats Stats
	// The feature rows' type and shape (the loader's), and the graph's
	// types.
	rowType  graph.DType
	rowShape []int64
	types    prefetch.Types
	// signalled: the checkpoints took a signal; the next one stops the run.
	signalled bool
	batches   chan produced // the loader's, from produce
	quit      chan struct{} // closed when Run ends: produce stops
}

// slot is shared memory the non-feature arrays of one batch at a time are
// written into, and the batch it holds.
type slot struct {
	buf   cuda.Buffer
	batch *prefetch.Batch
}

func newHandoff(l *prefetch.Loader, o Options) (*handoff, error) {
	meta, err := cuda.Open(cuda.Host, 0, cuda.Shared())
	if err != nil {
		return nil, err
	}
	// The trainer holds at most every device buffer's batch: one slot each.
	n := l.DeviceBuffers()
	h := &handoff{l: l, o: o, meta: meta, free: make(chan int, n), bufs: bufferIDs{ids: map[cuda.Buffer]int{}, device: map[int]cuda.Buffer{}}}
	h.rowType, h.rowShape = l.FeatureRow()
	h.types = l.Types()
	for i := range n {
		h.slots = append(h.slots, &slot{})
		h.free <- i
	}
	if h.ch, err = newChannel(); err != nil {
		return nil, err
	}
	if h.child, err = startChild(o.Child, h.ch.child); err != nil {
		h.ch.close()
		return nil, err
	}
	h.ch.closeChild()
	return h, nil
}

// run is the hand-off's loop: batches from the loader, acknowledgements
// from the trainer, the trainer's exit and signals, whichever comes.
func (h *handoff) run() (Stats, error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	defer signal.Stop(sigs)
	var stop <-chan struct{}
	if h.o.Checkpoints != nil {
		stop = h.o.Checkpoints.Stop()
	}
	if err := h.hello(); err != nil {
		return h.stats, err
	}
	acks, gone := h.readAcks()
	h.quit = make(chan struct{}) // Run closes it
	h.batches = h.produce(h.quit)
	batches := h.batches
	for batches != nil {
		select {
		case next, ok := <-batches:
			if !ok {
				batches = nil
				break
			}
			if next.err != nil {
				return h.stats, next.err
			}
			if err := h.sendBatch(next.b, acks, gone, sigs, stop); err != nil {
				return h.stats, err
			}
		case k := <-acks:
			h.release(k)
		case <-gone:
			return h.stats, h.trainerGone()
		case s := <-sigs:
			if err := h.onSignal(s); err != nil {
				return h.stats, err
			}
		case <-stop:
			return h.stats, ErrCheckpointStop
		}
	}
	if err := h.ch.send(map[string]any{"type": "end"}); err != nil {
		return h.stats, h.trainerGoneOr(err)
	}
	for {
		select {
		case k := <-acks:
			h.release(k)
		case <-gone:
			return h.stats, h.child.exited()
		case s := <-sigs:
			if err := h.onSignal(s); err != nil {
				return h.stats, err
			}
		case <-stop:
			return h.stats, ErrCheckpointStop
		}
	}
}

// produced is a batch from the loader, or its error.
type produced struct {
	b   *prefetch.Batch
	err error
}

// produce takes the loader's batches on a goroutine of its own until the
// last (the channel closes) or an error; once quit closes it releases the
// batch it holds and takes no more (the loader's Close drains the rest).
func (h *handoff) produce(quit chan struct{}) chan produced {
	out := make(chan produced)
	go func() {
		defer close(out)
		for {
			b, err := h.l.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			select {
			case out <- produced{b, err}:
			case <-quit:
				if b != nil {
					b.Release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// ack is a message of the trainer: "done" with a batch (its slot and its
// place in the stream, so that a stray or repeated ack cannot release a
// later batch of the same slot), or "log" (figures of an epoch); both
// carry its seconds waiting for batches so far.
type ack struct {
	Type   string         `json:"type"`
	Slot   int            `json:"slot"`
	Seq    int64          `json:"seq"`
	Wait   float64        `json:"wait"`
	Epoch  int            `json:"epoch"`
	Values map[string]any `json:"values"` // numbers; "nan", "inf", "-inf" as strings
	// A checkpoint's part: "saved" (File, Bytes) or "nosave".
	Name    string  `json:"name"`
	File    string  `json:"file"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
}

// readAcks reads the trainer's messages on a goroutine of its own: the
// batches it is done with and its logs; gone closes when the socket does
// (the trainer closed it or exited).
func (h *handoff) readAcks() (chan ack, chan struct{}) {
	acks := make(chan ack, 2*len(h.slots))
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			var m ack
			if err := h.ch.recv(&m); err != nil {
				return
			}
			if (m.Type == "done" && m.Slot >= 0 && m.Slot < len(h.slots)) || m.Type == "log" || m.Type == "saved" || m.Type == "nosave" {
				acks <- m
			}
		}
	}()
	return acks, gone
}

// trainerGone says why the trainer closed the socket before the end: it
// exited (0: it stopped early, errStoppedEarly) or it closed the socket
// and did not exit.
func (h *handoff) trainerGone() error {
	select {
	case <-h.child.done:
	case <-time.After(killGrace):
		return fmt.Errorf("train: the trainer closed its control socket before the last batch and did not exit")
	}
	if err := h.child.exited(); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	h.stats.StoppedEarly = true
	return errStoppedEarly
}

// logValues turns a log message's values into numbers: JSON numbers, and
// the strings the client sends for NaN and infinities; anything else is
// left out.
func logValues(in map[string]any) map[string]float64 {
	out := make(map[string]float64, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case float64:
			out[k] = x
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				out[k] = f
			}
		}
	}
	return out
}

// onSignal takes a signal: nil when the checkpoints take it (SIGTERM or
// SIGUSR1, the first time: a checkpoint, then Stop), else the error that
// stops the run. SIGUSR1 without checkpoints is ignored.
func (h *handoff) onSignal(s os.Signal) error {
	if s != syscall.SIGINT && !h.signalled && h.o.Checkpoints != nil && h.o.Checkpoints.Signal(s) {
		h.signalled = true
		return nil
	}
	if s == syscall.SIGUSR1 {
		return nil
	}
	return signalled(s)
}

// discard drops a batch the trainer will not get, after its Extra arrays
// (collective: the other ranks' hand-offs make them for the same batch).
func (h *handoff) discard(b *prefetch.Batch) error {
	defer b.Release()
	if h.o.Extra == nil {
		return nil
	}
	_, err := h.o.Extra(b)
	return err
}

// drain takes the rest of the loader's batches through discard once the
// trainer stopped, until the loader ends: with Extra, each batch's arrays
// are collective, and the other ranks' trainers may still take batches.
// The loader ends once every rank stops taking (prefetch.Loader.Stop).
func (h *handoff) drain() error {
	h.l.Stop()
	for next := range h.batches {
		if next.err != nil {
			return next.err
		}
		if err := h.discard(next.b); err != nil {
			return err
		}
	}
	return nil
}

// errStoppedEarly ends the hand-off's loop when the trainer exited 0
// before the last batch: Run returns no error then.
var errStoppedEarly = errors.New("train: the trainer stopped early")

// trainerGoneOr explains a failed send by the trainer's end, if it ended:
// a trainer that exited 0 stopped early (errStoppedEarly, as trainerGone
// says), one that failed says how.
func (h *handoff) trainerGoneOr(err error) error {
	select {
	case <-h.child.done:
		if xerr := h.child.exited(); xerr != nil {
			return fmt.Errorf("train: %w", xerr)
		}
		h.stats.StoppedEarly = true
		return errStoppedEarly
	case <-time.After(killGrace):
	}
	return err
}

// release gives the acknowledged batch back to the loader, if its slot
// still holds it (an ack of an earlier batch, or a repeated one, is
// counted and ignored), telling the monitor; a log goes to the monitor.
func (h *handoff) release(a ack) {
	mon := h.o.Monitor
	if a.Type == "saved" || a.Type == "nosave" {
		if h.o.Checkpoints != nil {
			h.o.Checkpoints.Part(a.Name, a.File, a.Bytes, a.Seconds)
		}
		return
	}
	if a.Type == "log" {
		if mon != nil {
			mon.Logged(a.Epoch, logValues(a.Values), a.Wait)
		}
		return
	}
	b := h.slots[a.Slot].batch
	if b == nil || b.Seq != a.Seq {
		h.stats.StrayAcks++
		return
	}
	if mon != nil {
		mon.Done(BatchInfo{Kind: b.Kind, Epoch: b.Epoch}, a.Wait)
	}
	h.releaseSlot(a.Slot)
}

// releaseSlot gives slot k's batch back to the loader.
func (h *handoff) releaseSlot(k int) {
	s := h.slots[k]
	if s.batch != nil {
		s.batch.Release()
		s.batch = nil
		h.free <- k
	}
}

// sendBatch waits for a free slot (releasing what the trainer is done
// with), writes the batch's arrays into it and tells the trainer.
func (h *handoff) sendBatch(b *prefetch.Batch, acks chan ack, gone chan struct{}, sigs chan os.Signal, stop <-chan struct{}) error {
	var k int
	for got := false; !got; {
		select {
		case k = <-h.free:
			got = true
		case a := <-acks:
			h.release(a)
		case <-gone:
			h.discard(b)
			return h.trainerGone()
		case s := <-sigs:
			if err := h.onSignal(s); err != nil {
				b.Release()
				return err
			}
		case <-stop:
			h.discard(b)
			return ErrCheckpointStop
		}
	}
	t0 := time.Now()
	msg, fds, err := h.layout(k, b)
	if err == nil {
		err = h.ch.send(msg, fds...)
	}
	if err != nil {
		b.Release()
		h.free <- k
		return h.trainerGoneOr(err)
	}
	h.slots[k].batch = b
	h.stats.Handoff += time.Since(t0)
	h.stats.Batches++
	h.stats.FeatureBytes += int64(b.Rows) * int64(b.RowBytes)
	return nil
}

// close releases the slots, the batches they hold and the socket.
func (h *handoff) close() error {
	var first error
	for k, s := range h.slots {
		h.releaseSlot(k)
		if s.buf != nil {
			if err := s.buf.Free(); err != nil && first == nil {
				first = err
			}
		}
	}
	if err := h.ch.close(); err != nil && first == nil {
		first = err
	}
	if err := h.meta.Close(); err != nil && first == nil {
		first = err
	}
	return first
}
