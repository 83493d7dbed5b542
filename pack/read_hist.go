package pack

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ReadHistogramCSV reads a histogram in CSV: an optional header
// "nodes,edges,count", then one line "nodes,edges,count" per distinct size.
// Blank lines and lines starting with '#' are skipped. name labels errors,
// which give the line and the reason: a field that is not a non-negative
// integer, a graph without nodes, a size listed twice, no graphs at all.
func ReadHistogramCSV(r io.Reader, name string) (Histogram, error) {
	sc := bufio.NewScanner(r)
	var bins []Bin
	seen := make(map[Tuple]int)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || (len(bins) == 0 && isHistogramHeader(text)) {
			continue
		}
		b, err := parseBinLine(text)
		if err != nil {
			return Histogram{}, fmt.Errorf("pack: %s:%d: %w", name, line, err)
		}
		if prev, dup := seen[b.Tuple]; dup {
			return Histogram{}, fmt.Errorf("pack: %s:%d: size %v already listed on line %d", name, line, b.Tuple, prev)
		}
		seen[b.Tuple] = line
		bins = append(bins, b)
	}
	if err := sc.Err(); err != nil {
		return Histogram{}, fmt.Errorf("pack: %s: %w", name, err)
	}
	h, err := NewHistogram(bins)
	if err != nil {
		return Histogram{}, fmt.Errorf("pack: %s: %s", name, trimPrefix(err))
	}
	return h, nil
}

// ReadHistogramFile reads a histogram CSV file (see ReadHistogramCSV).
func ReadHistogramFile(path string) (Histogram, error) {
	f, err := os.Open(path)
	if err != nil {
		return Histogram{}, fmt.Errorf("pack: %w", err)
	}
	defer f.Close()
	return ReadHistogramCSV(f, path)
}

func isHistogramHeader(s string) bool {
	return strings.EqualFold(strings.ReplaceAll(s, " ", ""), "nodes,edges,count")
}

var binFields = [3]string{"nodes", "edges", "count"}

func parseBinLine(s string) (Bin, error) {
	f := strings.Split(s, ",")
	if len(f) != 3 {
		return Bin{}, fmt.Errorf("want 3 fields nodes,edges,count, got %d in %q", len(f), s)
	}
	var v [3]int
	for i := range f {
		x, err := parseCount(f[i])
		if err != nil {
			return Bin{}, fmt.Errorf("%s %w", binFields[i], err)
		}
		v[i] = x
	}
	if v[0] < 1 {
		return Bin{}, fmt.Errorf("nodes must be at least 1, got 0")
	}
	return Bin{Tuple: Tuple{Nodes: v[0], Edges: v[1]}, Count: v[2]}, nil
}

// parseCount parses a non-negative decimal integer; its error reads after
// the name of the field.
func parseCount(s string) (int, error) {
	s = strings.TrimSpace(s)
	x, err := strconv.ParseInt(s, 10, 64)
	if err != nil || x < 0 {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	return int(x), nil
}

// trimPrefix drops the "pack: " of an inner error that is wrapped again.
func trimPrefix(err error) string { return strings.TrimPrefix(err.Error(), "pack: ") }
