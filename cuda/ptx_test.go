package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// Each module's PTX is the highest architecture the device runs, and a
// device older than the kernels is refused with ErrNoGPU.
func TestChoosePTX(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, f := range []string{"a.sm_70", "a.sm_80", "a.sm_90", "b.sm_70", "b.sm_90"} {
		fsys["ptx/"+f+".ptx"] = &fstest.MapFile{Data: []byte("// " + f)}
	}
	for _, c := range []struct {
		major, minor int
		want         string
	}{
		{7, 0, "a.sm_70 b.sm_70"},
		{7, 5, "a.sm_70 b.sm_70"},
		{8, 0, "a.sm_80 b.sm_70"},
		{8, 9, "a.sm_80 b.sm_70"},
		{9, 0, "a.sm_90 b.sm_90"},
		{12, 0, "a.sm_90 b.sm_90"},
	} {
		mods, err := choosePTX(fsys, "ptx", c.major, c.minor)
		if err != nil {
			t.Fatalf("%d.%d: %v", c.major, c.minor, err)
		}
		var got []string
		for _, m := range mods {
			name := fmt.Sprintf("%s.sm_%d", m.name, m.arch)
			if string(m.ptx) != "// "+name+"\x00" {
				t.Errorf("%d.%d: %s holds %q, want its file NUL-terminated", c.major, c.minor, name, m.ptx)
			}
			got = append(got, name)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%d.%d: chose %v, want %s", c.major, c.minor, got, c.want)
		}
	}
	_, err := choosePTX(fsys, "ptx", 6, 1)
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "6.1") || !strings.Contains(err.Error(), "sm_70") {
		t.Errorf("a device of 6.1: %v", err)
	}
	fsys["ptx/c.ptx"] = &fstest.MapFile{}
	if _, err := choosePTX(fsys, "ptx", 9, 0); err == nil || !strings.Contains(err.Error(), "c.ptx") {
		t.Errorf("a file without an architecture: %v", err)
	}
}

var (
	ptxTarget = regexp.MustCompile(`(?m)^\.target (sm_\d+)$`)
	ptxEntry  = regexp.MustCompile(`(?m)^\.visible \.entry (\w+)\(`)
)

// The embedded PTX: every kernel source of kernels/ built for sm_70, sm_80
// and sm_90 (make kernels), each file for the architecture its name says,
// and the row kernel in rows.
func TestEmbeddedPTX(t *testing.T) {
	mods, err := ptxArchs(ptxFS, ptxDir)
	if err != nil {
		t.Fatal(err)
	}
	sources, err := filepath.Glob(filepath.Join("kernels", "*.cu"))
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range sources {
		name := strings.TrimSuffix(filepath.Base(src), ".cu")
		if !slices.Equal(mods[name], []int{70, 80, 90}) {
			t.Errorf("%s: PTX for %v, want sm_70, sm_80 and sm_90 (make kernels)", src, mods[name])
		}
	}
	for name, archs := range mods {
		if !slices.Contains(sources, filepath.Join("kernels", name+".cu")) {
			t.Errorf("PTX of %s, which has no source kernels/%s.cu", name, name)
		}
		for _, a := range archs {
			ptx, err := fs.ReadFile(ptxFS, fmt.Sprintf("%s/%s.sm_%d.ptx", ptxDir, name, a))
			if err != nil {
				t.Fatal(err)
			}
			if m := ptxTarget.FindSubmatch(ptx); m == nil || string(m[1]) != fmt.Sprintf("sm_%d", a) {
				t.Errorf("%s.sm_%d.ptx: target %q", name, a, m)
			}
			if bytes.IndexByte(ptx, 0) >= 0 {
				t.Errorf("%s.sm_%d.ptx holds a NUL byte, where cuModuleLoadData would stop reading", name, a)
			}
			entries := ptxEntry.FindAllSubmatch(ptx, -1)
			if len(entries) == 0 {
				t.Errorf("%s.sm_%d.ptx: no kernel", name, a)
			}
			if name == "rows" && (len(entries) != 1 || string(entries[0][1]) != "gnnrun_copy_rows") {
				t.Errorf("rows.sm_%d.ptx: kernels %q, want gnnrun_copy_rows", a, entries)
			}
		}
	}
}
