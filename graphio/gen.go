package graphio

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gnnrun/atomicfile"
	"gnnrun/collective"
	"gnnrun/graph"
)

// GenSpec describes a generated graph.
type GenSpec struct {
	Name       string
	Scale      int     // 2^Scale nodes of the main node type
	EdgeFactor int     // EdgeFactor * 2^Scale edges of the main edge type
	A, B, C    float64 // R-MAT quadrant probabilities
	Noise      float64 // per-level noise of the probabilities (noisy SKG)
	Seed       uint64
	Permute    bool // relabel nodes pseudo-randomly, as Graph500 does
	FeatDim    int  // float32 features per node (0: none)
	Classes    int  // int64 labels in 0..Classes-1 and train/val/test masks (0: none)
	// Planted, with Classes, plants the classes as communities a GNN can
	// learn: node v's class is v mod Classes, this share of the main edge
	// type's edges get a destination of their source's class (uniform
	// among them), and features are the class's centroid (±PlantedSignal
	// per column) plus the usual uniform noise in [-1, 1).
	Planted float64
	Hetero  bool // add node type "item" and edge type "user:buys:item"
	// ItemFeatDim, with Hetero, is the width of item's features when not
	// 0 (-1: item has none); 0 gives item FeatDim columns, as user.
	ItemFeatDim int
	// Reverse, with Hetero, adds edge type "item:bought_by:user", edge i
	// the reverse of buys edge i, and with Planted plants buys edges as
	// follows edges are (an item's class is its ID mod Classes), so that
	// a user's in-neighbours over both relations carry its class.
	Reverse bool
	Format  string
	Chunks  int // chunk files per type (0: one per rank)
}

// SetDefaults fills unset fields: Graph500's edge factor 16 and
// probabilities a=0.57, b=c=0.19, NumPy chunks, one chunk per rank.
func (s *GenSpec) SetDefaults(ranks int) {
	if s.Name == "" {
		s.Name = fmt.Sprintf("rmat%d", s.Scale)
	}
	if s.EdgeFactor == 0 {
		s.EdgeFactor = 16
	}
	if s.A == 0 && s.B == 0 && s.C == 0 {
		s.A, s.B, s.C = 0.57, 0.19, 0.19
	}
	if s.Format == "" {
		s.Format = FormatNumPy
	}
	if s.Chunks == 0 {
		s.Chunks = ranks
	}
}

// Validate checks the spec.
func (s *GenSpec) Validate() error {
	switch {
	case s.Scale < 1 || s.Scale > 40:
		return fmt.Errorf("graphio: scale %d outside 1..40", s.Scale)
	case s.EdgeFactor < 1:
		return fmt.Errorf("graphio: edge factor %d must be positive", s.EdgeFactor)
	case s.FeatDim < 0 || s.Classes < 0:
		return fmt.Errorf("graphio: feature dimension and classes must be >= 0")
	case s.Chunks < 1:
		return fmt.Errorf("graphio: chunks %d must be positive", s.Chunks)
	case s.Planted < 0 || s.Planted > 1:
		return fmt.Errorf("graphio: planted share %v outside [0, 1]", s.Planted)
	case s.Planted > 0 && s.Classes < 2:
		return fmt.Errorf("graphio: planted communities need at least 2 classes")
	case s.Hetero && s.Scale < 3:
		return fmt.Errorf("graphio: a heterogeneous graph needs scale >= 3")
	case !s.Hetero && (s.ItemFeatDim != 0 || s.Reverse):
		return fmt.Errorf("graphio: item features and reverse edges need a heterogeneous graph")
	case s.ItemFeatDim < -1:
		return fmt.Errorf("graphio: item feature dimension %d: want -1 (none), 0 (the feature dimension) or more", s.ItemFeatDim)
	}
	switch s.Format {
	case FormatCSV, FormatNumPy, FormatParquet:
	default:
		return fmt.Errorf("graphio: output format %q is not one of csv, numpy, parquet", s.Format)
	}
	_, err := NewRMAT(s.Scale, s.A, s.B, s.C, s.Noise, s.Seed, s.Permute)
	return err
}

