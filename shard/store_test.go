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

// pullAll serves the partitions on p ranks, pulls ids on every rank over
// both transports, and checks the rows against the input's row of each
// node's original ID.
func pullAll(t *testing.T, p int, out string, in *inputGraph, ntype, name string, ids func(rank int, n int64) []int64, opts ...OpenOption) {
	t.Helper()
	world(t, p, func(c *collective.Comm) error {
		pt, err := Serve(c, out, opts...)
		if err != nil {
			return err
		}
		defer pt.Close()
		cfg := pt.Config
		// No deferred Close: it is collective, and a rank returning an
		// error must not wait in it for ranks still pulling.
		orig, err := NewOrigIDStore(c, pt, Alltoall, StoreBudget(1000))
		if err != nil {
			return err
		}
		ti := slices.Index(cfg.NodeTypes, ntype)
		var want []byte
		var mine []int64
		for _, id := range ids(c.Rank(), cfg.NumNodes) {
			if pt.Book.NodeType(id) == ti {
				mine = append(mine, id)
			}
		}
		origs, err := orig.Pull(mine)
		if err != nil {
			return err
		}
		ref := in.nodes[ti][name]
		for i := range mine {
			o := int64(binary.LittleEndian.Uint64(origs[8*i:]))
			want = append(want, ref.Row(o)...)
		}
		for _, tr := range []Transport{Alltoall, RMA} {
			s, err := NewStore(c, pt, ntype, name, tr, StoreBudget(1000))
			if err != nil {
				return err
			}
			got, err := s.Pull(mine)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("rank %d: %s pull of %d rows of %s/%s differs from the input", c.Rank(), tr, len(mine), ntype, name)
			}
			st := s.Stats()
			lo, hi := pt.Book.TypeRange(pt.Parts[0].ID, ti)
			if c.Size() > 1 && len(mine) > 20 && hi-lo > 5 && (st.RemoteRows == 0 || st.LocalRows == 0) {
				return fmt.Errorf("rank %d: %s pull was not mixed local/remote: %+v", c.Rank(), tr, st)
			}
			// An empty pull works too (every rank must still take part).
			if _, err := s.Pull(nil); err != nil {
				return err
			}
			if err := s.Close(); err != nil {
				return err
			}
		}
		return orig.Close()
	})
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
	for _, hetero := range []bool{false, true} {
		g := genGraph(t, 7, hetero)
		in := readInput(t, g)
		// Fewer ranks than partitions, as many, and several per partition.
		for _, kp := range []struct{ k, ps []int }{{[]int{4}, []int{1, 2, 4, 8}}, {[]int{3}, []int{2, 6}}} {
			k := kp.k[0]
			out := filepath.Join(t.TempDir(), "parts")
			dispatch(t, 2, g, writeAssignment(t, g, k, 5), out)
			for _, p := range kp.ps {
				for _, nt := range in.m.NodeTypes {
					t.Run(fmt.Sprintf("hetero=%v/K=%d/P=%d/%s", hetero, k, p, nt), func(t *testing.T) {
						pullAll(t, p, out, in, nt, "feat", randomIDs(300))
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
	checkPartitions(t, in, randomParts(&in.m, 2, 1), out)
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
	// Four ranks on two partitions, and one rank decompressing both.
	for _, p := range []int{4, 1} {
		shm := t.TempDir()
		pullAll(t, p, out, in, "user", "feat", randomIDs(200), ShmDir(shm))
		left, _ := os.ReadDir(shm)
		if len(left) != 0 {
			t.Errorf("P=%d: shared memory not released: %d entries left in %s", p, len(left), shm)
		}
	}
}

func TestStoreBadIDs(t *testing.T) {
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
			s, err := NewStore(c, pt, "item", "feat", tr)
			if err != nil {
				return err
			}
			// Node 0 is a user: asking the item store for it is an error on
			// every rank (the alltoall transport agrees before moving data).
			_, err = s.Pull([]int64{0})
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
