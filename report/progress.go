package report

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"
)

// Meter shows the progress of long stages. Only one rank (rank 0) should
// have an enabled Meter. On a terminal it draws bars; otherwise (under
// mpirun or in a Slurm output file) it prints a plain line per stage every
// Interval while the stage runs, so batch logs show progress without
// drowning in it.
type Meter struct {
	enabled  bool
	tty      bool
	out      io.Writer
	interval time.Duration
	mu       sync.Mutex
	bars     *mpb.Progress
}

// Interval is how often a Meter prints a stage's line where it draws no
// bar: a job that prints nothing for longer reads as hung.
const Interval = 30 * time.Second

// NewMeter returns a meter that reports when enabled is true, its lines
// to out.
func NewMeter(enabled bool, out io.Writer) *Meter {
	_, err := unix.IoctlGetTermios(int(os.Stderr.Fd()), unix.TCGETS)
	return &Meter{enabled: enabled, tty: err == nil, out: out, interval: Interval}
}

// Task is the progress of one stage.
type Task struct {
	m     *Meter
	name  string
	unit  string
	total int64
	done  atomic.Int64
	start time.Time
	last  atomic.Int64 // unix nanos of the last log line
	bar   *mpb.Bar
}

// Start begins a stage of total units (e.g. "edges", "bytes"); total may be
// 0 when unknown.
func (m *Meter) Start(name string, total int64, unit string) *Task {
	t := &Task{m: m, name: name, unit: unit, total: total, start: time.Now()}
	t.last.Store(t.start.UnixNano())
	if !m.enabled || !m.tty {
		return t
	}
	m.mu.Lock()
	if m.bars == nil {
		m.bars = mpb.New(mpb.WithOutput(os.Stderr), mpb.WithWidth(40))
	}
	m.mu.Unlock()
	t.bar = m.bars.AddBar(total,
		mpb.PrependDecorators(decor.Name(name+" ", decor.WCSyncSpaceR), decor.Percentage()),
		mpb.AppendDecorators(decor.AverageSpeed(0, "%.0f "+unit+"/s"), decor.Name(" "), decor.AverageETA(decor.ET_STYLE_GO)),
	)
	return t
}

// Add records n more units done; safe from several goroutines.
func (t *Task) Add(n int64) {
	done := t.done.Add(n)
	if !t.m.enabled {
		return
	}
	if t.bar != nil {
		t.bar.IncrInt64(n)
		return
	}
	now := time.Now().UnixNano()
	last := t.last.Load()
	if time.Duration(now-last) < t.m.interval || !t.last.CompareAndSwap(last, now) {
		return
	}
	t.m.line(t, done)
}

// line prints the stage's progress line.
func (m *Meter) line(t *Task, done int64) {
	of := ""
	if t.total > 0 {
		of = fmt.Sprintf(" of %d (%s%%)", t.total, t.percent(done))
	}
	m.mu.Lock()
	fmt.Fprintf(m.out, "%s: %d%s %s, %s, %s so far\n", t.name, done, of, t.unit, t.rate(done), time.Since(t.start).Round(time.Second))
	m.mu.Unlock()
}

func (t *Task) percent(done int64) string {
	if t.total <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f", 100*float64(done)/float64(t.total))
}

func (t *Task) rate(done int64) string {
	s := time.Since(t.start).Seconds()
	if s <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.3g %s/s", float64(done)/s, t.unit)
}

// Done ends the stage.
func (t *Task) Done() {
	if !t.m.enabled {
		return
	}
	if t.bar != nil {
		t.bar.SetTotal(-1, true)
		t.bar.Wait()
		return
	}
	if time.Since(t.start) >= t.m.interval {
		t.m.line(t, t.done.Load())
	}
}
