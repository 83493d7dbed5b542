// The CPU harness of sample.cu, compact.cu and scan.cuh: it launches them
// through cpu.h with the launches, grids and blocks cuda/sample_gpu.go
// makes, on buffers filled with garbage as cuMemAlloc's may be, so the
// tests in package sampler can compare the results with the Go sampler's,
// bit for bit, in both orders of threads.
//
//	sample OP DIR [name=value ...] [-- OP DIR [name=value ...]] ...
//	sample @JOBS
//
// runs each job in turn, given on the command line or one a line in file
// JOBS (one process for many: a sanitized process takes a tenth of a
// second to start and end). A job reads the op's arrays from
// DIR/<name>.bin (raw little-endian), writes its results there, and
// prints a status line:
//
//	scan     x (int64) -> out (int64, n+1); prints "ok"
//	compact  dst, offs (nd+1), src (int64) -> nodes (int64), bsrc, bdst
//	         (int32); prints "ok" or "duplicate N" (N destinations listed
//	         twice, and no block)
//	layer    tptr, idx32 (int32) or idx64, l2g, frontier (int64), fanouts
//	         (int32, one per edge type) -> offs, pos, src, and the block as
//	         compact writes it; values lo, num_inner, etypes, replace,
//	         layer, key0, key1
//
// Values common to all: chunk (the scan's chunk, default 128) and reverse
// (1: every launch runs its threads in descending order).
#include <stdio.h>
#include <stdlib.h>

#include "compat.h"
#include "compact.cu"
#include "sample.cu"

[[noreturn]] static void fail(const char *what, const char *detail) {
    fprintf(stderr, "sample harness: %s %s\n", what, detail);
    exit(2);
}

// Every buffer of a job, freed when it ends.
static void *allocated[64];
static int nallocated;

static void free_all() {
    for (int i = 0; i < nallocated; i++) free(allocated[i]);
    nallocated = 0;
}

// buf is device memory as the kernels see it: exactly n elements (so
// ASan reports a read or write past them), uninitialised (garbage).
template <typename T>
struct buf {
    T *p = nullptr;
    i64 n = 0;
    buf() = default;
    explicit buf(i64 count) { alloc(count); }
    void alloc(i64 count) {
        if (nallocated == (int)(sizeof allocated / sizeof allocated[0])) fail("too many buffers", "");
        n = count;
        p = (T *)malloc((size_t)count * sizeof(T));
        if (!p && count) fail("out of memory", "");
        memset(p, 0xab, (size_t)count * sizeof(T));
        allocated[nallocated++] = p;
    }
};

static const char *dir;

static void path_of(char *path, size_t size, const char *name) {
    if (snprintf(path, size, "%s/%s.bin", dir, name) >= (int)size) fail("path too long:", dir);
}

// load reads DIR/<name>.bin into b; a missing optional file leaves b
// empty and returns false.
template <typename T>
static bool load(buf<T> &b, const char *name, bool optional = false) {
    char path[4096];
    path_of(path, sizeof path, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (optional) return false;
        fail("cannot open", path);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < 0 || size % (long)sizeof(T)) fail("bad size of", path);
    b.alloc(size / (long)sizeof(T));
    if (size && fread(b.p, 1, (size_t)size, f) != (size_t)size) fail("cannot read", path);
    fclose(f);
    return true;
}

template <typename T>
static void save(const char *name, const T *p, i64 n) {
    char path[4096];
    path_of(path, sizeof path, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, sizeof(T), (size_t)n, f) != (size_t)n) || fclose(f)) fail("cannot write", path);
}

// The launches, as cuda/sample_gpu.go makes them: blocks of 256 threads,
// enough blocks for n threads, and no launch for none.
static const unsigned kBlock = 256;

template <typename... P, typename... A>
static void launch(void (*kernel)(P...), i64 n, A... args) {
    if (n > 0) gnn_launch(kernel, (unsigned)((n + kBlock - 1) / kBlock), kBlock, args...);
}

