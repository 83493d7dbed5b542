package main

import (
	"os"
	"strings"
	"testing"
)

func TestParseGpmetis(t *testing.T) {
	raw, err := os.ReadFile("testdata/gpmetis-4elt-k8.stdout") // gpmetis 5.1 (Debian 12), 4elt, K = 8
	if err != nil {
		t.Fatal(err)
	}
	out := string(raw)
	r, err := parseGpmetis(out, "some warning\n0.01 4872\n")
	if err != nil {
		t.Fatal(err)
	}
	if r.algo != 0.008 || r.wall != 0.01 || r.peakRSS != 4872*1024 {
		t.Fatalf("parsed algo %v s, wall %v s, peak %d B", r.algo, r.wall, r.peakRSS)
	}
	for _, tc := range []struct{ name, stdout, stderr, want string }{
		{"no timing line", strings.Replace(out, "Partitioning:", "Partitioning", 1), "0.01 4872", `no "Partitioning: ... sec" line in its output:`},
		{"garbled time", strings.Replace(out, "0.008 sec", "0.0.8 sec", 1), "0.01 4872", `partitioning time "0.0.8"`},
		{"no /usr/bin/time line", out, "Command terminated by signal 9", `in the last line of stderr "Command terminated by signal 9"`},
		{"no peak RSS", out, "0.01", `"%e %M"`},
	} {
		_, err := parseGpmetis(tc.stdout, tc.stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
