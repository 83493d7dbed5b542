package sampler

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"gnnrun/collective"
	"gnnrun/shard"
)

// The edge table of a host's partitions (HostGraph), held once per host:
// each set of partitions served on the host has one segment, a file in
// shared memory written by the first rank of the host (in node rank order)
// that serves it, and every rank of the host maps the segments it reads
// into one reserved range of addresses, its own served partitions' segment
// first, the others each at a segment-aligned offset after it. An entry's
// place is still base[p]+q in one array: the gaps between segments are
// never read. The files are unlinked as soon as every rank of the host
// has mapped them, before they are filled, so a job that dies leaves
// nothing behind; the memory goes with the last mapping.

// hostTableDir is where the segments' files are made (a variable for the
// tests of a host whose shared memory refuses them).
var hostTableDir = "/dev/shm"

// segmentAlign is the alignment of a segment in a rank's range: a
// multiple of every page size the kernel maps shared memory with.
const segmentAlign = 2 << 20

// hostSegment is one set of partitions served on a host, as laid out in a
// rank's range.
type hostSegment struct {
	parts   []int // the partitions, ascending (a rank's served ones)
	writer  int   // the node rank that writes it
	entries int64 // entries of its partitions together
	at      int64 // its first entry in this rank's range
}

// newHostEdgeTable lays out the edge table of the partitions s serves and
// of host (the host's other partitions) in shared memory, as above. It is
// collective over c. When the host's shared memory cannot hold the
// segments (a rank of the host fails to make or map one), every rank of
// the host gets a nil table and the reason, and nothing is left in
// hostTableDir; an error is a failure of c.
func newHostEdgeTable(c *collective.Comm, s *shard.Served, host []*shard.Partition) (*edgeTable, string, error) {
	node, mates, err := shard.SplitHost(c)
	if err != nil {
		return nil, "", err
	}
	defer node.Free()
	var prefix []byte
	if node.Rank() == 0 {
		prefix = []byte(filepath.Join(hostTableDir, fmt.Sprintf("gnnrun-edges-%d-%d-%d-%d", os.Getuid(), os.Getpid(), c.Rank(), time.Now().UnixNano())))
	}
	if prefix, err = collective.Bcast(node, prefix, 0); err != nil {
		return nil, "", err
	}
	t := blankEdgeTable(s)
	stride := t.stride()
	segs := hostSegments(c, s, mates, node.Rank(), host)
	own := &segs[0]
	// Lay out the segments: the rank's own first, at entry 0 (the RMA
	// readers of this rank's table expect its served partitions there).
	var end int64
	for i := range segs {
		g := &segs[i]
		g.at = end
		at := g.at
		for _, q := range g.parts {
			if t.base[q] < 0 {
				t.base[q] = at
			}
			at += s.Config.Parts[q].Edges
		}
		end = roundUp((g.at+g.entries)*stride*8, segmentAlign) / (stride * 8)
	}
	t.served = own.entries
	name := func(g *hostSegment) string { return fmt.Sprintf("%s-%d", prefix, g.writer) }
	writes := own.writer == node.Rank() && own.entries > 0

	// Make the file this rank writes, with its memory taken now (a full
	// /dev/shm refuses it here, not with a SIGBUS as it is filled).
	var made error
	if writes {
		made = makeSegment(name(own), own.entries*stride*8)
	}
	unlink := func() {
		if writes {
			os.Remove(name(own))
		}
	}
	if err := collective.Agree(node, made); err != nil {
		unlink()
		return nil, err.Error(), nil
	}
	region, mapErr := reserveRange(end * stride * 8)
	for i := range segs {
		g := &segs[i]
		if mapErr != nil {
			break
		}
		if g.entries > 0 {
			mapErr = mapSegment(region, g.at*stride*8, g.entries*stride*8, name(g), i == 0 && writes)
		}
	}
	if err := collective.Agree(node, mapErr); err != nil {
		unlink()
		if region != nil {
			unix.Munmap(region)
		}
		return nil, err.Error(), nil
	}
	// Every rank of the host has mapped what it reads.
	if err := node.Barrier(); err != nil {
		unlink()
		unix.Munmap(region)
		return nil, "", err
	}
	unlink()
	if len(region) > 0 {
		t.words = unsafe.Slice((*uint64)(unsafe.Pointer(&region[0])), len(region)/8)
	}
	t.region = region
	if writes {
		t.fillParts(s.Parts, s.Checks.Workers)
	}
	// Every segment is filled.
	if err := node.Barrier(); err != nil {
		t.free()
		return nil, "", err
	}
	return t, "", nil
}

// hostSegments returns the segments a rank reads, its own first (node
// rank me of the host whose ranks are mates, by world rank in node rank
// order): its served partitions, then every other distinct served set of
// the host that holds a partition of host.
func hostSegments(c *collective.Comm, s *shard.Served, mates []int64, me int, host []*shard.Partition) []hostSegment {
	k := s.Config.NumParts
	sets := make([][]int, len(mates))
	for r, w := range mates {
		sets[r] = shard.ServedParts(int(w), c.Size(), k)
	}
	// A set's writer is the first rank of the host that serves it.
	segment := func(r int) hostSegment {
		g := hostSegment{parts: sets[r], writer: r}
		for w := range r {
			if slices.Equal(sets[w], sets[r]) {
				g.writer = w
				break
			}
		}
		for _, q := range g.parts {
			g.entries += s.Config.Parts[q].Edges
		}
		return g
	}
	segs := []hostSegment{segment(me)}
	for r := range mates {
		g := segment(r)
		if g.writer != r || slices.Equal(g.parts, sets[me]) {
			continue
		}
		if slices.ContainsFunc(host, func(p *shard.Partition) bool { return slices.Contains(g.parts, p.ID) }) {
			segs = append(segs, g)
		}
	}
	return segs
}

// makeSegment is makeSegmentFile, a variable for the tests of a host
// whose shared memory refuses a segment.
var makeSegment = makeSegmentFile

// makeSegmentFile makes the file of a segment of n bytes, its memory
// allocated.
func makeSegmentFile(path string, n int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sampler: the host's edge table: %w", err)
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
		os.Remove(path)
		return fmt.Errorf("sampler: the host's edge table: %d MiB in %s: %w", n>>20, path, err)
	}
	return nil
}

// reserveRange reserves n bytes of addresses, none of it memory.
func reserveRange(n int64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	b, err := unix.Mmap(-1, 0, int(n), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("sampler: the host's edge table: reserving %d MiB of addresses: %w", n>>20, err)
	}
	return b, nil
}

// mapSegment maps the n bytes of file path at offset off of region,
// writable or read-only.
func mapSegment(region []byte, off, n int64, path string, writable bool) error {
	flags, prot := os.O_RDONLY, unix.PROT_READ
	if writable {
		flags, prot = os.O_RDWR, unix.PROT_READ|unix.PROT_WRITE
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return fmt.Errorf("sampler: the host's edge table: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() != n {
		return fmt.Errorf("sampler: the host's edge table: %s is not the %d bytes of its partitions' entries", path, n)
	}
	_, err = unix.MmapPtr(int(f.Fd()), 0, unsafe.Pointer(&region[off]), uintptr(n), prot, unix.MAP_SHARED|unix.MAP_FIXED)
	if err != nil {
		return fmt.Errorf("sampler: the host's edge table: mapping %s: %w", path, err)
	}
	return nil
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }
