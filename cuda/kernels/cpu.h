// cpu.h: the CPU shim under gnnrun's kernels (included by compat.h when
// not compiling for a GPU). A launch runs the grid's blocks and each
// block's threads one after another on the calling thread, with
// threadIdx/blockIdx/blockDim/gridDim set for each, so a kernel source runs
// unchanged as plain C++ under AddressSanitizer and UBSan. Kernels that
// need __syncthreads or shared memory cannot run here; gnnrun's do not use
// them (compat.h).
#ifndef GNNRUN_CPU_H
#define GNNRUN_CPU_H

#include <stdint.h>
#include <string.h>

#define __global__
#define __device__
#define GNN_INLINE static inline

struct gnn_dim3 {
    unsigned int x, y, z;
};
// One launch at a time: the harness is single-threaded.
static gnn_dim3 threadIdx, blockIdx, blockDim, gridDim;

struct alignas(16) int4 {
    int x, y, z, w;
};
struct alignas(8) int2 {
    int x, y;
};

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

GNN_INLINE u64 atomicAddU64(u64 *p, u64 v) {
    u64 old = *p;
    *p = old + v;
    return old;
}
GNN_INLINE u32 atomicAddU32(u32 *p, u32 v) {
    u32 old = *p;
    *p = old + v;
    return old;
}
GNN_INLINE i64 atomicMinI64(i64 *p, i64 v) {
    i64 old = *p;
    if (v < old) *p = v;
    return old;
}
GNN_INLINE u64 atomicCASU64(u64 *p, u64 expected, u64 v) {
    u64 old = *p;
    if (old == expected) *p = v;
    return old;
}
GNN_INLINE u64 mulhi64(u64 a, u64 b) { return (u64)(((unsigned __int128)a * b) >> 64); }
GNN_INLINE u32 mulhi32(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }

// gnn_reverse makes gnn_launch run the threads in descending order: a
// kernel whose result depends on the order its threads ran in (a race on
// a GPU) gives different results in the two orders, which the harness
// tests compare.
static bool gnn_reverse = false;

// gnn_launch runs kernel(args...) over grid blocks of block threads (1-D,
// as gnnrun launches every kernel), one thread after another: ascending,
// or descending under gnn_reverse.
template <typename... P, typename... A>
static void gnn_launch(void (*kernel)(P...), unsigned int grid, unsigned int block, A... args) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    uint64_t n = (uint64_t)grid * block;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t g = gnn_reverse ? n - 1 - i : i;
        blockIdx = {(unsigned int)(g / block), 0, 0};
        threadIdx = {(unsigned int)(g % block), 0, 0};
        kernel(args...);
    }
}

#endif
