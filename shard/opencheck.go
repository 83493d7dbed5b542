package shard

import (
	"hash/crc32"
	"io"
	"os"
	"time"

	"gnnrun/internal/parallel"
	"gnnrun/report"
)

// What Serve and Open check of the files they open, before anything reads
// them. First, unless Checksums(false), every file's CRC-32C against the
// one its config records: in pieces of checkPiece bytes, summed side by
// side by the rank's workers and joined with crc32cCombine, so that one
// big feature file does not keep the other cores idle. When several ranks
// serve a partition, they split its files. Then, once the files are
// mapped, every partition's structure (bounds.go), one task per array.
// Workers share the host's cores with the other ranks on it: GOMAXPROCS
// divided by the ranks of the host.

// checkPiece is the bytes of a file one worker sums at a time: small
// enough to spread a feature file over the cores, large enough that the
// join (a few microseconds) is nothing against the read (milliseconds).
const checkPiece = 16 << 20

// OpenStats is what one rank's checks of the files it opened cost.
type OpenStats struct {
	// Checksums reports whether the files' CRC-32C were compared with the
	// config's: on (the default) and recorded in the config.
	Checksums bool
	// Files and Bytes count what this rank summed.
	Files int
	Bytes int64
	// ChecksumTime and BoundsTime are the wall times of the checksums and
	// of the structural checks.
	ChecksumTime, BoundsTime time.Duration
	// Workers is the number of goroutines that checked side by side.
	Workers int
}

// fileShare reports whether this rank checks file i (in allFiles order)
// of partition q; nil: every file of the partitions it opens.
type fileShare func(q, i int) bool

// fileSum is one file to checksum, in pieces.
type fileSum struct {
	path   string
	f      *os.File
	size   int64
	want   uint32
	pieces []uint32
}

// checksumFiles compares the files of partitions want (those share gives
// this rank) with the checksums the config records, and adds to st what it
// read. Partitions of directories written before checksums are skipped.
func checksumFiles(cfgPath string, cfg *Config, want []int, share fileShare, workers int, st *OpenStats) error {
	t0 := time.Now()
	defer func() { st.ChecksumTime += time.Since(t0) }()
	var sums []*fileSum
	defer func() {
		for _, s := range sums {
			s.f.Close()
		}
	}()
	for _, q := range want {
		pf := &cfg.Parts[q]
		if len(pf.Checksums) == 0 {
			continue
		}
		st.Checksums = true
		for i, rel := range pf.allFiles() {
			if share != nil && !share(q, i) {
				continue
			}
			s, err := openSum(cfgPath, q, pf, rel)
			if err != nil {
				return err
			}
			sums = append(sums, s)
			st.Files++
			st.Bytes += s.size
		}
	}
	type piece struct {
		s *fileSum
		k int
	}
	var pieces []piece
	for _, s := range sums {
		for k := range s.pieces {
			pieces = append(pieces, piece{s, k})
		}
	}
	bufs := make([][]byte, workers)
	err := parallel.Run(workers, len(pieces), func(w, i int) error {
		if bufs[w] == nil {
			bufs[w] = make([]byte, 1<<20)
		}
		p := pieces[i]
		return p.s.sumPiece(p.k, bufs[w])
	})
	if err != nil {
		return err
	}
	for _, s := range sums {
		if got := s.sum(); got != s.want {
			return errorf("%s: CRC-32C %s, the config records %s: the file changed after dispatch", s.path, formatChecksum(got), formatChecksum(s.want))
		}
	}
	return nil
}

// openSum opens file rel of partition q for checksumming.
func openSum(cfgPath string, q int, pf *PartFiles, rel string) (*fileSum, error) {
	path := resolve(cfgPath, rel)
	rec, ok := pf.Checksums[rel]
	if !ok {
		return nil, errorf("%s: part-%d of %s records no checksum of it", path, q, cfgPath)
	}
	want, err := parseChecksum(rec)
	if err != nil {
		return nil, errorf("%s: part-%d of %s: %v", path, q, cfgPath, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, errorf("%v", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errorf("%v", err)
	}
	n := max(1, (fi.Size()+checkPiece-1)/checkPiece)
	return &fileSum{path: path, f: f, size: fi.Size(), want: want, pieces: make([]uint32, n)}, nil
}

// sumPiece sums piece k of the file, reading through buf.
func (s *fileSum) sumPiece(k int, buf []byte) error {
	off := int64(k) * checkPiece
	end := min(s.size, off+checkPiece)
	var sum uint32
	for off < end {
		n := int(min(int64(len(buf)), end-off))
		if _, err := s.f.ReadAt(buf[:n], off); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return errorf("%s: reading %s bytes: %v", s.path, report.Count(s.size), err)
		}
		sum = crc32.Update(sum, castagnoli, buf[:n])
		off += int64(n)
	}
	s.pieces[k] = sum
	return nil
}

// sum joins the pieces' checksums into the file's.
func (s *fileSum) sum() uint32 {
	sum := s.pieces[0]
	for k := 1; k < len(s.pieces); k++ {
		n := min(s.size-int64(k)*checkPiece, checkPiece)
		sum = crc32cCombine(sum, s.pieces[k], n)
	}
	return sum
}

// checkStructure runs the structural checks of every partition of ps on
// workers goroutines and adds their time to st.
func checkStructure(ps []*Partition, workers int, st *OpenStats) error {
	t0 := time.Now()
	defer func() { st.BoundsTime += time.Since(t0) }()
	var checks []func() error
	for _, p := range ps {
		checks = append(checks, p.boundsChecks()...)
	}
	return parallel.Run(workers, len(checks), func(_, i int) error { return checks[i]() })
}
