package shard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gnnrun/collective"
)

// pullAll serves the partitions on p ranks (two per host), pulls ids on
// every rank over both transports, with and without the rows of the
// partitions of the host's other rank mapped here (StoreHostRows), and
// checks the rows against the input's row of each node, found by the
// reference order of the assignment (not by the partition's own maps),
// and the rows counted local: the feature stores, and the store of
// original IDs.
func pullAll(t *testing.T, p int, out string, in *inputGraph, ref idOrder, ntype, name string, ids func(rank int, n int64) []int64, opts ...OpenOption) {
	t.Helper()
	ti := slices.Index(in.m.NodeTypes, ntype)
	world(t, p, func(c *collective.Comm) error {
		pt, err := Serve(c, out, opts...)
		if err != nil {
			return err
		}
		defer pt.Close()
		// No deferred Close of the stores: it is collective, and a rank
		// returning an error must not wait in it for ranks still pulling.
		var mine []int64
		var wantRows, wantOrig []byte
		// The partitions served on this rank's host: by ranks 2h and 2h+1
		// (a compressed directory's are not mapped: only this rank's).
		var onHost []int
		for r := c.Rank() / 2 * 2; r < min(c.Rank()/2*2+2, p); r++ {
			if r == c.Rank() || pt.Config.Compression != "zstd" {
				onHost = append(onHost, ServedParts(r, p, len(ref.start)-1)...)
			}
		}
		local, host := int64(0), int64(0) // rows in this rank's partitions; in its host's
		for _, id := range ids(c.Rank(), int64(len(ref.orig))) {
			if o := ref.orig[id]; o[0] == int64(ti) {
				mine = append(mine, id)
				wantRows = append(wantRows, in.nodes[ti][name].Row(o[1])...)
				wantOrig = binary.LittleEndian.AppendUint64(wantOrig, uint64(o[1]))
				for _, q := range pt.Parts {
					if id >= ref.start[q.ID] && id < ref.start[q.ID+1] {
						local++
					}
				}
				for _, q := range onHost {
					if id >= ref.start[q] && id < ref.start[q+1] {
						host++
						break
					}
				}
			}
		}
		if c.Size() > 1 && len(mine) > 20 && local == int64(len(mine)) {
			return fmt.Errorf("rank %d: all %d IDs drawn are local; the test needs remote ones", c.Rank(), len(mine))
		}
		orig, err := NewOrigIDStore(c, pt, Alltoall, StoreBudget(1000))
		if err != nil {
			return err
		}
		got, err := orig.Pull(mine)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, wantOrig) {
			return fmt.Errorf("rank %d: original IDs of %d nodes differ from the assignment's order", c.Rank(), len(mine))
		}
		for _, tr := range []Transport{Alltoall, RMA} {
			for _, w := range []int{1, 3} {
				if err := pullRows(c, pt, ntype, name, tr, w, false, mine, wantRows, local, 0); err != nil {
					return err
				}
				if err := pullRows(c, pt, ntype, name, tr, w, true, mine, wantRows, host, host-local); err != nil {
					return err
				}
			}
		}
		return orig.Close()
	})
}

