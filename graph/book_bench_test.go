package graph

import (
	"math/rand/v2"
	"testing"
)

// ownerOld is the branchy search Owner was, kept to compare with.
func ownerOld(b Book, id int64) int {
	lo, hi := 1, len(b.Bounds)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.Bounds[m] > id {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

func BenchmarkOwnerOld(b *testing.B) { benchOwner(b, ownerOld) }
func BenchmarkOwner(b *testing.B)    { benchOwner(b, Book.Owner) }

// BenchmarkOwners is BenchmarkOwner's IDs through Owners, 2^16 a call.
func BenchmarkOwners(b *testing.B) {
	bk, ids := ownerCase()
	owners := make([]int32, len(ids))
	b.ResetTimer()
	for range b.N / len(ids) {
		bk.Owners(ids, owners)
	}
}

func ownerCase() (Book, []int64) {
	bk := BookFromCounts([]int64{100000, 160000, 90000, 170000, 120000, 150000, 130000, 128576})
	r := rand.New(rand.NewPCG(1, 2))
	ids := make([]int64, 1<<16)
	for i := range ids {
		ids[i] = r.Int64N(bk.Total())
	}
	return bk, ids
}

func benchOwner(b *testing.B, f func(Book, int64) int) {
	bk, ids := ownerCase()
	b.ResetTimer()
	s := 0
	for i := range b.N {
		s += f(bk, ids[i&(1<<16-1)])
	}
	if s == -1 {
		b.Log(s)
	}
}
