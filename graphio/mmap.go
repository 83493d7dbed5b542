package graphio

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapping is a read-only memory map of part of a file.
type mapping struct {
	base []byte // what mmap returned, page aligned
	data []byte // the bytes asked for, inside base
}

// mapFile maps length bytes of f from off, read-only and shared, so every
// rank of a machine reads the same page-cache pages. A zero length maps
// nothing.
func mapFile(f *os.File, off, length int64) (*mapping, error) {
	if length == 0 {
		return &mapping{data: []byte{}}, nil
	}
	page := int64(os.Getpagesize())
	start := off / page * page
	b, err := unix.Mmap(int(f.Fd()), start, int(off-start+length), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s [%d,%d): %w", f.Name(), off, off+length, err)
	}
	return &mapping{base: b, data: b[off-start:]}, nil
}

// unmap releases the mapping; its data must not be used afterwards.
func (m *mapping) unmap() error {
	if m == nil || m.base == nil {
		return nil
	}
	b := m.base
	m.base, m.data = nil, nil
	return unix.Munmap(b)
}

// dropPages tells the kernel the mapping's pages in [lo, hi) are not needed
// soon, so a sequential scan does not keep the whole file resident in this
// process.
func (m *mapping) dropPages(lo, hi int) {
	if m == nil || m.base == nil || hi <= lo {
		return
	}
	shift := len(m.base) - len(m.data)
	page := os.Getpagesize()
	a := (lo + shift) / page * page
	b := (hi + shift) / page * page
	if b > a {
		_ = unix.Madvise(m.base[a:b], unix.MADV_DONTNEED)
	}
}
