package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Where it draws no bar, a meter prints a stage's line at most every
// interval while the stage runs (and once at its end when it ran longer),
// and nothing when disabled.
func TestMeterLines(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		var out bytes.Buffer
		m := &Meter{enabled: enabled, out: &out, interval: 20 * time.Millisecond}
		task := m.Start("sample", 10, "batches")
		for range 10 {
			task.Add(1)
			time.Sleep(10 * time.Millisecond)
		}
		task.Done()
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !enabled {
			if out.Len() != 0 {
				t.Errorf("a disabled meter printed %q", out.String())
			}
			continue
		}
		if len(lines) < 3 || len(lines) > 7 {
			t.Errorf("%d lines for 100 ms at one per 20 ms:\n%s", len(lines), out.String())
		}
		if !strings.HasPrefix(lines[0], "sample: ") || !strings.Contains(lines[0], " of 10 (") || !strings.Contains(lines[0], "batches/s") {
			t.Errorf("line %q", lines[0])
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "sample: 10 of 10 (100.0%)") {
			t.Errorf("the last line %q", last)
		}
	}
}
