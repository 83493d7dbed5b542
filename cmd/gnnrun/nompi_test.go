package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gnnrun/rank"
)

// The build without MPI (tag nompi) is what runs on machines with no MPI
// library. These tests build it as make build-nompi does, with cgo off, and
// hold it to the MPI build at one rank.

var (
	nompiOnce sync.Once
	nompiPath string
	nompiErr  error
)

// nompiBin builds gnnrun with -tags nompi and CGO_ENABLED=0 once per test
// run and returns its path.
func nompiBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test skipped in -short mode")
	}
	nompiOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gnnrun-test-nompi")
		if err != nil {
			nompiErr = err
			return
		}
		nompiPath = filepath.Join(dir, "gnnrun-nompi")
		cmd := exec.Command("go", "build", "-tags", "nompi", "-o", nompiPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			nompiErr = fmt.Errorf("go build -tags nompi: %v\n%s", err, out)
		}
	})
	if nompiErr != nil {
		t.Fatal(nompiErr)
	}
	return nompiPath
}

// TestNoMPIBinaryIsStatic checks that the nompi binary needs no shared
// library at all, so no MPI library: no program interpreter, no DT_NEEDED.
func TestNoMPIBinaryIsStatic(t *testing.T) {
	f, err := elf.Open(nompiBin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if strings.Contains(l, "libmpi") {
			t.Errorf("the nompi binary links %s", l)
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the nompi binary is dynamic (has a program interpreter), linking %v", libs)
		}
	}
	if len(libs) > 0 {
		t.Errorf("the nompi binary needs shared libraries %v, want none", libs)
	}
}

// TestNoMPIPipelineMatchesMPIBuild runs selftest, then gen -> partition ->
// dispatch -> inspect with the nompi binary, and the same stages with the
// MPI build started alone (its world of one): the graph, the assignment and
// the partition directory must be byte-identical.
func TestNoMPIPipelineMatchesMPIBuild(t *testing.T) {
	nompi := nompiBin(t)
	if !rank.MPI {
		t.Skip("the reference is the MPI build, but this test binary is built with -tags nompi")
	}
	run := func(bin string, args ...string) result {
		t.Helper()
		r := runBinary(t, bin, 0, 5*time.Minute, nil, args...)
		if r.err != nil {
			t.Fatalf("%s %s: %v", filepath.Base(bin), strings.Join(args, " "), r)
		}
		return r
	}
	if r := run(nompi, "selftest"); !strings.Contains(r.stdout, "selftest passed") || !strings.Contains(r.stdout, "on 1 ranks") {
		t.Fatalf("selftest printed:\n%s", r.stdout)
	}
	if r := run(nompi, "info"); !strings.Contains(r.stdout, "world: 1 ranks on 1 hosts") || !strings.Contains(r.stdout, "without MPI (tag nompi)") {
		t.Fatalf("info of the nompi build printed:\n%s", r.stdout)
	}
	outs := map[string]string{}
	for name, bin := range map[string]string{"nompi": nompi, "mpi": gnnrunBin(t)} {
		dir := t.TempDir()
		g, asg, parts := filepath.Join(dir, "graph"), filepath.Join(dir, "asg"), filepath.Join(dir, "parts")
		run(bin, "gen", "--scale", "9", "--edge-factor", "8", "--feat-dim", "4", "--classes", "3", "--hetero", "--out", g)
		run(bin, "partition", "--in", g, "--parts", "4", "--balance", "nodes,train,edges", "--out", asg)
		run(bin, "dispatch", "--in", g, "--assignment", asg, "--out", parts)
		if r := run(bin, "inspect", parts, "--in", g); !strings.Contains(r.stdout, "OK: no violations") {
			t.Fatalf("%s: inspect printed:\n%s", name, r.stdout)
		}
		outs[name] = dir
	}
	for _, d := range []string{"graph", "asg", "parts"} {
		sameFiles(t, filepath.Join(outs["nompi"], d), filepath.Join(outs["mpi"], d))
	}
}

// TestNoMPIRefusesMPIRun starts the nompi binary as two ranks of a real
// mpirun: each would be a world of one writing the same outputs, so each
// must fail at once, before writing anything.
func TestNoMPIRefusesMPIRun(t *testing.T) {
	nompi := nompiBin(t)
	needMPIRun(t)
	out := filepath.Join(t.TempDir(), "graph")
	r := runBinary(t, nompi, 2, time.Minute, nil, "gen", "--scale", "8", "--out", out)
	if r.err == nil || !strings.Contains(r.stderr, "the launcher started 2 ranks (OMPI_COMM_WORLD_SIZE=2)") || !strings.Contains(r.stderr, "built without MPI (tag nompi)") {
		t.Fatalf("want a failure naming the 2 ranks and the build without MPI: %v", r)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the refused run left %s behind (stat: %v)", out, err)
	}
}
