package shard

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"gnnrun/graph"
)

// FormatName and FormatVersion identify the partition directories this
// package writes, in the "format" and "format_version" keys of the config.
const (
	FormatName    = "gnnrun-csc"
	FormatVersion = 1
)

// The array files of a partition, in part<i>/, named as DGL users expect.
const (
	fileLocal2Global = "local2global" // int64: new global ID of each local node, inner first
	fileInnerNode    = "inner_node"   // bool: local node is an inner node
	fileNodeType     = "node_type"    // int16: node type of each local node
	fileOrigNIDs     = "orig_nids"    // int64: type-wise input ID of each inner node
	fileIndptr       = "indptr"       // int64: CSC over inner nodes
	fileIndices      = "indices"      // int32 or int64: local ID of each in-edge's source
	fileEdgeIDs      = "edge_ids"     // int64: new global ID of each CSC entry
	fileEdgeType     = "edge_type"    // int16: edge type of each CSC entry
	fileOrigEIDs     = "orig_eids"    // int64: type-wise input ID of each CSC entry
)

// PartFiles names the files of one partition, by paths relative to the
// config, and says how big it is. Feature keys are "<ntype>/<name>" and
// "<src:rel:dst>/<name>".
type PartFiles struct {
	Local2Global string            `json:"local2global"`
	InnerNode    string            `json:"inner_node"`
	NodeType     string            `json:"node_type"`
	OrigNIDs     string            `json:"orig_nids"`
	Indptr       string            `json:"indptr"`
	Indices      string            `json:"indices"`
	EdgeIDs      string            `json:"edge_ids"`
	EdgeType     string            `json:"edge_type"`
	OrigEIDs     string            `json:"orig_eids"`
	NodeFeats    map[string]string `json:"node_feats"`
	EdgeFeats    map[string]string `json:"edge_feats"`
	InnerNodes   int64             `json:"num_inner_nodes"`
	HaloNodes    int64             `json:"num_halo_nodes"`
	Edges        int64             `json:"num_edges"`
	IndexDType   string            `json:"indices_dtype"`
	// Checksums holds the CRC-32C of every file above, by its path, as
	// "crc32c:<8 hex digits>" (empty in directories written before them).
	Checksums map[string]string `json:"checksums,omitempty"`
}

// arrays lists the CSC arrays of the partition with their file names.
func (f *PartFiles) arrays() []struct{ name, path string } {
	return []struct{ name, path string }{
		{fileLocal2Global, f.Local2Global}, {fileInnerNode, f.InnerNode}, {fileNodeType, f.NodeType},
		{fileOrigNIDs, f.OrigNIDs}, {fileIndptr, f.Indptr}, {fileIndices, f.Indices},
		{fileEdgeIDs, f.EdgeIDs}, {fileEdgeType, f.EdgeType}, {fileOrigEIDs, f.OrigEIDs},
	}
}

// Config is the partition directory's <graph_name>.json, in the layout of
// DGL's partition config: counts, the ID ranges of every partition in the
// new ID space (node_map, edge_map: per type, one [start, end) per
// partition), the types, and the files of each partition ("part-<i>").
type Config struct {
	GraphName  string
	NumParts   int
	NumNodes   int64
	NumEdges   int64
	PartMethod string
	HaloHops   int
	NodeTypes  []string         // in type-ID order
	EdgeTypes  []graph.EdgeType // in type-ID order
	NodeMap    map[string][][2]int64
	EdgeMap    map[string][][2]int64
	Parts      []PartFiles
	// Compression is "none" or "zstd" (files end in .npy.zst).
	Compression string
	// Normalize lists what was done to the input's edges before dispatch
	// ("undirected", "dedup", "drop-self-loops"), so a check against the
	// input reads it the same way.
	Normalize []string
}

// configJSON is the on-disk form; the "part-<i>" keys are added beside it.
type configJSON struct {
	GraphName     string                `json:"graph_name"`
	NumParts      int                   `json:"num_parts"`
	NumNodes      int64                 `json:"num_nodes"`
	NumEdges      int64                 `json:"num_edges"`
	PartMethod    string                `json:"part_method"`
	HaloHops      int                   `json:"halo_hops"`
	NodeMap       map[string][][2]int64 `json:"node_map"`
	EdgeMap       map[string][][2]int64 `json:"edge_map"`
	NTypes        map[string]int        `json:"ntypes"`
	ETypes        map[string]int        `json:"etypes"`
	Format        string                `json:"format"`
	FormatVersion int                   `json:"format_version"`
	Compression   string                `json:"compression"`
	Normalize     []string              `json:"normalize"`
}

// ConfigName returns the config's file name for a graph.
func ConfigName(graphName string) string { return graphName + ".json" }

