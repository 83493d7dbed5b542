package graphio

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"gnnrun/collective"
	"gnnrun/graph"
)

func generate(t *testing.T, p int, spec GenSpec, dir string) *GenResult {
	t.Helper()
	var res *GenResult
	var mu sync.Mutex
	world(t, p, func(c *collective.Comm) error {
		s := spec
		s.SetDefaults(c.Size())
		r, err := Generate(c, s, dir, nil)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			mu.Lock()
			res = r
			mu.Unlock()
		}
		return nil
	})
	return res
}

func TestGenReadBackAllFormats(t *testing.T) {
	var ref *Stats
	for _, format := range []string{FormatCSV, FormatNumPy, FormatParquet} {
		dir := filepath.Join(t.TempDir(), format)
		spec := GenSpec{Scale: 8, EdgeFactor: 8, Seed: 7, Noise: 0.1, Permute: true, FeatDim: 5, Classes: 3, Format: format, Chunks: 3}
		res := generate(t, 2, spec, dir)
		for _, p := range []int{1, 2, 3} {
			s := statsOf(t, p, dir)
			if s.Checksum != res.Checksum {
				t.Fatalf("%s P=%d: checksum %x, gen wrote %x", format, p, s.Checksum, res.Checksum)
			}
			if s.Edges != 8*256 {
				t.Fatalf("%s: %d edges", format, s.Edges)
			}
			if ref == nil {
				ref = s
				continue
			}
			if fmt.Sprint(s.Arrays) != fmt.Sprint(ref.Arrays) || s.Duplicates != ref.Duplicates || s.OutDegree != ref.OutDegree || s.Isolated != ref.Isolated {
				t.Fatalf("%s P=%d differs:\n%+v\n%+v", format, p, s, ref)
			}
		}
	}
	t.Logf("%+v", ref)
}

// Planted classes: a node's label is its ID mod the classes, the planted
// share of edges joins a node to its own class (plus the chance share of
// the rest), and each feature column averages its class centroid's sign.
func TestGenPlanted(t *testing.T) {
	const classes, planted = 4, 0.8
	dir := t.TempDir()
	spec := GenSpec{Scale: 13, EdgeFactor: 4, Seed: 3, Permute: true, FeatDim: 8, Classes: classes, Planted: planted, Chunks: 2}
	generate(t, 2, spec, dir)
	g := readAll(t, 1, dir)[0]
	same := 0
	for i := range g.Edges.Len() {
		if g.Edges.Src[i]%classes == g.Edges.Dst[i]%classes {
			same++
		}
	}
	want := planted + (1-planted)/classes
	if got := float64(same) / float64(g.Edges.Len()); got < want-0.03 || got > want+0.03 {
		t.Errorf("%.3f of the edges join a class to itself, want about %.3f", got, want)
	}
	labels, err := graph.View[int64](g.Nodes.Get(0, "label"))
	if err != nil {
		t.Fatal(err)
	}
	feat, err := graph.View[float32](g.Nodes.Get(0, "feat"))
	if err != nil {
		t.Fatal(err)
	}
	sums := make([][]float64, classes)
	for c := range sums {
		sums[c] = make([]float64, spec.FeatDim)
	}
	for v, l := range labels {
		if l != int64(v)%classes {
			t.Fatalf("node %d has label %d, want %d", v, l, v%classes)
		}
		for j := range spec.FeatDim {
			sums[l][j] += float64(feat[v*spec.FeatDim+j])
		}
	}
	for c := range classes {
		for j := range spec.FeatDim {
			mean := sums[c][j] / float64(len(labels)/classes)
			if d := mean - float64(plantedCentroid(spec, 0, j, int64(c))); d < -0.06 || d > 0.06 {
				t.Errorf("class %d column %d: mean %.3f, centroid %.1f", c, j, mean, plantedCentroid(spec, 0, j, int64(c)))
			}
		}
	}
	spec.Classes = 1
	if err := spec.Validate(); err == nil {
		t.Error("planted classes accepted with one class")
	}
}

// --hetero --reverse: bought_by edge i is buys edge i reversed, planted
// buys edges join a user to an item of its class, and --item-feat-dim
// sets item's features (-1: none).
func TestGenHeteroReverse(t *testing.T) {
	const classes, planted = 4, 0.8
	for _, itemDim := range []int{-1, 3} {
		dir := t.TempDir()
		spec := GenSpec{Scale: 10, EdgeFactor: 8, Seed: 3, FeatDim: 8, Classes: classes, Planted: planted, Hetero: true,
			Reverse: true, ItemFeatDim: itemDim, Chunks: 1}
		generate(t, 1, spec, dir)
		edges := func(name string) []int64 {
			ten, err := ReadNpy(filepath.Join(dir, "edges", name+"-0.npy"))
			if err != nil {
				t.Fatal(err)
			}
			v, err := graph.View[int64](ten)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		buys, rev := edges("user__buys__item"), edges("item__bought_by__user")
		same := 0
		for i := 0; i < len(buys); i += 2 {
			if rev[i] != buys[i+1] || rev[i+1] != buys[i] {
				t.Fatalf("bought_by edge %d is %d -> %d, buys edge %d is %d -> %d", i/2, rev[i], rev[i+1], i/2, buys[i], buys[i+1])
			}
			if buys[i]%classes == buys[i+1]%classes {
				same++
			}
		}
		want := planted + (1-planted)/classes
		if got := float64(same) / float64(len(buys)/2); got < want-0.04 || got > want+0.04 {
			t.Errorf("%.3f of the buys edges join a user to an item of its class, want about %.3f", got, want)
		}
		ten, err := ReadNpy(filepath.Join(dir, "node_data", "item", "feat-0.npy"))
		switch {
		case itemDim < 0 && err == nil:
			t.Errorf("item features written with --item-feat-dim -1")
		case itemDim > 0 && (err != nil || ten.RowLen() != int64(itemDim)):
			t.Errorf("item features %v (%v), want %d columns", ten, err, itemDim)
		}
	}
	if err := (&GenSpec{Scale: 5, Reverse: true, Format: FormatNumPy, Chunks: 1}).Validate(); err == nil {
		t.Error("reverse edges accepted without --hetero")
	}
}
