package graph

// IDMap maps node IDs (>= 0) to int32 indices: open addressing with
// linear probing over entries that hold key and value together (one cache
// line a probe), sized by a batch and reused batch after batch. A Go map
// costs about three times as much per insert. The zero value is ready
// after Reset.
type IDMap struct {
	slots []idSlot
	shift uint
	n     int
}

// idSlot is one entry: key+1 (0 marks an empty slot) and its value.
type idSlot struct {
	key int64
	val int32
}

// Reset empties the map for about expect keys.
func (m *IDMap) Reset(expect int) {
	size := 16
	for size < 2*expect {
		size *= 2
	}
	if len(m.slots) < size {
		m.slots = make([]idSlot, size)
	} else {
		clear(m.slots)
	}
	m.shift = uint(64 - log2(len(m.slots)))
	m.n = 0
}

// Len returns the number of keys mapped.
func (m *IDMap) Len() int { return m.n }

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// home is the slot where k's probe starts (Fibonacci hashing of k+1).
func (m *IDMap) home(k int64) int { return int(uint64(k+1) * 0x9E3779B97F4A7C15 >> m.shift) }

// Insert maps k to v unless k is mapped already; it returns k's value and
// whether k was there before.
func (m *IDMap) Insert(k int64, v int32) (int32, bool) {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		e := &m.slots[i]
		switch e.key {
		case 0:
			e.key, e.val = k+1, v
			m.n++
			return v, false
		case k + 1:
			return e.val, true
		}
	}
}

// Touch reads the first slot each of keys hashes to and returns a value
// that depends on them (for the caller to keep, so the reads stay): a
// loop of nothing but independent loads keeps many cache misses in flight,
// where Insert, which branches on what each load finds, waits for each.
// Inserting or looking up the same keys right after finds their slots in
// the cache.
func (m *IDMap) Touch(keys []int64) int64 {
	var sum int64
	for _, k := range keys {
		sum += m.slots[m.home(k)].key
	}
	return sum
}

// Get returns k's value and whether k is mapped.
func (m *IDMap) Get(k int64) (int32, bool) {
	mask := len(m.slots) - 1
	for i := m.home(k); ; i = (i + 1) & mask {
		switch e := m.slots[i]; e.key {
		case 0:
			return 0, false
		case k + 1:
			return e.val, true
		}
	}
}

func (m *IDMap) grow() {
	old := m.slots
	m.slots = nil
	m.Reset(len(old))
	for _, e := range old {
		if e.key != 0 {
			m.Insert(e.key-1, e.val)
		}
	}
}
