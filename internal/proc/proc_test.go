package proc

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CPU counts work the process does, and a profile lands in prefix.<rank>.
func TestCPUAndProfile(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "cpu")
	stop, err := StartCPUProfile(prefix, 3)
	if err != nil {
		t.Fatal(err)
	}
	c0 := CPU()
	x := 0
	for t0 := time.Now(); time.Since(t0) < 50*time.Millisecond; x++ {
	}
	if d := CPU() - c0; d < 10*time.Millisecond {
		t.Errorf("50 ms of spinning took %v of CPU (x = %d)", d, x)
	}
	stop()
	if fi, err := os.Stat(prefix + ".3"); err != nil || fi.Size() == 0 {
		t.Errorf("profile %s.3: %v", prefix, err)
	}
	if stop, err := StartCPUProfile("", 0); err != nil || stop == nil {
		t.Errorf("no prefix: %v", err)
	} else {
		stop()
	}
}
