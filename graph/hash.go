package graph

// Mix64 is splitmix64's finaliser: a cheap hash with full avalanche. Every
// seeded choice and order-independent checksum in the project is built on
// it, so the same input and seed give the same result at any rank count.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Mix hashes a sequence of values (a seed, a level, a vertex, ...) into one,
// mixing each into the running hash with Mix64's finaliser.
func Mix(xs ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, x := range xs {
		h ^= x + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h = Mix64(h)
	}
	return h
}
