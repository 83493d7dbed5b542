package pack

import (
	"path/filepath"
	"testing"
)

// mustReadCSV reads a histogram from testdata.
func mustReadCSV(t testing.TB, file string) Histogram {
	t.Helper()
	h, err := ReadHistogramFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustHistogram(t testing.TB, bins []Bin) Histogram {
	t.Helper()
	h, err := NewHistogram(bins)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// mustPack packs h and fails the test unless the packing is valid.
func mustPack(t testing.TB, h Histogram, opts ...Option) Packing {
	t.Helper()
	p, err := Pack(h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(h); err != nil {
		t.Fatal(err)
	}
	return p
}

// histograms lists the histogram files of testdata.
func histograms(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no histograms in testdata: %v", err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}
