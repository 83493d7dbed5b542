package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"gnnrun/atomicfile"
	"gnnrun/collective"
)

// Stage is what one rank measured over one stage of a command.
type Stage struct {
	Name          string  `json:"name"`
	Seconds       float64 `json:"seconds"`
	BytesSent     int64   `json:"bytes_sent"`
	BytesReceived int64   `json:"bytes_received"`
	PeakRSS       int64   `json:"peak_rss_bytes"`
	// At the stage's end: see RankReport's fields of the same names.
	RSSShared int64 `json:"rss_shared_bytes"`
	PSS       int64 `json:"pss_bytes"`
}

// RankReport is one rank's part of the report.
type RankReport struct {
	Rank    int     `json:"rank"`
	Host    string  `json:"host"`
	Stages  []Stage `json:"stages"`
	PeakRSS int64   `json:"peak_rss_bytes"`
	// The largest at the end of a stage (or of the run, where it has no
	// stages): the resident pages of shared memory and mapped files, which
	// PeakRSS counts in every rank that maps them (the host's edge table,
	// the partitions' files), and the proportional set size, which divides
	// each such page among the processes mapping it: the sum of a host's
	// ranks' PSS is the host's memory then.
	RSSShared int64   `json:"rss_shared_bytes"`
	PSS       int64   `json:"pss_bytes"`
	Seconds   float64 `json:"seconds"`
}

// Report is the JSON document --report writes.
type Report struct {
	Command string         `json:"command"`
	Ranks   int            `json:"ranks"`
	Results map[string]any `json:"results,omitempty"`
	PerRank []RankReport   `json:"per_rank"`
}

// Recorder measures the stages of one command on one rank.
type Recorder struct {
	c       *collective.Comm
	mu      sync.Mutex
	stages  []Stage
	start   time.Time
	results map[string]any
}

// NewRecorder starts measuring on c.
func NewRecorder(c *collective.Comm) *Recorder {
	return &Recorder{c: c, start: time.Now(), results: map[string]any{}}
}

// Stage starts the named stage and returns the function that ends it; the
// peak memory of the stage is measured from its start. Use as
// defer rec.Stage("shuffle")().
func (r *Recorder) Stage(name string) func() {
	t0 := time.Now()
	tr0 := r.c.Traffic()
	resetPeakRSS()
	return func() {
		tr := r.c.Traffic()
		st := Stage{
			Name:          name,
			Seconds:       time.Since(t0).Seconds(),
			BytesSent:     tr.Sent - tr0.Sent,
			BytesReceived: tr.Received - tr0.Received,
			PeakRSS:       PeakRSS(),
			RSSShared:     SharedRSS(),
			PSS:           PSS(),
		}
		r.mu.Lock()
		r.stages = append(r.stages, st)
		r.mu.Unlock()
	}
}

// Stages returns the stages measured so far on this rank.
func (r *Recorder) Stages() []Stage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Stage(nil), r.stages...)
}

// Set records a result of the command (a count, a cut, a ratio) under key,
// to appear in the report; rank 0's values are the ones written.
func (r *Recorder) Set(key string, v any) {
	r.mu.Lock()
	r.results[key] = v
	r.mu.Unlock()
}

// Gather collects every rank's measurements on rank 0; other ranks get nil.
// It is collective.
func (r *Recorder) Gather(command string) (*Report, error) {
	r.mu.Lock()
	mine := RankReport{Rank: r.c.Rank(), Host: r.c.Host(), Stages: r.stages, PeakRSS: lifetimePeakRSS(),
		RSSShared: SharedRSS(), PSS: PSS(), Seconds: time.Since(r.start).Seconds()}
	for _, st := range r.stages {
		mine.RSSShared, mine.PSS = max(mine.RSSShared, st.RSSShared), max(mine.PSS, st.PSS)
	}
	r.mu.Unlock()
	blob, err := json.Marshal(mine)
	if err != nil {
		return nil, err
	}
	all, counts, err := collective.Allgatherv(r.c, blob)
	if err != nil {
		return nil, err
	}
	if r.c.Rank() != 0 {
		return nil, nil
	}
	rep := &Report{Command: command, Ranks: r.c.Size(), Results: r.results}
	off := 0
	for _, n := range counts {
		var rr RankReport
		if err := json.Unmarshal(all[off:off+n], &rr); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		rep.PerRank = append(rep.PerRank, rr)
		off += n
	}
	return rep, nil
}

// Write gathers the report and writes it as JSON to path on rank 0. It is
// collective.
func (r *Recorder) Write(path, command string) error {
	rep, err := r.Gather(command)
	if err != nil || rep == nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := atomicfile.WriteFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// PeakRSS returns the peak resident set of this process since the last
// stage started (VmHWM), in bytes, or 0 where /proc is missing.
func PeakRSS() int64 { return procStatus("VmHWM:") }

// lifetimePeakRSS is the peak over all stages; VmHWM is reset per stage.
var (
	lifetimeMu   sync.Mutex
	lifetimePeak int64
)

func lifetimePeakRSS() int64 {
	lifetimeMu.Lock()
	defer lifetimeMu.Unlock()
	lifetimePeak = max(lifetimePeak, PeakRSS())
	return lifetimePeak
}

// resetPeakRSS starts a new peak measurement: writing 5 to clear_refs resets
// VmHWM to the current RSS (Linux 4.0+). The old peak is kept for the run.
func resetPeakRSS() {
	lifetimePeakRSS()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// RSS returns the current resident set in bytes (VmRSS).
func RSS() int64 { return procStatus("VmRSS:") }

// SharedRSS returns the resident pages of shared memory and mapped files
// in bytes (RssShmem + RssFile), which every process mapping them counts.
func SharedRSS() int64 { return procStatus("RssShmem:") + procStatus("RssFile:") }

// PSS returns the proportional set size in bytes: the private pages plus
// each shared page divided by the processes that map it (Linux 4.14+'s
// smaps_rollup; 0 where it is missing).
func PSS() int64 { return procField("/proc/self/smaps_rollup", "Pss:") }

func procStatus(key string) int64 { return procField("/proc/self/status", key) }

// procField reads the kB figure of the line of a /proc file that starts
// with key, in bytes.
func procField(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, key) {
			fields := strings.Fields(line[len(key):])
			if len(fields) > 0 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
