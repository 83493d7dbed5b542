// compat.h: what gnnrun's kernels take from CUDA, without the CUDA SDK.
//
// On the device side (clang -x cuda --cuda-device-only -nocudainc, `make
// kernels`) it gives the qualifiers, threadIdx/blockIdx/blockDim/gridDim
// from clang's own builtin-variable header, int4, and the atomics gnnrun's
// kernels use, as clang builtins. On the host side it includes cpu.h, the
// shim that runs the same kernel sources as plain C++ in the CPU harness
// (cuda/kernels/harness), where the tests check them under ASan and UBSan.
//
// The kernels keep to what both sides give: no __shared__ memory, no
// __syncthreads, no warp intrinsics; threads of a launch cooperate only
// through global memory and the atomics below, so running a grid's
// threads one after another (the shim) is one of the orders a GPU may run
// them in.
#ifndef GNNRUN_COMPAT_H
#define GNNRUN_COMPAT_H

#if defined(__CUDA__) && defined(__CUDA_ARCH__)

#include "__clang_cuda_builtin_vars.h"

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define GNN_INLINE __device__ __attribute__((always_inline)) inline

struct __attribute__((aligned(16))) int4 {
    int x, y, z, w;
};
struct __attribute__((aligned(8))) int2 {
    int x, y;
};

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// The atomics, on global memory, relaxed (the kernels need atomicity, not
// ordering: every launch is followed by the stream's order).
GNN_INLINE u64 atomicAddU64(u64 *p, u64 v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
GNN_INLINE u32 atomicAddU32(u32 *p, u32 v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
GNN_INLINE i64 atomicMinI64(i64 *p, i64 v) { return __atomic_fetch_min(p, v, __ATOMIC_RELAXED); }
// atomicCASU64 stores v at *p if *p is expected and returns what *p held.
GNN_INLINE u64 atomicCASU64(u64 *p, u64 expected, u64 v) {
    __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}
// mulhi64 is the high 64 bits of a*b.
GNN_INLINE u64 mulhi64(u64 a, u64 b) { return __nvvm_mulhi_ull(a, b); }
GNN_INLINE u32 mulhi32(u32 a, u32 b) { return __nvvm_mulhi_ui(a, b); }

#else

#include "cpu.h"

#endif

#endif
