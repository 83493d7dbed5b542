package parmetis

import (
	"math/rand/v2"
	"testing"
)

// TestGainHeapPopsInOrder checks the FM phase's heap against a sort:
// highest gain first, then lower key, whatever the order of the pushes.
func TestGainHeapPopsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h gainHeap
	var all []gainItem
	for round := range 50 {
		for range rng.IntN(40) {
			it := gainItem{gain: int64(rng.IntN(20) - 10), key: uint64(rng.IntN(30)), v: int32(round)}
			h.push(it)
			all = append(all, it)
		}
		for range rng.IntN(30) {
			if len(h) == 0 {
				break
			}
			best := 0
			for i, it := range all {
				if it.gain > all[best].gain || it.gain == all[best].gain && it.key < all[best].key {
					best = i
				}
			}
			got := h.pop()
			if got.gain != all[best].gain || got.key != all[best].key {
				t.Fatalf("round %d: popped (%d, %d), want (%d, %d)", round, got.gain, got.key, all[best].gain, all[best].key)
			}
			all = append(all[:best], all[best+1:]...)
		}
	}
}