// Marshal returns the config as indented JSON with sorted keys, so the same
// partitioning always gives the same bytes.
func (cfg *Config) Marshal() ([]byte, error) {
	cj := configJSON{GraphName: cfg.GraphName, NumParts: cfg.NumParts, NumNodes: cfg.NumNodes, NumEdges: cfg.NumEdges,
		PartMethod: cfg.PartMethod, HaloHops: cfg.HaloHops, NodeMap: cfg.NodeMap, EdgeMap: cfg.EdgeMap,
		NTypes: map[string]int{}, ETypes: map[string]int{}, Format: FormatName, FormatVersion: FormatVersion,
		Compression: cfg.Compression, Normalize: cfg.Normalize}
	if cj.Normalize == nil {
		cj.Normalize = []string{}
	}
	for t, n := range cfg.NodeTypes {
		cj.NTypes[n] = t
	}
	for t, e := range cfg.EdgeTypes {
		cj.ETypes[e.String()] = t
	}
	blob, err := json.Marshal(cj)
	if err != nil {
		return nil, err
	}
	top := map[string]json.RawMessage{}
	if err := json.Unmarshal(blob, &top); err != nil {
		return nil, err
	}
	for i := range cfg.Parts {
		if top["part-"+strconv.Itoa(i)], err = json.Marshal(&cfg.Parts[i]); err != nil {
			return nil, err
		}
	}
	out, err := json.MarshalIndent(top, "", "  ")
	return append(out, '\n'), err
}

// ParseConfig parses and validates a config; path is used in errors. The
// ranges of node_map and edge_map must tile [0, num_nodes) and [0,
// num_edges) in partition-major, type order.
func ParseConfig(raw []byte, path string) (*Config, error) {
	var cj configJSON
	if err := json.Unmarshal(raw, &cj); err != nil {
		return nil, fmt.Errorf("shard: %s: not a partition config: %v", path, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("shard: %s: %s", path, fmt.Sprintf(format, args...))
	}
	if cj.Format != FormatName || cj.FormatVersion != FormatVersion {
		return nil, bad("format %q version %d; this gnnrun reads %q version %d", cj.Format, cj.FormatVersion, FormatName, FormatVersion)
	}
	if cj.NumParts < 1 {
		return nil, bad("num_parts is %d", cj.NumParts)
	}
	cfg := &Config{GraphName: cj.GraphName, NumParts: cj.NumParts, NumNodes: cj.NumNodes, NumEdges: cj.NumEdges,
		PartMethod: cj.PartMethod, HaloHops: cj.HaloHops, NodeMap: cj.NodeMap, EdgeMap: cj.EdgeMap,
		Compression: cj.Compression, Normalize: cj.Normalize}
	var err error
	if cfg.NodeTypes, err = typeOrder(cj.NTypes); err != nil {
		return nil, bad("ntypes: %v", err)
	}
	names, err := typeOrder(cj.ETypes)
	if err != nil {
		return nil, bad("etypes: %v", err)
	}
	for _, n := range names {
		et, err := graph.ParseEdgeType(n)
		if err != nil {
			return nil, bad("etypes: %v", err)
		}
		cfg.EdgeTypes = append(cfg.EdgeTypes, et)
	}
	if err := checkTiling(cfg.NodeMap, cfg.NodeTypes, cfg.NumParts, cfg.NumNodes); err != nil {
		return nil, bad("node_map: %v", err)
	}
	if err := checkTiling(cfg.EdgeMap, names, cfg.NumParts, cfg.NumEdges); err != nil {
		return nil, bad("edge_map: %v", err)
	}
	top := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, bad("%v", err)
	}
	for i := range cfg.NumParts {
		key := "part-" + strconv.Itoa(i)
		msg, ok := top[key]
		if !ok {
			return nil, bad("no %q entry", key)
		}
		var pf PartFiles
		if err := json.Unmarshal(msg, &pf); err != nil {
			return nil, bad("%s: %v", key, err)
		}
		if err := pf.check(); err != nil {
			return nil, bad("%s: %v", key, err)
		}
		cfg.Parts = append(cfg.Parts, pf)
	}
	return cfg, nil
}

// ReadConfig reads and validates the config at path.
func ReadConfig(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	return ParseConfig(raw, path)
}

// typeOrder returns the names of a {name: id} map in id order; the ids
// must be 0..n-1.
func typeOrder(m map[string]int) ([]string, error) {
	out := make([]string, len(m))
	for name, id := range m {
		if id < 0 || id >= len(m) || out[id] != "" {
			return nil, fmt.Errorf("type IDs are not 0..%d (type %q has %d)", len(m)-1, name, id)
		}
		out[id] = name
	}
	return out, nil
}