// Meta returns the types and counts of the graph the spec describes.
func (s *GenSpec) Meta() graph.Meta {
	n := int64(1) << s.Scale
	m := int64(s.EdgeFactor) * n
	if !s.Hetero {
		return graph.Meta{Name: s.Name, NodeTypes: []string{"_N"}, NumNodes: []int64{n},
			EdgeTypes: []graph.EdgeType{{Src: "_N", Rel: "_E", Dst: "_N"}}, NumEdges: []int64{m}}
	}
	meta := graph.Meta{Name: s.Name, NodeTypes: []string{"user", "item"}, NumNodes: []int64{n, n / 4},
		EdgeTypes: []graph.EdgeType{{Src: "user", Rel: "follows", Dst: "user"}, {Src: "user", Rel: "buys", Dst: "item"}},
		NumEdges:  []int64{m, m / 4}}
	if s.Reverse {
		meta.EdgeTypes = append(meta.EdgeTypes, graph.EdgeType{Src: "item", Rel: "bought_by", Dst: "user"})
		meta.NumEdges = append(meta.NumEdges, m/4)
	}
	return meta
}

// featDim returns the width of node type t's features (0: none).
func (s *GenSpec) featDim(t int) int {
	if t == 1 && s.ItemFeatDim != 0 {
		return max(s.ItemFeatDim, 0)
	}
	return s.FeatDim
}

// GenResult is what Generate wrote.
type GenResult struct {
	Meta     graph.Meta
	Checksum uint64 // EdgeChecksum of the graph's edges
	Bytes    int64  // bytes written by all ranks
	Path     string // the metadata.json
}

// PlantedSignal is the size of a planted class centroid's columns, against
// noise uniform in [-1, 1): features alone tell 4 classes apart about half
// the time; the mean over a node's in-neighbours, mostly of its class,
// much more often.
const PlantedSignal = 0.1

// genSource generates the edges of one edge type by type-wise edge ID.
type genSource struct {
	rmat    *RMAT
	items   int64 // destination node count of the bipartite type; 0 for R-MAT
	srcOff  int64 // homogeneous offsets of the endpoint types
	dstOff  int64
	seed    uint64
	planted float64 // share of edges rewired into their source's class
	classes int64
	nodes   int64
	reverse bool // the edges of another source, reversed
}

func (g *genSource) edge(e int64) (u, v int64) {
	if g.reverse {
		v, u = g.forward(e)
		return u, v
	}
	return g.forward(e)
}

func (g *genSource) forward(e int64) (u, v int64) {
	u, v = g.rmat.Edge(e)
	if g.items > 0 {
		v = int64(graph.Mix64(g.seed^0x6974656d^uint64(e)*0x9e3779b97f4a7c15) % uint64(g.items))
	}
	if g.planted > 0 && unitFloat(graph.Mix64(g.seed^0x706c616e^uint64(e)*0x9e3779b97f4a7c15)) < g.planted {
		k := graph.Mix64(g.seed^0x636c6173^uint64(e)*0xc2b2ae3d27d4eb4f) % uint64(g.nodes/g.classes)
		v = u%g.classes + g.classes*int64(k)
	}
	return u, v
}

