// Row copies for the device cache: one warp per row, the warp's 32 threads
// across the row in the widest words the row allows. Row k goes from row
// src_rows[k] of src (k itself when src_rows is null) to row dst_rows[k] of
// dst (k when dst_rows is null). It serves the scatter of gathered host rows
// into their slots, the copy of rows by index between buffers (from the hot
// cache), the moves within a buffer (whose sources and destinations never
// overlap), and the zero-copy gather from pinned host memory (src is then
// the device's view of host memory: every load crosses PCIe, so wide words
// matter most there).
#include "compat.h"

// GNN_ROW_PATH(row, word_bytes) is called by every thread of a row's warp
// with the word size its copy takes; the CPU harness defines it to check
// that every path ran. It is nothing on a GPU.
#ifndef GNN_ROW_PATH
#define GNN_ROW_PATH(row, word_bytes)
#endif

// word16 is a 16-byte word as a vector, which loads and stores as one
// instruction (ld.global.v4.u32); a copy of compat.h's int4, a struct,
// becomes two 8-byte ones.
typedef int word16 __attribute__((ext_vector_type(4)));

// copy_row_words copies row_bytes (a multiple of sizeof(W)) from from to to
// in words of W, lane by lane: adjacent lanes take adjacent words, so a
// warp's loads and stores coalesce.
template <typename W>
GNN_INLINE void copy_row_words(char *to, const char *from, i64 row_bytes, int lane) {
    const W *f = (const W *)from;
    W *t = (W *)to;
    i64 words = row_bytes / (i64)sizeof(W);
    for (i64 i = lane; i < words; i += 32) t[i] = f[i];
}

extern "C" __global__ void gnnrun_copy_rows(char *dst, const int *dst_rows, const char *src, const int *src_rows,
                                            int n, i64 row_bytes) {
    i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= n) return;
    i64 s = src_rows ? (i64)src_rows[warp] : warp;
    i64 d = dst_rows ? (i64)dst_rows[warp] : warp;
    const char *from = src + s * row_bytes;
    char *to = dst + d * row_bytes;
    // A word size serves when both rows start on it and the row is whole
    // words of it.
    u64 align = (u64)from | (u64)to | (u64)row_bytes;
    if ((align & 15) == 0) {
        GNN_ROW_PATH(warp, 16);
        copy_row_words<word16>(to, from, row_bytes, lane);
    } else if ((align & 7) == 0) {
        GNN_ROW_PATH(warp, 8);
        copy_row_words<u64>(to, from, row_bytes, lane);
    } else if ((align & 3) == 0) {
        GNN_ROW_PATH(warp, 4);
        copy_row_words<u32>(to, from, row_bytes, lane);
    } else {
        GNN_ROW_PATH(warp, 1);
        copy_row_words<char>(to, from, row_bytes, lane);
    }
}
