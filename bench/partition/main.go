// Command partition compares gnnrun partition with METIS' gpmetis on the
// same graphs in the same run: Walshaw-archive meshes and R-MAT graphs made
// by gnnrun gen (symmetrised, deduplicated, written as METIS files so both
// tools read the same bytes). For every graph, K and rank count it runs
// both, recomputes cut and imbalance of every .part file independently, and
// reports the median cut over seeds as a ratio to gpmetis' k-way cut (and to
// its recursive bisection), wall time, and peak RSS per rank from gnnrun's
// --report. Run from the repository root:
//
//	go run ./bench/partition -graphs 4elt,finan512,wing,bcsstk33,rmat18,rmat20
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gnnrun/bench/driver"
)

func main() {
	graphs := flag.String("graphs", "4elt,finan512,wing,bcsstk33,rmat18", "Walshaw graph names (in -data), rmatS for gnnrun gen at scale S, rmatSp the same with 8 planted communities")
	data := flag.String("data", "../shared/data/graphs", "directory of the Walshaw METIS files")
	ks := flag.String("k", "2,8,32,64", "part counts")
	nps := flag.String("np", "1,2,4", "rank counts")
	seeds := flag.Int("seeds", 3, "seeds per run on meshes (R-MAT graphs use 1)")
	rounds := flag.Int("rounds", 1, "runs of gpmetis and ours per seed, taking turns; the tables give the median and range of ours / gpmetis in wall time")
	bin := flag.String("bin", "bin/gnnrun", "gnnrun binary")
	gp := flag.String("gpmetis", "gpmetis", "gpmetis binary")
	tmp := flag.String("tmp", "bench/results/tmp/partition", "scratch directory (generated graphs are kept here)")
	out := flag.String("out", "bench/results/partition", "results prefix: .md and .csv are written")
	prepare := flag.Bool("prepare", false, "only write the graphs' METIS files and print their paths")
	flag.Parse()
	b := &bench{bin: *bin, gpmetis: *gp, tmp: *tmp, data: *data}
	var err error
	if b.ks, err = driver.Ints(*ks); err == nil {
		b.nps, err = driver.Ints(*nps)
	}
	switch {
	case err != nil:
	case *prepare:
		err = b.prepare(strings.Split(*graphs, ","))
	default:
		err = b.run(strings.Split(*graphs, ","), *seeds, max(*rounds, 1), *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/partition:", err)
		os.Exit(1)
	}
}

type bench struct {
	bin, gpmetis, tmp, data string
	ks, nps                 []int
}

// prepare writes the METIS file of every graph and prints its path.
func (b *bench) prepare(names []string) error {
	for _, name := range names {
		file, err := b.graphFile(name)
		if err != nil {
			return err
		}
		fmt.Println(file)
	}
	return nil
}

// graphFile returns the METIS file of a graph name, generating R-MAT graphs.
func (b *bench) graphFile(name string) (string, error) {
	if strings.HasPrefix(name, "rmat") {
		spec, planted := strings.CutSuffix(strings.TrimPrefix(name, "rmat"), "p")
		scale, err := strconv.Atoi(spec)
		if err != nil {
			return "", fmt.Errorf("graph %q: want rmatSCALE, or rmatSCALEp for planted communities", name)
		}
		return b.rmat(scale, planted)
	}
	path := filepath.Join(b.data, name+".graph")
	if _, err := os.Stat(path); err != nil {
		return "", err
	}
	return path, nil
}