// Generate writes the graph of spec to dir in the chunked format, every
// rank of c writing its chunks: chunk k of every array goes to rank
// k*P/Chunks. Edge k of a type is generated from (seed, type, k) alone, so
// the files do not depend on the number of ranks. It is collective.
func Generate(c *collective.Comm, spec GenSpec, dir string, progress func(done, total int64)) (*GenResult, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	meta := spec.Meta()
	if err := os.MkdirAll(filepath.Join(dir, "edges"), 0o755); err != nil {
		return nil, fmt.Errorf("graphio: %w", err)
	}
	for t, nt := range meta.NodeTypes {
		if spec.FeatDim > 0 || spec.Classes > 0 || spec.featDim(t) > 0 {
			if err := os.MkdirAll(filepath.Join(dir, "node_data", nt), 0o755); err != nil {
				return nil, fmt.Errorf("graphio: %w", err)
			}
		}
	}
	srcs := make([]*genSource, len(meta.EdgeTypes))
	for t := range meta.EdgeTypes {
		if t == 2 { // bought_by: the buys edges reversed
			g := *srcs[1]
			g.reverse, g.srcOff, g.dstOff = true, meta.NumNodes[0], 0
			srcs[t] = &g
			continue
		}
		seed := graph.Mix64(spec.Seed + uint64(t)*0x51ed27)
		r, err := NewRMAT(spec.Scale, spec.A, spec.B, spec.C, spec.Noise, seed, spec.Permute)
		if err != nil {
			return nil, err
		}
		srcs[t] = &genSource{rmat: r, seed: seed}
		if t == 0 && spec.Planted > 0 {
			srcs[t].planted, srcs[t].classes, srcs[t].nodes = spec.Planted, int64(spec.Classes), meta.NumNodes[0]
		}
		if t == 1 {
			srcs[t].items = meta.NumNodes[1]
			srcs[t].dstOff = meta.NumNodes[0]
			if spec.Reverse && spec.Planted > 0 {
				srcs[t].planted, srcs[t].classes, srcs[t].nodes = spec.Planted, int64(spec.Classes), meta.NumNodes[1]
			}
		}
	}
	chunkOwner := graph.EvenBook(int64(spec.Chunks), c.Size())
	var sum Checksum
	var bytes, done int64
	myEdges := int64(0)
	for k := int(chunkOwner.Bounds[c.Rank()]); k < int(chunkOwner.Bounds[c.Rank()+1]); k++ {
		for t := range meta.EdgeTypes {
			myEdges += graph.EvenBook(meta.NumEdges[t], spec.Chunks).Size(k)
		}
	}
	for k := int(chunkOwner.Bounds[c.Rank()]); k < int(chunkOwner.Bounds[c.Rank()+1]); k++ {
		for t, et := range meta.EdgeTypes {
			lo, hi := graph.EvenBook(meta.NumEdges[t], spec.Chunks).Range(k)
			path := filepath.Join(dir, edgeChunkPath(et, k, spec.Format))
			n, err := writeEdgeChunk(path, spec.Format, srcs[t], lo, hi, &sum, int16(t), func(d int64) {
				done += d
				if progress != nil {
					progress(done, myEdges)
				}
			})
			if err != nil {
				return nil, err
			}
			bytes += n
		}
		for t, nt := range meta.NodeTypes {
			lo, hi := graph.EvenBook(meta.NumNodes[t], spec.Chunks).Range(k)
			n, err := writeNodeChunk(dir, spec, nt, t, k, lo, hi)
			if err != nil {
				return nil, err
			}
			bytes += n
		}
	}
	total, err := sum.Total(c)
	if err != nil {
		return nil, err
	}
	allBytes, err := collective.Sum(c, bytes) // also: every chunk is written
	if err != nil {
		return nil, err
	}
	res := &GenResult{Meta: meta, Checksum: total, Bytes: allBytes, Path: filepath.Join(dir, "metadata.json")}
	var werr string
	if c.Rank() == 0 {
		if err := WriteMetadata(res.Path, genMetadata(spec, meta)); err != nil {
			werr = err.Error()
		}
	}
	msg, err := collective.Bcast(c, []byte(werr), 0)
	if err != nil {
		return nil, err
	}
	if len(msg) > 0 {
		return nil, fmt.Errorf("%s", msg)
	}
	return res, nil
}

// edgeChunkPath names chunk k of an edge type, relative to the graph's
// directory.
func edgeChunkPath(et graph.EdgeType, k int, format string) string {
	return filepath.Join("edges", fmt.Sprintf("%s__%s__%s-%d.%s", et.Src, et.Rel, et.Dst, k, fileExt(format)))
}

func nodeChunkPath(nt, name string, k int, format string) string {
	return filepath.Join("node_data", nt, fmt.Sprintf("%s-%d.%s", name, k, fileExt(format)))
}

func fileExt(format string) string {
	switch format {
	case FormatCSV:
		return "csv"
	case FormatParquet:
		return "parquet"
	}
	return "npy"
}

