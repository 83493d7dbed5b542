//go:build !amd64 || purego

package sampler

// hasPhilox8 says there is a vector unit for philox8: not on this
// architecture (or with the purego tag), where fill never calls it.
var hasPhilox8 = false

func philox8AVX2(in *philox8In, out *[16]uint64) { panic("sampler: no vector Philox here") }
