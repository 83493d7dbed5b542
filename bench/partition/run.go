package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// result is one partitioning run, measured.
type result struct {
	cut     int64
	imb     float64
	wall    float64 // process wall seconds, reading and writing included
	algo    float64 // seconds of the algorithm alone (build + partition)
	peakRSS int64   // bytes, the largest over ranks
}

// runGpmetis runs gpmetis (k-way, or recursive bisection) on file.
func (b *bench) runGpmetis(g *graph, file string, k, seed int, rb bool) (result, error) {
	work := filepath.Join(b.tmp, "gp")
	os.MkdirAll(work, 0o755)
	local := filepath.Join(work, filepath.Base(file))
	os.Remove(local)
	if err := os.Symlink(mustAbs(file), local); err != nil {
		return result{}, err
	}
	args := []string{"-f", "%e %M", b.gpmetis, fmt.Sprintf("-seed=%d", seed)}
	if rb {
		args = append(args, "-ptype=rb")
	}
	args = append(args, local, strconv.Itoa(k))
	cmd := exec.Command("/usr/bin/time", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("gpmetis: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	r, err := parseGpmetis(stdout.String(), stderr.String())
	if err != nil {
		return result{}, err
	}
	r.cut, r.imb, err = g.quality(fmt.Sprintf("%s.part.%d", local, k), k)
	return r, err
}

// gpmetisTime is the line of gpmetis' report with the algorithm's time.
var gpmetisTime = regexp.MustCompile(`(?m)^\s*Partitioning:\s+([0-9.]+) sec`)

// parseGpmetis reads the algorithm's seconds from gpmetis' report (stdout)
// and the process wall seconds and peak RSS from /usr/bin/time -f "%e %M"
// (the last line of stderr). It fails, quoting the output, when either is
// missing: a time that silently became 0 would make gpmetis look
// infinitely fast in the tables.
func parseGpmetis(stdout, stderr string) (result, error) {
	var r result
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	var kib int64
	if n, err := fmt.Sscanf(last, "%f %d", &r.wall, &kib); n != 2 {
		return result{}, fmt.Errorf("gpmetis: no wall time and peak RSS (/usr/bin/time -f \"%%e %%M\") in the last line of stderr %q: %v", last, err)
	}
	r.peakRSS = kib * 1024
	m := gpmetisTime.FindStringSubmatch(stdout)
	if m == nil {
		return result{}, fmt.Errorf("gpmetis: no \"Partitioning: ... sec\" line in its output:\n%s", stdout)
	}
	var err error
	if r.algo, err = strconv.ParseFloat(m[1], 64); err != nil {
		return result{}, fmt.Errorf("gpmetis: partitioning time %q in its output: %v", m[1], err)
	}
	return r, nil
}

// runOurs runs gnnrun partition on np ranks (np = 1: without mpirun).
func (b *bench) runOurs(g *graph, file string, k, np, seed int, algo string) (result, error) {
	out := filepath.Join(b.tmp, "ours")
	rep := filepath.Join(b.tmp, "report.json")
	args := []string{"partition", "--in", file, "--parts", strconv.Itoa(k), "--out", out, "--overwrite",
		"--seed", strconv.Itoa(seed), "--report", rep, "--algo", algo}
	var cmd *exec.Cmd
	if np == 1 {
		cmd = exec.Command(b.bin, args...)
	} else {
		mp := []string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none"}
		if os.Geteuid() == 0 {
			mp = append(mp, "--allow-run-as-root")
		}
		cmd = exec.Command("mpirun", append(append(mp, b.bin), args...)...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("gnnrun partition: %v\n%s", err, stderr.String())
	}
	r := result{wall: time.Since(t0).Seconds()}
	var report struct {
		PerRank []struct {
			PeakRSS int64 `json:"peak_rss_bytes"`
			Stages  []struct {
				Name    string  `json:"name"`
				Seconds float64 `json:"seconds"`
			} `json:"stages"`
		} `json:"per_rank"`
	}
	raw, err := os.ReadFile(rep)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(raw, &report); err != nil {
		return r, err
	}
	for _, pr := range report.PerRank {
		r.peakRSS = max(r.peakRSS, pr.PeakRSS)
		algo := 0.0
		for _, st := range pr.Stages {
			if st.Name == "build" || st.Name == "partition" {
				algo += st.Seconds
			}
		}
		r.algo = max(r.algo, algo)
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	r.cut, r.imb, err = g.quality(filepath.Join(out, name+".part"), k)
	return r, err
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return a
}
