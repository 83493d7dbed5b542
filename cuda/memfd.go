package cuda

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// memfdMap returns n bytes of shared memory backed by a new memfd, mapped
// here, and the memfd, which another process maps after receiving it over
// a Unix socket. A memfd has no name in /dev/shm: its memory goes when the
// last descriptor and mapping of it do, whichever process dies first.
func memfdMap(n int64) ([]byte, int, error) {
	fd, err := unix.MemfdCreate("gnnrun-buffer", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, -1, fmt.Errorf("cuda: memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, n); err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("cuda: shared buffer of %d bytes: %w", n, err)
	}
	if n == 0 {
		return []byte{}, fd, nil
	}
	mem, err := unix.Mmap(fd, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, -1, fmt.Errorf("cuda: mapping a shared buffer of %d bytes: %w", n, err)
	}
	return mem, fd, nil
}

// memfdUnmap releases what memfdMap returned.
func memfdUnmap(mem []byte, fd int) error {
	var err error
	if len(mem) > 0 {
		err = unix.Munmap(mem)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}
