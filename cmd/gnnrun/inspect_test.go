package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gnnrun/graphio"
)

// TestInspectFindsViolationsUnderMPI corrupts partition files and checks
// that inspect exits non-zero naming what is wrong.
func TestInspectFindsViolationsUnderMPI(t *testing.T) {
	needMPIRun(t)
	g := genSmall(t, false)
	asg := filepath.Join(t.TempDir(), "asg")
	mustRun(t, 2, "partition", "--in", g, "--parts", "2", "--out", asg, "--algo", "random")
	cases := []struct {
		name, file string
		elem, size int64
		value      uint64
		input      bool
		wants      string
	}{
		{"duplicate node", "part1/orig_nids.npy", 0, 8, 1, false, "is in 2 partitions (orig_nids is not a permutation)"},
		{"feature row", "part0/node_feat/_N/feat.npy", 3, 4, 0x7f7f7f7f, true, "rows differ from the input's"},
		{"wrong source", "part1/indices.npy", 5, 4, 0, true, "endpoints differ from the input edge's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "parts")
			mustRun(t, 0, "dispatch", "--in", g, "--assignment", asg, "--out", out)
			path := filepath.Join(out, tc.file)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			h, err := graphio.ReadNpyHeader(strings.NewReader(string(raw)), path)
			if err != nil {
				t.Fatal(err)
			}
			at := h.Offset + tc.elem*tc.size
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], tc.value)
			copy(raw[at:at+tc.size], b[:tc.size])
			os.WriteFile(path, raw, 0o644)
			args := []string{"inspect", out}
			if tc.input {
				args = append(args, "--in", g)
			}
			res := runGnnrun(t, 2, time.Minute, nil, args...)
			if res.err == nil || !strings.Contains(res.stdout+res.stderr, tc.wants) || !strings.Contains(res.stdout, "FAILED") {
				t.Errorf("want a failure naming %q, got %v", tc.wants, res)
			}
		})
	}
}
