package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// graph is the graph of steps 3 to 5: an R-MAT graph with 64 features and
// 4 planted classes, made by gnnrun itself (gen, partition into one part,
// dispatch), as the Makefile's demo makes its graph.
type graph struct {
	dir, parts string
	commands   []string // the commands that made it
	err        error
}

// feat is the directory of the input's feature chunks (api_trainer.py's
// $FEAT).
func (g *graph) feat() string { return filepath.Join(g.dir, "node_data", "_N") }

// graph makes the graph the first time a step asks, adding the commands
// that made it to that step's and every later asker's.
func (c *checker) graph(st *Step) (*graph, error) {
	if c.g == nil {
		c.g = c.makeGraph(st.Number)
	}
	st.Commands = append(st.Commands, c.g.commands...)
	if c.g.err != nil {
		return nil, fmt.Errorf("making the graph: %w", c.g.err)
	}
	return c.g, nil
}

func (c *checker) makeGraph(step int) *graph {
	g := &graph{dir: filepath.Join(c.work, "graph"), parts: filepath.Join(c.work, "parts")}
	asg := filepath.Join(c.work, "assignment")
	// A step of its own for the commands, copied to the steps that use it.
	st := Step{Number: step}
	for _, args := range [][]string{
		{"gen", "--scale", fmt.Sprint(c.o.scale), "--feat-dim", "64", "--classes", "4", "--planted", "0.8", "--seed", "1", "--out", g.dir},
		{"partition", "--in", g.dir, "--parts", "1", "--balance", "nodes,train,edges", "--out", asg},
		{"dispatch", "--in", g.dir, "--assignment", asg, "--out", g.parts},
	} {
		if _, err := c.run(&st, c.gnnrunCmd("graph-"+args[0], args...)); err != nil {
			g.err = err
			break
		}
	}
	g.commands = st.Commands
	return g
}

// report is the part of a gnnrun --report file that the steps read.
type report struct {
	Results struct {
		Loader *loaderResults `json:"loader"`
		Train  *trainResults  `json:"train"`
		Sample *sampleResults `json:"sample"`
	} `json:"results"`
}

type loaderResults struct {
	Batches                   []int64 `json:"batches"`
	BytesToDevice             int64   `json:"bytes_to_device"`
	BytesToDeviceWithoutCache int64   `json:"bytes_to_device_without_cache"`
	BytesMovedOnDevice        int64   `json:"bytes_moved_on_device"`
	RowsInput                 int64   `json:"rows_input"`
	RowsReused                int64   `json:"rows_reused"`
	RowsHot                   int64   `json:"rows_hot"`
	RowsFetched               int64   `json:"rows_fetched"`
	SecondsSlowest            float64 `json:"seconds_slowest"`
	TrainerWaitFraction       float64 `json:"trainer_wait_fraction"`
	PeakDeviceBytes           int64   `json:"peak_device_bytes"`
	Stages                    map[string]struct {
		BusyS         float64 `json:"busy_s"`
		MeanQueueFill float64 `json:"mean_queue_fill"`
	} `json:"stages"`
}

type trainResults struct {
	Batches       []int64 `json:"batches"`
	BytesToDevice []int64 `json:"bytes_to_device"`
}

type sampleResults struct {
	Batches        int64   `json:"batches"`
	Edges          int64   `json:"edges"`
	EdgesPerS      float64 `json:"edges_per_s"`
	SecondsSlowest float64 `json:"seconds_slowest"`
}

// reportPath is where a step's gnnrun command writes its report (the
// directory made).
func (c *checker) reportPath(name string) (string, error) {
	dir := filepath.Join(c.work, "reports")
	return filepath.Join(dir, name+".json"), os.MkdirAll(dir, 0o755)
}

// readReport reads a gnnrun --report file.
func readReport(path string) (*report, error) {
	blob, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(blob, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}