// genMetadata returns the metadata.json of a generated graph, with both the
// per-type and the per-chunk counts.
func genMetadata(spec GenSpec, meta graph.Meta) *Metadata {
	md := &Metadata{GraphName: meta.Name, NodeType: meta.NodeTypes, NumNodesPerType: meta.NumNodes,
		Edges: map[string]ChunkSpec{}, NodeData: map[string]map[string]ChunkSpec{}, EdgeData: map[string]map[string]ChunkSpec{}}
	for t := range meta.NodeTypes {
		md.NumNodesPerChunk = append(md.NumNodesPerChunk, chunkCounts(meta.NumNodes[t], spec.Chunks))
	}
	edgeFormat := Format{Name: spec.Format}
	if spec.Format == FormatCSV {
		edgeFormat.Delimiter = " "
	}
	for t, et := range meta.EdgeTypes {
		md.EdgeType = append(md.EdgeType, et.String())
		md.NumEdgesPerType = append(md.NumEdgesPerType, meta.NumEdges[t])
		md.NumEdgesPerChunk = append(md.NumEdgesPerChunk, chunkCounts(meta.NumEdges[t], spec.Chunks))
		s := ChunkSpec{Format: edgeFormat}
		for k := range spec.Chunks {
			s.Data = append(s.Data, edgeChunkPath(et, k, spec.Format))
		}
		md.Edges[et.String()] = s
	}
	dataFormat := nodeDataFormat(spec.Format)
	for t, nt := range meta.NodeTypes {
		specs := map[string]ChunkSpec{}
		for _, name := range genArrays(spec, t) {
			s := ChunkSpec{Format: Format{Name: dataFormat}}
			for k := range spec.Chunks {
				s.Data = append(s.Data, nodeChunkPath(nt, name, k, dataFormat))
			}
			specs[name] = s
		}
		if len(specs) > 0 {
			md.NodeData[nt] = specs
		}
	}
	return md
}

// nodeDataFormat is the format of node data: Parquet for a Parquet graph,
// NumPy otherwise (as DGL's tools write CSV edges with NumPy features).
func nodeDataFormat(edgeFormat string) string {
	if edgeFormat == FormatParquet {
		return FormatParquet
	}
	return FormatNumPy
}

func chunkCounts(n int64, chunks int) []int64 {
	b := graph.EvenBook(n, chunks)
	out := make([]int64, chunks)
	for k := range out {
		out[k] = b.Size(k)
	}
	return out
}

// genArrays lists the node arrays of node type t.
func genArrays(spec GenSpec, t int) []string {
	var out []string
	if spec.featDim(t) > 0 {
		out = append(out, "feat")
	}
	if spec.Classes > 0 && t == 0 {
		out = append(out, "label", "train_mask", "val_mask", "test_mask")
	}
	return out
}

// chunkFile is a CSV chunk written through a 1 MiB buffer to an
// atomicfile: it appears under its name on Close.
type chunkFile struct {
	f *atomicfile.File
	w *bufio.Writer
}

func createChunkFile(path string) (*chunkFile, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("graphio: %w", err)
	}
	return &chunkFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (cf *chunkFile) Write(p []byte) (int, error) { return cf.w.Write(p) }

func (cf *chunkFile) Close() error {
	if err := cf.w.Flush(); err != nil {
		cf.f.Abort()
		return fmt.Errorf("graphio: %s: %w", cf.f.Path(), err)
	}
	if err := cf.f.Commit(); err != nil {
		return fmt.Errorf("graphio: %w", err)
	}
	return nil
}

func (cf *chunkFile) Abort() { cf.f.Abort() }

// genBlock is how many edges are generated between writes.
const genBlock = 1 << 16

// writeEdgeChunk writes type-wise edges [lo, hi) and returns the file's
// size. CSV and NumPy chunks hold type-wise node IDs, as DGL expects.
func writeEdgeChunk(path, format string, g *genSource, lo, hi int64, sum *Checksum, t int16, step func(int64)) (int64, error) {
	ids := make([]int64, 0, 2*genBlock)
	var w interface {
		Write([]byte) (int, error)
		Close() error
		Abort()
	}
	var err error
	switch format {
	case FormatCSV:
		w, err = createChunkFile(path)
	case FormatNumPy:
		w, err = CreateNpy(path, graph.Int64, hi-lo, 2)
	case FormatParquet:
		w, err = CreateParquet(path, graph.Int64, hi-lo, 2)
	}
	if err != nil {
		return 0, err
	}
	line := make([]byte, 0, 48*genBlock)
	for b := lo; b < hi; b += genBlock {
		ids = ids[:0]
		for e := b; e < min(b+genBlock, hi); e++ {
			u, v := g.edge(e)
			ids = append(ids, u, v)
			sum.Add(EdgeHash(t, u+g.srcOff, v+g.dstOff))
		}
		var p []byte
		if format == FormatCSV {
			line = line[:0]
			for i := 0; i < len(ids); i += 2 {
				line = strconv.AppendInt(line, ids[i], 10)
				line = append(line, ' ')
				line = strconv.AppendInt(line, ids[i+1], 10)
				line = append(line, '\n')
			}
			p = line
		} else {
			p = graph.AsBytes(ids)
		}
		if _, err := w.Write(p); err != nil {
			w.Abort()
			return 0, err
		}
		step(int64(len(ids) / 2))
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("graphio: %w", err)
	}
	return st.Size(), nil
}

