package graphio

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gnnrun/atomicfile"
	"gnnrun/collective"
	"gnnrun/graph"
)

// AssignmentMeta is partition_meta.json of DGL's partition-assignment
// directory, the file DGL's dispatch_data.py reads.
type AssignmentMeta struct {
	AlgoName string `json:"algo_name"`
	NumParts int    `json:"num_parts"`
	Version  string `json:"version"`
}

// AssignmentVersion is the version of the assignment format written.
const AssignmentVersion = "1.0.0"

// WriteAssignment writes a partition assignment in DGL's format: one
// <ntype>.txt per node type, whose line i is the part of type-wise node i,
// and partition_meta.json; for a graph with one node type also
// <graph_name>.part, the METIS-style file gpmetis writes. Every rank holds
// the parts of the homogeneous node IDs [lo, lo+len(part)), the ranks'
// ranges tiling [0, N) in rank order, and writes its lines at their offset
// in each file, so no rank holds more than its share. Files are written
// under temporary names and renamed, partition_meta.json last. It is
// collective and returns the paths written.
func WriteAssignment(c *collective.Comm, dir string, m *graph.Meta, lo int64, part []int32, parts int) ([]string, error) {
	if c.Rank() == 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("graphio: %w", err)
		}
	}
	var paths []string
	hi := lo + int64(len(part))
	for t, name := range m.NodeTypes {
		off := m.NodeOffset(t)
		a, b := max(lo, off), min(hi, off+m.NumNodes[t])
		buf := partLines(part, a-lo, b-lo)
		files := []string{filepath.Join(dir, name+".txt")}
		if len(m.NodeTypes) == 1 {
			files = append(files, filepath.Join(dir, m.Name+".part"))
		}
		for _, f := range files {
			if err := WriteShared(c, f, buf); err != nil {
				return nil, err
			}
		}
		paths = append(paths, files...)
	}
	metaPath := filepath.Join(dir, "partition_meta.json")
	if c.Rank() == 0 {
		blob, _ := json.MarshalIndent(AssignmentMeta{AlgoName: "metis", NumParts: parts, Version: AssignmentVersion}, "", "  ")
		if err := atomicfile.WriteFile(metaPath, append(blob, '\n')); err != nil {
			return nil, fmt.Errorf("graphio: %w", err)
		}
	}
	return append(paths, metaPath), c.Barrier()
}

// partLines formats part[a:b] one decimal per line.
func partLines(part []int32, a, b int64) []byte {
	if a >= b {
		return nil
	}
	buf := make([]byte, 0, (b-a)*3)
	for _, p := range part[a:b] {
		buf = strconv.AppendInt(buf, int64(p), 10)
		buf = append(buf, '\n')
	}
	return buf
}

// WriteShared writes one file to which every rank contributes buf, in rank
// order, each rank writing its bytes at their offset (the file system must
// be shared between hosts). Rank 0 creates the file under a temporary name
// (atomicfile) and tells the others; it appears under its name only when
// every rank has written and synced its bytes. It is collective.
func WriteShared(c *collective.Comm, path string, buf []byte) error {
	before, _, err := collective.Offset(c, int64(len(buf)))
	if err != nil {
		return err
	}
	var f *atomicfile.File
	var tmp []byte
	var bad error
	if c.Rank() == 0 {
		if f, bad = atomicfile.Create(path); bad == nil {
			defer f.Abort()
			tmp = []byte(f.Name())
		}
	}
	if err := collective.Agree(c, bad); err != nil {
		return fmt.Errorf("graphio: %w", err)
	}
	if tmp, err = collective.Bcast(c, tmp, 0); err != nil {
		return err
	}
	if c.Rank() == 0 {
		_, bad = f.WriteAt(buf, before)
	} else {
		bad = writeAt(string(tmp), buf, before)
	}
	if err := collective.Agree(c, bad); err != nil {
		return fmt.Errorf("graphio: %s: %w", path, err)
	}
	if c.Rank() == 0 {
		bad = f.Commit()
	}
	if err := collective.Agree(c, bad); err != nil {
		return fmt.Errorf("graphio: %w", err)
	}
	return nil
}

