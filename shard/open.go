package shard

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
)

// Partition is one partition of a partition directory, its arrays viewing
// read-only memory maps of the files (or of their decompressed copies in
// /dev/shm). Local IDs put the NumInner inner nodes first, in new-ID order
// (local ID i is global ID Lo+i), then the halo nodes.
type Partition struct {
	ID         int
	Config     *Config
	ConfigPath string
	Book       *Book
	NumInner   int64
	Lo, Hi     int64 // the inner nodes' global IDs

	Local2Global []int64
	InnerNode    []bool
	NodeType     []int16
	OrigNIDs     []int64 // inner nodes only
	Indptr       []int64 // CSC: in-edges of inner node i are Indptr[i]:Indptr[i+1]
	Indices32    []int32 // local source of each CSC entry, when the partition's IDs fit int32
	Indices64    []int64 // ... else here
	EdgeIDs      []int64
	EdgeType     []int16
	OrigEIDs     []int64
	// NodeFeats["<ntype>/<name>"] has one row per inner node of the type,
	// in new-ID order; EdgeFeats["<src:rel:dst>/<name>"] one row per CSC
	// entry of the type, in CSC order.
	NodeFeats map[string]*graph.Tensor
	EdgeFeats map[string]*graph.Tensor

	maps []mapping
}

// NumLocal returns the number of local nodes: inner and halo.
func (p *Partition) NumLocal() int64 { return int64(len(p.Local2Global)) }

// NumEdges returns the number of CSC entries.
func (p *Partition) NumEdges() int64 { return int64(len(p.EdgeIDs)) }

// Index returns the local source ID of CSC entry q.
func (p *Partition) Index(q int64) int64 {
	if p.Indices32 != nil {
		return int64(p.Indices32[q])
	}
	return p.Indices64[q]
}

// NodeFeat returns the named array of node type ntype, or nil.
func (p *Partition) NodeFeat(ntype, name string) *graph.Tensor {
	return p.NodeFeats[featKey{ntype, name}.String()]
}

// Close releases the memory maps; the arrays must not be used afterwards.
func (p *Partition) Close() error {
	var first error
	for _, m := range p.maps {
		if err := m.unmap(); err != nil && first == nil {
			first = err
		}
	}
	p.maps = nil
	return first
}

// OpenOption configures Open.
type OpenOption func(*openOptions) error

type openOptions struct {
	shm       string
	checksums bool
}

// ShmDir sets where compressed partitions are decompressed (default
// /dev/shm, memory shared by the processes of a host).
func ShmDir(dir string) OpenOption {
	return func(o *openOptions) error {
		if dir == "" {
			return fmt.Errorf("shard: empty shared-memory directory")
		}
		o.shm = dir
		return nil
	}
}

// Checksums sets whether Serve and Open compare every file of the
// partitions they open with the CRC-32C its config records (default on),
// failing with the file's name on a mismatch. It reads every byte once,
// from a warm page cache at about the speed of cat (bench/results/open.md);
// off, it costs nothing, for storage trusted not to change a byte. The
// structural checks (bounds.go), one pass over the index arrays, are made
// either way.
func Checksums(on bool) OpenOption {
	return func(o *openOptions) error { o.checksums = on; return nil }
}

// FindConfig returns the config of the partition directory dir (or dir
// itself when it names the config file).
func FindConfig(dir string) (string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", errorf("%v", err)
	}
	if !st.IsDir() {
		return dir, nil
	}
	found, _, err := existingPartition(dir, "")
	if err != nil {
		return "", errorf("%v", err)
	}
	sort.Strings(found)
	switch len(found) {
	case 0:
		return "", errorf("%s holds no partition config (<graph_name>.json): not a complete partition directory", dir)
	case 1:
		return found[0], nil
	}
	return "", errorf("%s holds several partition configs %v; name one", dir, found)
}

