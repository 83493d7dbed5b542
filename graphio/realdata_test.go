package graphio

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealDatasets reads the public graphs of the shared data folder and
// checks the counts their SOURCES.md states. It is opt-in: set GNNRUN_DATA
// to the folder holding datasets/ (e.g. /work/shared/data).
func TestRealDatasets(t *testing.T) {
	root := os.Getenv("GNNRUN_DATA")
	if root == "" {
		t.Skip("set GNNRUN_DATA to the shared data folder to read the real datasets")
	}
	type want struct {
		nodes, edges, selfLoops, isolated int64
	}
	cases := []struct {
		path string
		opts []Option
		want want
	}{
		// SNAP, CRLF, "n m" header.
		{"snap-email-enron/email-Enron.txt", nil, want{36692, 367662, 0, 0}},
		// gzip, CRLF, "#" comments, 78,303 self loops; 504,230 undirected non-self edges.
		{"snap-soc-slashdot0902/soc-Slashdot0902.txt.gz", nil, want{82168, 948464, 78303, 0}},
		{"snap-soc-slashdot0902/soc-Slashdot0902.txt.gz", []Option{DropSelfLoops(true), Undirected(true), Dedup(true)}, want{82168, 2 * 504230, 0, 0}},
		// Non-contiguous IDs 3..133279 for 18,772 nodes; 198,050 undirected non-self edges.
		{"snap-ca-astroph/ca-AstroPh.txt.gz", []Option{Compact(true)}, want{18772, 198110, 60, 0}},
		{"snap-ca-astroph/ca-AstroPh.txt.gz", []Option{Compact(true), DropSelfLoops(true), Undirected(true), Dedup(true)}, want{18772, 2 * 198050, 0, -1}},
		// Non-contiguous IDs 3..8297 for 7,115 nodes.
		{"snap-wiki-vote/wiki-Vote.txt", []Option{Compact(true)}, want{7115, 103689, 0, 0}},
		{"snap-ego-facebook/facebook_combined.txt.gz", nil, want{4039, 88234, 0, 0}},
		// "u v {}" lines, 1-based IDs.
		{"nr-soc-brightkite/soc-brightkite.txt", []Option{Compact(true)}, want{56739, 212945, 0, 0}},
		// CSV with a header line of column names.
		{"facebook-page-page/facebook_edges.csv", nil, want{22470, 171002, 179, 0}},
		{"twitch-de/DE_edges.csv", nil, want{9498, 153138, 0, 0}},
		// METIS: arcs are twice the stated edges; blank lines are vertices.
		{"walshaw-4elt/4elt.graph", nil, want{15606, 2 * 45878, 0, 0}},
		{"walshaw-wing/wing.graph", nil, want{62032, 2 * 121544, 0, 0}},
		{"walshaw-fe_4elt2/fe_4elt2.graph", nil, want{11143, 2 * 32818, 0, 0}},
		{"dimacs10-astro-ph/astro-ph.graph", nil, want{16706, 2 * 121251, 0, 660}},
		{"dimacs10-pgpgiantcompo/PGPgiantcompo.graph", nil, want{10680, 2 * 24316, 0, 0}},
		{"dimacs10-delaunay_n15/delaunay_n15.graph", nil, want{32768, 2 * 98274, 0, 0}},
		{"dimacs10-rgg_n_2_15_s0/rgg_n_2_15_s0.graph", nil, want{32768, 2 * 160240, 0, 2}},
		{"metis-test-mgraph/test.mgraph", nil, want{766, 2 * 1314, 0, 0}},
		{"kahip-example-weighted/example_weighted.graph", nil, want{132, 2 * 328, 0, 5}},
		// MatrixMarket, lower triangle with the diagonal.
		{"suitesparse-bcsstk13/bcsstk13.mtx", nil, want{2003, 42943, 2003, 0}},
		// .npz: edge arrays, CSR adjacencies, Fortran-order masks.
		{"tolokers/tolokers.npz", nil, want{11758, 519000, 0, 0}},
		{"squirrel/squirrel.npz", nil, want{5201, 198353, 0, 0}},
		{"cora-npz/cora.npz", []Option{Undirected(true), Dedup(true)}, want{2708, 2 * 5278, 0, 0}},
		{"citeseer-npz/citeseer.npz", nil, want{3312, 4715, 124, -1}},
		{"citeseer-npz/citeseer.npz", []Option{DropSelfLoops(true), Undirected(true), Dedup(true)}, want{3312, 2 * 4536, 0, 48}},
		{"cora-ml/cora_ml.npz", []Option{Undirected(true), Dedup(true)}, want{2995, 2 * 8158, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			path := filepath.Join(root, "datasets", tc.path)
			for _, p := range []int{1, 3} {
				s := statsOf(t, p, path, tc.opts...)
				got := want{s.Meta.TotalNodes(), s.Edges, s.SelfLoops, s.Isolated}
				if tc.want.isolated < 0 {
					got.isolated = -1
				}
				if got != tc.want {
					t.Fatalf("P=%d: got %+v, want %+v", p, got, tc.want)
				}
			}
		})
	}
}

// TestRealGraphsFolder reads every Walshaw METIS mesh of the shared graphs
// folder and checks the header's counts hold (the reader fails otherwise).
func TestRealGraphsFolder(t *testing.T) {
	root := os.Getenv("GNNRUN_DATA")
	if root == "" {
		t.Skip("set GNNRUN_DATA to the shared data folder to read the real graphs")
	}
	files, _ := filepath.Glob(filepath.Join(root, "graphs", "*.graph"))
	if len(files) == 0 {
		t.Fatal("no .graph files")
	}
	for _, f := range files {
		h, err := readMETISHeader(f)
		if err != nil {
			t.Fatal(err)
		}
		s := statsOf(t, 2, f)
		if s.Meta.TotalNodes() != h.n || s.Edges != 2*h.m || s.SelfLoops != 0 || s.Duplicates != 0 {
			t.Errorf("%s: %d nodes %d arcs %d loops %d duplicates; header n=%d m=%d", filepath.Base(f), s.Meta.TotalNodes(), s.Edges, s.SelfLoops, s.Duplicates, h.n, h.m)
		}
	}
}
