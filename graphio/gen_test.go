package graphio

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"gnnrun/collective"
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
