package serial

// boundary is the set of boundary vertices of a partition kept by the
// serial refiners: the members in bndInd, and each vertex's position there
// in bndPtr (-1 when it is not a member), so insertion, deletion and
// membership are O(1).
type boundary struct {
	bndPtr []int32
	bndInd []int32
}

func (s *boundary) bndInsert(v int32) {
	s.bndPtr[v] = int32(len(s.bndInd))
	s.bndInd = append(s.bndInd, v)
}

func (s *boundary) bndDelete(v int32) {
	i, last := s.bndPtr[v], s.bndInd[len(s.bndInd)-1]
	s.bndInd[i] = last
	s.bndPtr[last] = i
	s.bndInd = s.bndInd[:len(s.bndInd)-1]
	s.bndPtr[v] = -1
}

// bndSet makes v a member when in holds and not one otherwise.
func (s *boundary) bndSet(v int32, in bool) {
	switch member := s.bndPtr[v] >= 0; {
	case in && !member:
		s.bndInsert(v)
	case !in && member:
		s.bndDelete(v)
	}
}
