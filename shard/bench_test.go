package shard

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/graphio"
)

// benchGraph generates an R-MAT graph of 2^scale nodes with 128 float32
// features once per benchmark.
func benchGraph(b *testing.B, scale int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "graph")
	spec := graphio.GenSpec{Scale: scale, FeatDim: 128, Seed: 3, Permute: true}
	spec.SetDefaults(1)
	err := worldErr(1, func(c *collective.Comm) error {
		_, err := graphio.Generate(c, spec, dir, nil)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkDispatch dispatches a scale-14 graph (16 Ki nodes, 256 Ki
// edges, 8 MiB of features) into 4 partitions on an in-process world.
func BenchmarkDispatch(b *testing.B) {
	g := benchGraph(b, 14)
	asg := filepath.Join(b.TempDir(), "asg")
	err := worldErr(1, func(c *collective.Comm) error {
		md, err := graphio.ReadMetadata(filepath.Join(g, "metadata.json"))
		if err != nil {
			return err
		}
		m := md.Meta()
		parts := make([]int32, m.TotalNodes())
		for i := range parts {
			parts[i] = int32(graph.Mix64(uint64(i)) % 4)
		}
		_, err = graphio.WriteAssignment(c, asg, &m, 0, parts, 4)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("ranks=%d", p), func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "parts")
			b.SetBytes(8 << 20)
			for range b.N {
				os.RemoveAll(out)
				err := worldErr(p, func(c *collective.Comm) error {
					_, err := dispatchOn(c, g, asg, out, Budget(4<<20))
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(256<<10)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

// BenchmarkPull pulls 64 Ki random rows of 128 float32 per rank on two
// in-process ranks: from the rank's own partition, and from the other one
// over each transport (the in-process window reads the other rank's
// memory directly, so this measures the store's own cost, not MPI's).
func BenchmarkPull(b *testing.B) {
	g := benchGraph(b, 14)
	asg := filepath.Join(b.TempDir(), "asg")
	out := filepath.Join(b.TempDir(), "parts")
	err := worldErr(2, func(c *collective.Comm) error {
		md, err := graphio.ReadMetadata(filepath.Join(g, "metadata.json"))
		if err != nil {
			return err
		}
		m := md.Meta()
		lo, hi := graphEven(m.TotalNodes(), c)
		parts := make([]int32, 0, hi-lo)
		for i := lo; i < hi; i++ {
			parts = append(parts, int32(i%2))
		}
		if _, err := graphio.WriteAssignment(c, asg, &m, lo, parts, 2); err != nil {
			return err
		}
		_, err = dispatchOn(c, g, asg, out)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	const rows = 1 << 16
	for _, mode := range []struct {
		name  string
		tr    Transport
		local bool
	}{{"local", Alltoall, true}, {"alltoall", Alltoall, false}, {"rma", RMA, false}} {
		b.Run(mode.name, func(b *testing.B) {
			var secs float64 // rank 0's time in the pulls, without the setup
			err := worldErr(2, func(c *collective.Comm) error {
				p, err := Serve(c, out)
				if err != nil {
					return err
				}
				defer p.Close()
				s, err := NewStore(c, p, "_N", "feat", mode.tr)
				if err != nil {
					return err
				}
				q := c.Rank()
				if !mode.local {
					q = 1 - q
				}
				lo, hi := p.Book.PartRange(q)
				ids := make([]int64, rows)
				for i := range ids {
					ids[i] = lo + int64(graph.Mix64(uint64(i))%uint64(hi-lo))
				}
				dst := make([]byte, rows*512)
				t0 := time.Now()
				for range b.N {
					if err := s.PullInto(dst, ids); err != nil {
						return err
					}
				}
				if c.Rank() == 0 {
					secs = time.Since(t0).Seconds()
				}
				return s.Close()
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(rows*512*b.N)/secs/1e6, "MB/s/rank")
			b.ReportMetric(float64(rows*b.N)/secs, "rows/s/rank")
		})
	}
}

func graphEven(n int64, c *collective.Comm) (int64, int64) {
	p, r := int64(c.Size()), int64(c.Rank())
	return n * r / p, n * (r + 1) / p
}
