package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var checksumRe = regexp.MustCompile(`edge checksum: +(0x[0-9a-f]+)`)

// checksumOf returns the edge checksum a gen or ingest-check run printed.
func checksumOf(t *testing.T, r result) string {
	t.Helper()
	m := checksumRe.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no edge checksum in output: %v", r)
	}
	return m[1]
}

// summary drops the lines of ingest-check's output that depend on the rank
// count (timing and edges per rank), keeping everything else.
func summary(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "graph ") {
			continue
		}
		if strings.HasPrefix(l, "edges:") {
			l = l[:strings.Index(l, "(")]
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

func TestGenIngestCheckAcrossRankCounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "g")
	gen := mustRun(t, 2, "gen", "--scale", "11", "--edge-factor", "8", "--seed", "5", "--feat-dim", "4", "--classes", "3", "--hetero", "--chunks", "3", "--out", dir)
	want := checksumOf(t, gen)
	var ref string
	for _, np := range []int{1, 2, 4} {
		r := mustRun(t, np, "ingest-check", "--in", dir)
		if got := checksumOf(t, r); got != want {
			t.Fatalf("np=%d: checksum %s, gen printed %s\n%v", np, got, want, r)
		}
		if !strings.Contains(r.stdout, "user:follows:user        16,384 edges") || !strings.Contains(r.stdout, "node user/feat") {
			t.Fatalf("np=%d: unexpected output %v", np, r)
		}
		if ref == "" {
			ref = summary(r.stdout)
		} else if s := summary(r.stdout); s != ref {
			t.Fatalf("np=%d: output differs from np=1:\n%s\nvs\n%s", np, s, ref)
		}
	}
}

func TestGenFormatsReadBackEqual(t *testing.T) {
	var ref string
	for _, format := range []string{"csv", "numpy", "parquet"} {
		dir := filepath.Join(t.TempDir(), format)
		gen := mustRun(t, 2, "gen", "--scale", "10", "--seed", "9", "--feat-dim", "3", "--classes", "2", "--format", format, "--out", dir)
		r := mustRun(t, 2, "ingest-check", "--in", dir, "--drop-self-loops", "--dedup")
		s := summary(r.stdout)
		if ref == "" {
			ref = s
		} else if s != ref {
			t.Fatalf("%s reads back differently:\n%s\nvs\n%s", format, s, ref)
		}
		if checksumOf(t, mustRun(t, 0, "ingest-check", "--in", dir)) != checksumOf(t, gen) {
			t.Fatalf("%s: checksum differs from gen's", format)
		}
	}
}

func TestGenFilesIdenticalAcrossRankCounts(t *testing.T) {
	hashes := func(dir string) string {
		var out []string
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				out = append(out, fmt.Sprintf("%s %x", rel, sha256.Sum256(b)))
			}
			return nil
		})
		return strings.Join(out, "\n")
	}
	base := t.TempDir()
	var ref string
	for _, np := range []int{1, 4} {
		dir := filepath.Join(base, fmt.Sprint(np))
		mustRun(t, np, "gen", "--scale", "9", "--seed", "3", "--feat-dim", "2", "--classes", "3", "--format", "parquet", "--chunks", "4", "--out", dir)
		if h := hashes(dir); ref == "" {
			ref = h
		} else if h != ref {
			t.Fatalf("files written by %d ranks differ from 1 rank's", np)
		}
	}
}

func TestGenUsage(t *testing.T) {
	r := runGnnrun(t, 0, 30e9, nil, "gen", "--scale", "4")
	if r.err == nil || !strings.Contains(r.stderr, "--scale and --out are required") {
		t.Fatalf("missing --out accepted: %v", r)
	}
	r = runGnnrun(t, 0, 30e9, nil, "gen", "--scale", "4", "--out", t.TempDir(), "--format", "xml")
	if r.err == nil || !strings.Contains(r.stderr, `output format "xml"`) {
		t.Fatalf("bad format accepted: %v", r)
	}
}
