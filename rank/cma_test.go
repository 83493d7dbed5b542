//go:build !nompi

package rank

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestCMAGet reads blocks of this process's own memory through
// process_vm_readv, as a window reads a peer's: more blocks than one call
// takes, blocks of their own sizes (empty ones among them), each checked
// against the source bytes; and a block past the window's end fails.
func TestCMAGet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 1<<16)
	for i := range src {
		src[i] = byte(rng.IntN(256))
	}
	p := &cmaPeer{pid: os.Getpid(), base: uintptr(unsafe.Pointer(&src[0])), size: int64(len(src))}
	probe := make([]byte, 1)
	if _, err := p.get(probe, []int64{0}, []int64{0}, 1, func(int) int { return 1 }); errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
		t.Skipf("process_vm_readv is refused here (%v): windows read every rank through MPI", err)
	}
	const blocks = 3*cmaIovecs + 17
	dst, from, sizes := make([]int64, blocks), make([]int64, blocks), make([]int, blocks)
	total := int64(0)
	for i := range blocks {
		sizes[i] = rng.IntN(40) // 0 included
		from[i] = rng.Int64N(int64(len(src) - sizes[i]))
		dst[i] = total
		total += int64(sizes[i])
	}
	mem := make([]byte, total)
	if n, err := p.get(mem, dst, from, blocks, func(i int) int { return sizes[i] }); err != nil || n != total {
		t.Fatalf("read %d of %d bytes: %v", n, total, err)
	}
	for i := range blocks {
		got, want := mem[dst[i]:dst[i]+int64(sizes[i])], src[from[i]:from[i]+int64(sizes[i])]
		if !bytes.Equal(got, want) {
			t.Fatalf("block %d (%d bytes from %d) is %x, want %x", i, sizes[i], from[i], got, want)
		}
	}
	_, err := p.get(mem, []int64{0}, []int64{int64(len(src)) - 4}, 1, func(int) int { return 8 })
	if err == nil || !strings.Contains(err.Error(), "of a window of") {
		t.Fatalf("a block past the window's end: %v", err)
	}
}
