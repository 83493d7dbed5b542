// Command ingest measures how fast gnnrun reads the edge chunks of a
// generated graph in each format (CSV, NumPy, Parquet) at 1 and 2 ranks,
// beside the raw rate of `cat FILES > /dev/null` on the same files in the
// same run, and how much memory each rank needs for its share.
//
// Usage (from the repository root; it runs mpirun itself):
//
//	go run ./bench/ingest --scale 22
//
// Built without MPI (go run -tags nompi ./bench/ingest --np 1) it starts
// its workers directly, as worlds of one.
//
// It generates the graph once per format under --dir (by default
// bench/results/tmp/ingest, git-ignored), then for each format: warms the
// page cache, times cat over the edge chunk files (best of 3), and times
// graphio.Read of the edges under `mpirun -np P` for each P, recording wall
// time, edges, and every rank's peak RSS next to the bytes of its share of
// the edges (the Src, Dst and type-wise ID columns it holds). Results go to
// bench/results/ingest.json and bench/results/ingest.md.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gnnrun/bench/driver"
	"gnnrun/collective"
	"gnnrun/graphio"
	"gnnrun/internal/proc"
	"gnnrun/rank"
	"gnnrun/report"
)

// rankMeasure is what one rank measured while reading.
type rankMeasure struct {
	Rank       int     `json:"rank"`
	Edges      int64   `json:"edges"`
	ShareBytes int64   `json:"share_bytes"`
	PeakRSS    int64   `json:"peak_rss_bytes"`
	RSSRatio   float64 `json:"rss_over_share"`
	CPUSeconds float64 `json:"cpu_seconds"` // user+system time of the read
}

// readResult is one timed read of one format at one rank count.
type readResult struct {
	Format      string        `json:"format"`
	Ranks       int           `json:"ranks"`
	Seconds     float64       `json:"seconds"`
	Edges       int64         `json:"edges"`
	FileBytes   int64         `json:"file_bytes"`
	MBps        float64       `json:"mb_per_s"`
	EdgesPerSec float64       `json:"edges_per_s"`
	CatMBps     float64       `json:"cat_mb_per_s"`
	CatSeconds  float64       `json:"cat_seconds"`
	PerRank     []rankMeasure `json:"per_rank"`
	MaxRSSRatio float64       `json:"max_rss_over_share"`
	CPUSeconds  float64       `json:"cpu_seconds"` // summed over ranks
	Checksum    string        `json:"edge_checksum"`
	ReadOverCat float64       `json:"read_time_over_cat_time"`
}

func main() {
	worker := flag.String("worker", "", "internal: gen or read, run under mpirun by the driver")
	in := flag.String("in", "", "internal: graph to read (worker read)")
	scale := flag.Int("scale", 22, "R-MAT scale of the generated graph (2^scale nodes, 16*2^scale edges)")
	dir := flag.String("dir", "bench/results/tmp/ingest", "where the generated graphs go")
	ranks := flag.String("np", "1,2", "rank counts to read with")
	formats := flag.String("formats", "csv,numpy,parquet", "edge chunk formats to measure")
	out := flag.String("out", "bench/results/ingest", "results prefix: PREFIX.json and PREFIX.md")
	format := flag.String("format", "numpy", "internal: format to generate (worker gen)")
	keep := flag.Bool("keep", false, "keep the generated graphs")
	flag.Parse()
	var err error
	switch *worker {
	case "gen":
		err = workerGen(*scale, *format, *in)
	case "read":
		err = workerRead(*in)
	case "":
		err = drive(*scale, *dir, *ranks, *formats, *out, *keep)
	default:
		err = fmt.Errorf("unknown worker %q", *worker)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest:", err)
		os.Exit(1)
	}
}

