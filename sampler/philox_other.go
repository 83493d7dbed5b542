//go:build !amd64 || purego

package sampler

// hasPhilox8 says philox8 runs on the vector unit: not on this
// architecture (or with the purego tag).
var hasPhilox8 = false

func philox8AVX2(in *philox8In, out *[16]uint64) { panic("sampler: no vector Philox here") }
