package collective

import (
	"fmt"
)

// Request looks keys up at their owners: each key goes to rank owner(key),
// which answers all keys from one source with one call of answer (src is the
// asking rank); the answers come back in the order of keys. answer must
// return one value per key. Every rank calls Request, with or without keys
// of its own, because every rank may own keys others ask for.
func Request[K, V any](c *Comm, keys []K, owner func(K) int, answer func(src int, keys []K) ([]V, error)) ([]V, error) {
	n := c.Size()
	dest := make([]int32, len(keys))
	counts := make([]int, n)
	for i, k := range keys {
		o := owner(k)
		if o < 0 || o >= n {
			return nil, fmt.Errorf("collective: request key %v has owner %d, outside [0,%d)", k, o, n)
		}
		dest[i] = int32(o)
		counts[o]++
	}
	start := make([]int, n)
	for j := 1; j < n; j++ {
		start[j] = start[j-1] + counts[j-1]
	}
	flat := make([]K, len(keys))
	pos := make([]int, len(keys))
	next := append([]int(nil), start...)
	for i, k := range keys {
		pos[i] = next[dest[i]]
		flat[pos[i]] = k
		next[dest[i]]++
	}
	asked, askedCounts, err := Alltoallv(c, flat, counts)
	if err != nil {
		return nil, err
	}
	answers := make([]V, len(asked))
	off := 0
	for src, k := range askedCounts {
		vals, err := answer(src, asked[off:off+k])
		if err != nil {
			return nil, err
		}
		if len(vals) != k {
			return nil, fmt.Errorf("collective: answer to rank %d gave %d values for %d keys", src, len(vals), k)
		}
		copy(answers[off:], vals)
		off += k
	}
	got, _, err := Alltoallv(c, answers, askedCounts)
	if err != nil {
		return nil, err
	}
	out := make([]V, len(keys))
	for i := range keys {
		out[i] = got[pos[i]]
	}
	return out, nil
}
