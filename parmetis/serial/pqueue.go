package serial

// gainQueue is a max-heap of vertices keyed by the gain of moving them, with
// a locator so a vertex's key can be changed or the vertex removed in
// O(log n). It is the priority queue of FM refinement and of balancing.
//
// Invariant: loc[v] is v's heap position, or -1 for every vertex not queued;
// clear and reset keep it by resetting only the queued vertices.
type gainQueue struct {
	keys []int64
	vs   []int32
	loc  []int32
}

// reset empties q and makes room for vertices 0..n-1.
func (q *gainQueue) reset(n int) {
	q.clear()
	if cap(q.loc) < n {
		q.loc = make([]int32, n, n+n/8)
		fill32(q.loc, -1)
		return
	}
	old := len(q.loc)
	q.loc = q.loc[:n]
	if n > old {
		fill32(q.loc[old:], -1)
	}
}

func (q *gainQueue) clear() {
	for _, v := range q.vs {
		q.loc[v] = -1
	}
	q.keys = q.keys[:0]
	q.vs = q.vs[:0]
}

func (q *gainQueue) len() int              { return len(q.vs) }
func (q *gainQueue) contains(v int32) bool { return q.loc[v] >= 0 }

// topKey returns the largest key; q must not be empty.
func (q *gainQueue) topKey() int64 { return q.keys[0] }

func (q *gainQueue) push(v int32, key int64) {
	i := len(q.vs)
	q.keys = append(q.keys, key)
	q.vs = append(q.vs, v)
	q.loc[v] = int32(i)
	q.up(i)
}

// pop removes and returns the vertex with the largest key.
func (q *gainQueue) pop() int32 {
	v := q.vs[0]
	q.removeAt(0)
	return v
}

func (q *gainQueue) remove(v int32) { q.removeAt(int(q.loc[v])) }

func (q *gainQueue) update(v int32, key int64) {
	i := int(q.loc[v])
	old := q.keys[i]
	q.keys[i] = key
	if key > old {
		q.up(i)
	} else if key < old {
		q.down(i)
	}
}

func (q *gainQueue) removeAt(i int) {
	last := len(q.vs) - 1
	q.loc[q.vs[i]] = -1
	if i != last {
		q.keys[i], q.vs[i] = q.keys[last], q.vs[last]
		q.loc[q.vs[i]] = int32(i)
	}
	q.keys = q.keys[:last]
	q.vs = q.vs[:last]
	if i < last {
		q.down(i)
		q.up(i)
	}
}

func (q *gainQueue) up(i int) {
	k, v := q.keys[i], q.vs[i]
	for i > 0 {
		p := (i - 1) / 2
		if q.keys[p] >= k {
			break
		}
		q.keys[i], q.vs[i] = q.keys[p], q.vs[p]
		q.loc[q.vs[i]] = int32(i)
		i = p
	}
	q.keys[i], q.vs[i] = k, v
	q.loc[v] = int32(i)
}

func (q *gainQueue) down(i int) {
	n := len(q.vs)
	k, v := q.keys[i], q.vs[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && q.keys[c+1] > q.keys[c] {
			c++
		}
		if q.keys[c] <= k {
			break
		}
		q.keys[i], q.vs[i] = q.keys[c], q.vs[c]
		q.loc[q.vs[i]] = int32(i)
		i = c
	}
	q.keys[i], q.vs[i] = k, v
	q.loc[v] = int32(i)
}
