package pack

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadOGB reads the graph sizes of an OGB graph-property dataset from its
// raw counts: num-node-list.csv and num-edge-list.csv, each optionally
// gzipped, one count per graph and line, in dir or dir/raw. OGB stores each
// undirected edge once and adds the inverse when its master.csv says
// add_inverse_edge (ogbg-mol*, ogbg-ppa); with addInverse the edge counts
// are doubled to match what PyG loads. It fails, naming file and line, on a
// missing file, a count that is not a non-negative integer, files of
// different lengths and an empty dataset.
func ReadOGB(dir string, addInverse bool) ([]Tuple, error) {
	nodes, err := readOGBList(dir, "num-node-list.csv")
	if err != nil {
		return nil, err
	}
	edges, err := readOGBList(dir, "num-edge-list.csv")
	if err != nil {
		return nil, err
	}
	if len(nodes) != len(edges) {
		return nil, fmt.Errorf("pack: OGB dataset %s: %d node counts but %d edge counts", dir, len(nodes), len(edges))
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("pack: OGB dataset %s: empty dataset", dir)
	}
	sizes := make([]Tuple, len(nodes))
	for i := range sizes {
		if nodes[i] < 1 {
			return nil, fmt.Errorf("pack: OGB dataset %s: graph %d has no nodes", dir, i)
		}
		sizes[i] = Tuple{Nodes: nodes[i], Edges: edges[i]}
		if addInverse {
			sizes[i].Edges *= 2
		}
	}
	return sizes, nil
}

// readOGBList reads one of OGB's count files from dir or dir/raw, plain or
// gzipped.
func readOGBList(dir, name string) ([]int, error) {
	for _, d := range []string{dir, filepath.Join(dir, "raw")} {
		for _, n := range []string{name, name + ".gz"} {
			path := filepath.Join(d, n)
			if _, err := os.Stat(path); err == nil {
				return ReadIntList(path)
			}
		}
	}
	return nil, fmt.Errorf("pack: OGB dataset %s: missing %s (or .gz) in it or in its raw folder", dir, name)
}

// ReadIntList reads one non-negative integer per line from a file, gzipped
// when its name ends in .gz: OGB's count files and split files (the graph
// indices of train.csv.gz). A first line that is not a number is taken for
// a header and skipped.
func ReadIntList(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(path) == ".gz" {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("pack: %s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	var out []int
	err = scanReader(bufio.NewReader(r), path, func(line int, text string) error {
		n, err := parseCount(text)
		if err != nil && line == 1 && len(out) == 0 && !startsWithDigit(text) {
			return nil // header
		}
		if err != nil {
			return err
		}
		out = append(out, n)
		return nil
	})
	return out, err
}

func startsWithDigit(s string) bool { return s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') }

// Subset returns the sizes of the graphs idx, in that order: a split of a
// dataset. It fails on an index out of range or listed twice.
func Subset(sizes []Tuple, idx []int) ([]Tuple, error) {
	if len(idx) == 0 {
		return nil, errors.New("pack: empty split")
	}
	seen := make([]bool, len(sizes))
	out := make([]Tuple, len(idx))
	for i, j := range idx {
		if j < 0 || j >= len(sizes) {
			return nil, fmt.Errorf("pack: split entry %d: graph %d of a dataset of %d", i, j, len(sizes))
		}
		if seen[j] {
			return nil, fmt.Errorf("pack: split entry %d: graph %d listed twice", i, j)
		}
		seen[j] = true
		out[i] = sizes[j]
	}
	return out, nil
}
