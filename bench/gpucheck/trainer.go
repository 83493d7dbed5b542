package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The goals of GraphSAGE on the GPU: the trainers wait for data less than
// 5% of their time where their compute takes at least 1.2 times the
// pipeline's generation of a batch.
const (
	dataWaitGoal    = 0.05
	computeOverGoal = 1.2
)

// trainerDevice is gnnrun train's --device: the GPU, or the CPU in a dry
// run; mirror is api_trainer.py's MIRROR for it.
func (c *checker) trainerDevice() (device, mirror string) {
	if c.o.dryRun {
		return "cpu", "1"
	}
	return "cuda", "cuda"
}

// trainer is step 4: the trainer's persistent GPU tensor checked against
// gnnrun's buffer batch by batch, then GraphSAGE trained on the GPU.
func (c *checker) trainer(st *Step) error {
	if c.torchErr != "" {
		return errors.New(c.torchErr)
	}
	g, err := c.graph(st)
	if err != nil {
		return err
	}
	if err := c.mirror(st, g); err != nil {
		return err
	}
	if err := c.graphsage(st, g); err != nil {
		return err
	}
	return c.examples(st, g)
}

// examples runs the other examples on the device, as their users would
// (--device auto; in a dry run --device cpu --mirror, the GPU's code
// path): link.py on link batches, rgcn.py on the node task (one relation
// here), and pyg_sage.py where PyTorch Geometric is installed. Each must
// exit 0 with its result line.
func (c *checker) examples(st *Step, g *graph) error {
	device, _ := c.trainerDevice()
	var extra []string
	if c.o.dryRun {
		extra = []string{"--device", "cpu", "--mirror"}
	}
	short := []string{"--fanouts", "10,5", "--batch-size", "512", "--epochs", "2", "--batches-per-epoch", "10", "--device", device}
	runs := []struct {
		name, script, score string
		flags, args         []string
	}{
		{"link", "examples/link.py", "train_auc", []string{"--task", "link", "--negatives", "2", "--eval", "none"}, []string{"--hidden", "64"}},
		{"rgcn", "examples/rgcn.py", "test_acc", nil, nil},
		{"pyg_sage", "examples/pyg_sage.py", "test_acc", nil, []string{"--hidden", "64"}},
	}
	for _, r := range runs {
		if r.name == "pyg_sage" && exec.Command(c.o.python, "-c", "import torch_geometric").Run() != nil {
			st.note("examples/pyg_sage.py not run: %s cannot import torch_geometric", c.o.python)
			continue
		}
		args := append(append(append([]string{"train", g.parts}, short...), r.flags...), "--", c.o.python, c.repoPath(r.script))
		args = append(args, r.args...)
		if r.name != "pyg_sage" {
			args = append(args, extra...)
		}
		stdout, err := c.run(st, c.gnnrunCmd("4-"+r.name, args...))
		if err != nil {
			return fmt.Errorf("%s: %w", r.script, err)
		}
		res, err := resultLine(stdout)
		if err != nil {
			return fmt.Errorf("%s: %w", r.script, err)
		}
		st.detail(r.name, res)
		st.Figures = append(st.Figures, fig(r.script+"'s "+r.score, res[r.score], "").withNote("2 short epochs on the device, %s", device))
	}
	return nil
}

// apiRun is what api_trainer.py writes to $OUT_DIR/<rank>.json.
type apiRun struct {
	Batches       []json.RawMessage `json:"batches"`
	BadEdges      int               `json:"bad_edges"`
	CheckedEdges  int               `json:"checked_edges"`
	MirrorChecked int               `json:"mirror_checked"`
	MirrorBad     []string          `json:"mirror_bad"`
	Stats         struct {
		Device      string  `json:"device"`
		BytesCopied int64   `json:"bytes_copied"`
		BytesHot    int64   `json:"bytes_hot"`
		BytesFull   int64   `json:"bytes_full"`
		UpdateS     float64 `json:"update_s"`
	} `json:"stats"`
}

