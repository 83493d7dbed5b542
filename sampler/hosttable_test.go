package sampler

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"gnnrun/collective"
	"gnnrun/shard"
)

// withHostTableDir points the host tables' files at dir for the test.
func withHostTableDir(t *testing.T, dir string) {
	old := hostTableDir
	hostTableDir = dir
	t.Cleanup(func() { hostTableDir = old })
}

// noFilesIn fails when dir holds anything.
func noFilesIn(dir string) error {
	left, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("%s holds %d files after the table was made (%s, ...)", dir, len(left), left[0].Name())
	}
	return nil
}

// The host's edge table: every partition a rank reads (its own and, on
// its host, the others') at its base, entry q holding the global source
// and edge ID of the partition's CSC position q (read plainly from its
// arrays); the host partitions' entries in the memory their writer fills
// (a word the writer changes is seen by its host's other ranks); no file
// left once made. The test's worlds put two ranks on a host: at 2 ranks
// over 4 partitions a segment holds 2 partitions, at 4 one, at 8 two
// ranks of a host serve the same partition (no host partitions, a table
// of the served ones in this rank's memory).
func TestHostEdgeTable(t *testing.T) {
	f := getFixture(t, false, 4)
	for _, p := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("P=%d", p), func(t *testing.T) {
			dir := t.TempDir()
			withHostTableDir(t, dir)
			world(t, p, func(c *collective.Comm) error {
				s, err := shard.Serve(c, f.Parts)
				if err != nil {
					return err
				}
				defer s.Close()
				host, err := shard.OpenHostParts(c, s)
				if err != nil {
					return err
				}
				defer shard.CloseAll(host)
				tab, why, err := acquireEdgeTable(c, s, host)
				if err != nil || why != "" {
					return fmt.Errorf("rank %d: %v %s", c.Rank(), err, why)
				}
				defer releaseEdgeTable(s, len(host) > 0)
				if (tab.region != nil) != (len(host) > 0) {
					return fmt.Errorf("rank %d: %d host partitions, table in shared memory %v", c.Rank(), len(host), tab.region != nil)
				}
				// Every host's ranks have their tables.
				if err := c.Barrier(); err != nil {
					return err
				}
				if err := noFilesIn(dir); err != nil {
					return err
				}
				for _, pt := range append(slices.Clip(s.Parts), host...) {
					if err := plainEntries(tab, pt); err != nil {
						return fmt.Errorf("rank %d: %w", c.Rank(), err)
					}
				}
				return seenByHost(c, s, tab, host)
			})
		})
	}
}

// TestEdgeTableFillInPieces fills a rank's table in pieces of 7 entries
// over 3 goroutines, in both layouts, and checks every entry against the
// partitions' arrays.
func TestEdgeTableFillInPieces(t *testing.T) {
	f := getFixture(t, false, 4)
	defer func(piece int64, wide bool) { fillPiece, wideEdgeTables = piece, wide }(fillPiece, wideEdgeTables)
	fillPiece = 7
	for _, wide := range []bool{false, true} {
		wideEdgeTables = wide
		world(t, 1, func(c *collective.Comm) error {
			s, err := shard.Serve(c, f.Parts)
			if err != nil {
				return err
			}
			defer s.Close()
			tab := blankEdgeTable(s)
			for _, p := range s.Parts {
				tab.base[p.ID] = tab.served
				tab.served += p.NumEdges()
			}
			tab.words = make([]uint64, tab.served*tab.stride())
			tab.fillParts(s.Parts, 3)
			for _, p := range s.Parts {
				if err := plainEntries(tab, p); err != nil {
					return fmt.Errorf("wide %v: %w", wide, err)
				}
			}
			return nil
		})
	}
}

// plainEntries checks the entries of partition p in t against its arrays.
func plainEntries(t *edgeTable, p *shard.Partition) error {
	base := t.base[p.ID]
	if base < 0 {
		return fmt.Errorf("partition %d has no entries", p.ID)
	}
	for q := range p.NumEdges() {
		l := p.Index(q)
		src := p.Local2Global[l]
		if l < p.NumInner {
			src = p.Lo + l
		}
		if s, e := t.at(base + q); s != src || e != p.EdgeIDs[q] {
			return fmt.Errorf("partition %d position %d: entry (%d, %d), its arrays say (%d, %d)", p.ID, q, s, e, src, p.EdgeIDs[q])
		}
	}
	return nil
}

// seenByHost has the writers of the host's segments change the first
// word of each of their partitions and the host's other ranks read the
// changes, then put them back.
func seenByHost(c *collective.Comm, s *shard.Served, t *edgeTable, host []*shard.Partition) error {
	const mark = 0x5a5a5a5a5a5a5a5a
	// Every rank has read the entries as they are.
	if err := c.Barrier(); err != nil {
		return err
	}
	old := map[int]uint64{}
	for _, p := range s.Parts {
		if t.region != nil && s.Primary(p.ID) && p.NumEdges() > 0 {
			old[p.ID] = t.words[t.base[p.ID]]
			t.words[t.base[p.ID]] = mark
		}
	}
	err := c.Barrier()
	if err != nil {
		return err
	}
	for _, p := range host {
		if w := t.words[t.base[p.ID]]; p.NumEdges() > 0 && w != mark {
			err = fmt.Errorf("rank %d: partition %d's first entry is %#x, not the word its writer put there: not the writer's memory", c.Rank(), p.ID, w)
		}
	}
	if e := c.Barrier(); err == nil {
		err = e
	}
	for q, w := range old {
		t.words[t.base[q]] = w
	}
	return err
}

// When the host's shared memory refuses the table (here on one rank of
// each host), every rank of the host samples without the host's
// partitions: told why, nothing left behind, the same batches.
func TestHostEdgeTableRefused(t *testing.T) {
	f := getFixture(t, false, 4)
	o := optionCases(false)["uniform"]
	ref := sampleOn(t, f, 1, o, nil)
	dir := t.TempDir()
	withHostTableDir(t, dir)
	old := makeSegment
	makeSegment = func(path string, n int64) error {
		if strings.HasSuffix(path, "-1") {
			return errors.New("refused by the test")
		}
		return old(path, n)
	}
	defer func() { makeSegment = old }()
	o.HostGraph = true
	world(t, 4, func(c *collective.Comm) error {
		s, err := shard.Serve(c, f.Parts)
		if err != nil {
			return err
		}
		defer s.Close()
		sm, err := New(c, s, o)
		if err != nil {
			return err
		}
		defer sm.Close()
		if !strings.Contains(sm.hostOff, "refused by the test") || len(sm.host) != 0 {
			return fmt.Errorf("rank %d: host graph off for %q, %d host partitions", c.Rank(), sm.hostOff, len(sm.host))
		}
		for q, v := range sm.views {
			if (v != nil) != (s.Local(q) != nil) {
				return fmt.Errorf("rank %d: partition %d viewed %v, served %v", c.Rank(), q, v != nil, s.Local(q) != nil)
			}
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		return noFilesIn(dir)
	})
	f.sameBatches(t, ref, "P=1's", o, nil, bothTransports, 2, 4)
	if err := noFilesIn(dir); err != nil {
		t.Fatal(err)
	}
}
