// Uniform neighbour sampling of one layer, one thread per destination
// node, drawing exactly what the Go sampler draws (sampler/node.go's
// nodeDraws.positions, sampler/choose.go's choose and floyd, with
// sampler/rng.go's Philox4x32-10 streams): the same counters under the
// same key give the same positions, so a batch sampled here equals the
// CPU's edge for edge.
//
// The graph is one partition's CSC: tptr is its typed indptr (the
// in-edges of inner node v of edge type t are the CSC positions
// [tptr[v*E+t], tptr[v*E+t+1]), E edge types; with one type, the indptr
// itself), indices its local source IDs (int32 or int64, as the partition
// stores them), local ID l < num_inner being global ID lo+l and the others
// l2g[l]. A layer is three launches and a scan (scan.cuh):
//
//	gnnrun_sample_count    counts[i]: the edges frontier[i] draws
//	scan(counts) -> offs   frontier[i]'s edges are offs[i]..offs[i+1]
//	gnnrun_sample_draw     pos[offs[i]..]: its CSC positions, ascending
//	gnnrun_sample_sources  src[k]: the global ID of pos[k]'s source
//
// Weighted draws (--prob) and exclusions (link prediction's positive
// edges) stay on the CPU: the Go sampler does them.
#include "compat.h"
#include "scan.cuh"

// Philox4x32-10 (sampler/rng.go).
#define GNN_PHILOX_M0 0xD2511F53u
#define GNN_PHILOX_M1 0xCD9E8D57u
#define GNN_PHILOX_W0 0x9E3779B9u
#define GNN_PHILOX_W1 0xBB67AE85u

// The purpose of neighbour draws (sampler.ForNeighbors).
#define GNN_FOR_NEIGHBORS 0u

struct gnn_ctr {
    u32 c0, c1, c2, c3;
};

GNN_INLINE gnn_ctr gnn_philox(gnn_ctr c, u32 k0, u32 k1) {
    for (int i = 0; i < 10; i++) {
        if (i > 0) {
            k0 += GNN_PHILOX_W0;
            k1 += GNN_PHILOX_W1;
        }
        u64 p0 = (u64)GNN_PHILOX_M0 * c.c0;
        u64 p1 = (u64)GNN_PHILOX_M1 * c.c2;
        gnn_ctr n = {(u32)(p1 >> 32) ^ c.c1 ^ k0, (u32)p1, (u32)(p0 >> 32) ^ c.c3 ^ k1, (u32)p0};
        c = n;
    }
    return c;
}

// gnn_stream is sampler.Stream: draw i of (key, purpose, lane, subject),
// draws 2j and 2j+1 the halves of Philox's output for counter j. It keeps
// the last output, as the draws of a node are made in order.
struct gnn_stream {
    u32 k0, k1;
    gnn_ctr ctr;
    u32 last;
    bool held;
    u64 a, b;
};

GNN_INLINE gnn_stream gnn_new_stream(u32 k0, u32 k1, u32 purpose, u32 lane, i64 subject) {
    gnn_stream s;
    s.k0 = k0;
    s.k1 = k1;
    s.ctr.c0 = 0;
    s.ctr.c1 = purpose << 24 | (lane & 0xffffffu);
    s.ctr.c2 = (u32)(u64)subject;
    s.ctr.c3 = (u32)((u64)subject >> 32);
    s.last = 0;
    s.held = false;
    s.a = s.b = 0;
    return s;
}

GNN_INLINE u64 gnn_draw(gnn_stream *s, u32 i) {
    u32 j = i >> 1;
    if (!s->held || s->last != j) {
        gnn_ctr c = s->ctr;
        c.c0 = j;
        gnn_ctr o = gnn_philox(c, s->k0, s->k1);
        s->a = (u64)o.c0 | (u64)o.c1 << 32;
        s->b = (u64)o.c2 | (u64)o.c3 << 32;
        s->last = j;
        s->held = true;
    }
    return (i & 1) ? s->b : s->a;
}

// gnn_lane is sampler.Lane(layer, etype).
GNN_INLINE u32 gnn_lane(int layer, int etype) { return (u32)layer << 16 | ((u32)etype & 0xffffu); }

// gnn_below is sampler.Below: u mapped to [0, n) by the high word of u*n.
GNN_INLINE i64 gnn_below(u64 u, i64 n) { return (i64)mulhi64(u, (u64)n); }

// gnn_edges_of is how many of n in-edges a fanout of f draws.
GNN_INLINE i64 gnn_edges_of(i64 n, int f, int replace) {
    if (f == 0 || n == 0) return 0;
    if (f < 0 || (!replace && n <= f)) return n;
    return f;
}

