package pack

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeySet checks next and prev against a sorted slice, with a dense and
// a sparse bottom level.
func TestKeySet(t *testing.T) {
	for _, limit := range []int{0, 63, 64, 4095, 100000, 64*denseLimit + 5} {
		rng := rand.New(rand.NewPCG(uint64(limit), 3))
		s := newKeySet(limit)
		if (s.sparse != nil) != (limit >= 64*denseLimit) {
			t.Fatalf("limit %d: sparse = %v", limit, s.sparse != nil)
		}
		var model []int
		for range 3000 {
			k := rng.IntN(limit + 1)
			if rng.IntN(3) == 0 && len(model) > 0 {
				k = model[rng.IntN(len(model))] // often remove present keys
			}
			if i, found := slices.BinarySearch(model, k); found {
				model = slices.Delete(model, i, i+1)
				s.remove(k)
			} else {
				model = slices.Insert(model, i, k)
				s.add(k)
			}
			q := rng.IntN(limit+3) - 1
			if got, want := s.next(q), modelNext(model, q); got != want {
				t.Fatalf("limit %d: next(%d) = %d, want %d", limit, q, got, want)
			}
			if got, want := s.prev(q), modelPrev(model, q); got != want {
				t.Fatalf("limit %d: prev(%d) = %d, want %d", limit, q, got, want)
			}
		}
	}
}

func modelNext(m []int, k int) int {
	i, _ := slices.BinarySearch(m, k)
	if i == len(m) {
		return -1
	}
	return m[i]
}

func modelPrev(m []int, k int) int {
	i, found := slices.BinarySearch(m, k)
	if found {
		return m[i]
	}
	if i == 0 {
		return -1
	}
	return m[i-1]
}
