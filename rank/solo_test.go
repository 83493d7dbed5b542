package rank

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The world of one is tested in every build through newSolo; nompi_test.go
// adds World's refusal to run as one of several ranks.

func TestSoloCollectivesCopy(t *testing.T) {
	c := newSolo("h")
	if c.Rank() != 0 || c.Size() != 1 || c.Host() != "h" {
		t.Fatalf("solo is rank %d of %d on %q", c.Rank(), c.Size(), c.Host())
	}
	recv := [][]byte{make([]byte, 3)}
	if err := c.Alltoallv([][]byte{[]byte("abc")}, recv); err != nil || string(recv[0]) != "abc" {
		t.Fatalf("alltoallv: %q, %v", recv[0], err)
	}
	if err := c.Allgatherv([]byte("xy"), [][]byte{make([]byte, 2)}); err != nil {
		t.Fatal(err)
	}
	gathered := [][]byte{make([]byte, 2)}
	if err := c.Allgatherv([]byte("xy"), gathered); err != nil || string(gathered[0]) != "xy" {
		t.Fatalf("allgatherv: %q, %v", gathered[0], err)
	}
	ints := []int64{4, -2}
	if err := c.AllreduceInt64(ints, ints, Min); err != nil || ints[0] != 4 || ints[1] != -2 {
		t.Fatalf("allreduce in place: %v, %v", ints, err)
	}
	floats := make([]float64, 2)
	if err := c.AllreduceFloat64([]float64{1.5, -3}, floats, Sum); err != nil || floats[0] != 1.5 || floats[1] != -3 {
		t.Fatalf("allreduce: %v, %v", floats, err)
	}
	buf := []byte("keep")
	if err := c.Bcast(buf, 0); err != nil || string(buf) != "keep" {
		t.Fatalf("bcast from root 0: %q, %v", buf, err)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
	if tr := c.Traffic(); tr != (Traffic{}) {
		t.Fatalf("traffic %+v: a world of one sends nothing to other ranks", tr)
	}
}

func TestSoloChecksLikeMPI(t *testing.T) {
	c := newSolo("h")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"alltoallv length", c.Alltoallv([][]byte{[]byte("abc")}, [][]byte{make([]byte, 2)}), "sends 3 bytes to rank 0, which expects 2"},
		{"alltoallv slices", c.Alltoallv([][]byte{nil, nil}, [][]byte{nil, nil}), "needs 1 send and receive slices"},
		{"allgatherv length", c.Allgatherv([]byte("abc"), [][]byte{make([]byte, 1)}), "contributes 3 bytes"},
		{"allgatherv slices", c.Allgatherv(nil, nil), "needs 1 receive slices"},
		{"allreduce length", c.AllreduceInt64(make([]int64, 2), make([]int64, 3), Sum), "allreduce of 2 values into 3"},
		{"bcast root", c.Bcast(make([]byte, 1), 1), "root 1 out of range [0,1)"},
		{"split color", func() error { _, err := c.Split(-1, 0); return err }(), "color must be non-negative"},
		{"free world", c.Free(), "world communicator cannot be freed"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, tc.err, tc.want)
		}
	}
}

func TestSoloDerivedComms(t *testing.T) {
	c := newSolo("h")
	for _, tc := range []struct {
		name string
		make func() (Comm, error)
	}{
		{"split", func() (Comm, error) { return c.Split(3, -1) }},
		{"dup", c.Dup},
		{"split shared", c.SplitShared},
	} {
		d, err := tc.make()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// A derived comm must end the process on Abort like the world does.
		if _, ok := d.(*soloComm); !ok || d.Size() != 1 || d.Rank() != 0 || d.Host() != "h" {
			t.Fatalf("%s: got %T, rank %d of %d on %q", tc.name, d, d.Rank(), d.Size(), d.Host())
		}
		recv := [][]byte{make([]byte, 2)}
		if err := d.Alltoallv([][]byte{[]byte("ok")}, recv); err != nil || string(recv[0]) != "ok" {
			t.Fatalf("%s: alltoallv %q, %v", tc.name, recv[0], err)
		}
		if err := d.Free(); err != nil {
			t.Fatalf("%s: free: %v", tc.name, err)
		}
		if err := d.Barrier(); err == nil {
			t.Fatalf("%s: barrier on a freed communicator succeeded", tc.name)
		}
	}
	// The world still works after its derived comms are freed.
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
}

func TestSoloWindowReadsExposedMemory(t *testing.T) {
	c := newSolo("h")
	w, err := c.CreateWindow([]byte("window"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Get(make([]byte, 1), 0, 0); err == nil {
		t.Fatal("get outside an epoch was accepted")
	}
	if err := w.LockAll(); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 3)
	if err := w.Get(dst, 0, 3); err != nil {
		t.Fatal(err)
	}
	blocks := make([]byte, 4)
	if err := w.GetBlocks(blocks, []int64{2, 0}, 0, []int64{0, 4}, 2); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		err  error
	}{
		{"past the end", w.Get(make([]byte, 4), 0, 3)},
		{"negative offset", w.Get(make([]byte, 1), 0, -1)},
		{"other rank", w.Get(make([]byte, 1), 1, 0)},
		{"block outside mem", w.GetBlocks(blocks, []int64{3}, 0, []int64{0}, 2)},
		{"block past the end", w.GetBlocks(blocks, []int64{0}, 0, []int64{5}, 2)},
	} {
		if bad.err == nil {
			t.Errorf("window get %s was accepted", bad.name)
		}
	}
	if err := w.Flush(0); err != nil {
		t.Fatal(err)
	}
	if err := w.UnlockAll(); err != nil {
		t.Fatal(err)
	}
	if string(dst) != "dow" || string(blocks) != "owwi" {
		t.Fatalf("window read %q and blocks %q, want \"dow\" and \"owwi\"", dst, blocks)
	}
	if err := w.Free(); err != nil {
		t.Fatal(err)
	}
	if tr := c.Traffic(); tr != (Traffic{}) {
		t.Fatalf("traffic %+v: reads of one's own window are not counted", tr)
	}
}

// soloAbortEnv makes the test binary, started again by TestSoloAbortExits,
// abort a derived communicator instead of running the tests.
const soloAbortEnv = "GNNRUN_TEST_SOLO_ABORT"

func TestSoloAbortExits(t *testing.T) {
	if os.Getenv(soloAbortEnv) != "" {
		d, err := newSolo("h").Dup()
		if err != nil {
			os.Exit(1)
		}
		d.Abort(7)
		os.Exit(0) // not reached when Abort ends the process
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSoloAbortExits$")
	cmd.Env = append(os.Environ(), soloAbortEnv+"=1")
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("aborting with code 7 ended the process with %v, want exit status 7", err)
	}
}
