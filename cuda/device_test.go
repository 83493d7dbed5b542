package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// backends returns the devices the tests run on: the host backend, plain
// and shared, and the CUDA backend where a GPU is there (its absence is
// reported, not failed).
func backends(t *testing.T) map[string]Device {
	t.Helper()
	out := map[string]Device{}
	for name, opts := range map[string][]OpenOption{"host": nil, "host-shared": {Shared()}} {
		d, err := Open(Host, 0, opts...)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = d
	}
	if d, err := Open(CUDA, 0); err == nil {
		out["cuda"] = d
	} else {
		t.Logf("CUDA backend not tested: %v", err)
	}
	return out
}

// rowsOf makes n rows of w bytes whose bytes say which row they are.
func rowsOf(n, w int, tag byte) []byte {
	b := make([]byte, n*w)
	for i := range b {
		b[i] = tag + byte(i/w)*3 + byte(i%w)
	}
	return b
}

// Every operation against the same operation done plainly on host slices.
func TestDeviceOperations(t *testing.T) {
	const w = 12
	for name, d := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, err := d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			a, err := d.Alloc(8 * w)
			if err != nil {
				t.Fatal(err)
			}
			b, err := d.Alloc(5 * w)
			if err != nil {
				t.Fatal(err)
			}
			want := rowsOf(8, w, 1)
			other := rowsOf(5, w, 100)
			check := func(what string, ops ...error) {
				t.Helper()
				for _, err := range ops {
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
				}
				got := make([]byte, 8*w)
				if err := s.CopyToHost(got, a, 0); err != nil {
					t.Fatal(err)
				}
				ev, err := s.Record()
				if err != nil {
					t.Fatal(err)
				}
				if err := ev.Wait(); err != nil {
					t.Fatal(err)
				}
				ev.Close()
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: device rows\n%v\nwant\n%v", what, got, want)
				}
			}
			check("copy to the device", s.CopyToDevice(a, 0, want), s.CopyToDevice(b, 0, other))
			host := rowsOf(3, w, 200)
			slots := []int32{6, 0, 3}
			for k, r := range slots {
				copy(want[int(r)*w:int(r+1)*w], host[k*w:])
			}
			check("scatter", s.ScatterRows(a, slots, host, w))
			dst, src := []int32{1, 7}, []int32{4, 0}
			for k := range dst {
				copy(want[int(dst[k])*w:int(dst[k]+1)*w], other[int(src[k])*w:])
			}
			check("copy rows", s.CopyRows(a, dst, b, src, w))
			from, to := []int32{7, 6}, []int32{2, 5}
			for k := range from {
				copy(want[int(to[k])*w:int(to[k]+1)*w], want[int(from[k])*w:int(from[k]+1)*w])
			}
			check("move rows", s.MoveRows(a, from, to, w))
			host4 := pageMemory(t, 4*w)
			copy(host4, rowsOf(4, w, 50))
			pinned, err := d.Register(host4)
			if err != nil {
				t.Fatal(err)
			}
			dst, src = []int32{3, 4}, []int32{2, 0}
			for k := range dst {
				copy(want[int(dst[k])*w:int(dst[k]+1)*w], host4[int(src[k])*w:])
			}
			check("gather pinned", s.GatherPinned(a, dst, pinned, src, w))
			if err := s.GatherPinned(a, []int32{0}, pinned, []int32{4}, w); err == nil {
				t.Error("a gather past the end of the registered memory accepted")
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := pinned.Unregister(); err != nil {
				t.Fatal(err)
			}
			if err := s.GatherPinned(a, []int32{0}, pinned, []int32{0}, w); err == nil {
				t.Error("a gather from unregistered memory accepted")
			}
			if err := pinned.Unregister(); err == nil {
				t.Error("memory unregistered twice")
			}
			if _, err := d.Register(nil); err == nil {
				t.Error("empty memory registered")
			}
			copy(want[2*w:], other[w:3*w])
			check("device copy", s.CopyDevice(a, 2*w, b, w, 2*w))
			for what, err := range map[string]error{
				"scatter past the end": s.ScatterRows(a, []int32{8}, host[:w], w),
				"negative row":         s.CopyRows(a, []int32{-1}, b, []int32{0}, w),
				"source past the end":  s.CopyRows(a, []int32{0}, b, []int32{5}, w),
				"short host rows":      s.ScatterRows(a, []int32{1, 2}, host[:w], w),
				"copy past the end":    s.CopyToDevice(b, 4*w, host[:2*w]),
				"copy within a buffer": s.CopyRows(a, []int32{0}, a, []int32{1}, w),
			} {
				if err == nil {
					t.Errorf("%s accepted", what)
				}
			}
			check("after refused operations")
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err == nil {
				t.Error("a device with live buffers closed")
			}
			for _, x := range []Buffer{a, b} {
				if err := x.Free(); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Free(); err == nil {
				t.Error("a buffer freed twice")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// pageMemory returns n bytes of their own pages (as memory to register
// with a GPU must be), unmapped when the test ends.
func pageMemory(t *testing.T, n int) []byte {
	t.Helper()
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	return mem
}

// A stream runs its operations in order and later than they are queued: a
// host slice changed before the event completes may be copied changed,
// which is why the pipeline waits on events; once an event completes, what
// was queued before it is done.
func TestStreamOrder(t *testing.T) {
	for name, d := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s, _ := d.NewStream()
			buf, _ := d.Alloc(1 << 20)
			src := bytes.Repeat([]byte{7}, 1<<20)
			for range 50 {
				if err := s.CopyToDevice(buf, 0, src); err != nil {
					t.Fatal(err)
				}
			}
			got := make([]byte, 1<<20)
			s.CopyToHost(got, buf, 0)
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, src) {
				t.Fatal("the copy back does not follow the copies in")
			}
			s.Close()
			if err := s.CopyToDevice(buf, 0, src); err == nil || !strings.Contains(err.Error(), "closed stream") {
				t.Errorf("an operation on a closed stream: %v", err)
			}
			buf.Free()
			d.Close()
		})
	}
}