// workerGen generates the graph with every rank of the MPI world.
func workerGen(scale int, format, dir string) error {
	c, err := world()
	if err != nil {
		return err
	}
	spec := graphio.GenSpec{Scale: scale, Seed: 1, Noise: 0.1, Permute: true, Format: format}
	spec.SetDefaults(c.Size())
	res, err := graphio.Generate(c, spec, dir, nil)
	if err != nil {
		return err
	}
	if c.Rank() == 0 {
		fmt.Printf("%#016x\n", res.Checksum)
	}
	return rank.Finalize()
}

// workerRead reads the edges with every rank and prints, on rank 0, one
// JSON line with the wall time and every rank's measurements.
func workerRead(dir string) error {
	c, err := world()
	if err != nil {
		return err
	}
	runtime.GC()
	if err := c.Barrier(); err != nil {
		return err
	}
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset VmHWM
	cpu0 := proc.CPU().Seconds()
	start := time.Now()
	g, err := graphio.Read(c, dir, graphio.SkipData(true))
	if err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	cpu := proc.CPU().Seconds() - cpu0
	e := g.Edges
	share := int64(8*len(e.Src) + 8*len(e.Dst) + 8*len(e.ID) + 2*len(e.Type) + 4*len(e.Weight))
	m := rankMeasure{Rank: c.Rank(), Edges: int64(e.Len()), ShareBytes: share, PeakRSS: report.PeakRSS(), CPUSeconds: cpu}
	m.RSSRatio = float64(m.PeakRSS) / float64(max(share, 1))
	all, err := collective.Allgather(c, m)
	if err != nil {
		return err
	}
	sum, err := graphio.EdgeChecksum(c, e)
	if err != nil {
		return err
	}
	if c.Rank() == 0 {
		b, _ := json.Marshal(struct {
			Seconds  float64       `json:"seconds"`
			PerRank  []rankMeasure `json:"per_rank"`
			Checksum string        `json:"checksum"`
		}{secs, all, fmt.Sprintf("%#016x", sum)})
		fmt.Println(string(b))
	}
	return rank.Finalize()
}

func world() (*collective.Comm, error) {
	rc, err := rank.World()
	if err != nil {
		return nil, err
	}
	return collective.New(rc)
}

// drive runs the whole benchmark.
func drive(scale int, dir, ranksList, formatList, out string, keep bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// go run builds into a temporary directory that mpirun can start.
	var nps []int
	for _, s := range strings.Split(ranksList, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("-np: %v", err)
		}
		nps = append(nps, n)
	}
	if err := driver.CheckRanks(nps); err != nil {
		return err
	}
	var results []readResult
	host, _ := os.Hostname()
	for _, format := range strings.Split(formatList, ",") {
		gdir := filepath.Join(dir, fmt.Sprintf("rmat%d-%s", scale, format))
		os.RemoveAll(gdir)
		t0 := time.Now()
		cmd, err := driver.Launch(driver.GenRanks(), self, "-worker", "gen", "-scale", strconv.Itoa(scale), "-format", format, "-in", gdir)
		if err != nil {
			return err
		}
		genOut, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("gen %s: %v\n%s", format, err, genOut)
		}
		fmt.Printf("generated %s in %.1f s: checksum %s", gdir, time.Since(t0).Seconds(), genOut)
		files, _ := filepath.Glob(filepath.Join(gdir, "edges", "*"))
		var fileBytes int64
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				return err
			}
			fileBytes += st.Size()
		}
		catSecs, err := catTime(files)
		if err != nil {
			return err
		}
		catMBps := float64(fileBytes) / catSecs / 1e6
		fmt.Printf("  cat: %.1f MB in %.3f s = %.0f MB/s\n", float64(fileBytes)/1e6, catSecs, catMBps)
		for _, np := range nps {
			cmd, err := driver.Launch(np, self, "-worker", "read", "-in", gdir)
			if err != nil {
				return err
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("read %s np=%d: %v\n%s", format, np, err, stderr.String())
			}
			var w struct {
				Seconds  float64       `json:"seconds"`
				PerRank  []rankMeasure `json:"per_rank"`
				Checksum string        `json:"checksum"`
			}
			if err := json.Unmarshal(lastLine(stdout.Bytes()), &w); err != nil {
				return fmt.Errorf("read %s np=%d: %v in %q", format, np, err, stdout.String())
			}
			r := readResult{Format: format, Ranks: np, Seconds: w.Seconds, FileBytes: fileBytes, CatMBps: catMBps, CatSeconds: catSecs, PerRank: w.PerRank, Checksum: w.Checksum}
			for _, pr := range w.PerRank {
				r.Edges += pr.Edges
				r.MaxRSSRatio = max(r.MaxRSSRatio, pr.RSSRatio)
				r.CPUSeconds += pr.CPUSeconds
			}
			r.MBps = float64(fileBytes) / w.Seconds / 1e6
			r.EdgesPerSec = float64(r.Edges) / w.Seconds
			r.ReadOverCat = w.Seconds / catSecs
			fmt.Printf("  read np=%d: %.3f s (%.2f CPU s), %.0f MB/s, %.3g edges/s, peak RSS/share max %.2f, checksum %s\n", np, w.Seconds, r.CPUSeconds, r.MBps, r.EdgesPerSec, r.MaxRSSRatio, w.Checksum)
			results = append(results, r)
		}
		if !keep {
			os.RemoveAll(gdir)
		}
	}
	return writeResults(out, scale, host, results)
}

