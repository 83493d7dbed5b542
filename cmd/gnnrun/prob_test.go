package main

import (
	"path/filepath"
	"strings"
	"testing"

	"gnnrun/graphio"
)

// TestSampleAllZeroWeightsUnderMPI samples with --prob over an edge array
// that is 0 everywhere: every node draws nothing (as DGL's
// sample_neighbors does), by either transport, and the job succeeds with
// batches of seeds and no edges.
func TestSampleAllZeroWeightsUnderMPI(t *testing.T) {
	needMPIRun(t)
	parts := weightedParts(t)["zero"]
	for _, tr := range []string{"alltoall", "rma"} {
		dump := filepath.Join(t.TempDir(), tr)
		mustRun(t, 2, "sample", parts, "--prob", "weight", "--mask", "", "--fanouts", "2,2", "--batch-size", "2",
			"--transport", tr, "--dump", dump)
		files, _ := filepath.Glob(filepath.Join(dump, "*.npz"))
		if len(files) == 0 {
			t.Fatalf("%s: no batches in %s", tr, dump)
		}
		for _, f := range files {
			z, err := graphio.OpenNpz(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range z.Entries {
				if strings.HasPrefix(e.Name, "src_") && e.Header.Shape[0] != 0 {
					t.Errorf("%s: %s: %s has %d edges of weight 0", tr, f, e.Name, e.Header.Shape[0])
				}
			}
			if e := z.Entry("seeds"); e == nil || e.Header.Shape[0] == 0 {
				t.Errorf("%s: %s: no seeds", tr, f)
			}
			z.Close()
		}
	}
}