// gnn_sift restores the max-heap below i of x[0..n).
GNN_INLINE void gnn_sift(i64 *x, i64 i, i64 n) {
    for (;;) {
        i64 big = i, l = 2 * i + 1, r = l + 1;
        if (l < n && x[l] > x[big]) big = l;
        if (r < n && x[r] > x[big]) big = r;
        if (big == i) return;
        i64 t = x[i];
        x[i] = x[big];
        x[big] = t;
        i = big;
    }
}

// gnn_sort sorts x[0..n) ascending in place (heapsort: no memory beyond
// the thread's own range of the output).
GNN_INLINE void gnn_sort(i64 *x, i64 n) {
    for (i64 i = n / 2 - 1; i >= 0; i--) gnn_sift(x, i, n);
    for (i64 e = n - 1; e > 0; e--) {
        i64 t = x[0];
        x[0] = x[e];
        x[e] = t;
        gnn_sift(x, 0, e);
    }
}

// gnn_floyd writes k distinct indices of [0, m) to out, ascending, as
// sampler's floyd draws them: for j = m-k .. m-1, draw i = j-(m-k) picks t
// in [0, j]; take t, or j when t is taken already. The set is kept sorted
// in out (binary search, then a shift), where Go tests membership by a scan
// or a bitmap and sorts at the end: the same set. When t is taken, j
// exceeds every index taken before it and goes at the end.
GNN_INLINE void gnn_floyd(gnn_stream *s, i64 m, i64 k, i64 *out) {
    for (i64 i = 0; i < k; i++) {
        i64 j = m - k + i;
        i64 t = gnn_below(gnn_draw(s, (u32)i), j + 1);
        i64 lo = 0, hi = i;
        while (lo < hi) {
            i64 mid = lo + (hi - lo) / 2;
            if (out[mid] < t)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < i && out[lo] == t) {
            out[i] = j;
            continue;
        }
        for (i64 q = i; q > lo; q--) out[q] = out[q - 1];
        out[lo] = t;
    }
}

// gnnrun_sample_count writes counts[i], the number of edges frontier[i]
// (a global ID of an inner node: lo <= frontier[i] < lo+num_inner, which
// the launcher checks) draws: per edge type t, fanouts[t] of its in-edges
// (all of them when fanouts[t] < 0 or, without replacement, when it has no
// more; none when 0).
extern "C" __global__ void gnnrun_sample_count(const i64 *frontier, i64 n, i64 lo, const i64 *tptr, int etypes,
                                               const int *fanouts, int replace, i64 *counts) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    i64 v = (frontier[i] - lo) * etypes;
    i64 c = 0;
    for (int t = 0; t < etypes; t++) c += gnn_edges_of(tptr[v + t + 1] - tptr[v + t], fanouts[t], replace);
    counts[i] = c;
}

// gnnrun_sample_draw writes the CSC positions frontier[i] draws at layer
// under key (k0, k1) to pos[offs[i]..offs[i+1]): type by type, each type's
// ascending (duplicates adjacent with replacement), from the stream of
// (key, ForNeighbors, Lane(layer, t), frontier[i]) as nodeDraws.positions
// draws them.
extern "C" __global__ void gnnrun_sample_draw(const i64 *frontier, i64 n, i64 lo, const i64 *tptr, int etypes,
                                              const int *fanouts, int replace, u32 k0, u32 k1, int layer,
                                              const i64 *offs, i64 *pos) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    i64 node = frontier[i];
    i64 v = (node - lo) * etypes;
    i64 *out = pos + offs[i];
    for (int t = 0; t < etypes; t++) {
        i64 a = tptr[v + t], m = tptr[v + t + 1] - a;
        int f = fanouts[t];
        i64 k = gnn_edges_of(m, f, replace);
        if (k == 0) continue;
        if (f < 0 || (!replace && m <= f)) {
            for (i64 q = 0; q < m; q++) out[q] = a + q;
        } else {
            gnn_stream s = gnn_new_stream(k0, k1, GNN_FOR_NEIGHBORS, gnn_lane(layer, t), node);
            if (replace) {
                for (i64 d = 0; d < k; d++) out[d] = gnn_below(gnn_draw(&s, (u32)d), m);
                gnn_sort(out, k);
            } else {
                gnn_floyd(&s, m, k, out);
            }
            for (i64 d = 0; d < k; d++) out[d] += a;
        }
        out += k;
    }
}

// gnnrun_sample_sources writes src[k], the global ID of the source of CSC
// position pos[k]: its local ID from idx32 or, when that is null, idx64.
extern "C" __global__ void gnnrun_sample_sources(const i64 *pos, i64 ne, const int *idx32, const i64 *idx64,
                                                 i64 num_inner, i64 lo, const i64 *l2g, i64 *src) {
    i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= ne) return;
    i64 q = pos[k];
    i64 l = idx32 ? (i64)idx32[q] : idx64[q];
    src[k] = l < num_inner ? lo + l : l2g[l];
}