// pullRows pulls the rows of ids from a new store over tr with its copies
// split over workers goroutines (with parallelCopyBytes lowered so that
// the test's small pulls are split), mapping the host's other partitions
// or not, and checks them and the store's count of local rows.
func pullRows(c *collective.Comm, pt *Served, ntype, name string, tr Transport, workers int, host bool, ids []int64, want []byte, local, fromHost int64) error {
	s, err := NewStore(c, pt, ntype, name, tr, StoreBudget(1000), StoreCopyWorkers(workers), StoreHostRows(host))
	if err != nil {
		return err
	}
	before := s.c.Traffic()
	got, err := s.Pull(ids)
	if err != nil {
		return err
	}
	// Every row on every rank's host (one rank, or one host of two with
	// host rows): an alltoall pull exchanges nothing; else it does.
	oneHost := c.Size() == 1 || host && c.Size() <= 2 && pt.Config.Compression != "zstd"
	if sent := s.c.Traffic().Sent - before.Sent; tr == Alltoall && oneHost != (sent == 0) {
		return fmt.Errorf("rank %d of %d: an alltoall pull (host rows %v) sent %d bytes", c.Rank(), c.Size(), host, sent)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("rank %d: %s pull of %d rows of %s/%s over %d copy workers (host rows %v) differs from the input", c.Rank(), tr, len(ids), ntype, name, workers, host)
	}
	if st := s.Stats(); st.LocalRows != local || st.RemoteRows != int64(len(ids))-local {
		return fmt.Errorf("rank %d: %s pull (host rows %v) served %d rows locally and %d remotely; %d of the %d are in its partitions or, with host rows, its host's", c.Rank(), tr, host, st.LocalRows, st.RemoteRows, local, len(ids))
	} else if st.HostRows != fromHost {
		return fmt.Errorf("rank %d: %s pull (host rows %v) counted %d rows from the host's other partitions, want %d", c.Rank(), tr, host, st.HostRows, fromHost)
	}
	// An empty pull works too (every rank must still take part).
	if _, err := s.Pull(nil); err != nil {
		return err
	}
	return s.Close()
}

// randomIDs draws n IDs per rank spanning all partitions.
func randomIDs(n int) func(rank int, total int64) []int64 {
	return func(r int, total int64) []int64 {
		rng := rand.New(rand.NewPCG(uint64(r), 99))
		out := make([]int64, n)
		for i := range out {
			out[i] = rng.Int64N(total)
		}
		// A run of consecutive IDs exercises coalesced RMA gets.
		for i := range min(n, 10) {
			out[i] = min(total-1, total/2+int64(i))
		}
		return out
	}
}

func TestStorePullMatchesInput(t *testing.T) {
	defer func(b int64) { parallelCopyBytes = b }(parallelCopyBytes)
	parallelCopyBytes = 0
	for _, hetero := range []bool{false, true} {
		g := genGraph(t, 7, hetero)
		in := readInput(t, g)
		// Fewer ranks than partitions, as many, and several per partition.
		for _, kp := range []struct{ k, ps []int }{{[]int{4}, []int{1, 2, 4, 8}}, {[]int{3}, []int{2, 6}}} {
			k := kp.k[0]
			out := filepath.Join(t.TempDir(), "parts")
			dispatch(t, 2, g, writeAssignment(t, g, k, 5), out)
			ref := newIDOrder(&in.m, k, randomParts(&in.m, k, 5))
			for _, p := range kp.ps {
				for _, nt := range in.m.NodeTypes {
					t.Run(fmt.Sprintf("hetero=%v/K=%d/P=%d/%s", hetero, k, p, nt), func(t *testing.T) {
						pullAll(t, p, out, in, ref, nt, "feat", randomIDs(300))
					})
				}
			}
		}
	}
}

func TestStoreCompressedShm(t *testing.T) {
	g := genGraph(t, 7, true)
	in := readInput(t, g)
	out := filepath.Join(t.TempDir(), "parts")
	dispatch(t, 3, g, writeAssignment(t, g, 2, 1), out, Compress(true))
	ref := newIDOrder(&in.m, 2, randomParts(&in.m, 2, 1))
	checkPartitions(t, in, ref, out)
	plain := filepath.Join(t.TempDir(), "plain")
	dispatch(t, 1, g, writeAssignment(t, g, 2, 1), plain)
	// The compressed files decompress to the plain ones.
	for rel, want := range treeFiles(t, plain) {
		if strings.HasSuffix(rel, ".json") {
			continue
		}
		tmp := filepath.Join(t.TempDir(), "x.npy")
		if err := decompressFile(filepath.Join(out, rel+".zst"), tmp); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(tmp); !bytes.Equal(got, want) {
			t.Errorf("%s.zst does not decompress to %s", rel, rel)
		}
	}
	// Four ranks on two partitions, two (on one host: the stores ask each
	// other for their rows), and one rank decompressing both.
	for _, p := range []int{4, 2, 1} {
		shm := t.TempDir()
		pullAll(t, p, out, in, ref, "user", "feat", randomIDs(200), ShmDir(shm))
		left, _ := os.ReadDir(shm)
		if len(left) != 0 {
			t.Errorf("P=%d: shared memory not released: %d entries left in %s", p, len(left), shm)
		}
	}
}

