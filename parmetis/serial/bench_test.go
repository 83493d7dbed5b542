package serial

import (
	"fmt"
	"testing"
)

func BenchmarkPartition(b *testing.B) {
	graphs := []struct {
		name string
		g    *Graph
	}{
		{"grid200x200", gridGraph(200, 200)},
		{"rmat14", rmatGraph(14, 16, 1)},
	}
	for _, gr := range graphs {
		for _, k := range []int{2, 8, 64} {
			b.Run(fmt.Sprintf("%s/k=%d", gr.name, k), func(b *testing.B) {
				o := Options{Parts: k, Seed: 1, Threads: 1}
				var cut int64
				for b.Loop() {
					part, err := Partition(gr.g, o)
					if err != nil {
						b.Fatal(err)
					}
					cut = EdgeCut(gr.g, part)
				}
				b.ReportMetric(float64(cut), "cut")
			})
		}
	}
}

func BenchmarkRefineKway(b *testing.B) {
	g := rmatGraph(14, 16, 1)
	o := Options{Parts: 16, Seed: 1}
	start := roundRobin(g.N(), 16, 1)
	part := make([]int32, len(start))
	for b.Loop() {
		copy(part, start)
		if err := RefineKway(g, part, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(EdgeCut(g, part)), "cut")
}
