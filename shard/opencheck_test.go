package shard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gnnrun/collective"
)

// crc32cCombine joins the checksums of two pieces into the whole's, at
// every split of random data, empty pieces included.
func TestCRC32CCombine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, n := range []int{0, 1, 7, 64, 1000, 3000} {
		whole := crc32.Checksum(data[:n], castagnoli)
		for _, cut := range []int{0, 1, n / 3, n / 2, n - 1, n} {
			if cut < 0 || cut > n {
				continue
			}
			a, b := crc32.Checksum(data[:cut], castagnoli), crc32.Checksum(data[cut:n], castagnoli)
			if got := crc32cCombine(a, b, int64(n-cut)); got != whole {
				t.Errorf("n=%d cut=%d: combined %08x, whole %08x", n, cut, got, whole)
			}
		}
	}
}

// A file of several pieces sums to its CRC-32C, read by two workers.
func TestChecksumPieces(t *testing.T) {
	data := make([]byte, 2*checkPiece+12345)
	for i := range data {
		data[i] = byte(i*7 + i>>13)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "g.json")
	if err := os.WriteFile(filepath.Join(dir, "big.npy"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := crc32.Checksum(data, castagnoli)
	for _, rec := range []uint32{want, want ^ 1} {
		cfg := &Config{Parts: []PartFiles{{Indptr: "big.npy", Checksums: map[string]string{"big.npy": formatChecksum(rec)}}}}
		var st OpenStats
		share := func(q, i int) bool { return i == 4 } // indptr only
		err := checksumFiles(cfgPath, cfg, []int{0}, share, 2, &st)
		switch {
		case rec == want && err != nil:
			t.Fatal(err)
		case rec != want && (err == nil || !strings.Contains(err.Error(), formatChecksum(want)+", the config records "+formatChecksum(rec))):
			t.Fatalf("a wrong record: want a mismatch naming both sums, got %v", err)
		}
		if st.Files != 1 || st.Bytes != int64(len(data)) || !st.Checksums {
			t.Errorf("stats %+v, want 1 file of %d bytes", st, len(data))
		}
	}
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	for rel, b := range treeFiles(t, src) {
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// serveStats serves dir on p ranks and returns every rank's check stats.
func serveStats(p int, dir string, opts ...OpenOption) ([]OpenStats, error) {
	stats := make([]OpenStats, p)
	err := worldErr(p, func(c *collective.Comm) error {
		s, err := Serve(c, dir, opts...)
		if err != nil {
			return err
		}
		stats[c.Rank()] = s.Checks
		return s.Close()
	})
	return stats, err
}

// A plain partition passes every check at any rank count, and the ranks
// sum every file's bytes exactly once (those of one partition splitting
// its files), or none with Checksums(false).
func TestServeChecksPlainPartitions(t *testing.T) {
	g := genGraph(t, 7, true)
	out := filepath.Join(t.TempDir(), "parts")
	dispatch(t, 2, g, writeAssignment(t, g, 3, 5), out)
	var total int64
	files := treeFiles(t, out)
	for rel, b := range files {
		if !strings.HasSuffix(rel, ".json") {
			total += int64(len(b))
		}
	}
	for _, p := range []int{1, 2, 3, 6} {
		stats, err := serveStats(p, out)
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
		var n, bytes int64
		for _, st := range stats {
			n, bytes = n+int64(st.Files), bytes+st.Bytes
			if !st.Checksums || st.Workers < 1 {
				t.Errorf("P=%d: stats %+v", p, st)
			}
		}
		if n != int64(len(files)-1) || bytes != total {
			t.Errorf("P=%d: the ranks summed %d files of %d bytes, want %d of %d", p, n, bytes, len(files)-1, total)
		}
	}
	stats, err := serveStats(2, out, Checksums(false))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stats {
		if st.Checksums || st.Files != 0 {
			t.Errorf("Checksums(false): stats %+v", st)
		}
	}
}

// Every corruption a reader could trip on is an error naming the file on
// every rank: the checksum's without Checksums(false), the structural
// check's (or the header's) with it.
func TestServeFindsCorruption(t *testing.T) {
	g := genGraph(t, 7, true)
	clean := filepath.Join(t.TempDir(), "parts")
	dispatch(t, 2, g, writeAssignment(t, g, 3, 5), clean)
	cfgPath, err := FindConfig(clean)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ReadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	pf := cfg.Parts[1]
	inner, halo, edges := pf.InnerNodes, pf.HaloNodes, pf.Edges
	if halo == 0 || edges < 4 || pf.IndexDType != "int32" {
		t.Fatalf("partition 1 has %d halo nodes, %d edges, %s indices: not the test's partition", halo, edges, pf.IndexDType)
	}
	put64 := func(v int64) func([]byte) { return func(b []byte) { binary.LittleEndian.PutUint64(b, uint64(v)) } }
	put32 := func(v int32) func([]byte) { return func(b []byte) { binary.LittleEndian.PutUint32(b, uint32(v)) } }
	put16 := func(v int16) func([]byte) { return func(b []byte) { binary.LittleEndian.PutUint16(b, uint16(v)) } }
	type edit struct {
		elem int64
		size int
		edit func([]byte)
	}
	cases := []struct {
		name, file string
		edits      []edit
		whole      func([]byte) []byte // edits the whole file instead
		want       string              // with Checksums(false)
	}{
		{name: "indices", file: "part1/indices.npy", edits: []edit{{1, 4, put32(1000000000)}, {edges - 1, 4, put32(1000000000)}},
			want: fmt.Sprintf("part1/indices.npy: entry 1 is 1000000000, outside the partition's %d local nodes", inner+halo)},
		{name: "negative index", file: "part1/indices.npy", edits: []edit{{2, 4, put32(-1)}}, want: "entry 2 is -1, outside"},
		{name: "indptr start", file: "part1/indptr.npy", edits: []edit{{0, 8, put64(3)}}, want: "part1/indptr.npy: entry 0 is 3; indptr starts at 0"},
		{name: "indptr decreases", file: "part1/indptr.npy", edits: []edit{{inner / 2, 8, put64(-7)}}, want: fmt.Sprintf("entry %d is -7, below entry", inner/2)},
		{name: "indptr end", file: "part1/indptr.npy", edits: []edit{{inner, 8, put64(1 << 40)}}, want: fmt.Sprintf("part1/indptr.npy: ends at %d", int64(1)<<40)},
		{name: "edge type", file: "part1/edge_type.npy", edits: []edit{{0, 2, put16(99)}}, want: "part1/edge_type.npy: entry 0 is 99, outside the graph's 2 edge types"},
		{name: "edge type count", file: "part1/edge_type.npy", edits: []edit{{0, 2, func(b []byte) { b[0] ^= 1 }}}, want: "part1/edge_type.npy:"},
		{name: "inner global ID", file: "part1/local2global.npy", edits: []edit{{0, 8, put64(1 << 50)}}, want: "part1/local2global.npy: entry 0 is"},
		{name: "halo global ID", file: "part1/local2global.npy", edits: []edit{{inner, 8, put64(1 << 50)}}, want: fmt.Sprintf("entry %d is %d, outside the graph's", inner, int64(1)<<50)},
		{name: "node type", file: "part1/node_type.npy", edits: []edit{{inner, 2, put16(-1)}}, want: fmt.Sprintf("part1/node_type.npy: entry %d is -1, outside the graph's 2 node types", inner)},
		{name: "truncated feat", file: "part1/node_feat/user/feat.npy", whole: func(b []byte) []byte { return b[:len(b)-5] }, want: "part1/node_feat/user/feat.npy: truncated"},
		{name: "feat past its end", file: "part1/node_feat/user/feat.npy", whole: func(b []byte) []byte { return append(b, 0, 0, 0, 0) }, want: "part1/node_feat/user/feat.npy: "},
		{name: "feat dtype", file: "part1/node_feat/user/feat.npy", whole: replaceOnce("'descr': '<f4'", "'descr': '<f8'"), want: "part1/node_feat/user/feat.npy: truncated"},
		{name: "feat dtype unknown", file: "part1/node_feat/user/feat.npy", whole: replaceOnce("'descr': '<f4'", "'descr': '<c8'"), want: "part1/node_feat/user/feat.npy"},
		{name: "indices shape", file: "part1/indices.npy", whole: setShape(fmt.Sprintf("(%d, 1)", edges)), want: fmt.Sprintf("part1/indices.npy: int32(%d, 1), want int32(%d,)", edges, edges)},
		{name: "header garbage", file: "part1/edge_ids.npy", whole: func(b []byte) []byte { copy(b[10:], "{{{{"); return b }, want: "part1/edge_ids.npy"},
		{name: "feat shape", file: "part1/node_feat/user/feat.npy", whole: swapShape, want: "part1/node_feat/user/feat.npy: 3 rows, partition 1 has"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "parts")
			copyTree(t, clean, out)
			path := filepath.Join(out, tc.file)
			for _, e := range tc.edits {
				corrupt(t, path, e.elem, e.size, e.edit)
			}
			if tc.whole != nil {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, tc.whole(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := serveStats(2, out)
			if err == nil || !strings.Contains(err.Error(), tc.file+": CRC-32C crc32c:") || !strings.Contains(err.Error(), "the file changed after dispatch") {
				t.Errorf("checksums on: want a checksum error naming %s, got %v", tc.file, err)
			}
			_, err = serveStats(2, out, Checksums(false))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checksums off: want an error saying %q, got %v", tc.want, err)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("the error is not one line: %q", err)
			}
		})
	}
}

// replaceOnce returns an edit of a file's bytes replacing old by new.
func replaceOnce(old, new string) func([]byte) []byte {
	return func(b []byte) []byte {
		if !bytes.Contains(b, []byte(old)) {
			panic(fmt.Sprintf("no %q in the file", old))
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
}

var shapeRE = regexp.MustCompile(`'shape': \(([^)]*)\)`)

// setShape returns an edit of a .npy file giving its header the shape
// tuple shape, the header's length kept by its padding.
func setShape(shape string) func([]byte) []byte {
	return func(b []byte) []byte {
		loc := shapeRE.FindSubmatchIndex(b)
		if loc == nil {
			panic("no shape in the header")
		}
		end := bytes.IndexByte(b, '\n')
		head := string(b[:loc[0]]) + "'shape': " + shape + strings.TrimRight(string(b[loc[1]:end]), " ")
		pad := end - len(head)
		if pad < 0 {
			panic("the header has no room for the shape")
		}
		return append([]byte(head+strings.Repeat(" ", pad)), b[end:]...)
	}
}

// swapShape swaps the two dimensions of a 2-D .npy file's header.
func swapShape(b []byte) []byte {
	m := shapeRE.FindSubmatch(b)
	dims := strings.Split(string(m[1]), ", ")
	return setShape("(" + dims[1] + ", " + dims[0] + ")")(b)
}

// A compressed partition's flipped byte is found before it is
// decompressed; a directory written before checksums opens unchecked.
func TestServeChecksCompressedAndUnrecorded(t *testing.T) {
	g := genGraph(t, 6, false)
	out := filepath.Join(t.TempDir(), "parts")
	dispatch(t, 1, g, writeAssignment(t, g, 2, 1), out, Compress(true))
	rel := "part1/indices.npy.zst"
	raw, err := os.ReadFile(filepath.Join(out, rel))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x10
	os.WriteFile(filepath.Join(out, rel), raw, 0o644)
	_, err = serveStats(2, out, ShmDir(t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), rel+": CRC-32C") {
		t.Errorf("want a checksum error naming %s, got %v", rel, err)
	}

	plain := filepath.Join(t.TempDir(), "plain")
	dispatch(t, 1, g, writeAssignment(t, g, 2, 1), plain)
	cfgPath, _ := FindConfig(plain)
	cfg, err := ReadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg.Parts {
		cfg.Parts[i].Checksums = nil
	}
	blob, err := cfg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cfgPath, blob, 0o644)
	stats, err := serveStats(2, plain)
	if err != nil {
		t.Fatal(err)
	}
	if stats[0].Checksums || stats[0].Files != 0 {
		t.Errorf("no checksums recorded: stats %+v", stats[0])
	}
}
