package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gnnrun/report"
)

// genSmall generates a small R-MAT graph with features, labels and masks
// (two node and edge types when hetero) and returns its directory.
func genSmall(t *testing.T, hetero bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "graph")
	args := []string{"gen", "--scale", "8", "--edge-factor", "8", "--feat-dim", "4", "--classes", "3", "--out", dir}
	if hetero {
		args = append(args, "--hetero")
	}
	mustRun(t, 2, args...)
	return dir
}

// filesOf returns every file under dir with its bytes.
func filesOf(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles fails unless the two directories hold the same files, byte for
// byte.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	fa, fb := filesOf(t, a), filesOf(t, b)
	var names []string
	for n := range fa {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(fa) != len(fb) || len(fa) == 0 {
		t.Errorf("%s holds %d files, %s %d", a, len(fa), b, len(fb))
	}
	for _, n := range names {
		if !bytes.Equal(fa[n], fb[n]) {
			t.Errorf("%s differs between %s and %s", n, a, b)
		}
	}
}

// TestDispatchInspectUnderMPI runs gen -> partition -> dispatch -> inspect
// with the real binary: homogeneous and two-type graphs, K = 1, 2, 3, 4, 8
// partitions on 1, 2 and 4 ranks (K independent of the rank count), random
// and parmetis assignments; the partitions written on 1 and 4 ranks must be
// byte-identical, and inspect must find them sound against the input.
func TestDispatchInspectUnderMPI(t *testing.T) {
	needMPIRun(t)
	type run struct {
		hetero bool
		k      int
		algo   string
		ranks  []int // 0: without mpirun, one rank
	}
	runs := []run{
		{false, 3, "random", []int{0, 2, 4}},
		{false, 4, "parmetis", []int{2}},
		{false, 8, "random", []int{4}},
		{true, 1, "random", []int{2}},
		{true, 2, "parmetis", []int{0, 4}},
		{true, 8, "random", []int{2}},
	}
	graphs := map[bool]string{false: genSmall(t, false), true: genSmall(t, true)}
	for _, r := range runs {
		g := graphs[r.hetero]
		asg := filepath.Join(t.TempDir(), "asg")
		mustRun(t, 2, "partition", "--in", g, "--parts", fmt.Sprint(r.k), "--out", asg, "--algo", r.algo)
		var first string
		for _, np := range r.ranks {
			name := fmt.Sprintf("hetero=%v/K=%d/%s/np=%d", r.hetero, r.k, r.algo, np)
			out := filepath.Join(t.TempDir(), "parts")
			res := mustRun(t, np, "dispatch", "--in", g, "--assignment", asg, "--out", out, "--max-message", "4096")
			if !strings.Contains(res.stdout, fmt.Sprintf("into %d partitions", r.k)) {
				t.Errorf("%s: dispatch printed:\n%s", name, res.stdout)
			}
			ins := mustRun(t, max(np, 2), "inspect", out, "--in", g)
			if !strings.Contains(ins.stdout, "OK: no violations") || !strings.Contains(ins.stdout, "every node and edge row equals the input's row") {
				t.Errorf("%s: inspect printed:\n%s", name, ins.stdout)
			}
			if first == "" {
				first = out
			} else {
				sameFiles(t, first, out)
			}
		}
	}
}

// TestDispatchCompressedFetchUnderMPI dispatches with zstd, checks that
// inspect reads it, and pulls rows over both transports on 4 ranks
// (decompressed once per host into /dev/shm) against the input; on the
// heterogeneous graph also at 1, 2 and 8 ranks over the same 4 partitions.
func TestDispatchCompressedFetchUnderMPI(t *testing.T) {
	needMPIRun(t)
	for _, hetero := range []bool{false, true} {
		g := genSmall(t, hetero)
		asg := filepath.Join(t.TempDir(), "asg")
		mustRun(t, 2, "partition", "--in", g, "--parts", "4", "--out", asg, "--algo", "random")
		for _, compress := range []string{"none", "zstd"} {
			out := filepath.Join(t.TempDir(), "parts")
			mustRun(t, 2, "dispatch", "--in", g, "--assignment", asg, "--out", out, "--compress", compress)
			ntype := "_N"
			if hetero {
				ntype = "item"
			}
			type run struct {
				np  int
				ids string
			}
			runs := []run{{4, "random"}, {4, "remote"}}
			if hetero {
				runs = append(runs, run{1, "random"}, run{2, "remote"}, run{8, "random"})
			}
			for _, r := range runs {
				res := mustRun(t, r.np, "fetch", out, "--in", g, "--ntype", ntype, "--ids", r.ids, "--rows", "5000", "--batch", "1000")
				want := fmt.Sprintf("verified: all %s pulled rows equal the input's rows", report.Count(int64(5000*r.np)))
				if !strings.Contains(res.stdout, want) || !strings.Contains(res.stdout, "alltoall") || !strings.Contains(res.stdout, "rma") {
					t.Errorf("hetero=%v %s P=%d %s: fetch printed:\n%s", hetero, compress, r.np, r.ids, res.stdout)
				}
			}
			if compress == "zstd" {
				ins := mustRun(t, 3, "inspect", out, "--in", g)
				if !strings.Contains(ins.stdout, "OK: no violations") || !strings.Contains(ins.stdout, "compression zstd") {
					t.Errorf("inspect of a compressed partition printed:\n%s", ins.stdout)
				}
			}
		}
	}
}

// TestDispatchBadInputUnderMPI feeds every kind of bad assignment and an
// occupied output directory: each must fail on every rank with the file,
// the line and the reason, and leave nothing behind.
func TestDispatchBadInputUnderMPI(t *testing.T) {
	needMPIRun(t)
	g := genSmall(t, true)
	good := filepath.Join(t.TempDir(), "asg")
	mustRun(t, 2, "partition", "--in", g, "--parts", "3", "--out", good, "--algo", "random")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(good, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	user, item, meta := read("user.txt"), read("item.txt"), read("partition_meta.json")
	lines := strings.SplitAfter(user, "\n")
	cases := []struct {
		name  string
		files map[string]string // "": missing
		wants string
	}{
		{"part above K", map[string]string{"user.txt": strings.Join(append([]string{"3\n"}, lines[1:]...), "")}, "user.txt:1: part 3 is outside [0, 3)"},
		{"negative part", map[string]string{"user.txt": strings.Join(append(append(append([]string{}, lines[:4]...), "-2\n"), lines[5:]...), "")}, "user.txt:5: part -2 is negative"},
		{"missing line", map[string]string{"user.txt": strings.Join(lines[1:], "")}, `user.txt: has 255 lines, but node type "user" has 256 nodes`},
		{"missing ntype file", map[string]string{"item.txt": ""}, "item.txt: partition assignment: open: no such file or directory"},
		{"wrong version", map[string]string{"partition_meta.json": strings.Replace(meta, "1.0.0", "0.9", 1)}, `partition_meta.json: version "0.9" is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asg := filepath.Join(t.TempDir(), "asg")
			os.MkdirAll(asg, 0o755)
			for name, text := range map[string]string{"user.txt": user, "item.txt": item, "partition_meta.json": meta} {
				if v, ok := tc.files[name]; ok {
					if v == "" {
						continue
					}
					text = v
				}
				os.WriteFile(filepath.Join(asg, name), []byte(text), 0o644)
			}
			out := filepath.Join(t.TempDir(), "parts")
			res := runGnnrun(t, 2, time.Minute, nil, "dispatch", "--in", g, "--assignment", asg, "--out", out)
			if res.err == nil || !strings.Contains(res.stderr, tc.wants) {
				t.Fatalf("want a failure with %q, got %v", tc.wants, res)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was created by a failed dispatch", out)
			}
		})
	}
	t.Run("occupied output", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "parts")
		mustRun(t, 2, "dispatch", "--in", g, "--assignment", good, "--out", out)
		before := filesOf(t, out)
		res := runGnnrun(t, 2, time.Minute, nil, "dispatch", "--in", g, "--assignment", good, "--out", out)
		if res.err == nil || !strings.Contains(res.stderr, "already holds a partition (rmat8.json); pass --overwrite to replace it") {
			t.Fatalf("second dispatch into %s: %v", out, res)
		}
		sameFilesMap(t, before, filesOf(t, out))
		// With --overwrite, another assignment replaces it completely.
		two := filepath.Join(t.TempDir(), "asg2")
		mustRun(t, 2, "partition", "--in", g, "--parts", "2", "--out", two, "--algo", "random")
		mustRun(t, 2, "dispatch", "--in", g, "--assignment", two, "--out", out, "--overwrite")
		if _, err := os.Stat(filepath.Join(out, "part2")); !os.IsNotExist(err) {
			t.Errorf("--overwrite left the old part2 behind")
		}
		ins := mustRun(t, 2, "inspect", out, "--in", g)
		if !strings.Contains(ins.stdout, "OK: no violations") {
			t.Errorf("inspect after --overwrite:\n%s", ins.stdout)
		}
	})
	t.Run("partial output", func(t *testing.T) {
		// A crash leaves partition files without the config: not a
		// partition directory for inspect, and dispatch still refuses it.
		out := filepath.Join(t.TempDir(), "parts")
		mustRun(t, 2, "dispatch", "--in", g, "--assignment", good, "--out", out)
		os.Remove(filepath.Join(out, "rmat8.json"))
		res := runGnnrun(t, 2, time.Minute, nil, "inspect", out)
		if res.err == nil || !strings.Contains(res.stderr, "not a complete partition directory") {
			t.Errorf("inspect of a directory without config: %v", res)
		}
		res = runGnnrun(t, 2, time.Minute, nil, "dispatch", "--in", g, "--assignment", good, "--out", out)
		if res.err == nil || !strings.Contains(res.stderr, "already holds partition files (part0/)") {
			t.Errorf("dispatch into partial output: %v", res)
		}
	})
}

func sameFilesMap(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%d files before, %d after", len(a), len(b))
	}
	for n, v := range a {
		if !bytes.Equal(v, b[n]) {
			t.Errorf("%s changed", n)
		}
	}
}
