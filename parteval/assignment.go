package parteval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gnnrun/graph"
)

// ReadAssignment reads the part of every node of the graph m describes,
// in homogeneous ID order (node type t's nodes after those of types
// 0..t-1), and the number of parts K. path is either a DGL assignment
// directory — partition_meta.json, whose num_parts is K, and <ntype>.txt
// per node type, line i the part of type-wise node i — or a METIS .part
// file, one part per line for every node, whose K is its largest part + 1.
// It fails on a missing file, a line that is not a part in [0,K), or a
// line count other than the node count.
func ReadAssignment(path string, m *graph.Meta) ([]int32, int, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("parteval: %w", err)
	}
	if !st.IsDir() {
		part, err := readParts(path, m.TotalNodes(), -1)
		if err != nil {
			return nil, 0, err
		}
		k := int32(0)
		for _, p := range part {
			k = max(k, p+1)
		}
		return part, int(k), nil
	}
	k, err := readNumParts(filepath.Join(path, "partition_meta.json"))
	if err != nil {
		return nil, 0, err
	}
	var part []int32
	for t, name := range m.NodeTypes {
		p, err := readParts(filepath.Join(path, name+".txt"), m.NumNodes[t], k)
		if err != nil {
			return nil, 0, err
		}
		part = append(part, p...)
	}
	return part, k, nil
}

func readNumParts(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("parteval: %w", err)
	}
	var meta struct {
		NumParts int `json:"num_parts"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return 0, fmt.Errorf("parteval: %s: %w", path, err)
	}
	if meta.NumParts < 1 {
		return 0, fmt.Errorf("parteval: %s: num_parts is %d, need at least 1", path, meta.NumParts)
	}
	return meta.NumParts, nil
}

// readParts reads n lines of one part each; k < 0 leaves the parts
// unbounded above.
func readParts(path string, n int64, k int) ([]int32, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("parteval: %w", err)
	}
	lines := bytes.Split(raw, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1] // the last line's newline
	}
	if int64(len(lines)) != n {
		return nil, fmt.Errorf("parteval: %s has %d lines for %d nodes", path, len(lines), n)
	}
	part := make([]int32, n)
	for i, line := range lines {
		p, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("parteval: %s line %d: %q is not a part number", path, i+1, line)
		}
		if k >= 0 && p >= int64(k) {
			return nil, fmt.Errorf("parteval: %s line %d: part %d is outside [0,%d)", path, i+1, p, k)
		}
		part[i] = int32(p)
	}
	return part, nil
}
