// Command train measures the hand-off of gnnrun train: the cost per batch
// of handing a batch to the trainer (gnnrun's side: writing the slot and
// sending the message; the client's: turning it into views) against a
// plain memcpy of the same bytes timed in the same run, and the share of
// time examples/graphsage.py waits for data on R-MAT scale 20 with 128
// features at 2 ranks, beside the pipeline's generation time per batch
// measured alone (gnnrun loader, no trainer).
//
// Usage (from the repository root; it runs mpirun itself):
//
//	go run ./bench/train --scale 20 --np 2
//
// The graph and its K = 4 partitions are made once under --dir (default
// bench/results/tmp/loader, shared with bench/loader). Results go to
// bench/results/train.{json,md}.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gnnrun/bench/driver"
)

type result struct {
	Scale, Ranks int
	Fanouts      string
	Batch        int
	PerEpoch     int
	// The pipeline alone: seconds per batch (gnnrun loader).
	GenerationS float64 `json:"generation_s"`
	// gnnrun train's figures (results.train of its report).
	Train map[string]any `json:"train"`
	// graphsage.py's result line.
	Model map[string]float64 `json:"model"`
}

func main() {
	scale := flag.Int("scale", 20, "R-MAT scale")
	np := flag.Int("np", 2, "ranks")
	fanouts := flag.String("fanouts", "15,10,5", "fanouts")
	batch := flag.Int("batch-size", 1024, "seeds per batch")
	perEpoch := flag.Int("batches-per-epoch", 32, "batches per rank per epoch (2 epochs)")
	dir := flag.String("dir", "bench/results/tmp/loader", "work directory (graphs shared with bench/loader)")
	out := flag.String("out", "bench/results/train", "results prefix (.json, .md)")
	python := flag.String("python", "/usr/bin/python3", "the trainers' Python")
	flag.Parse()
	if err := run(*scale, *np, *fanouts, *batch, *perEpoch, *dir, *out, *python); err != nil {
		fmt.Fprintln(os.Stderr, "bench/train:", err)
		os.Exit(1)
	}
}

func run(scale, np int, fanouts string, batch, perEpoch int, dir, out, python string) error {
	if err := driver.CheckRanks([]int{np}); err != nil {
		return err
	}
	bin, err := driver.Gnnrun(dir)
	if err != nil {
		return err
	}
	parts, err := driver.Partitioned(bin, dir, "-f128", scale, 4, "nodes,train", "--feat-dim", "128")
	if err != nil {
		return err
	}
	r := result{Scale: scale, Ranks: np, Fanouts: fanouts, Batch: batch, PerEpoch: perEpoch}
	common := []string{"--fanouts", fanouts, "--batch-size", fmt.Sprint(batch), "--epochs", "2", "--batches-per-epoch", fmt.Sprint(perEpoch)}
	rep := filepath.Join(dir, "report-train-loader.json")
	if _, err := driver.Output(np, append(append([]string{bin, "loader", parts}, common...), "--report", rep)...); err != nil {
		return err
	}
	var lr struct {
		Results struct {
			Loader struct {
				Seconds float64 `json:"seconds_slowest"`
				Batches []int64 `json:"batches"`
			} `json:"loader"`
		} `json:"results"`
	}
	if err := readJSON(rep, &lr); err != nil {
		return err
	}
	r.GenerationS = lr.Results.Loader.Seconds / float64(lr.Results.Loader.Batches[0])
	example, _ := filepath.Abs("examples/graphsage.py")
	rep = filepath.Join(dir, "report-train.json")
	stdout, err := driver.Output(np, append(append([]string{bin, "train", parts}, common...),
		"--eval", "none", "--report", rep, "--", python, example, "--hidden", "128")...)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s", stdout)
	var tr struct {
		Results struct {
			Train map[string]any `json:"train"`
		} `json:"results"`
	}
	if err := readJSON(rep, &tr); err != nil {
		return err
	}
	r.Train = tr.Results.Train
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	for i := len(lines) - 1; i >= 0 && r.Model == nil; i-- {
		if strings.HasPrefix(lines[i], "{") {
			if err := json.Unmarshal([]byte(lines[i]), &r.Model); err != nil {
				return err
			}
		}
	}
	if r.Model == nil {
		return fmt.Errorf("no result line from graphsage.py:\n%s", stdout)
	}
	blob, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(out+".json", append(blob, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(out+".md", []byte(render(r)), 0o644)
}

func readJSON(path string, v any) error {
	blob, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(blob, v)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func num(m map[string]any, k string) float64 {
	v, _ := m[k].(float64)
	return v
}

func render(r result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The hand-off to the trainer (bench/train)\n\n")
	fmt.Fprintf(&b, "R-MAT scale %d with 128 float32 features in K = 4 partitions, %d ranks, fanouts %s, batches of %d, %d batches per rank per epoch, 2 epochs, `examples/graphsage.py --hidden 128` on CPU PyTorch, no evaluation sets.\n\n", r.Scale, r.Ranks, r.Fanouts, r.Batch, r.PerEpoch)
	b.WriteString("| figure | value |\n|---|---|\n")
	t, m := r.Train, r.Model
	steps := m["seconds"] / (2 * float64(r.PerEpoch))
	rows := []struct {
		name, val string
	}{
		{"hand-off, gnnrun's side (µs per batch)", fmt.Sprintf("%.0f", num(t, "handoff_us_per_batch"))},
		{"hand-off, the client's side (µs per batch)", fmt.Sprintf("%.0f", m["client_us_per_batch"])},
		{"bytes written to the slot per batch", fmt.Sprintf("%.2f MB", num(t, "slot_bytes_per_batch")/1e6)},
		{"memcpy of the slot's bytes (µs, same run)", fmt.Sprintf("%.0f", num(t, "memcpy_us_slot"))},
		{"hand-off (both sides) / memcpy of the slot", fmt.Sprintf("%.2f", (num(t, "handoff_us_per_batch")+m["client_us_per_batch"])/num(t, "memcpy_us_slot"))},
		{"bytes of the whole batch with its features", fmt.Sprintf("%.1f MB", num(t, "batch_bytes_per_batch")/1e6)},
		{"memcpy of the whole batch (µs, same run): what a copying hand-off would move", fmt.Sprintf("%.0f", num(t, "memcpy_us_batch"))},
		{"hand-off (both sides) / memcpy of the whole batch", fmt.Sprintf("%.3f", (num(t, "handoff_us_per_batch")+m["client_us_per_batch"])/num(t, "memcpy_us_batch"))},
		{"generation time per batch, pipeline alone (ms)", fmt.Sprintf("%.1f", 1e3*r.GenerationS)},
		{"the model's time per batch, with its waits (ms)", fmt.Sprintf("%.0f", 1e3*steps)},
		{"model time / generation time", fmt.Sprintf("%.1f", steps/r.GenerationS)},
		{"graphsage.py's data-wait fraction (goal < 5% when ≥ 1.2)", fmt.Sprintf("%.2f%%", 100*m["data_wait_fraction"])},
	}
	for _, x := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", x.name, x.val)
	}
	return b.String()
}
