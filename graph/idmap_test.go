package graph

import (
	"math/rand/v2"
	"testing"
)

// IDMap against a Go map, through growth past its reset size and reuse.
func TestIDMapMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var m IDMap
	for round := range 3 {
		m.Reset(10)
		want := map[int64]int32{}
		for k := range 5000 {
			v := int64(r.IntN(4000)) << (round * 20)
			got, had := m.Insert(v, int32(k))
			w, wasThere := want[v]
			if !wasThere {
				want[v], w = int32(k), int32(k)
			}
			if had != wasThere || got != w {
				t.Fatalf("Insert(%d): %d %v; want %d %v", v, got, had, w, wasThere)
			}
		}
		if m.Len() != len(want) {
			t.Fatalf("Len %d, want %d", m.Len(), len(want))
		}
		for v, w := range want {
			if got, ok := m.Get(v); !ok || got != w {
				t.Fatalf("Get(%d) = %d %v, want %d", v, got, ok, w)
			}
		}
		if _, ok := m.Get(-5 + 1<<40); ok {
			t.Fatal("Get found a key never inserted")
		}
	}
}

// Touch reads slots and changes nothing: the keys and values stay, and on
// an empty map it finds nothing.
func TestIDMapTouchChangesNothing(t *testing.T) {
	var m IDMap
	m.Reset(100)
	keys := []int64{0, 7, 1 << 40, 99, 12345}
	if sum := m.Touch(keys); sum != 0 {
		t.Fatalf("Touch on an empty map read %d", sum)
	}
	for i, k := range keys[:3] {
		m.Insert(k, int32(i))
	}
	if sum := m.Touch(keys); sum == 0 {
		t.Fatal("Touch read no key of a map holding some of them")
	}
	if m.Len() != 3 {
		t.Fatalf("Len %d after Touch, want 3", m.Len())
	}
	for i, k := range keys {
		got, ok := m.Get(k)
		if want := i < 3; ok != want || (ok && got != int32(i)) {
			t.Fatalf("Get(%d) = %d %v after Touch", k, got, ok)
		}
	}
}
