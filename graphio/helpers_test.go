package graphio

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gnnrun/collective"
	"gnnrun/rank"
)

// world runs fn on an in-process world of p ranks and fails the test on an
// error.
func world(t *testing.T, p int, fn func(c *collective.Comm) error) {
	t.Helper()
	if err := worldErr(p, fn); err != nil {
		t.Fatal(err)
	}
}

// worldErr runs fn on an in-process world of p ranks and returns the first
// rank's error.
func worldErr(p int, fn func(c *collective.Comm) error) error {
	return rank.RunLocal(p, func(rc rank.Comm) error {
		return fn(collective.MustNew(rc, collective.MaxMessage(1<<16)))
	}, rank.Timeout(time.Minute))
}

// readAll reads path on p ranks and returns every rank's graph.
func readAll(t *testing.T, p int, path string, opts ...Option) []*Graph {
	t.Helper()
	gs := make([]*Graph, p)
	var mu sync.Mutex
	world(t, p, func(c *collective.Comm) error {
		g, err := Read(c, path, opts...)
		if err != nil {
			return err
		}
		mu.Lock()
		gs[c.Rank()] = g
		mu.Unlock()
		return nil
	})
	return gs
}

// statsOf reads path on p ranks and returns the stats (identical on every
// rank).
func statsOf(t *testing.T, p int, path string, opts ...Option) *Stats {
	t.Helper()
	var out *Stats
	var mu sync.Mutex
	world(t, p, func(c *collective.Comm) error {
		g, err := Read(c, path, opts...)
		if err != nil {
			return err
		}
		defer g.Close()
		s, err := ComputeStats(c, g)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			mu.Lock()
			out = s
			mu.Unlock()
		}
		return nil
	})
	return out
}

// writeFile writes text to dir/name, creating directories.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantErr checks that err is non-nil and its message holds every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}
