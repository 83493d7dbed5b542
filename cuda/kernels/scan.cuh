// scan.cuh: the exclusive prefix sum the sampling kernels share (sample.cu
// sizes each destination's range of edges with it, compact.cu numbers the
// new source nodes), without shared memory or block synchronisation: a
// launch per level, each thread summing or rescanning one chunk of
// consecutive elements on its own.
//
// The launcher (cuda/sample_gpu.go, and the CPU harness alike) scans n
// values x into out[0..n], out[n] being the total, as
//
//	scan(x, n, out):
//	  n <= chunk: gnnrun_scan_chunks(x, n, chunk, null, out), 1 thread
//	  else: c = ceil(n / chunk) chunks
//	        gnnrun_scan_sums(x, n, chunk, sums)       c threads
//	        scan(sums, c, sums)                       in place, sums[c] total
//	        gnnrun_scan_chunks(x, n, chunk, sums, out) c threads
//
// x and out may be the same array (of n+1 elements): each thread reads its
// own chunk before writing it, and no chunk is read by another thread.
#ifndef GNNRUN_SCAN_CUH
#define GNNRUN_SCAN_CUH

#include "compat.h"

// gnnrun_scan_sums writes sums[c], the sum of chunk c of x[0..n).
extern "C" __global__ void gnnrun_scan_sums(const i64 *x, i64 n, i64 chunk, i64 *sums) {
    i64 c = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 lo = c * chunk;
    if (lo >= n) return;
    i64 hi = lo + chunk < n ? lo + chunk : n;
    i64 s = 0;
    for (i64 i = lo; i < hi; i++) s += x[i];
    sums[c] = s;
}

// gnnrun_scan_chunks writes the exclusive prefix sums of chunk c of
// x[0..n) into out, starting from offs[c] (0 when offs is null: a single
// chunk), and the chunk holding element n-1 (chunk 0 when n is 0) writes
// the total at out[n].
extern "C" __global__ void gnnrun_scan_chunks(const i64 *x, i64 n, i64 chunk, const i64 *offs, i64 *out) {
    i64 c = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64 lo = c * chunk;
    if (lo >= n && !(n == 0 && c == 0)) return;
    i64 hi = lo + chunk < n ? lo + chunk : n;
    i64 s = offs ? offs[c] : 0;
    for (i64 i = lo; i < hi; i++) {
        i64 v = x[i];
        out[i] = s;
        s += v;
    }
    if (hi == n) out[n] = s;
}

#endif
