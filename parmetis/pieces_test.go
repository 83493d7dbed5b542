package parmetis

import (
	"slices"
	"testing"

	"gnnrun/parmetis/serial"
)

// Deferring the pieces of a recursive bisection and solving them side by
// side on several ranks gives the partition that solving each at once on
// the group's first rank gives (pendingCeiling 0 solves every piece as soon
// as the next one is met, all on rank 0).
func TestDeferredPiecesMatchImmediate(t *testing.T) {
	p := newPlanted(4, 200, 6, 40)
	o := Options{Options: serial.Options{Parts: 8, Seed: 5}, MaxReplicated: 2000, Method: MethodRB}
	for _, np := range []int{2, 3} {
		m, deferred := partitionPlanted(t, p, np, o)
		saved := pendingCeiling
		pendingCeiling = 0
		m0, immediate := partitionPlanted(t, p, np, o)
		pendingCeiling = saved
		if m.Cut != m0.Cut || !slices.Equal(deferred, immediate) {
			t.Errorf("np=%d: deferred pieces give cut %d, immediate ones %d (partitions differ)", np, m.Cut, m0.Cut)
		}
		if slices.ContainsFunc(deferred, func(x int32) bool { return x < 0 || x >= 8 }) {
			t.Errorf("np=%d: a part outside [0, 8)", np)
		}
	}
}
