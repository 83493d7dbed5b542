package pack

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ReadTU reads the graph sizes of a dataset of the TU collection from its
// folder: DS_graph_indicator.txt (line i: the graph, from 1, of node i) and
// DS_A.txt (one edge "u, v" per line, nodes from 1), DS being the folder's
// name or, failing that, the one *_A.txt file in it. Edges are counted as PyG
// does: self-loops dropped, duplicate pairs merged, each stored direction
// counted. It fails, naming the file and line, on a missing file, a field
// that is not a positive integer, an edge whose ends are in different graphs
// or out of range, and a graph without nodes.
func ReadTU(dir string) ([]Tuple, error) {
	name, err := tuName(dir)
	if err != nil {
		return nil, err
	}
	nodeGraph, nodes, err := readIndicator(filepath.Join(dir, name+"_graph_indicator.txt"))
	if err != nil {
		return nil, err
	}
	edges, err := readTUEdges(filepath.Join(dir, name+"_A.txt"), nodeGraph, len(nodes))
	if err != nil {
		return nil, err
	}
	sizes := make([]Tuple, len(nodes))
	for g := range sizes {
		if nodes[g] == 0 {
			return nil, fmt.Errorf("pack: TU dataset %s: graph %d has no nodes", name, g+1)
		}
		sizes[g] = Tuple{Nodes: nodes[g], Edges: edges[g]}
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("pack: TU dataset %s: empty dataset", name)
	}
	return sizes, nil
}

// tuName returns the dataset name of a TU folder.
func tuName(dir string) (string, error) {
	name := filepath.Base(filepath.Clean(dir))
	if _, err := os.Stat(filepath.Join(dir, name+"_A.txt")); err == nil {
		return name, nil
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*_A.txt"))
	if len(matches) == 1 {
		return strings.TrimSuffix(filepath.Base(matches[0]), "_A.txt"), nil
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("pack: TU dataset: %w", err)
	}
	return "", fmt.Errorf("pack: TU dataset in %s: missing %s_A.txt (the edges); want DS_A.txt and DS_graph_indicator.txt", dir, name)
}

// readIndicator returns the graph (from 0) of every node and the node count
// of every graph.
func readIndicator(path string) (nodeGraph []int32, nodes []int, err error) {
	err = scanLines(path, func(line int, text string) error {
		g, err := parsePositive(text)
		if err != nil {
			return err
		}
		for len(nodes) < g {
			nodes = append(nodes, 0)
		}
		nodes[g-1]++
		nodeGraph = append(nodeGraph, int32(g-1))
		return nil
	})
	return nodeGraph, nodes, err
}

// readTUEdges returns the number of distinct directed edges, self-loops
// dropped, of every graph.
func readTUEdges(path string, nodeGraph []int32, graphs int) ([]int, error) {
	var pairs []uint64
	err := scanLines(path, func(line int, text string) error {
		f := strings.Split(text, ",")
		if len(f) != 2 {
			return fmt.Errorf("want two node ids \"u, v\", got %q", text)
		}
		u, err := parsePositive(f[0])
		if err != nil {
			return err
		}
		v, err := parsePositive(f[1])
		if err != nil {
			return err
		}
		if u > len(nodeGraph) || v > len(nodeGraph) {
			return fmt.Errorf("edge %d, %d: the graph indicator has %d nodes", u, v, len(nodeGraph))
		}
		if nodeGraph[u-1] != nodeGraph[v-1] {
			return fmt.Errorf("edge %d, %d joins graphs %d and %d", u, v, nodeGraph[u-1]+1, nodeGraph[v-1]+1)
		}
		if u != v {
			pairs = append(pairs, uint64(u)<<32|uint64(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(pairs)
	edges := make([]int, graphs)
	for i, p := range pairs {
		if i == 0 || p != pairs[i-1] {
			edges[nodeGraph[p>>32-1]]++
		}
	}
	return edges, nil
}

// scanLines calls fn on every non-blank line of a file, wrapping its errors
// with the file and line.
func scanLines(path string, fn func(line int, text string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	defer f.Close()
	return scanReader(bufio.NewReader(f), path, fn)
}

func scanReader(r *bufio.Reader, name string, fn func(line int, text string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if err := fn(line, text); err != nil {
			return fmt.Errorf("pack: %s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("pack: %s: %w", name, err)
	}
	return nil
}

// parsePositive parses an integer >= 1.
func parsePositive(s string) (int, error) {
	n, err := parseCount(s)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("%q is not a positive integer", strings.TrimSpace(s))
	}
	return n, nil
}