func TestStoreBadIDs(t *testing.T) {
	defer func(b int64) { parallelCopyBytes = b }(parallelCopyBytes)
	parallelCopyBytes = 0
	g := genGraph(t, 6, true)
	out := filepath.Join(t.TempDir(), "parts")
	dispatch(t, 2, g, writeAssignment(t, g, 2, 3), out)
	for _, tr := range []Transport{Alltoall, RMA} {
		err := worldErr(2, func(c *collective.Comm) error {
			pt, err := Serve(c, out)
			if err != nil {
				return err
			}
			defer pt.Close()
			s, err := NewStore(c, pt, "item", "feat", tr, StoreCopyWorkers(3))
			if err != nil {
				return err
			}
			// Node 0 is a user: asking the item store for it is an error on
			// every rank (the alltoall transport agrees before moving data),
			// also where it is the last of the IDs the copy workers split.
			var items []int64
			for id := int64(0); id < pt.Book.NumNodes() && len(items) < 8; id++ {
				if _, typ, _ := pt.Book.TypeRow(id); pt.Config.NodeTypes[typ] == "item" {
					items = append(items, id)
				}
			}
			_, err = s.Pull(append(items, 0))
			if err == nil {
				return fmt.Errorf("%s pull of a user from the item store succeeded", tr)
			}
			if !strings.Contains(err.Error(), `of type "user"`) && tr == RMA {
				return err
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}

// Which rank serves which partition: every partition by at least one rank,
// every rank something, runs of consecutive partitions, and the rank
// counts that cannot serve refused with the ones that can named.
func TestServedParts(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 7, 8} {
		for p := 1; p <= 16; p++ {
			err := CheckRanks(p, k)
			if (err == nil) != (p <= k || p%k == 0) {
				t.Fatalf("CheckRanks(%d, %d) = %v", p, k, err)
			}
			if err != nil {
				continue
			}
			servers := make([]int, k)
			for r := range p {
				parts := ServedParts(r, p, k)
				if len(parts) == 0 {
					t.Fatalf("P=%d K=%d: rank %d serves nothing", p, k, r)
				}
				for i, q := range parts {
					if i > 0 && q != parts[i-1]+1 {
						t.Fatalf("P=%d K=%d: rank %d serves %v, not a run", p, k, r, parts)
					}
					servers[q]++
				}
			}
			for q, n := range servers {
				if want := max(1, p/k); n != want {
					t.Fatalf("P=%d K=%d: partition %d has %d servers, want %d", p, k, q, n, want)
				}
			}
		}
	}
	if err := CheckRanks(6, 4); err == nil || !strings.Contains(err.Error(), "run 4 or 8 ranks") {
		t.Errorf("6 ranks over 4 partitions: %v", err)
	}
}

// Ranks that disagree on StoreHostRows (an environment set on some ranks
// only) all ask, and none waits in a collective the others skipped.
func TestStoreHostRowsAgree(t *testing.T) {
	g := genGraph(t, 6, false)
	out := filepath.Join(t.TempDir(), "parts")
	dispatch(t, 2, g, writeAssignment(t, g, 2, 3), out)
	world(t, 2, func(c *collective.Comm) error {
		pt, err := Serve(c, out)
		if err != nil {
			return err
		}
		defer pt.Close()
		s, err := NewStore(c, pt, "_N", "feat", Alltoall, StoreHostRows(c.Rank() == 0))
		if err != nil {
			return err
		}
		lo, hi := pt.Book.PartRange(1 - c.Rank()) // the other rank's, on this host
		ids := []int64{lo, (lo + hi) / 2, hi - 1}
		if _, err := s.Pull(ids); err != nil {
			return err
		}
		if st := s.Stats(); st.HostRows != 0 || st.RemoteRows != int64(len(ids)) {
			return fmt.Errorf("rank %d: %d rows from the host's files and %d asked; want 0 and %d", c.Rank(), st.HostRows, st.RemoteRows, len(ids))
		}
		return s.Close()
	})
}
