// rows.cc: the CPU harness of rows.cu's gnnrun_copy_rows (cuda/harness_test.go
// runs it under ASan and UBSan and compares its output with the host
// backend's, byte for byte).
//
//   rows DIR
//
// DIR/cases holds one launch per line, fields separated by spaces:
//
//   name n row_bytes grid block reverse dst_len dst_off src_len src_off src_rows
//
// The destination is dst_len bytes (the file DIR/name.dst) placed dst_off
// bytes after a 64-byte boundary, the offset filled with a guard pattern;
// the source likewise (DIR/name.src, src_len bytes at src_off), or, when
// src_len is -1, the destination itself (a move within a buffer).
// DIR/name.dst_rows holds the n destination rows and, when src_rows is 1,
// DIR/name.src_rows the n source rows (int32, little-endian); with src_rows
// 0 the kernel gets a null source index (row k from row k, as ScatterRows
// launches it). The kernel runs over grid blocks of block threads (the Go
// launcher's arithmetic, passed in), its threads in descending order when
// reverse is 1 (cpu.h's gnn_reverse).
//
// It writes DIR/name.out, the destination's dst_len bytes after the launch,
// and DIR/name.word, one byte per row: the word size (16, 8, 4 or 1) the
// kernel copied that row in. It fails when the kernel wrote the guard bytes
// or the source, when the threads of a row disagree on the word size, and
// when a row was not copied at all.
//
// It is C-like C++: kernelharness links with clang, not clang++, so no
// C++ library.
#include "compat.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

// The word size each row's threads reported (0: none yet), and whether two
// threads of a row disagreed or named a row out of range.
static unsigned char *row_word;
static i64 row_count;
static bool word_conflict;

static void record_word(i64 row, int word) {
    if (row < 0 || row >= row_count) {
        word_conflict = true;
        return;
    }
    if (row_word[row] != 0 && row_word[row] != word) word_conflict = true;
    row_word[row] = (unsigned char)word;
}

#define GNN_ROW_PATH(row, word_bytes) record_word(row, word_bytes)
#include "../rows.cu"

static const unsigned char guard = 0xA5;

[[noreturn]] __attribute__((format(printf, 1, 2))) static void fail(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "rows: ");
    vfprintf(stderr, format, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void *alloc(size_t n) {
    void *p = malloc(n > 0 ? n : 1);
    if (!p) fail("out of memory");
    return p;
}

// read_file returns the contents of dir/name+ext and their length in *n.
static unsigned char *read_file(const char *dir, const char *name, const char *ext, long long *n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) fail("cannot open %s", path);
    long size = ftell(f);
    rewind(f);
    unsigned char *b = (unsigned char *)alloc((size_t)size);
    if (size < 0 || fread(b, 1, (size_t)size, f) != (size_t)size) fail("cannot read %s", path);
    fclose(f);
    *n = size;
    return b;
}

static void write_file(const char *dir, const char *name, const char *ext, const unsigned char *p, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) fail("cannot write %s", path);
}

static int *read_rows(const char *dir, const char *name, const char *ext, int n) {
    long long size;
    unsigned char *b = read_file(dir, name, ext, &size);
    if (size != 4LL * n) fail("%s/%s%s does not hold %d rows", dir, name, ext, n);
    int *rows = (int *)alloc(4 * (size_t)n);
    for (int k = 0; k < n; k++)
        rows[k] = (int)((u32)b[4 * k] | (u32)b[4 * k + 1] << 8 | (u32)b[4 * k + 2] << 16 | (u32)b[4 * k + 3] << 24);
    free(b);
    return rows;
}

// placed returns a copy of the n bytes at contents placed off bytes after
// a 64-byte boundary, in an allocation of exactly off+n bytes (so
// AddressSanitizer sees a write past the end) whose first off bytes are
// the guard; *base is the allocation.
static unsigned char *placed(const unsigned char *contents, long long n, long long off, void **base) {
    size_t size = (size_t)(off + n);
    if (posix_memalign(base, 64, size > 0 ? size : 1) != 0) fail("out of memory");
    unsigned char *p = (unsigned char *)*base;
    memset(p, guard, (size_t)off);
    memcpy(p + off, contents, (size_t)n);
    return p + off;
}

static bool guard_intact(const unsigned char *p, long long off) {
    for (long long i = 1; i <= off; i++)
        if (p[-i] != guard) return false;
    return true;
}

static void run_case(const char *dir, const char *line) {
    char name[256];
    int n, grid, block, reverse, src_rows_given;
    long long row_bytes, dst_len, dst_off, src_len, src_off, size;
    if (sscanf(line, "%255s %d %lld %d %d %d %lld %lld %lld %lld %d", name, &n, &row_bytes, &grid, &block, &reverse,
               &dst_len, &dst_off, &src_len, &src_off, &src_rows_given) != 11 ||
        n <= 0 || dst_off < 0 || src_off < 0)
        fail("bad case line: %s", line);
    unsigned char *dst_in = read_file(dir, name, ".dst", &size);
    if (size != dst_len) fail("%s.dst does not hold %lld bytes", name, dst_len);
    int *dst_rows = read_rows(dir, name, ".dst_rows", n);
    int *src_rows = src_rows_given ? read_rows(dir, name, ".src_rows", n) : nullptr;

    void *dst_base = nullptr, *src_base = nullptr;
    unsigned char *dst = placed(dst_in, dst_len, dst_off, &dst_base);
    const unsigned char *src = dst;
    unsigned char *src_in = nullptr;
    if (src_len >= 0) {
        src_in = read_file(dir, name, ".src", &size);
        if (size != src_len) fail("%s.src does not hold %lld bytes", name, src_len);
        src = placed(src_in, src_len, src_off, &src_base);
    }

    row_word = (unsigned char *)alloc((size_t)n);
    memset(row_word, 0, (size_t)n);
    row_count = n;
    word_conflict = false;
    gnn_reverse = reverse != 0;
    gnn_launch(gnnrun_copy_rows, (unsigned)grid, (unsigned)block, (char *)dst, (const int *)dst_rows,
               (const char *)src, (const int *)src_rows, n, (i64)row_bytes);

    if (!guard_intact(dst, dst_off)) fail("%s: the kernel wrote before the destination", name);
    if (src_in && (!guard_intact(src, src_off) || memcmp(src, src_in, (size_t)src_len) != 0))
        fail("%s: the kernel wrote the source", name);
    if (word_conflict) fail("%s: the threads of a row copied it in different word sizes", name);
    for (int k = 0; k < n; k++)
        if (row_word[k] == 0) fail("%s: row %d was not copied", name, k);
    write_file(dir, name, ".out", dst, (size_t)dst_len);
    write_file(dir, name, ".word", row_word, (size_t)n);
    free(row_word);
    free(dst_base);
    free(src_base);
    free(dst_in);
    free(src_in);
    free(dst_rows);
    free(src_rows);
}

int main(int argc, char **argv) {
    if (argc != 2) fail("usage: rows DIR");
    long long size;
    char *cases = (char *)read_file(argv[1], "cases", "", &size);
    int ran = 0;
    for (char *line = cases, *end; line < cases + size; line = end + 1) {
        end = (char *)memchr(line, '\n', (size_t)(cases + size - line));
        if (!end) fail("the cases file does not end in a newline");
        *end = 0;
        if (*line) run_case(argv[1], line), ran++;
    }
    free(cases);
    printf("%d launches\n", ran);
    return 0;
}