// checkTiling checks that the ranges of every type and partition, taken
// partition-major then type, tile [0, total).
func checkTiling(m map[string][][2]int64, types []string, parts int, total int64) error {
	if len(m) != len(types) {
		return fmt.Errorf("%d types in the map, %d declared", len(m), len(types))
	}
	var at int64
	for p := range parts {
		for _, name := range types {
			rs, ok := m[name]
			if !ok {
				return fmt.Errorf("no ranges for type %q", name)
			}
			if len(rs) != parts {
				return fmt.Errorf("type %q has %d ranges for %d partitions", name, len(rs), parts)
			}
			r := rs[p]
			if r[0] != at || r[1] < r[0] {
				return fmt.Errorf("range [%d, %d) of type %q in partition %d does not continue at %d: the ranges do not tile [0, %d)", r[0], r[1], name, p, at, total)
			}
			at = r[1]
		}
	}
	if at != total {
		return fmt.Errorf("the ranges cover [0, %d), the graph has %d", at, total)
	}
	return nil
}

// check refuses file names that leave the partition directory.
func (f *PartFiles) check() error {
	var all []string
	for _, a := range f.arrays() {
		if a.path == "" {
			return fmt.Errorf("no file for %s", a.name)
		}
		all = append(all, a.path)
	}
	for _, m := range []map[string]string{f.NodeFeats, f.EdgeFeats} {
		for _, p := range m {
			all = append(all, p)
		}
	}
	for _, p := range all {
		if path.IsAbs(p) || strings.HasPrefix(path.Clean(p), "..") {
			return fmt.Errorf("file %q is not inside the partition directory", p)
		}
	}
	switch f.IndexDType {
	case "int32", "int64":
	default:
		return fmt.Errorf("indices_dtype %q is not int32 or int64", f.IndexDType)
	}
	if f.InnerNodes < 0 || f.HaloNodes < 0 || f.Edges < 0 {
		return fmt.Errorf("negative counts")
	}
	return nil
}

// Book returns the partition book of the config's ranges.
func (cfg *Config) Book() *Book {
	nc := make([][]int64, cfg.NumParts)
	ec := make([][]int64, cfg.NumParts)
	for p := range cfg.NumParts {
		for _, n := range cfg.NodeTypes {
			r := cfg.NodeMap[n][p]
			nc[p] = append(nc[p], r[1]-r[0])
		}
		for _, e := range cfg.EdgeTypes {
			r := cfg.EdgeMap[e.String()][p]
			ec[p] = append(ec[p], r[1]-r[0])
		}
	}
	return NewBook(nc, ec)
}

// Meta returns the types and counts of the partitioned graph.
func (cfg *Config) Meta() graph.Meta {
	m := graph.Meta{Name: cfg.GraphName, NodeTypes: cfg.NodeTypes, EdgeTypes: cfg.EdgeTypes,
		NumNodes: make([]int64, len(cfg.NodeTypes)), NumEdges: make([]int64, len(cfg.EdgeTypes))}
	for t, n := range cfg.NodeTypes {
		for _, r := range cfg.NodeMap[n] {
			m.NumNodes[t] += r[1] - r[0]
		}
	}
	for t, e := range cfg.EdgeTypes {
		for _, r := range cfg.EdgeMap[e.String()] {
			m.NumEdges[t] += r[1] - r[0]
		}
	}
	return m
}

// partFiles returns the file names of partition p, relative to the config:
// part<p>/<array>.npy, with ".zst" appended when compressed.
func partFiles(p int, nodeFeats, edgeFeats []featKey, zstd bool) PartFiles {
	dir := "part" + strconv.Itoa(p)
	ext := ".npy"
	if zstd {
		ext += ".zst"
	}
	name := func(parts ...string) string { return path.Join(append([]string{dir}, parts...)...) + ext }
	pf := PartFiles{
		Local2Global: name(fileLocal2Global), InnerNode: name(fileInnerNode), NodeType: name(fileNodeType),
		OrigNIDs: name(fileOrigNIDs), Indptr: name(fileIndptr), Indices: name(fileIndices),
		EdgeIDs: name(fileEdgeIDs), EdgeType: name(fileEdgeType), OrigEIDs: name(fileOrigEIDs),
		NodeFeats: map[string]string{}, EdgeFeats: map[string]string{},
	}
	for _, k := range nodeFeats {
		pf.NodeFeats[k.String()] = name("node_feat", k.typ, k.name)
	}
	for _, k := range edgeFeats {
		pf.EdgeFeats[k.String()] = name("edge_feat", k.typ, k.name)
	}
	return pf
}

// featKey names a node or edge array: its type's name and its own.
type featKey struct{ typ, name string }

func (k featKey) String() string { return k.typ + "/" + k.name }

// resolve returns the path of a file named in the config at cfgPath.
func resolve(cfgPath, rel string) string {
	return filepath.Join(filepath.Dir(cfgPath), filepath.FromSlash(rel))
}
