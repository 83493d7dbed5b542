package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// File is a file being written under a temporary name beside its target.
// Its embedded *os.File is open for reading and writing, so it can be
// truncated, written at offsets, read back or memory-mapped. Finish it with
// Commit or Abort, never with Close.
//
// Commit does not fsync the directory after the rename. The file's bytes
// are on disk before the rename, so whichever name survives a crash holds
// a complete file; what a crash right after the rename can lose is only the
// rename itself, leaving the old file (or none), which a rerun of the stage
// replaces. Syncing the directory would cost one more synchronous metadata
// write per file, paid on every rank for every chunk and array, to make
// durable an output the job's own exit status already vouches for.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts a file that Commit will move to path. The temporary file
// is created in path's directory (which must exist) with
// O_CREATE|O_EXCL and permission 0666, so the kernel applies the umask
// exactly as it does for os.Create, without reading the process-wide
// umask. It fails when the directory cannot be written.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for range 10000 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("atomicfile: %s: %w", path, err)
		}
		return &File{File: f, path: path}, nil
	}
	return nil, fmt.Errorf("atomicfile: %s: no free temporary name in %s", path, dir)
}

// Path returns the name the file will have after Commit.
func (f *File) Path() string { return f.path }

// Commit flushes the file to disk, closes it and renames it over its
// target; it does not sync the directory (see File for why). On an error
// the temporary file is removed and the target left as it was. Commit
// after Commit or Abort fails.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s: already committed or aborted", f.path)
	}
	f.done = true
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("atomicfile: %s: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file, leaving the target as it
// was. It does nothing after Commit or Abort, so it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// WriteFile writes data to path atomically, with the mode os.Create gives.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("atomicfile: %s: %w", path, err)
	}
	return f.Commit()
}

// WriteFunc writes to path atomically what write writes to w, through a
// 1 MiB buffer. When write fails (or panics), nothing is left behind and
// the target is unchanged; write's error comes back wrapped, naming path,
// like every error of this package.
func WriteFunc(path string, write func(w io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return fmt.Errorf("atomicfile: %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("atomicfile: %s: %w", path, err)
	}
	return f.Commit()
}
