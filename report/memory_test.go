package report

import (
	"os"
	"syscall"
	"testing"
)

// A shared mapping's pages count in SharedRSS once touched, and PSS is
// read: what the reports' rss_shared_bytes and pss_bytes hold.
func TestSharedRSSCountsAMappedFile(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no /proc/self/smaps_rollup here (Linux 4.14+)")
	}
	f, err := os.CreateTemp(t.TempDir(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 32 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	before := SharedRSS()
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for i := 0; i < size; i += 4096 {
		mem[i] = 1
	}
	if grown := SharedRSS() - before; grown < size*3/4 {
		t.Errorf("SharedRSS grew by %d bytes with %d bytes of a shared mapping touched", grown, size)
	}
	if pss, rss := PSS(), RSS(); pss <= 0 || pss > rss+4096 {
		t.Errorf("PSS %d bytes, RSS %d: want 0 < PSS <= RSS", pss, rss)
	}
}
