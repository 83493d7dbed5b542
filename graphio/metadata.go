package graphio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gnnrun/atomicfile"
	"gnnrun/graph"
)

// The file formats of chunks, as metadata.json names them.
const (
	FormatCSV     = "csv"
	FormatNumPy   = "numpy"
	FormatParquet = "parquet"
)

// Format is how the chunks of one array are stored.
type Format struct {
	Name string `json:"name"`
	// Delimiter separates the columns of a CSV chunk. DGL's tools write a
	// single space; without one, DGL's reader uses a comma. Spaces and tabs
	// always separate columns too.
	Delimiter string `json:"delimiter,omitempty"`
}

// ChunkSpec is one array of metadata.json: its format and its chunk files,
// relative to the metadata file or absolute.
type ChunkSpec struct {
	Format Format   `json:"format"`
	Data   []string `json:"data"`
}

// Metadata is the metadata.json of a graph in DGL's chunked graph format.
// Counts may be given per type, per chunk or both; DGL's guide shows the
// per-chunk keys but its code reads the per-type ones, so Metadata accepts
// either and writes both.
type Metadata struct {
	GraphName        string                          `json:"graph_name"`
	NodeType         []string                        `json:"node_type"`
	NumNodesPerType  []int64                         `json:"num_nodes_per_type,omitempty"`
	NumNodesPerChunk [][]int64                       `json:"num_nodes_per_chunk,omitempty"`
	EdgeType         []string                        `json:"edge_type"`
	NumEdgesPerType  []int64                         `json:"num_edges_per_type,omitempty"`
	NumEdgesPerChunk [][]int64                       `json:"num_edges_per_chunk,omitempty"`
	Edges            map[string]ChunkSpec            `json:"edges"`
	NodeData         map[string]map[string]ChunkSpec `json:"node_data"`
	EdgeData         map[string]map[string]ChunkSpec `json:"edge_data"`

	// Path is the metadata file; relative chunk paths start from its
	// directory.
	Path string `json:"-"`
	raw  []byte
	meta graph.Meta
}

var metadataKeys = []string{"graph_name", "node_type", "num_nodes_per_type", "num_nodes_per_chunk", "edge_type",
	"num_edges_per_type", "num_edges_per_chunk", "edges", "node_data", "edge_data"}

// ParseMetadata parses and checks the bytes of a metadata.json read from
// path. Unknown keys (a misspelt key is one) are errors naming the line and
// the key probably meant; so are missing keys, counts per chunk that do not
// sum to the counts per type, edge types that are not "src:rel:dst" over
// the declared node types, unknown formats and missing chunk lists.
func ParseMetadata(raw []byte, path string) (*Metadata, error) {
	m := &Metadata{Path: path, raw: raw}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, m.jsonErr(err, 0)
	}
	for k := range top {
		if !contains(metadataKeys, k) {
			return nil, m.keyErr(k, "unknown key %q%s", k, suggest(k, metadataKeys))
		}
	}
	fields := []struct {
		key string
		dst any
	}{
		{"graph_name", &m.GraphName}, {"node_type", &m.NodeType}, {"num_nodes_per_type", &m.NumNodesPerType},
		{"num_nodes_per_chunk", &m.NumNodesPerChunk}, {"edge_type", &m.EdgeType}, {"num_edges_per_type", &m.NumEdgesPerType},
		{"num_edges_per_chunk", &m.NumEdgesPerChunk},
	}
	for _, f := range fields {
		if v, ok := top[f.key]; ok {
			if err := json.Unmarshal(v, f.dst); err != nil {
				return nil, m.keyErr(f.key, "key %q: %v", f.key, jsonTypeMsg(err))
			}
		}
	}
	for _, k := range []string{"graph_name", "node_type", "edge_type", "edges"} {
		if _, ok := top[k]; !ok {
			return nil, fileErr(path, "missing key %q", k)
		}
	}
	if _, ok := top["num_nodes_per_type"]; !ok {
		if _, ok := top["num_nodes_per_chunk"]; !ok {
			return nil, fileErr(path, "missing key \"num_nodes_per_type\" (or \"num_nodes_per_chunk\")")
		}
	}
	if _, ok := top["num_edges_per_type"]; !ok {
		if _, ok := top["num_edges_per_chunk"]; !ok {
			return nil, fileErr(path, "missing key \"num_edges_per_type\" (or \"num_edges_per_chunk\")")
		}
	}
	var err error
	if m.Edges, err = m.parseSpecs(top["edges"], "edges"); err != nil {
		return nil, err
	}
	if m.NodeData, err = m.parseSpecGroups(top["node_data"], "node_data"); err != nil {
		return nil, err
	}
	if m.EdgeData, err = m.parseSpecGroups(top["edge_data"], "edge_data"); err != nil {
		return nil, err
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadMetadata reads and parses a metadata.json file.
func ReadMetadata(path string) (*Metadata, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fileErr(path, "%v", unwrapPathError(err))
	}
	return ParseMetadata(raw, path)
}