// LoadConfig reads the config of dir on rank 0 and shares it with every
// rank of c. It is collective.
func LoadConfig(c *collective.Comm, dir string) (string, *Config, error) {
	var path string
	var raw []byte
	var err error
	if c.Rank() == 0 {
		if path, err = FindConfig(dir); err == nil {
			raw, err = os.ReadFile(path)
		}
	}
	if err = collective.Agree(c, err); err != nil {
		return "", nil, err
	}
	p, err := collective.Bcast(c, []byte(path), 0)
	if err != nil {
		return "", nil, err
	}
	if raw, err = collective.Bcast(c, raw, 0); err != nil {
		return "", nil, err
	}
	cfg, err := ParseConfig(raw, string(p))
	return string(p), cfg, err
}

// Open opens partition part of the partition directory dir on this rank;
// part < 0 opens none (the rank only asks others for data). The arrays are
// memory-mapped read-only, so the ranks of a host share one copy in the
// page cache. A compressed partition is decompressed once per host into
// /dev/shm by the first rank of the host that opens it, the others waiting
// on the node-local communicator; the files are unlinked as soon as every
// rank mapped them, so nothing is left behind even if the job dies. The
// files are checked as Serve checks them. It is collective over c. (Serve
// opens the partitions of any rank count.)
func Open(c *collective.Comm, dir string, part int, opts ...OpenOption) (*Partition, error) {
	path, cfg, err := LoadConfig(c, dir)
	if err != nil {
		return nil, err
	}
	if part >= cfg.NumParts {
		err = errorf("%s has %d partitions; there is no partition %d", path, cfg.NumParts, part)
	}
	if err := collective.Agree(c, err); err != nil {
		return nil, err
	}
	var want []int
	if part >= 0 {
		want = []int{part}
	}
	ps, _, err := openParts(c, path, cfg, want, nil, opts)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return &Partition{ID: -1, Config: cfg, ConfigPath: path, Book: cfg.Book()}, nil
	}
	return ps[0], nil
}

// openParts opens partitions want (each in [0, K)) of the directory whose
// config is at path on this rank, after comparing the files share gives it
// with their checksums, and checks their structure. It is collective over
// c: every rank fails when one does.
func openParts(c *collective.Comm, path string, cfg *Config, want []int, share fileShare, opts []OpenOption) ([]*Partition, OpenStats, error) {
	o := openOptions{shm: "/dev/shm", checksums: true}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, OpenStats{}, err
		}
	}
	node, err := c.SplitShared()
	if err != nil {
		return nil, OpenStats{}, err
	}
	defer node.Free()
	st := OpenStats{Workers: max(1, runtime.GOMAXPROCS(0)/node.Size())}
	if o.checksums {
		err = checksumFiles(path, cfg, want, share, st.Workers, &st)
	}
	if err := collective.Agree(c, err); err != nil {
		return nil, st, err
	}
	var ps []*Partition
	if cfg.Compression == "zstd" {
		ps, err = openCompressed(c, node, path, cfg, want, o)
	} else {
		ps, err = loadPartitions(path, cfg, want, func(rel string) (*graph.Tensor, mapping, error) {
			return mapArray(resolve(path, rel))
		})
		if err = collective.Agree(c, err); err != nil {
			CloseAll(ps)
		}
	}
	if err != nil {
		return nil, st, err
	}
	err = checkStructure(ps, st.Workers, &st)
	if err = collective.Agree(c, err); err != nil {
		CloseAll(ps)
		return nil, st, err
	}
	return ps, st, nil
}

