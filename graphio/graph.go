package graphio

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"gnnrun/collective"
	"gnnrun/graph"
)

// Graph is one rank's share of a graph read from disk.
type Graph struct {
	// Meta holds the node and edge types and their counts, after
	// normalisation.
	Meta graph.Meta
	// Edges holds about M/P edges with homogeneous node IDs, their types
	// (nil when there is one edge type), their type-wise edge IDs, weights
	// when the input has them, and edge data rows.
	Edges *graph.Edges
	// Nodes holds the node data rows of an even range of type-wise node IDs
	// per node type: features, labels, masks; "orig_id" after Compact;
	// "vwgt" and "vsize" from METIS.
	Nodes *graph.NodeData
	// Path and Format say what was read.
	Path, Format string
	// Steps lists what normalisation did, in order, with counts.
	Steps []Step

	closers []func() error
}

// Step is one normalisation step and what it did.
type Step struct {
	Name  string // "drop-self-loops", "undirected", "dedup", "compact"
	Count int64  // edges dropped or added, or nodes after compaction
	Text  string // e.g. "dropped 78,303 self loops"
}

// Close releases the memory maps node data may view; the tensors must not
// be used afterwards.
func (g *Graph) Close() error {
	var first error
	for _, c := range g.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	g.closers = nil
	return first
}

// NodeBook returns EvenBook(total nodes, parts): one contiguous range of
// homogeneous node IDs per rank, the vtxdist a partitioner wants. Node data
// is spread per node type instead (Nodes.Books), so that each type's arrays
// split evenly; a consumer that needs both maps IDs with Meta.NodeTypeOf.
func (g *Graph) NodeBook(parts int) graph.Book { return graph.EvenBook(g.Meta.TotalNodes(), parts) }

// The input formats Read understands.
const (
	InChunked  = "chunked"  // DGL chunked graph format: metadata.json
	InEdgeList = "edgelist" // text: src dst [weight] per line
	InMETIS    = "metis"    // METIS .graph
	InMTX      = "mtx"      // MatrixMarket coordinate
	InNpz      = "npz"      // NumPy .npz with edges or a CSR adjacency
	InNpy      = "npy"      // NumPy .npy of N×2 edges
)

// Option configures Read.
type Option func(*options) error

type options struct {
	format        string
	undirected    bool
	dropSelfLoops bool
	dedup         bool
	compact       bool
	header        string
	skipData      bool
	log           *slog.Logger
	progress      func(stage string, done, total int64)
}

func (o *options) setDefault() {
	o.header = "auto"
	o.log = slog.New(slog.DiscardHandler)
	o.progress = func(string, int64, int64) {}
}

// InputFormat forces the input format instead of guessing it from the
// path: one of chunked, edgelist, metis, mtx, npz, npy.
func InputFormat(name string) Option {
	return func(o *options) error {
		switch name {
		case "", InChunked, InEdgeList, InMETIS, InMTX, InNpz, InNpy:
			o.format = name
			return nil
		}
		return fmt.Errorf("graphio: input format %q is not one of chunked, edgelist, metis, mtx, npz, npy", name)
	}
}

// Undirected adds the reverse of every edge that is not a self loop, with
// the same type, weight and data; the reverse of type-wise edge i of a type
// with m edges gets ID m+i. Only edge types whose source and destination
// node types are the same can be reversed.
func Undirected(on bool) Option { return func(o *options) error { o.undirected = on; return nil } }

// DropSelfLoops removes the edges whose source is their destination.
func DropSelfLoops(on bool) Option {
	return func(o *options) error { o.dropSelfLoops = on; return nil }
}

// Dedup keeps one edge of every (type, source, destination): the one with
// the smallest type-wise edge ID.
func Dedup(on bool) Option { return func(o *options) error { o.dedup = on; return nil } }

// Compact renumbers the node IDs of an edge list (or MatrixMarket file),
// which may be non-contiguous, to 0..N-1 in increasing order of the
// original IDs, and keeps the original ID of every node as the node array
// "orig_id".
func Compact(on bool) Option { return func(o *options) error { o.compact = on; return nil } }