func (m *Metadata) parseSpecGroups(raw json.RawMessage, key string) (map[string]map[string]ChunkSpec, error) {
	out := map[string]map[string]ChunkSpec{}
	if raw == nil || string(raw) == "null" {
		return out, nil
	}
	var groups map[string]json.RawMessage
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, m.keyErr(key, "key %q: %v", key, jsonTypeMsg(err))
	}
	for g, v := range groups {
		specs, err := m.parseSpecs(v, key, g)
		if err != nil {
			return nil, err
		}
		out[g] = specs
	}
	return out, nil
}

func (m *Metadata) parseSpecs(raw json.RawMessage, path ...string) (map[string]ChunkSpec, error) {
	out := map[string]ChunkSpec{}
	var specs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &specs); err != nil {
		return nil, m.keyErr(strings.Join(path, "/"), "key %q: %v", strings.Join(path, "/"), jsonTypeMsg(err))
	}
	for name, v := range specs {
		where := append(append([]string(nil), path...), name)
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(v, &keys); err != nil {
			return nil, m.keyErr(strings.Join(where, "/"), "%s: %v", strings.Join(where, "/"), jsonTypeMsg(err))
		}
		for k := range keys {
			if k != "format" && k != "data" {
				return nil, m.keyErr(strings.Join(append(where, k), "/"), "%s: unknown key %q%s", strings.Join(where, "/"), k, suggest(k, []string{"format", "data"}))
			}
		}
		for _, k := range []string{"format", "data"} {
			if _, ok := keys[k]; !ok {
				return nil, m.keyErr(strings.Join(where, "/"), "%s: missing key %q", strings.Join(where, "/"), k)
			}
		}
		var s ChunkSpec
		dec := json.NewDecoder(bytes.NewReader(keys["format"]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s.Format); err != nil {
			return nil, m.keyErr(strings.Join(append(where, "format"), "/"), "%s/format: %v", strings.Join(where, "/"), jsonTypeMsg(err))
		}
		if err := json.Unmarshal(keys["data"], &s.Data); err != nil {
			return nil, m.keyErr(strings.Join(append(where, "data"), "/"), "%s/data: %v", strings.Join(where, "/"), jsonTypeMsg(err))
		}
		switch s.Format.Name {
		case FormatCSV, FormatNumPy, FormatParquet:
		default:
			return nil, m.keyErr(strings.Join(append(where, "format"), "/"), "%s: format %q is not one of csv, numpy, parquet", strings.Join(where, "/"), s.Format.Name)
		}
		if len(s.Data) == 0 {
			return nil, m.keyErr(strings.Join(append(where, "data"), "/"), "%s: no chunk files in \"data\"", strings.Join(where, "/"))
		}
		out[name] = s
	}
	return out, nil
}

// check validates types and counts and builds the graph.Meta.
func (m *Metadata) check() error {
	g := graph.Meta{Name: m.GraphName, NodeTypes: m.NodeType}
	if len(m.NodeType) == 0 {
		return m.keyErr("node_type", "node_type is empty")
	}
	var err error
	if g.NumNodes, err = m.counts("node", m.NodeType, m.NumNodesPerType, m.NumNodesPerChunk); err != nil {
		return err
	}
	for _, s := range m.EdgeType {
		et, err := graph.ParseEdgeType(s)
		if err != nil {
			return m.keyErr("edge_type", "edge_type %q is not canonical: want \"src_type:relation:dst_type\"", s)
		}
		g.EdgeTypes = append(g.EdgeTypes, et)
	}
	if g.NumEdges, err = m.counts("edge", m.EdgeType, m.NumEdgesPerType, m.NumEdgesPerChunk); err != nil {
		return err
	}
	if err := g.Validate(); err != nil {
		return fileErr(m.Path, "%v", strings.TrimPrefix(err.Error(), "graph "))
	}
	// Edge chunks: one spec per edge type, keyed canonically (or by a
	// relation name that is unique).
	edges := map[string]ChunkSpec{}
	for k, s := range m.Edges {
		et, err := m.edgeTypeKey(k, "edges")
		if err != nil {
			return err
		}
		edges[et] = s
	}
	m.Edges = edges
	for t, et := range m.EdgeType {
		s, ok := m.Edges[et]
		if !ok {
			return m.keyErr("edges", "edges: no chunks for edge type %q", et)
		}
		if m.NumEdgesPerChunk != nil && len(m.NumEdgesPerChunk[t]) != len(s.Data) {
			return m.keyErr("edges/"+et, "edges/%s: %d chunk files but num_edges_per_chunk lists %d chunks", et, len(s.Data), len(m.NumEdgesPerChunk[t]))
		}
	}
	for nt := range m.NodeData {
		if !contains(m.NodeType, nt) {
			return m.keyErr("node_data/"+nt, "node_data: unknown node type %q%s", nt, suggest(nt, m.NodeType))
		}
	}
	edata := map[string]map[string]ChunkSpec{}
	for k, specs := range m.EdgeData {
		et, err := m.edgeTypeKey(k, "edge_data")
		if err != nil {
			return err
		}
		edata[et] = specs
	}
	m.EdgeData = edata
	m.meta = g
	return nil
}

