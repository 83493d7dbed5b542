package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gnnrun/graphio"
)

// copyParts copies the partition directory src into a new directory,
// edits the file rel there with edit (the array's bytes after the .npy
// header, and its element size), and returns the copy.
func copyParts(t *testing.T, src, rel string, edit func(data []byte, size int)) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "parts")
	for name, b := range filesOf(t, src) {
		p := filepath.Join(dst, name)
		if name == rel {
			h, err := graphio.ReadNpyHeader(bytes.NewReader(b), p)
			if err != nil {
				t.Fatal(err)
			}
			edit(b[h.Offset:], h.DType.Size())
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestCorruptPartitionsUnderMPI corrupts two entries of part1/indices.npy
// (out of range) and flips bytes of part1's feat.npy: sample, loader and
// train (whose trainer never starts) each fail at 1 and 2 ranks within
// seconds, exit 1 with one error line naming the file and the checksums,
// and no Go stack trace. With --skip-checksums the indices are still an
// error naming the file and the entry.
func TestCorruptPartitionsUnderMPI(t *testing.T) {
	needMPIRun(t)
	clean := sampleDir(t, false)
	indices := copyParts(t, clean, "part1/indices.npy", func(data []byte, size int) {
		for _, i := range []int{1, len(data)/size - 1} {
			if size == 4 {
				binary.LittleEndian.PutUint32(data[i*4:], 1000000000)
			} else {
				binary.LittleEndian.PutUint64(data[i*8:], 1000000000)
			}
		}
	})
	feat := copyParts(t, clean, "part1/node_feat/_N/feat.npy", func(data []byte, _ int) {
		data[3] ^= 0x40
		data[len(data)/2] ^= 0x01
	})
	commands := map[string][]string{
		"sample": {"sample"},
		"loader": {"loader", "--epochs", "1"},
		"train":  {"train", "--epochs", "1"},
	}
	cases := []struct {
		name, dir string
		skip      bool
		want      string
	}{
		{"indices", indices, false, "part1/indices.npy: CRC-32C crc32c:"},
		{"feat", feat, false, "part1/node_feat/_N/feat.npy: CRC-32C crc32c:"},
		{"indices unchecked", indices, true, "part1/indices.npy: entry 1 is 1000000000, outside the partition's"},
	}
	for _, cmd := range []string{"sample", "loader", "train"} {
		for _, c := range cases {
			for _, np := range []int{1, 2} {
				t.Run(cmd+"/"+c.name+"/np="+fmt.Sprint(np), func(t *testing.T) {
					args := append(append([]string{}, commands[cmd]...), c.dir, "--fanouts", "4,3", "--batch-size", "8")
					if c.skip {
						args = append(args, "--skip-checksums")
					}
					if cmd == "train" {
						args = append(args, "--", "true")
					}
					checkCorrupt(t, runGnnrun(t, np, time.Minute, nil, args...), c.want)
				})
			}
		}
	}
}

// checkCorrupt fails unless the run ended with exit status 1 within 10 s,
// its stderr holding one gnnrun error line that says want, and no stack
// trace.
func checkCorrupt(t *testing.T, r result, want string) {
	t.Helper()
	var exit *exec.ExitError
	if !errors.As(r.err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("want exit status 1, got %v", r)
	}
	var lines []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "gnnrun:") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("want one error line saying %q, got %q in %v", want, lines, r)
	}
	if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
		t.Errorf("a stack trace: %v", r)
	}
	if r.elapsed > 10*time.Second {
		t.Errorf("took %v to fail", r.elapsed)
	}
}
