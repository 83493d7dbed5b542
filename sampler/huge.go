package sampler

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeWords returns n zero words in a mapping of their own, which the
// kernel is asked to back with huge pages (the machines' transparent huge
// pages are commonly on only where asked for): the sampler reads its edge
// table and its marks at random, and with 4 KiB pages nearly every such
// read also misses the TLB (a table of 134 MB spans 32 k of them). It
// returns Go memory where the mapping fails. freeHugeWords releases it.
func hugeWords(n int) []uint64 {
	if n == 0 {
		return nil
	}
	b, err := unix.Mmap(-1, 0, n*8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]uint64, n)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: refused, the pages stay 4 KiB
	hugeMaps.Lock()
	hugeMaps.of[&b[0]] = b
	hugeMaps.Unlock()
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n)
}

// freeHugeWords unmaps words from hugeWords (Go memory is left to the
// collector); words must not be used after.
func freeHugeWords(words []uint64) {
	if len(words) == 0 {
		return
	}
	p := (*byte)(unsafe.Pointer(&words[0]))
	hugeMaps.Lock()
	b, ok := hugeMaps.of[p]
	delete(hugeMaps.of, p)
	hugeMaps.Unlock()
	if ok {
		_ = unix.Munmap(b)
	}
}

// hugeMaps holds the mappings hugeWords made, by their first byte.
var hugeMaps = struct {
	sync.Mutex
	of map[*byte][]byte
}{of: map[*byte][]byte{}}
