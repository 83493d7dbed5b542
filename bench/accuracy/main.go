// Command accuracy trains examples/graphsage.py with gnnrun train on real
// datasets, each partitioned into K = 4 (gnnrun partition --balance
// nodes,train), at 1 and 4 ranks over 5 seeds (the seed of gnnrun's draws
// and of the model's initialisation alike), and reports the median test
// score of each against the published figure it must reach, and the gap
// between 1 and 4 ranks.
//
// Usage (from the repository root; it runs mpirun itself):
//
//	go run ./bench/accuracy [--data ../shared/data/datasets] [--datasets cora,citeseer,tolokers,squirrel]
//
// Converted graphs and partitions go under --dir (default
// bench/results/tmp/accuracy, git-ignored); results to
// bench/results/accuracy.{json,md,svg}, rewritten after every run.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"gnnrun/bench/driver"
)

// dataset is one dataset's conversion, run and goal.
type dataset struct {
	Name    string
	Convert []string // the converter and its arguments; SRC and OUT are appended
	Src     string   // relative to --data
	Metric  string   // the JSON key of the score: test_acc or test_auc
	Goal    float64  // the score the median must reach (0: none)
	Train   []string // gnnrun train flags
	Model   []string // graphsage.py flags
}

var datasets = []dataset{
	{Name: "cora", Convert: []string{"examples/data/planetoid.py"}, Src: "cora-planetoid", Metric: "test_acc", Goal: 0.79,
		Train: []string{"--fanouts", "10,10", "--eval-fanouts", "-1,-1", "--batch-size", "32", "--epochs", "100"},
		Model: []string{"--feat-norm", "row", "--hidden", "64", "--dropout", "0.6", "--lr", "0.005"}},
	{Name: "citeseer", Convert: []string{"examples/data/planetoid.py"}, Src: "citeseer-planetoid", Metric: "test_acc", Goal: 0.68,
		Train: []string{"--fanouts", "10,10", "--eval-fanouts", "-1,-1", "--batch-size", "32", "--epochs", "100"},
		Model: []string{"--feat-norm", "row", "--hidden", "64", "--dropout", "0.6", "--lr", "0.005"}},
	{Name: "tolokers", Convert: []string{"examples/data/yandex.py", "--split", "0"}, Src: "tolokers/tolokers.npz", Metric: "test_auc", Goal: 0.80,
		Train: []string{"--fanouts", "25,15", "--batch-size", "256", "--epochs", "100"},
		Model: []string{"--hidden", "256", "--dropout", "0.2", "--lr", "0.003", "--norm", "layer"}},
	{Name: "squirrel", Convert: []string{"examples/data/yandex.py", "--split", "0"}, Src: "squirrel/squirrel.npz", Metric: "test_acc",
		Train: []string{"--fanouts", "10,10", "--batch-size", "256", "--epochs", "30"},
		Model: []string{"--hidden", "128", "--dropout", "0.5", "--lr", "0.003", "--norm", "layer"}},
}

// run is one training run's result line.
type run struct {
	Dataset string             `json:"dataset"`
	Ranks   int                `json:"ranks"`
	Seed    int                `json:"seed"`
	Result  map[string]float64 `json:"result"`
}

func main() {
	data := flag.String("data", "../shared/data/datasets", "the datasets folder")
	names := flag.String("datasets", "cora,citeseer,tolokers,squirrel", "datasets to run, comma-separated")
	ranks := flag.String("np", "1,4", "rank counts")
	seeds := flag.Int("seeds", 5, "seeds per dataset and rank count")
	parts := flag.Int("parts", 4, "partitions K")
	dir := flag.String("dir", "bench/results/tmp/accuracy", "work directory")
	out := flag.String("out", "bench/results/accuracy", "results prefix (.json, .md, .svg)")
	python := flag.String("python", "/usr/bin/python3", "the trainers' Python, with torch and numpy")
	render := flag.Bool("render", false, "only rewrite the .md and .svg from the .json of an earlier run")
	flag.Parse()
	var err error
	if *render {
		err = rerender(*out)
	} else {
		err = drive(*data, *names, *ranks, *seeds, *parts, *dir, *out, *python)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/accuracy:", err)
		os.Exit(1)
	}
}

