//go:build !nompi

package rank

import (
	"testing"
)

// TestMPISingleton runs the real MPI layer as a world of one: the test binary
// is not started by mpirun. The multi-rank paths are tested by the
// integration tests, which run the gnnrun binary under mpirun.
func TestMPISingleton(t *testing.T) {
	c, err := World()
	if err != nil {
		t.Fatal(err)
	}
	if c.Size() != 1 || c.Rank() != 0 {
		t.Fatalf("singleton is rank %d of %d", c.Rank(), c.Size())
	}
	if ThreadLevel() != "MPI_THREAD_MULTIPLE" {
		t.Fatalf("thread level %s", ThreadLevel())
	}
	recv := [][]byte{make([]byte, 3)}
	if err := c.Alltoallv([][]byte{[]byte("abc")}, recv); err != nil || string(recv[0]) != "abc" {
		t.Fatalf("alltoallv: %q, %v", recv[0], err)
	}
	x := []int64{4, -2}
	if err := c.AllreduceInt64(x, x, Sum); err != nil || x[0] != 4 || x[1] != -2 {
		t.Fatalf("allreduce in place: %v, %v", x, err)
	}
	w, err := c.CreateWindow([]byte("window"))
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 3)
	if err := w.LockAll(); err != nil {
		t.Fatal(err)
	}
	if err := w.Get(dst, 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := w.UnlockAll(); err != nil || string(dst) != "dow" {
		t.Fatalf("window read %q, %v", dst, err)
	}
	if err := w.Free(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Split(-1, 0); err == nil {
		t.Fatal("negative color accepted")
	}
}

// TestMPIAllreduceInsidePointerfulStruct reduces an array that lives in a
// struct holding pointers: cgo's pointer check refuses such memory unless the
// layer passes it as a pinned address.
func TestMPIAllreduceInsidePointerfulStruct(t *testing.T) {
	c, err := World()
	if err != nil {
		t.Fatal(err)
	}
	holder := &struct {
		name *string
		sums [4]int64
	}{sums: [4]int64{1, 2, 3, 4}}
	s := "x"
	holder.name = &s
	if err := c.AllreduceInt64(holder.sums[:], holder.sums[:], Sum); err != nil || holder.sums != [4]int64{1, 2, 3, 4} {
		t.Fatalf("got %v, %v", holder.sums, err)
	}
}
