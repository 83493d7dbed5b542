package graphio

import (
	"os"
	"path/filepath"
	"testing"

	"gnnrun/collective"
)

// benchGraph generates a scale-16 graph (1Mi edges) in the format, removed
// when the benchmark ends.
func benchGraph(b *testing.B, format string) (string, int64) {
	b.Helper()
	dir := b.TempDir()
	if err := worldErr(1, func(c *collective.Comm) error {
		s := GenSpec{Scale: 16, Seed: 1, Permute: true, Format: format}
		s.SetDefaults(1)
		_, err := Generate(c, s, dir, nil)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	return dir, bytesOf(dir)
}

func bytesOf(dir string) int64 {
	files, _ := filepath.Glob(filepath.Join(dir, "edges", "*"))
	var n int64
	for _, f := range files {
		st, _ := os.Stat(f)
		n += st.Size()
	}
	return n
}

func benchRead(b *testing.B, format string) {
	dir, n := benchGraph(b, format)
	b.SetBytes(n)
	b.ResetTimer()
	for range b.N {
		if err := worldErr(1, func(c *collective.Comm) error {
			g, err := Read(c, dir, SkipData(true))
			if err == nil && g.Edges.Len() != 16<<16 {
				b.Fatalf("%d edges", g.Edges.Len())
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(16<<16)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
}

func BenchmarkReadCSV(b *testing.B)     { benchRead(b, FormatCSV) }
func BenchmarkReadNumPy(b *testing.B)   { benchRead(b, FormatNumPy) }
func BenchmarkReadParquet(b *testing.B) { benchRead(b, FormatParquet) }

func BenchmarkStats(b *testing.B) {
	dir, _ := benchGraph(b, FormatNumPy)
	b.ResetTimer()
	for range b.N {
		if err := worldErr(1, func(c *collective.Comm) error {
			g, err := Read(c, dir, SkipData(true))
			if err != nil {
				return err
			}
			_, err = ComputeStats(c, g)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(16<<16)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
}

// BenchmarkReadExternal reads the edges of the graph at $GNNRUN_BENCH_GRAPH
// (any input Read accepts), to profile a real input.
func BenchmarkReadExternal(b *testing.B) {
	dir := os.Getenv("GNNRUN_BENCH_GRAPH")
	if dir == "" {
		b.Skip("GNNRUN_BENCH_GRAPH not set")
	}
	for range b.N {
		if err := worldErr(1, func(c *collective.Comm) error {
			_, err := Read(c, dir, SkipData(true))
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
