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

// Insert maps k to v unless k is mapped already; it returns k's value and
// whether k was there before.
func (m *IDMap) Insert(k int64, v int32) (int32, bool) {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	mask := len(m.slots) - 1
	for i := int(uint64(k+1) * 0x9E3779B97F4A7C15 >> m.shift); ; i = (i + 1) & mask {
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

// Get returns k's value and whether k is mapped.
func (m *IDMap) Get(k int64) (int32, bool) {
	mask := len(m.slots) - 1
	for i := int(uint64(k+1) * 0x9E3779B97F4A7C15 >> m.shift); ; i = (i + 1) & mask {
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