func drive(data, names, ranksList string, seeds, k int, dir, out, python string) error {
	ranks, err := driver.Ranks(ranksList)
	if err != nil {
		return err
	}
	bin, err := driver.Gnnrun(dir)
	if err != nil {
		return err
	}
	example, err := filepath.Abs("examples/graphsage.py")
	if err != nil {
		return err
	}
	var runs []run
	for _, name := range strings.Split(names, ",") {
		i := slices.IndexFunc(datasets, func(d dataset) bool { return d.Name == name })
		if i < 0 {
			return fmt.Errorf("unknown dataset %q", name)
		}
		d := datasets[i]
		partsDir, err := prepare(d, data, dir, bin, python, k)
		if err != nil {
			return err
		}
		for _, np := range ranks {
			for seed := 1; seed <= seeds; seed++ {
				args := append([]string{bin, "train", partsDir, "--seed", fmt.Sprint(seed)}, d.Train...)
				args = append(append(args, "--", python, example, "--seed", fmt.Sprint(seed)), d.Model...)
				stdout, err := driver.Output(np, args...)
				if err != nil {
					return err
				}
				res, err := lastJSON(stdout)
				if err != nil {
					return fmt.Errorf("%s P=%d seed %d: %v", d.Name, np, seed, err)
				}
				fmt.Fprintf(os.Stderr, "%s P=%d seed %d: %s %.4f (%.0f s)\n", d.Name, np, seed, d.Metric, res[d.Metric], res["seconds"])
				runs = append(runs, run{Dataset: d.Name, Ranks: np, Seed: seed, Result: res})
				if err := save(out, runs); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// prepare converts a dataset and partitions it, once.
func prepare(d dataset, data, dir, bin, python string, k int) (string, error) {
	g := filepath.Join(dir, d.Name)
	asg, parts := g+"-asg", g+"-parts"
	if _, err := os.Stat(filepath.Join(g, "metadata.json")); err != nil {
		args := append([]string{d.Convert[0], filepath.Join(data, d.Src), g}, d.Convert[1:]...)
		cmd := exec.Command(python, args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("%s: converting: %v", d.Name, err)
		}
	}
	steps := []struct {
		done string
		args []string
	}{
		{filepath.Join(asg, "partition_meta.json"), []string{"partition", "--in", g, "--parts", fmt.Sprint(k), "--balance", "nodes,train", "--out", asg}},
		{filepath.Join(parts, d.Name+".json"), []string{"dispatch", "--in", g, "--assignment", asg, "--out", parts}},
	}
	for _, st := range steps {
		if _, err := os.Stat(st.done); err == nil {
			continue
		}
		if _, err := driver.Output(driver.GenRanks(), append([]string{bin}, st.args...)...); err != nil {
			return "", err
		}
	}
	return parts, nil
}

// lastJSON decodes the last line of out that is a JSON object.
func lastJSON(out []byte) (map[string]float64, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "{") {
			var m map[string]float64
			err := json.Unmarshal([]byte(lines[i]), &m)
			return m, err
		}
	}
	return nil, fmt.Errorf("no result line in:\n%s", out)
}

func save(out string, runs []run) error {
	blob, err := json.MarshalIndent(runs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out+".json", append(blob, '\n'), 0o644); err != nil {
		return err
	}
	return render(out, runs)
}

func rerender(out string) error {
	blob, err := os.ReadFile(out + ".json")
	if err != nil {
		return err
	}
	var runs []run
	if err := json.Unmarshal(blob, &runs); err != nil {
		return err
	}
	return render(out, runs)
}