// Node data values are functions of (seed, node type, node, column).
func genFeat(seed uint64, t, j int, n int64) float32 {
	h := graph.Mix64(seed ^ 0x66656174 ^ uint64(t)<<56 ^ uint64(n)*0x9e3779b97f4a7c15 ^ uint64(j)*0xc2b2ae3d27d4eb4f)
	return float32(2*unitFloat(h) - 1)
}

func genLabel(spec GenSpec, n int64) int64 {
	if spec.Planted > 0 {
		return n % int64(spec.Classes)
	}
	return int64(graph.Mix64(spec.Seed^0x6c6162656c^uint64(n)*0x9e3779b97f4a7c15) % uint64(spec.Classes))
}

// plantedCentroid is column j of node n's class centroid: ±PlantedSignal,
// a function of (seed, class, column); 0 without planted classes.
func plantedCentroid(spec GenSpec, t, j int, n int64) float32 {
	if spec.Planted == 0 || t != 0 {
		return 0
	}
	c := uint64(genLabel(spec, n))
	if graph.Mix64(spec.Seed^0x63656e74^c*0x9e3779b97f4a7c15^uint64(j)*0xc2b2ae3d27d4eb4f)&1 == 0 {
		return -PlantedSignal
	}
	return PlantedSignal
}

// genSplit puts 60% of the nodes in training, 20% in validation, 20% in
// test.
func genSplit(seed uint64, n int64) int {
	u := unitFloat(graph.Mix64(seed ^ 0x73706c6974 ^ uint64(n)*0x9e3779b97f4a7c15))
	switch {
	case u < 0.6:
		return 0
	case u < 0.8:
		return 1
	}
	return 2
}

// writeNodeChunk writes chunk k (nodes [lo, hi)) of every array of node
// type t.
func writeNodeChunk(dir string, spec GenSpec, nt string, t, k int, lo, hi int64) (int64, error) {
	format := nodeDataFormat(spec.Format)
	var total int64
	for _, name := range genArrays(spec, t) {
		var ten *graph.Tensor
		switch {
		case name == "feat":
			d := spec.featDim(t)
			f := make([]float32, (hi-lo)*int64(d))
			for i := range hi - lo {
				for j := range d {
					f[i*int64(d)+int64(j)] = genFeat(spec.Seed, t, j, lo+i) + plantedCentroid(spec, t, j, lo+i)
				}
			}
			ten = graph.TensorOf(f, d)
		case name == "label":
			l := make([]int64, hi-lo)
			for i := range l {
				l[i] = genLabel(spec, lo+int64(i))
			}
			ten = graph.TensorOf(l, 0)
		default:
			which := map[string]int{"train_mask": 0, "val_mask": 1, "test_mask": 2}[name]
			m := make([]bool, hi-lo)
			for i := range m {
				m[i] = genSplit(spec.Seed, lo+int64(i)) == which
			}
			ten = graph.TensorOf(m, 0)
		}
		path := filepath.Join(dir, nodeChunkPath(nt, name, k, format))
		var err error
		if format == FormatParquet {
			err = WriteParquet(path, ten)
		} else {
			err = WriteNpy(path, ten)
		}
		if err != nil {
			return 0, err
		}
		st, err := os.Stat(path)
		if err != nil {
			return 0, fmt.Errorf("graphio: %w", err)
		}
		total += st.Size()
	}
	return total, nil
}