// scan_scratch is how many int64s scan needs beyond out: c+1 per level.
static i64 scan_scratch(i64 n, i64 chunk) {
    i64 s = 0;
    while (n > chunk) {
        n = (n + chunk - 1) / chunk;
        s += n + 1;
    }
    return s;
}

// scan writes the exclusive prefix sums of x[0..n) to out[0..n] (scan.cuh).
static void scan(const i64 *x, i64 n, i64 chunk, i64 *out, i64 *scratch) {
    if (n <= chunk) {
        gnn_launch(gnnrun_scan_chunks, 1, 1, x, n, chunk, (const i64 *)nullptr, out);
        return;
    }
    i64 c = (n + chunk - 1) / chunk;
    i64 *sums = scratch;
    launch(gnnrun_scan_sums, c, x, n, chunk, sums);
    scan(sums, c, chunk, sums, scratch + c + 1);
    launch(gnnrun_scan_chunks, c, x, n, chunk, (const i64 *)sums, out);
}

// table_cap is the hash table's size: a power of two, at least twice the
// appearances.
static i64 table_cap(i64 appearances) {
    i64 cap = 16;
    while (cap < 2 * appearances) cap *= 2;
    return cap;
}

static i64 chunk = 128;

// compact compacts the edges (offs, src) of destinations dst[0..nd) and
// writes the block, or says how many destinations are listed twice.
static void compact(const i64 *dst, i64 nd, const i64 *offs, const i64 *src, i64 ne) {
    i64 app = nd + ne, cap = table_cap(app);
    if (app > 0x7fffffff) fail("block too large for int32 indices", "");
    buf<u64> keys(cap), dups(1);
    buf<i64> first(cap), slot(app), fresh(ne + 1), scratch(scan_scratch(ne, chunk)), nodes(app);
    buf<int> ids(cap), bsrc(ne), bdst(ne);
    launch(gnnrun_compact_clear, cap, keys.p, first.p, cap, dups.p);
    launch(gnnrun_compact_insert, app, dst, nd, src, ne, keys.p, first.p, cap - 1, slot.p);
    launch(gnnrun_compact_flags, app, nd, ne, (const i64 *)slot.p, (const i64 *)first.p, fresh.p, dups.p);
    if (*dups.p) {
        printf("duplicate %llu\n", *dups.p);
        return;
    }
    scan(fresh.p, ne, chunk, fresh.p, scratch.p);
    launch(gnnrun_compact_number, app, dst, nd, src, ne, (const i64 *)slot.p, (const i64 *)first.p,
           (const i64 *)fresh.p, ids.p, nodes.p);
    launch(gnnrun_compact_relabel, ne, nd, ne, (const i64 *)slot.p, (const int *)ids.p, offs, bsrc.p, bdst.p);
    save("nodes", nodes.p, nd + fresh.p[ne]);
    save("bsrc", bsrc.p, ne);
    save("bdst", bdst.p, ne);
    printf("ok\n");
}

// value returns the job's value of name (argv[0] is the op, argv[1] the
// directory).
static i64 value(int argc, char **argv, const char *name, i64 def, bool required = false) {
    size_t len = strlen(name);
    for (int i = 2; i < argc; i++) {
        if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=') return strtoll(argv[i] + len + 1, nullptr, 0);
    }
    if (required) fail("missing value", name);
    return def;
}

static void op_scan() {
    buf<i64> x;
    load(x, "x");
    buf<i64> out(x.n + 1), scratch(scan_scratch(x.n, chunk));
    scan(x.p, x.n, chunk, out.p, scratch.p);
    save("out", out.p, out.n);
    printf("ok\n");
}

static void op_compact() {
    buf<i64> dst, offs, src;
    load(dst, "dst");
    load(offs, "offs");
    load(src, "src");
    if (offs.n != dst.n + 1 || offs.p[dst.n] != src.n) fail("offs does not match dst and src", "");
    compact(dst.p, dst.n, offs.p, src.p, src.n);
}

