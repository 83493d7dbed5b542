// Compaction of a layer's sampled edges into a block, numbered as
// sampler/block.go's buildBlock numbers them: the nd destinations first,
// in their order, then every source not among them in the order of its
// first appearance in the edge list; Src and Dst block-local int32
// indices. Done in parallel through an open-addressing hash table in
// global memory, with every decision a minimum (the first appearance),
// never an arrival order, so any order of threads gives the same block.
//
// Appearance a of a node is destination a (a < nd) or the source of edge
// a-nd. A layer is five launches and a scan (scan.cuh):
//
//	gnnrun_compact_clear    empty the table (cap slots, a power of two)
//	gnnrun_compact_insert   per appearance: its node's slot, and the
//	                        slot's first appearance (atomic minimum)
//	gnnrun_compact_flags    per edge: 1 when it is its source's first
//	                        appearance (and counts destinations listed
//	                        twice, which buildBlock refuses)
//	scan(flags) -> fresh    the new sources' ranks; fresh[ne] how many
//	gnnrun_compact_number   nodes[] and each slot's block-local ID
//	gnnrun_compact_relabel  per edge: Src and Dst
#include "compat.h"
#include "scan.cuh"

// An empty slot's key: global node IDs are never negative.
#define GNN_EMPTY_KEY (~0ull)
#define GNN_NO_APPEARANCE 0x7fffffffffffffffll

// gnn_hash is splitmix64's finaliser (graph.Mix64).
GNN_INLINE u64 gnn_hash(u64 x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// gnn_appearance returns the node of appearance a.
GNN_INLINE i64 gnn_appearance(const i64 *dst, i64 nd, const i64 *src, i64 a) { return a < nd ? dst[a] : src[a - nd]; }

// gnnrun_compact_clear empties the table's cap slots and zeroes *dups.
extern "C" __global__ void gnnrun_compact_clear(u64 *keys, i64 *first, i64 cap, u64 *dups) {
    i64 s = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= cap) return;
    keys[s] = GNN_EMPTY_KEY;
    first[s] = GNN_NO_APPEARANCE;
    if (s == 0) *dups = 0;
}

// gnnrun_compact_insert finds or claims the slot of each appearance's node
// (linear probing from its hash; mask is cap-1), writes it to slot[a], and
// lowers the slot's first appearance to a.
extern "C" __global__ void gnnrun_compact_insert(const i64 *dst, i64 nd, const i64 *src, i64 ne, u64 *keys,
                                                 i64 *first, i64 mask, i64 *slot) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= nd + ne) return;
    u64 key = (u64)gnn_appearance(dst, nd, src, a);
    u64 h = gnn_hash(key) & (u64)mask;
    for (;;) {
        u64 prev = atomicCASU64(&keys[h], GNN_EMPTY_KEY, key);
        if (prev == GNN_EMPTY_KEY || prev == key) break;
        h = (h + 1) & (u64)mask;
    }
    slot[a] = (i64)h;
    atomicMinI64(&first[h], a);
}

// gnnrun_compact_flags writes flags[k] = 1 when edge k's source appears
// there first (never when it is a destination: those appear before every
// edge), else 0, and adds to *dups each destination whose node was listed
// before it.
extern "C" __global__ void gnnrun_compact_flags(i64 nd, i64 ne, const i64 *slot, const i64 *first, i64 *flags,
                                                u64 *dups) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= nd + ne) return;
    bool firstHere = first[slot[a]] == a;
    if (a < nd) {
        if (!firstHere) atomicAddU64(dups, 1);
    } else {
        flags[a - nd] = firstHere ? 1 : 0;
    }
}

// gnnrun_compact_number writes the block's nodes, destinations first and
// then the new sources at nd+fresh[k], and the block-local ID of every
// slot (by the thread of its node's first appearance only).
extern "C" __global__ void gnnrun_compact_number(const i64 *dst, i64 nd, const i64 *src, i64 ne, const i64 *slot,
                                                 const i64 *first, const i64 *fresh, int *ids, i64 *nodes) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= nd + ne) return;
    i64 s = slot[a];
    if (first[s] != a) return;
    i64 id = a < nd ? a : nd + fresh[a - nd];
    ids[s] = (int)id;
    nodes[id] = gnn_appearance(dst, nd, src, a);
}

// gnnrun_compact_relabel writes each edge's block-local source and
// destination: edge k belongs to the last destination i with
// offs[i] <= k (its edges are offs[i]..offs[i+1]).
extern "C" __global__ void gnnrun_compact_relabel(i64 nd, i64 ne, const i64 *slot, const int *ids, const i64 *offs,
                                                  int *bsrc, int *bdst) {
    i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= ne) return;
    bsrc[k] = ids[slot[nd + k]];
    i64 lo = 0, hi = nd - 1;
    while (lo < hi) {
        i64 mid = lo + (hi - lo + 1) / 2;
        if (offs[mid] <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    bdst[k] = (int)lo;
}