// A shared buffer's handle maps the same memory in another mapping (here
// through /proc/self/fd, as a process receiving the descriptor would).
func TestSharedBufferExport(t *testing.T) {
	d, err := Open(Host, 0, Shared())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.Alloc(4096)
	s, _ := d.NewStream()
	s.CopyToDevice(b, 100, []byte("gnnrun"))
	s.Sync()
	h, err := Export(b)
	if err != nil || h.Size != 4096 || h.Kind != Host {
		t.Fatalf("export: %+v, %v", h, err)
	}
	f, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", h.FD))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := unix.Mmap(int(f.Fd()), 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if string(mem[100:106]) != "gnnrun" {
		t.Fatalf("the other mapping reads %q", mem[100:106])
	}
	s.CopyToDevice(b, 0, []byte("again"))
	s.Sync()
	if string(mem[:5]) != "again" {
		t.Fatal("a later write is not seen through the other mapping")
	}
	plain, _ := Open(Host, 0)
	pb, _ := plain.Alloc(10)
	if _, err := Export(pb); err == nil {
		t.Error("a plain buffer exported")
	}
	pb.Free()
	b.Free()
	s.Close()
	d.Close()
	plain.Close()
}

func TestOpenKinds(t *testing.T) {
	if _, err := Open(CUDA, 0); err == nil {
		t.Skip("a GPU is here: the fallback is not exercised")
	} else if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "--device host") {
		t.Errorf("CUDA without a GPU: %v", err)
	}
	d, err := Open(Auto, 0)
	if err != nil || d.Kind() != Host {
		t.Fatalf("auto without a GPU: %v, %v", d, err)
	}
	for _, s := range []string{"host", "cuda", "auto"} {
		if k, err := ParseKind(s); err != nil || k.String() != s {
			t.Errorf("ParseKind(%q) = %v, %v", s, k, err)
		}
	}
	if _, err := ParseKind("tpu"); err == nil {
		t.Error("tpu parsed")
	}
}