// mirror runs api_trainer.py under gnnrun train with the trainer's tensor
// on the device (MIRROR=cuda): it passes when the run exits 0, every batch
// had its tensor checked against the shared buffer and none differed,
// block 0's edges read their endpoints' input rows, and the trainer copied
// exactly the bytes gnnrun reports copying to its buffers.
func (c *checker) mirror(st *Step, g *graph) error {
	device, mirror := c.trainerDevice()
	out := filepath.Join(c.work, "trainer", "mirror")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	rep, err := c.reportPath("4-mirror")
	if err != nil {
		return err
	}
	cmd := c.gnnrunCmd("4-mirror", "train", g.parts, "--fanouts", "4,3", "--batch-size", "64", "--epochs", "2", "--device", device,
		"--ids", "--hot-cache", "1000000", "--report", rep, "--", c.o.python, c.repoPath("cmd/gnnrun/testdata/api_trainer.py"), "loader")
	cmd.env = []string{"MIRROR=" + mirror, "OUT_DIR=" + out, "FEAT=" + g.feat()}
	if _, err := c.run(st, cmd); err != nil {
		return err
	}
	r, err := readReport(rep)
	if err != nil {
		return err
	}
	var a apiRun
	blob, err := os.ReadFile(filepath.Join(out, "0.json"))
	if err == nil {
		err = json.Unmarshal(blob, &a)
	}
	if err != nil {
		return fmt.Errorf("api_trainer.py's output: %w", err)
	}
	t := r.Results.Train
	if t == nil || len(t.Batches) != 1 || len(t.BytesToDevice) != 1 {
		return fmt.Errorf("%s: no train results for one rank", rep)
	}
	st.detail("mirror", a.Stats)
	st.Figures = append(st.Figures,
		fig("batches whose device tensor equals gnnrun's buffer", float64(a.MirrorChecked-len(a.MirrorBad)), "").
			withNote("of %d; block 0's edges checked: %d, wrong: %d", t.Batches[0], a.CheckedEdges, a.BadEdges),
		fig("bytes the trainer copied to its tensor", float64(a.Stats.BytesCopied)/(1<<20), "MiB").
			withNote("gnnrun's bytes_to_device %s MiB; hot-cache rows %s MiB", num(float64(t.BytesToDevice[0])/(1<<20)),
				num(float64(a.Stats.BytesHot)/(1<<20))))
	return mirrorErrors(a, t, device)
}

// mirrorErrors says what is wrong with api_trainer.py's checks.
func mirrorErrors(a apiRun, t *trainResults, device string) error {
	var errs []error
	if len(a.MirrorBad) > 0 {
		errs = append(errs, fmt.Errorf("%d batches' tensors differ from gnnrun's buffer, first: %s", len(a.MirrorBad), a.MirrorBad[0]))
	}
	if a.MirrorChecked != len(a.Batches) || int64(a.MirrorChecked) != t.Batches[0] {
		errs = append(errs, fmt.Errorf("%d batches had their tensor checked, of %d seen (gnnrun handed over %d)", a.MirrorChecked, len(a.Batches), t.Batches[0]))
	}
	if a.BadEdges > 0 || a.CheckedEdges == 0 {
		errs = append(errs, fmt.Errorf("%d of block 0's %d edges read wrong rows", a.BadEdges, a.CheckedEdges))
	}
	if a.Stats.BytesCopied != t.BytesToDevice[0] || a.Stats.BytesCopied == 0 || a.Stats.BytesFull != 0 {
		errs = append(errs, fmt.Errorf("the trainer copied %d bytes (and %d whole), gnnrun %d to its buffers", a.Stats.BytesCopied, a.Stats.BytesFull, t.BytesToDevice[0]))
	}
	if a.Stats.Device != "" && !strings.HasPrefix(a.Stats.Device, device) {
		errs = append(errs, fmt.Errorf("the trainer's tensor is on %q, not %s", a.Stats.Device, device))
	}
	return errors.Join(errs...)
}