// writeAt writes buf at off of the existing file path and syncs it: on a
// shared file system each host must flush its own writes before rank 0
// renames the file.
func writeAt(path string, buf []byte, off int64) error {
	if len(buf) == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(buf, off)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Assignment is the part of every node, as this rank holds it: for node type
// t, Parts[t][i] is the part of type-wise node Books[t].Bounds[rank]+i.
// Books[t] is EvenBook(NumNodes[t], P), the distribution of Graph.Nodes, so
// a node's part sits on the rank that holds its data rows.
type Assignment struct {
	NumParts int
	AlgoName string
	Books    []graph.Book
	Parts    [][]int32
}

// ReadAssignment reads a partition assignment with every rank of c: DGL's
// directory (<ntype>.txt per node type, line i the part of type-wise node i,
// and partition_meta.json), or a single METIS-style file of one part per
// line (gpmetis' <graph>.part) for a graph with one node type. Each rank
// reads about 1/P of each file's bytes, realigned to line starts, and the
// parts are then moved to the ranks that hold the nodes' data rows. parts
// is the expected number of parts; 0 takes it from partition_meta.json (or,
// for a .part file, the largest part plus one). Bad input fails on every
// rank with the file, the line and the reason: a part outside [0, K), a
// line that is not an integer, a wrong number of lines, a missing file, an
// unknown partition_meta.json version. It is collective.
func ReadAssignment(c *collective.Comm, path string, m *graph.Meta, parts int) (*Assignment, error) {
	if parts < 0 {
		return nil, fmt.Errorf("graphio: number of parts must be positive, got %d", parts)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fileErr(path, "partition assignment: %v", unwrapPathError(err))
	}
	a := &Assignment{NumParts: parts, Books: make([]graph.Book, len(m.NodeTypes)), Parts: make([][]int32, len(m.NodeTypes))}
	files := make([]string, len(m.NodeTypes))
	if st.IsDir() {
		am, err := readAssignmentMeta(c, filepath.Join(path, "partition_meta.json"))
		if err != nil {
			return nil, err
		}
		if parts > 0 && am.NumParts != parts {
			return nil, fileErr(filepath.Join(path, "partition_meta.json"), "num_parts is %d, but %d parts were asked for", am.NumParts, parts)
		}
		a.NumParts, a.AlgoName = am.NumParts, am.AlgoName
		for t, name := range m.NodeTypes {
			files[t] = filepath.Join(path, name+".txt")
		}
	} else {
		if len(m.NodeTypes) != 1 {
			return nil, fileErr(path, "a single .part file assigns the nodes of a graph with one node type; %q has %d (give the directory of <ntype>.txt files)", m.Name, len(m.NodeTypes))
		}
		files[0] = path
		a.AlgoName = "metis"
	}
	for t := range m.NodeTypes {
		a.Books[t] = graph.EvenBook(m.NumNodes[t], c.Size())
		if a.Parts[t], err = readPartFile(c, files[t], m.NodeTypes[t], m.NumNodes[t], a.NumParts, a.Books[t]); err != nil {
			return nil, err
		}
	}
	if a.NumParts == 0 {
		// A .part file without a stated K: the largest part names it.
		var top int64 = -1
		for _, p := range a.Parts[0] {
			top = max(top, int64(p))
		}
		if top, err = collective.Max(c, top); err != nil {
			return nil, err
		}
		a.NumParts = int(top + 1)
		if a.NumParts == 0 {
			return nil, fileErr(path, "the assignment is empty: no parts")
		}
	}
	return a, nil
}

// readAssignmentMeta reads and checks partition_meta.json on rank 0 and
// shares it.
func readAssignmentMeta(c *collective.Comm, path string) (*AssignmentMeta, error) {
	raw, err := readSmallFile(c, path)
	if err != nil {
		return nil, err
	}
	var am AssignmentMeta
	if err := json.Unmarshal(raw, &am); err != nil {
		return nil, fileErr(path, "not valid JSON: %v", err)
	}
	if am.Version != AssignmentVersion {
		return nil, fileErr(path, "version %q is not supported (want %q)", am.Version, AssignmentVersion)
	}
	if am.NumParts < 1 {
		return nil, fileErr(path, "num_parts is %d; it must be at least 1", am.NumParts)
	}
	return &am, nil
}

// readPartFile reads one part per line from file, whose lines are the
// type-wise nodes of a type with n nodes, and returns the parts of the
// nodes book gives this rank. parts > 0 bounds the values.
func readPartFile(c *collective.Comm, file, ntype string, n int64, parts int, book graph.Book) ([]int32, error) {
	vals, bad := readPartLines(c, file, parts)
	if err := collective.Agree(c, bad); err != nil {
		return nil, err
	}
	before, total, err := collective.Offset(c, int64(len(vals)))
	if err != nil {
		return nil, err
	}
	if total != n {
		return nil, fileErr(file, "has %d lines, but node type %q has %d nodes (one line per node)", total, ntype, n)
	}
	// The lines read here are the nodes [before, before+len); send each
	// slice to the rank whose even range holds it.
	counts := make([]int, c.Size())
	for r := range counts {
		lo, hi := book.Range(r)
		a, b := max(lo, before), min(hi, before+int64(len(vals)))
		if b > a {
			counts[r] = int(b - a)
		}
	}
	out, _, err := collective.Alltoallv(c, vals, counts)
	return out, err
}

// readPartLines parses the lines of file that start in this rank's 1/P of
// its bytes. A bad line is returned as an InputError with its line number
// (the error is local: the caller agrees on it with the other ranks).
func readPartLines(c *collective.Comm, file string, parts int) ([]int32, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fileErr(file, "partition assignment: %v", unwrapPathError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileErr(file, "%v", err)
	}
	size, p, r := st.Size(), int64(c.Size()), int64(c.Rank())
	lr, err := newLineReader(f, file, size*r/p, size*(r+1)/p)
	if err != nil {
		return nil, err
	}
	var out []int32
	for {
		line, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		v, msg := parsePart(line, parts)
		if msg != "" {
			return nil, lineErr(file, lr.lineNo(), "%s", msg)
		}
		out = append(out, v)
	}
}

// parsePart parses one line of an assignment: a part in [0, parts) (any
// non-negative part fitting int32 when parts is 0), surrounded by optional
// blanks. It returns a reason when the line is bad.
func parsePart(line []byte, parts int) (int32, string) {
	s := strings.TrimSpace(string(line))
	if s == "" {
		return 0, "empty line: expected the part of one node"
	}
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Sprintf("%q is not a part number", s)
	case v < 0:
		return 0, fmt.Sprintf("part %d is negative", v)
	case parts > 0 && v >= int64(parts):
		return 0, fmt.Sprintf("part %d is outside [0, %d): num_parts is %d", v, parts, parts)
	case v > math.MaxInt32:
		return 0, fmt.Sprintf("part %d does not fit in 32 bits", v)
	}
	return int32(v), ""
}