// Header says whether the first non-comment line of an edge list is a
// header: "yes", "no", or "auto" (the default): a line that is not two
// integers, or a line "n m" where m is the number of lines after it and
// no ID reaches n+1.
func Header(mode string) Option {
	return func(o *options) error {
		switch mode {
		case "auto", "yes", "no":
			o.header = mode
			return nil
		}
		return fmt.Errorf("graphio: header mode %q is not one of auto, yes, no", mode)
	}
}

// SkipData reads the edges only: no node or edge data.
func SkipData(on bool) Option { return func(o *options) error { o.skipData = on; return nil } }

// Logger sets where warnings and progress notes go (default: nowhere).
func Logger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return fmt.Errorf("graphio: nil logger")
		}
		o.log = l
		return nil
	}
}

// Progress sets a function called as each rank reads, with the bytes done
// and the rank's total for the stage.
func Progress(fn func(stage string, done, total int64)) Option {
	return func(o *options) error {
		if fn == nil {
			return fmt.Errorf("graphio: nil progress function")
		}
		o.progress = fn
		return nil
	}
}

// Read reads the graph at path with every rank of c (SPMD: every rank
// calls it with the same arguments) and returns this rank's share. path is
// a chunked graph's metadata.json or its directory, a METIS .graph, a
// MatrixMarket .mtx, a .npz or .npy, or an edge list (any other name,
// optionally .gz). Bad input fails with an *InputError naming the file,
// line or row, and the reason; the counts of every step are checked
// across ranks.
func Read(c *collective.Comm, path string, opts ...Option) (*Graph, error) {
	var o options
	o.setDefault()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	format, file, err := detectFormat(path, o.format)
	if err != nil {
		return nil, err
	}
	if o.compact && format != InEdgeList && format != InMTX {
		return nil, fmt.Errorf("graphio: compaction applies to edge lists and MatrixMarket files; the IDs of %s input are dense already", format)
	}
	var g *Graph
	switch format {
	case InChunked:
		g, err = readChunked(c, file, &o)
	case InEdgeList:
		g, err = readEdgeList(c, file, &o)
	case InMETIS:
		g, err = readMETIS(c, file, &o)
	case InMTX:
		g, err = readMTX(c, file, &o)
	case InNpz:
		g, err = readNpzGraph(c, file, &o)
	case InNpy:
		g, err = readNpyGraph(c, file, &o)
	}
	if err != nil {
		if g != nil {
			g.Close()
		}
		return nil, err
	}
	g.Path, g.Format = file, format
	if err := normalize(c, g, &o); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// detectFormat picks the input format from the path.
func detectFormat(path, forced string) (format, file string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", "", fileErr(path, "%v", unwrapPathError(err))
	}
	if st.IsDir() {
		file = filepath.Join(path, "metadata.json")
		if _, err := os.Stat(file); err != nil {
			return "", "", fileErr(path, "a directory given as input must hold metadata.json (DGL chunked format)")
		}
		return InChunked, file, nil
	}
	if forced != "" {
		return forced, path, nil
	}
	name := strings.ToLower(strings.TrimSuffix(filepath.Base(path), ".gz"))
	switch {
	case strings.HasSuffix(name, ".json"):
		return InChunked, path, nil
	case strings.HasSuffix(name, ".graph"), strings.HasSuffix(name, ".metis"), strings.HasSuffix(name, ".mgraph"):
		return InMETIS, path, nil
	case strings.HasSuffix(name, ".mtx"):
		return InMTX, path, nil
	case strings.HasSuffix(name, ".npz"):
		return InNpz, path, nil
	case strings.HasSuffix(name, ".npy"):
		return InNpy, path, nil
	}
	return InEdgeList, path, nil
}

// readSmallFile reads a small file on rank 0 and broadcasts it, so a
// thousand ranks do not all hit the file system for the same bytes; a
// failure on rank 0 becomes the same error on every rank.
func readSmallFile(c *collective.Comm, path string) ([]byte, error) {
	var data []byte
	var msg string
	if c.Rank() == 0 {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			msg = fileErr(path, "%v", unwrapPathError(err)).Error()
		}
	}
	m, err := collective.Bcast(c, []byte(msg), 0)
	if err != nil {
		return nil, err
	}
	if len(m) > 0 {
		return nil, fmt.Errorf("%s", m)
	}
	return collective.Bcast(c, data, 0)
}
