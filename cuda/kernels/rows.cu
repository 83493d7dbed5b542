// Row copies for the device cache: one warp per row, the warp's threads
// across the row (16-byte words when the row and both buffers allow it,
// else 4-byte words, else bytes). Row k goes from row src_rows[k] of src
// (k itself when src_rows is null) to row dst_rows[k] of dst (k when
// dst_rows is null). It serves the scatter of gathered host rows into
// their slots, the copy of rows from the hot cache, and the moves within
// a buffer (whose sources and destinations never overlap).
extern "C" __global__ void gnnrun_copy_rows(char *dst, const int *dst_rows, const char *src, const int *src_rows,
                                            int n, long long row_bytes) {
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= n) return;
    long long s = src_rows ? (long long)src_rows[warp] : warp;
    long long d = dst_rows ? (long long)dst_rows[warp] : warp;
    const char *from = src + s * row_bytes;
    char *to = dst + d * row_bytes;
    unsigned long long align = (unsigned long long)from | (unsigned long long)to | (unsigned long long)row_bytes;
    if ((align & 15) == 0) {
        const int4 *f = (const int4 *)from;
        int4 *t = (int4 *)to;
        for (long long i = lane; i < row_bytes / 16; i += 32) t[i] = f[i];
    } else if ((align & 3) == 0) {
        const int *f = (const int *)from;
        int *t = (int *)to;
        for (long long i = lane; i < row_bytes / 4; i += 32) t[i] = f[i];
    } else {
        for (long long i = lane; i < row_bytes; i += 32) to[i] = from[i];
    }
}