// counts reconciles the per-type and per-chunk counts of one kind.
func (m *Metadata) counts(kind string, types []string, perType []int64, perChunk [][]int64) ([]int64, error) {
	typeKey, chunkKey := "num_"+kind+"s_per_type", "num_"+kind+"s_per_chunk"
	if perType != nil && len(perType) != len(types) {
		return nil, m.keyErr(typeKey, "%s has %d entries for %d %s types", typeKey, len(perType), len(types), kind)
	}
	if perChunk != nil && len(perChunk) != len(types) {
		return nil, m.keyErr(chunkKey, "%s has %d lists for %d %s types", chunkKey, len(perChunk), len(types), kind)
	}
	out := make([]int64, len(types))
	for t := range types {
		if perChunk != nil {
			var s int64
			for _, c := range perChunk[t] {
				if c < 0 {
					return nil, m.keyErr(chunkKey, "%s: negative count %d for %s type %q", chunkKey, c, kind, types[t])
				}
				s += c
			}
			out[t] = s
			if perType != nil && perType[t] != s {
				return nil, m.keyErr(typeKey, "%s says %d %ss of type %q but %s sums to %d", typeKey, perType[t], kind, types[t], chunkKey, s)
			}
		} else {
			out[t] = perType[t]
		}
		if out[t] < 0 {
			return nil, m.keyErr(typeKey, "%s: negative count %d for %s type %q", typeKey, out[t], kind, types[t])
		}
	}
	return out, nil
}

// edgeTypeKey resolves a key of "edges" or "edge_data" to a canonical edge
// type.
func (m *Metadata) edgeTypeKey(k, where string) (string, error) {
	if contains(m.EdgeType, k) {
		return k, nil
	}
	var match []string
	for _, et := range m.EdgeType {
		if p, err := graph.ParseEdgeType(et); err == nil && p.Rel == k {
			match = append(match, et)
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	return "", m.keyErr(where+"/"+k, "%s: %q is not one of the edge types %v%s", where, k, m.EdgeType, suggest(k, m.EdgeType))
}

// Meta returns the graph's types and counts.
func (m *Metadata) Meta() graph.Meta { return m.meta }

// Resolve returns a chunk path as a usable path: absolute paths stay,
// relative ones start from the metadata file's directory.
func (m *Metadata) Resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(m.Path), p)
}

// WriteMetadata writes m as path, atomically, with both the per-type and
// the per-chunk counts when the chunk counts are known.
func WriteMetadata(path string, m *Metadata) error {
	out := *m
	if out.NodeData == nil {
		out.NodeData = map[string]map[string]ChunkSpec{}
	}
	if out.EdgeData == nil {
		out.EdgeData = map[string]map[string]ChunkSpec{}
	}
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("graphio: %w", err)
	}
	if err := atomicfile.WriteFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("graphio: %w", err)
	}
	return nil
}

// keyErr is an error at the line where key (a "/"-separated path of keys)
// appears in the metadata.
func (m *Metadata) keyErr(key string, format string, args ...any) error {
	return &InputError{File: m.Path, Line: lineOfKey(m.raw, strings.Split(key, "/")), Row: -1, Msg: fmt.Sprintf(format, args...)}
}

// jsonErr reports a JSON error at its line.
func (m *Metadata) jsonErr(err error, base int64) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &InputError{File: m.Path, Line: lineAt(m.raw, base+se.Offset), Row: -1, Msg: "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		return &InputError{File: m.Path, Line: lineAt(m.raw, base+te.Offset), Row: -1, Msg: jsonTypeMsg(err)}
	}
	return fileErr(m.Path, "invalid JSON: %v", err)
}

// jsonTypeMsg says what a JSON decoding error means in our terms.
func jsonTypeMsg(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("found a JSON %s where %s is expected", te.Value, goTypeWord(te.Type.String()))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func goTypeWord(t string) string {
	switch {
	case strings.HasPrefix(t, "[][]"):
		return "a list of lists of integers"
	case strings.HasPrefix(t, "[]int"):
		return "a list of integers"
	case strings.HasPrefix(t, "[]string"):
		return "a list of strings"
	case strings.HasPrefix(t, "map"):
		return "an object"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int"):
		return "an integer"
	}
	return t
}

// lineOfKey returns the line where the keys of path appear one after the
// other in raw, or 0.
func lineOfKey(raw []byte, path []string) int64 {
	pos := 0
	found := false
	for _, k := range path {
		i := bytes.Index(raw[pos:], []byte(`"`+k+`"`))
		if i < 0 {
			break
		}
		pos += i
		found = true
	}
	if !found {
		return 0
	}
	return lineAt(raw, int64(pos))
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(raw []byte, off int64) int64 {
	off = min(max(off, 0), int64(len(raw)))
	return int64(bytes.Count(raw[:off], []byte{'\n'})) + 1
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// suggest returns ` (did you mean "x"?)` for the nearest of cands within a
// small edit distance, or "".
func suggest(k string, cands []string) string {
	best, bestD := "", 4
	sorted := append([]string(nil), cands...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if d := editDistance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
