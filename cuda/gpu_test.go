//go:build cgo && linux

package cuda

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// openGPU opens GPU 0, or skips the test saying why there is none.
func openGPU(t *testing.T) *gpuDevice {
	t.Helper()
	d, err := Open(CUDA, 0)
	if err != nil {
		t.Skipf("no GPU to run on, the test is skipped: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d.(*gpuDevice)
}

// Every embedded module loads on this GPU at every architecture it runs
// (the driver JIT-compiles the PTX), each of its kernels is found by name
// there, and function finds each kernel of the modules open chose.
func TestGPUModules(t *testing.T) {
	g := openGPU(t)
	mods, err := ptxArchs(ptxFS, ptxDir)
	if err != nil {
		t.Fatal(err)
	}
	cc := 10*g.info.Major + g.info.Minor
	for name, archs := range mods {
		for _, a := range archs {
			if a > cc {
				continue
			}
			ptx, err := fs.ReadFile(ptxFS, fmt.Sprintf("%s/%s.sm_%d.ptx", ptxDir, name, a))
			if err != nil {
				t.Fatal(err)
			}
			ptx = append(ptx, 0)
			var h uintptr
			if err := g.call("cuModuleLoadData", func() int32 { return g.d.cuModuleLoadData(&h, unsafe.Pointer(&ptx[0])) }); err != nil {
				t.Errorf("%s.sm_%d.ptx on %s: %v", name, a, g.info, err)
				continue
			}
			for _, e := range ptxEntry.FindAllSubmatch(ptx, -1) {
				var f uintptr
				if err := g.call("cuModuleGetFunction "+string(e[1]), func() int32 { return g.d.cuModuleGetFunction(&f, h, string(e[1])) }); err != nil {
					t.Errorf("%s.sm_%d.ptx: %v", name, a, err)
				}
			}
			if err := g.call("cuModuleUnload", func() int32 { return g.d.cuModuleUnload(h) }); err != nil {
				t.Error(err)
			}
		}
	}
	for _, m := range g.modules {
		ptx, err := fs.ReadFile(ptxFS, fmt.Sprintf("%s/%s.sm_%d.ptx", ptxDir, m.name, m.arch))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ptxEntry.FindAllSubmatch(ptx, -1) {
			f, err := g.function(string(e[1]))
			if err != nil || f == 0 {
				t.Errorf("function(%s): %v, %v", e[1], f, err)
			}
			if again, _ := g.function(string(e[1])); again != f {
				t.Errorf("function(%s) changed: %v, then %v", e[1], f, again)
			}
		}
	}
	if _, err := g.function("gnnrun_no_such_kernel"); err == nil {
		t.Error("a kernel that is in no module found")
	}
}

// GatherPinned on the GPU, the kernel reading registered host memory,
// against the host backend: every width of the harness's, from memory
// registered at offsets that break 16-, 8- and 4-byte alignment.
func TestGPUGatherPinned(t *testing.T) {
	g := openGPU(t)
	h, err := Open(Host, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rng := rand.New(rand.NewPCG(23, 2))
	const dstN, srcN = 300, 500
	mem := pageMemory(t, srcN*1000+16)
	copy(mem, randomBytes(rng, len(mem)))
	for _, w := range harnessWidths {
		for _, off := range []int{0, 8, 4, 1} {
			src := mem[off : off+srcN*w]
			n := 1 + rng.IntN(dstN)
			var dstRows, srcRows []int32
			for _, r := range rng.Perm(dstN)[:n] {
				dstRows = append(dstRows, int32(r))
				srcRows = append(srcRows, int32(rng.IntN(srcN)))
			}
			init := randomBytes(rng, dstN*w)
			var outs [2][]byte
			for i, d := range []Device{g, h} {
				outs[i] = gatherOn(t, d, init, dstRows, src, srcRows, w)
			}
			if i := firstDiff(outs[0], outs[1]); i >= 0 {
				t.Errorf("width %d, offset %d: byte %d (row %d) is %d on the GPU, %d on the host backend", w, off, i, i/w, outs[0][i], outs[1][i])
			}
		}
	}
}

// gatherOn gathers rows of src, registered with d, into a buffer of d that
// held init and returns the buffer.
func gatherOn(t *testing.T, d Device, init []byte, dstRows []int32, src []byte, srcRows []int32, w int) []byte {
	t.Helper()
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	buf, err := d.Alloc(int64(len(init)))
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	p, err := d.Register(src)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(init))
	for _, err := range []error{s.CopyToDevice(buf, 0, init), s.GatherPinned(buf, dstRows, p, srcRows, w), s.CopyToHost(out, buf, 0), s.Sync()} {
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
	}
	if err := p.Unregister(); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out, init) {
		t.Errorf("%s: the gather changed nothing", d.Name())
	}
	return out
}
