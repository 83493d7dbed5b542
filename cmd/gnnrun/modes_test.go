package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOutputsReadableByOthers runs gen, partition (with a report) and
// dispatch (plain and compressed) under the usual umask 022 and fails
// naming any file that is not 0644 or directory that is not 0755: on a
// cluster's shared file system other users, and DGL's dispatch_data.py run
// by a service account, must be able to read what a job wrote.
func TestOutputsReadableByOthers(t *testing.T) {
	needMPIRun(t)
	old := syscall.Umask(0o022) // inherited by mpirun and its ranks
	defer syscall.Umask(old)
	base := t.TempDir()
	out := func(name string) string { return filepath.Join(base, name) }
	for _, format := range []string{"numpy", "csv", "parquet"} {
		mustRun(t, 2, "gen", "--scale", "8", "--edge-factor", "4", "--feat-dim", "2", "--classes", "3",
			"--hetero", "--format", format, "--out", out("graph-"+format))
	}
	mustRun(t, 2, "partition", "--in", out("graph-numpy"), "--parts", "3", "--balance", "nodes,train",
		"--out", out("asg"), "--report", out("report.json"))
	mustRun(t, 2, "dispatch", "--in", out("graph-numpy"), "--assignment", out("asg"), "--out", out("parts"))
	mustRun(t, 2, "dispatch", "--in", out("graph-numpy"), "--assignment", out("asg"), "--out", out("parts-zstd"), "--compress", "zstd")
	mustRun(t, 2, "gen", "--scale", "8", "--out", out("homo"))
	mustRun(t, 1, "partition", "--in", out("homo"), "--parts", "2", "--out", out("asg-homo"))

	files := 0
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o644)
		if d.IsDir() {
			want = 0o755
		} else {
			files++
		}
		if p != base && info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every kind of output must be among them, or the walk proves little.
	for _, p := range []string{
		"graph-numpy/metadata.json", "graph-csv/edges", "graph-parquet/edges", "asg/partition_meta.json",
		"asg-homo/rmat8.part", "report.json", "parts/part0", "parts-zstd/part2",
	} {
		if _, err := os.Stat(out(p)); err != nil {
			t.Errorf("expected output missing: %v", err)
		}
	}
	if files < 50 {
		t.Errorf("walked only %d files", files)
	}
	t.Logf("%d files checked", files)
}
