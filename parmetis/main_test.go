package parmetis

import (
	"os"
	"testing"
)

// TestMain makes every refinement in the tests check its incremental cut
// against a full recount after every phase.
func TestMain(m *testing.M) {
	checkCut = true
	os.Exit(m.Run())
}
