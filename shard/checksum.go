package shard

import (
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"strings"
)

// Every file of a partition is checksummed when dispatch has written it,
// and the sums are recorded in the config ("checksums" of each part-<i>,
// keyed by the file's path relative to the config): inspect verifies them
// without the input, so a flipped byte in a feature file is found. CRC-32C
// of the bytes as stored (compressed for .npy.zst), read back from the page
// cache: the Castagnoli polynomial runs at several GB/s with SSE4.2, so it
// adds a read of the partition, about 0.5 s per GB here, to a dispatch.

// checksumPrefix names the algorithm in the config's values.
const checksumPrefix = "crc32c:"

// fileChecksum returns the CRC-32C of the file at path.
func fileChecksum(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, errorf("%v", err)
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	if _, err := io.CopyBuffer(h, f, make([]byte, 1<<20)); err != nil {
		return 0, errorf("%s: %v", path, err)
	}
	return h.Sum32(), nil
}

// formatChecksum writes a checksum as the config records it.
func formatChecksum(sum uint32) string { return fmt.Sprintf("%s%08x", checksumPrefix, sum) }

// parseChecksum reads a checksum the config records.
func parseChecksum(s string) (uint32, error) {
	hex, ok := strings.CutPrefix(s, checksumPrefix)
	if !ok {
		return 0, fmt.Errorf("checksum %q is not %s<8 hex digits>", s, checksumPrefix)
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || len(hex) != 8 {
		return 0, fmt.Errorf("checksum %q is not %s<8 hex digits>", s, checksumPrefix)
	}
	return uint32(v), nil
}

// partChecksums returns the checksums of partition p's files (as
// allFiles lists them), read from the directory of the config at cfgPath.
func partChecksums(cfgPath string, files PartFiles) ([]uint32, error) {
	var out []uint32
	for _, rel := range files.allFiles() {
		sum, err := fileChecksum(resolve(cfgPath, rel))
		if err != nil {
			return nil, err
		}
		out = append(out, sum)
	}
	return out, nil
}

// verifyChecksums compares partition p's files with the checksums its
// config records and calls bad for each that differs or cannot be read.
// It reports whether the config records checksums at all.
func verifyChecksums(cfgPath string, p int, files PartFiles, bad func(format string, args ...any)) bool {
	if len(files.Checksums) == 0 {
		return false
	}
	for _, rel := range files.allFiles() {
		want, ok := files.Checksums[rel]
		if !ok {
			bad("partition %d: the config records no checksum of %s", p, rel)
			continue
		}
		w, err := parseChecksum(want)
		if err != nil {
			bad("partition %d: %s: %v", p, rel, err)
			continue
		}
		got, err := fileChecksum(resolve(cfgPath, rel))
		if err != nil {
			bad("partition %d: %v", p, err)
			continue
		}
		if got != w {
			bad("%s: checksum %s, the config records %s: the file changed after dispatch", resolve(cfgPath, rel), formatChecksum(got), want)
		}
	}
	return true
}

// crc32cCombine returns the CRC-32C of a followed by b from the CRC-32C
// of each and b's length, so that pieces of one file can be summed side by
// side (zlib's crc32_combine: appending n zero bits is a linear map over
// GF(2), applied by repeated squaring in O(log n) 32x32 products).
func crc32cCombine(a, b uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return a
	}
	var even, odd [32]uint32
	odd[0] = crc32.Castagnoli // one zero bit: shift, and add the polynomial when the low bit falls out
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {
		gf2Square(&even, &odd) // the first pass: one zero byte
		if lenB&1 != 0 {
			a = gf2Times(&even, a)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			a = gf2Times(&odd, a)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return a ^ b
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := range mat {
		square[n] = gf2Times(mat, mat[n])
	}
}
