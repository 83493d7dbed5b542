package serial

import (
	"math/rand/v2"
	"testing"
)

func TestGainQueueMatchesNaive(t *testing.T) {
	const n = 200
	rng := rand.New(rand.NewPCG(1, 2))
	var q gainQueue
	q.reset(n)
	naive := map[int32]int64{}
	for step := range 20000 {
		v := int32(rng.IntN(n))
		switch op := rng.IntN(4); {
		case op == 0 && !q.contains(v):
			k := int64(rng.IntN(100) - 50)
			q.push(v, k)
			naive[v] = k
		case op == 1 && q.contains(v):
			q.remove(v)
			delete(naive, v)
		case op == 2 && q.contains(v):
			k := int64(rng.IntN(100) - 50)
			q.update(v, k)
			naive[v] = k
		case op == 3 && q.len() > 0:
			best := int64(-1 << 62)
			for _, k := range naive {
				best = max(best, k)
			}
			if q.topKey() != best {
				t.Fatalf("step %d: top key %d, want %d", step, q.topKey(), best)
			}
			u := q.pop()
			if naive[u] != best {
				t.Fatalf("step %d: popped %d with key %d, want key %d", step, u, naive[u], best)
			}
			delete(naive, u)
		}
		if q.len() != len(naive) {
			t.Fatalf("step %d: %d queued, want %d", step, q.len(), len(naive))
		}
	}
	q.reset(n / 2)
	for v := range int32(n / 2) {
		if q.contains(v) {
			t.Fatalf("vertex %d still queued after reset", v)
		}
	}
}