// catTime warms the page cache with one cat of the files, then returns the
// best of three timed cats.
func catTime(files []string) (float64, error) {
	best := 0.0
	for i := range 4 {
		cmd := exec.Command("cat", files...)
		cmd.Stdout = nil // /dev/null
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return 0, err
		}
		cmd.Stdout = devnull
		t0 := time.Now()
		err = cmd.Run()
		secs := time.Since(t0).Seconds()
		devnull.Close()
		if err != nil {
			return 0, fmt.Errorf("cat: %v", err)
		}
		if i > 0 && (best == 0 || secs < best) {
			best = secs
		}
	}
	return best, nil
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

func writeResults(prefix string, scale int, host string, results []readResult) error {
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return err
	}
	doc := struct {
		Scale   int          `json:"scale"`
		Host    string       `json:"host"`
		CPUs    int          `json:"cpus"`
		Date    string       `json:"date"`
		Results []readResult `json:"results"`
	}{scale, host, runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339), results}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Ingest read throughput, R-MAT scale %d (%d edges), %s, %d CPUs, %s\n\n", scale, 16<<scale, host, runtime.NumCPU(), doc.Date)
	fmt.Fprintf(&md, "Edges only (`graphio.Read` with `SkipData`), page cache warm; `cat` is the best of 3 `cat FILES > /dev/null` of the same edge chunk files in the same run. Share = bytes of the Src, Dst and ID columns a rank holds. The machine is shared: wall times depend on its load, CPU seconds less so.\n\n")
	fmt.Fprintf(&md, "| format | ranks | file MB | read s | CPU s (all ranks) | MB/s | edges/s | cat MB/s | read/cat time | peak RSS per rank (MB) | RSS / share (max) |\n")
	fmt.Fprintf(&md, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		var rss []string
		for _, pr := range r.PerRank {
			rss = append(rss, fmt.Sprintf("%.0f", float64(pr.PeakRSS)/1e6))
		}
		fmt.Fprintf(&md, "| %s | %d | %.0f | %.2f | %.2f | %.0f | %.3g | %.0f | %.1f× | %s | %.2f |\n", r.Format, r.Ranks, float64(r.FileBytes)/1e6, r.Seconds, r.CPUSeconds, r.MBps, r.EdgesPerSec, r.CatMBps, r.ReadOverCat, strings.Join(rss, " / "), r.MaxRSSRatio)
	}
	return os.WriteFile(prefix+".md", []byte(md.String()), 0o644)
}