static void op_layer(int argc, char **argv) {
    i64 lo = value(argc, argv, "lo", 0, true), inner = value(argc, argv, "num_inner", 0, true);
    int etypes = (int)value(argc, argv, "etypes", 1), replace = (int)value(argc, argv, "replace", 0);
    int layer = (int)value(argc, argv, "layer", 0, true);
    u32 k0 = (u32)value(argc, argv, "key0", 0, true), k1 = (u32)value(argc, argv, "key1", 0, true);
    buf<i64> tptr, l2g, frontier, idx64;
    buf<int> fanouts, idx32;
    load(tptr, "tptr");
    load(l2g, "l2g");
    load(frontier, "frontier");
    load(fanouts, "fanouts");
    bool narrow = load(idx32, "idx32", true);
    if (!narrow) load(idx64, "idx64");
    if (tptr.n != inner * etypes + 1 || fanouts.n != etypes) fail("tptr or fanouts do not match", "");
    i64 n = frontier.n;
    for (i64 i = 0; i < n; i++) {
        if (frontier.p[i] < lo || frontier.p[i] >= lo + inner) fail("frontier node outside the partition", "");
    }
    buf<i64> offs(n + 1), scratch(scan_scratch(n, chunk));
    launch(gnnrun_sample_count, n, (const i64 *)frontier.p, n, lo, (const i64 *)tptr.p, etypes,
           (const int *)fanouts.p, replace, offs.p);
    scan(offs.p, n, chunk, offs.p, scratch.p);
    i64 ne = offs.p[n];
    buf<i64> pos(ne), src(ne);
    launch(gnnrun_sample_draw, n, (const i64 *)frontier.p, n, lo, (const i64 *)tptr.p, etypes,
           (const int *)fanouts.p, replace, k0, k1, layer, (const i64 *)offs.p, pos.p);
    launch(gnnrun_sample_sources, ne, (const i64 *)pos.p, ne, (const int *)(narrow ? idx32.p : nullptr),
           (const i64 *)(narrow ? nullptr : idx64.p), inner, lo, (const i64 *)l2g.p, src.p);
    save("offs", offs.p, n + 1);
    save("pos", pos.p, ne);
    save("src", src.p, ne);
    compact(frontier.p, n, offs.p, src.p, ne);
}

static void job(int argc, char **argv) {
    if (argc < 2) fail("usage:", "sample scan|compact|layer DIR [name=value ...] [-- ...]");
    const char *op = argv[0];
    dir = argv[1];
    chunk = value(argc, argv, "chunk", 128);
    if (chunk < 2) fail("chunk must be at least 2", "");
    gnn_reverse = value(argc, argv, "reverse", 0) != 0;
    if (strcmp(op, "scan") == 0)
        op_scan();
    else if (strcmp(op, "compact") == 0)
        op_compact();
    else if (strcmp(op, "layer") == 0)
        op_layer(argc, argv);
    else
        fail("unknown op", op);
    free_all();
}

// run_jobs runs the jobs of argv[0..argc), separated by "--".
static void run_jobs(int argc, char **argv) {
    for (int i = 0; i < argc;) {
        int j = i;
        while (j < argc && strcmp(argv[j], "--") != 0) j++;
        job(j - i, argv + i);
        i = j + 1;
    }
}

// run_file runs the jobs of file path, one a line, as words separated by
// spaces.
static void run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) fail("cannot open", path);
    static char line[1 << 16];
    char *words[256];
    while (fgets(line, sizeof line, f)) {
        int n = 0;
        for (char *w = strtok(line, " \t\r\n"); w; w = strtok(nullptr, " \t\r\n")) {
            if (n == (int)(sizeof words / sizeof words[0])) fail("too many words in a line of", path);
            words[n++] = w;
        }
        if (n > 0) job(n, words);
    }
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc == 2 && argv[1][0] == '@')
        run_file(argv[1] + 1);
    else
        run_jobs(argc - 1, argv + 1);
    if (argc < 2) job(0, argv);
    return 0;
}

