//go:build !purego

package sampler

import "golang.org/x/sys/cpu"

// hasPhilox8 says there is a vector unit (AVX2) for philox8.
var hasPhilox8 = cpu.X86.HasAVX2

// philox8AVX2 is philox8's vector form (philox_amd64.s).
//
//go:noescape
func philox8AVX2(in *philox8In, out *[16]uint64)