// CloseAll closes the partitions ps (those OpenHostParts returns, say),
// returning the first error.
func CloseAll(ps []*Partition) error {
	var first error
	for _, p := range ps {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// loadPartitions loads every partition of want with open, closing those
// loaded when one fails.
func loadPartitions(path string, cfg *Config, want []int, open func(rel string) (*graph.Tensor, mapping, error)) ([]*Partition, error) {
	var ps []*Partition
	for _, q := range want {
		p, err := loadPartition(path, cfg, q, open)
		if err != nil {
			CloseAll(ps)
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// openCompressed decompresses the partitions this host needs into shared
// memory, once each, and maps them.
func openCompressed(c, node *collective.Comm, path string, cfg *Config, want []int, o openOptions) ([]*Partition, error) {
	mine := make([]int64, len(want))
	for i, q := range want {
		mine[i] = int64(q)
	}
	wanted, counts, err := collective.Allgatherv(node, mine)
	if err != nil {
		return nil, err
	}
	// The host's first rank names the directory, for this job alone.
	var name []byte
	if node.Rank() == 0 {
		name = []byte(filepath.Join(o.shm, fmt.Sprintf("gnnrun-%d-%d-%d", os.Getuid(), os.Getpid(), time.Now().UnixNano())))
	}
	if name, err = collective.Bcast(node, name, 0); err != nil {
		return nil, err
	}
	shm := string(name)
	defer func() {
		if node.Rank() == 0 {
			os.RemoveAll(shm)
		}
	}()
	// The first rank of the host (in node rank order) wanting a partition
	// decompresses it.
	err = nil
	off := 0
	for r, k := range counts {
		for _, q := range wanted[off : off+k] {
			if r == node.Rank() && err == nil && firstIndex(wanted, q) == off+slices.Index(wanted[off:off+k], q) {
				err = decompressPartition(path, cfg, int(q), shm)
			}
		}
		off += k
	}
	if err := collective.Agree(node, err); err != nil {
		return nil, err
	}
	ps, err := loadPartitions(path, cfg, want, func(rel string) (*graph.Tensor, mapping, error) {
		return mapArray(filepath.Join(shm, strings.TrimSuffix(filepath.FromSlash(rel), ".zst")))
	})
	if err := collective.Agree(c, err); err != nil {
		CloseAll(ps)
		return nil, err
	}
	// Every rank of the host has mapped its files: they can be unlinked
	// (the deferred RemoveAll); the memory goes when the last map does.
	if err := node.Barrier(); err != nil {
		return nil, err
	}
	return ps, nil
}

func firstIndex(s []int64, v int64) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// decompressPartition writes the decompressed files of partition part
// under shm, in the same layout.
func decompressPartition(path string, cfg *Config, part int, shm string) error {
	for _, rel := range cfg.Parts[part].allFiles() {
		dst := filepath.Join(shm, strings.TrimSuffix(filepath.FromSlash(rel), ".zst"))
		if err := decompressFile(resolve(path, rel), dst); err != nil {
			return err
		}
	}
	return nil
}

// allFiles lists every file of the partition, relative to the config.
func (f *PartFiles) allFiles() []string {
	var out []string
	for _, a := range f.arrays() {
		out = append(out, a.path)
	}
	for _, m := range []map[string]string{f.NodeFeats, f.EdgeFeats} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, m[k])
		}
	}
	return out
}

// loadPartition opens every array of partition part with open and checks
// their types and lengths against the config.
func loadPartition(cfgPath string, cfg *Config, part int, open func(rel string) (*graph.Tensor, mapping, error)) (*Partition, error) {
	pf := cfg.Parts[part]
	p := &Partition{ID: part, Config: cfg, ConfigPath: cfgPath, Book: cfg.Book(), NodeFeats: map[string]*graph.Tensor{}, EdgeFeats: map[string]*graph.Tensor{}}
	p.Lo, p.Hi = p.Book.PartRange(part)
	p.NumInner = p.Hi - p.Lo
	if pf.InnerNodes != p.NumInner {
		return nil, errorf("%s: part-%d has %d inner nodes, its node_map ranges %d", cfgPath, part, pf.InnerNodes, p.NumInner)
	}
	local := pf.InnerNodes + pf.HaloNodes
	get := func(rel string, d graph.DType, rows int64) (*graph.Tensor, error) {
		t, m, err := open(rel)
		if err != nil {
			return nil, err
		}
		if m != nil {
			p.maps = append(p.maps, m)
		}
		if t.DType != d || len(t.Shape) != 1 || t.Shape[0] != rows {
			return nil, errorf("%s: %s%s, want %s(%d,)", resolve(cfgPath, rel), t.DType, graph.ShapeString(t.Shape), d, rows)
		}
		return t, nil
	}
	fail := func(err error) (*Partition, error) {
		p.Close()
		return nil, err
	}
	var err error
	load64 := func(dst *[]int64, rel string, rows int64) {
		if err == nil {
			var t *graph.Tensor
			if t, err = get(rel, graph.Int64, rows); err == nil {
				*dst, err = graph.View[int64](t)
			}
		}
	}
	load16 := func(dst *[]int16, rel string, rows int64) {
		if err == nil {
			var t *graph.Tensor
			if t, err = get(rel, graph.Int16, rows); err == nil {
				*dst, err = graph.View[int16](t)
			}
		}
	}
	load64(&p.Local2Global, pf.Local2Global, local)
	load64(&p.OrigNIDs, pf.OrigNIDs, pf.InnerNodes)
	load64(&p.Indptr, pf.Indptr, pf.InnerNodes+1)
	load64(&p.EdgeIDs, pf.EdgeIDs, pf.Edges)
	load64(&p.OrigEIDs, pf.OrigEIDs, pf.Edges)
	load16(&p.NodeType, pf.NodeType, local)
	load16(&p.EdgeType, pf.EdgeType, pf.Edges)
	if err == nil {
		var t *graph.Tensor
		if t, err = get(pf.InnerNode, graph.Bool, local); err == nil {
			p.InnerNode, err = graph.ViewBytes[bool](t.Data)
		}
	}
	if err == nil {
		var t *graph.Tensor
		if pf.IndexDType == "int32" {
			if t, err = get(pf.Indices, graph.Int32, pf.Edges); err == nil {
				p.Indices32, err = graph.View[int32](t)
			}
		} else if t, err = get(pf.Indices, graph.Int64, pf.Edges); err == nil {
			p.Indices64, err = graph.View[int64](t)
		}
	}
	if err != nil {
		return fail(err)
	}
	if err := p.loadFeats(cfgPath, open); err != nil {
		return fail(err)
	}
	return p, nil
}

// loadFeats opens the node and edge arrays and checks their row counts.
func (p *Partition) loadFeats(cfgPath string, open func(rel string) (*graph.Tensor, mapping, error)) error {
	pf := p.Config.Parts[p.ID]
	for key, rel := range pf.NodeFeats {
		ntype, _, _ := strings.Cut(key, "/")
		t := slices.Index(p.Config.NodeTypes, ntype)
		if t < 0 {
			return errorf("%s: node array %q of unknown node type", cfgPath, key)
		}
		lo, hi := p.Book.TypeRange(p.ID, t)
		ten, err := p.loadArray(cfgPath, rel, open, hi-lo, fmt.Sprintf("nodes of type %q", ntype))
		if err != nil {
			return err
		}
		p.NodeFeats[key] = ten
	}
	for key, rel := range pf.EdgeFeats {
		ets, _, _ := strings.Cut(key, "/")
		t := slices.IndexFunc(p.Config.EdgeTypes, func(et graph.EdgeType) bool { return et.String() == ets })
		if t < 0 {
			return errorf("%s: edge array %q of unknown edge type", cfgPath, key)
		}
		lo, hi := p.Book.EdgeTypeRange(p.ID, t)
		ten, err := p.loadArray(cfgPath, rel, open, hi-lo, "edges of type "+ets)
		if err != nil {
			return err
		}
		p.EdgeFeats[key] = ten
	}
	return nil
}

// loadArray opens the array file rel, keeps its mapping for Close, and
// checks that it has one row for each of the partition's want items.
func (p *Partition) loadArray(cfgPath, rel string, open func(rel string) (*graph.Tensor, mapping, error), want int64, items string) (*graph.Tensor, error) {
	ten, m, err := open(rel)
	if err != nil {
		return nil, err
	}
	if m != nil {
		p.maps = append(p.maps, m)
	}
	if ten.Rows() != want || len(ten.Shape) == 0 {
		return nil, errorf("%s: %d rows, partition %d has %d %s", resolve(cfgPath, rel), ten.Rows(), p.ID, want, items)
	}
	return ten, nil
}