// graphsage trains examples/graphsage.py on the device and compares its
// compute per batch with the pipeline's generation of a batch, measured
// alone (gnnrun loader with train's flags and no trainer).
func (c *checker) graphsage(st *Step, g *graph) error {
	device, _ := c.trainerDevice()
	batchFlags := []string{"--fanouts", "10,5", "--batch-size", "512", "--epochs", "3"}
	gen, err := c.generation(st, g, batchFlags)
	if err != nil {
		return err
	}
	rep, err := c.reportPath("4-graphsage")
	if err != nil {
		return err
	}
	args := append(append([]string{"train", g.parts}, batchFlags...), "--device", device, "--report", rep, "--",
		c.o.python, c.repoPath("examples/graphsage.py"), "--hidden", "256")
	stdout, err := c.run(st, c.gnnrunCmd("4-graphsage", args...))
	if err != nil {
		return err
	}
	res, err := resultLine(stdout)
	if err != nil {
		return fmt.Errorf("graphsage.py: %w", err)
	}
	r, err := readReport(rep)
	if err != nil {
		return err
	}
	if r.Results.Train == nil || len(r.Results.Train.Batches) != 1 || r.Results.Train.Batches[0] == 0 {
		return fmt.Errorf("%s: no train results for one rank", rep)
	}
	st.detail("graphsage", res)
	wait, secs := res["data_wait_fraction"], res["seconds"]
	batches := float64(r.Results.Train.Batches[0])
	compute := secs * (1 - wait) / batches
	st.note("compute per batch is graphsage.py's seconds × (1 − data_wait_fraction) / the %d batches it got "+
		"(its evaluation batches, forward only, included): %s ms; generation per batch is gnnrun loader's with the same "+
		"flags and no trainer (--device host: the buffers train hands over), seconds_slowest / batches: %s ms. "+
		"The data-wait goal is the pipeline's claim where compute takes at least %.1f× generation",
		int64(batches), num(1e3*compute), num(1e3*gen), computeOverGoal)
	waitFig := fig("GraphSAGE's data-wait fraction", wait, "").goal("<", dataWaitGoal).
		withNote("%s s for 3 epochs, %s", num(secs), accuracy(res))
	if compute < computeOverGoal*gen {
		// The pipeline cannot keep ahead of a trainer faster than it: the
		// wait says how much faster, not whether the pipeline overlaps.
		waitFig.Met, waitFig.Goal = nil, waitFig.Goal+fmt.Sprintf(" (not applicable: compute < %.1f× generation)", computeOverGoal)
	}
	st.Figures = append(st.Figures, waitFig,
		fig("GraphSAGE's compute per batch", 1e3*compute, "ms").
			ratio("compute / generation", compute/gen, ">=", computeOverGoal).
			withNote("generation %s ms per batch", num(1e3*gen)))
	return nil
}

// generation runs gnnrun loader on train's batches with no trainer and
// returns its seconds per batch.
func (c *checker) generation(st *Step, g *graph, batchFlags []string) (float64, error) {
	rep, err := c.reportPath("4-generation")
	if err != nil {
		return 0, err
	}
	args := append(append([]string{"loader", g.parts}, batchFlags...), "--device", "host", "--report", rep)
	if _, err := c.run(st, c.gnnrunCmd("4-generation", args...)); err != nil {
		return 0, err
	}
	r, err := readReport(rep)
	if err != nil {
		return 0, err
	}
	l := r.Results.Loader
	if l == nil || len(l.Batches) == 0 || l.Batches[0] == 0 {
		return 0, fmt.Errorf("%s: no loader batches", rep)
	}
	return l.SecondsSlowest / float64(l.Batches[0]), nil
}

// resultLine parses the last line of stdout that is a JSON object.
func resultLine(stdout []byte) (map[string]float64, error) {
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.HasPrefix(lines[i], "{") {
			continue
		}
		var raw map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &raw); err != nil {
			return nil, err
		}
		out := map[string]float64{}
		for k, v := range raw {
			if f, ok := v.(float64); ok {
				out[k] = f
			}
		}
		if _, ok := out["data_wait_fraction"]; !ok {
			return nil, fmt.Errorf("its result line has no data_wait_fraction: %s", lines[i])
		}
		return out, nil
	}
	return nil, fmt.Errorf("no result line (a JSON object) in its output")
}

// accuracy names graphsage.py's scores.
func accuracy(res map[string]float64) string {
	return fmt.Sprintf("val_acc %s, test_acc %s (chance 0.25)", num(res["val_acc"]), num(res["test_acc"]))
}
