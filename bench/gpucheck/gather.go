package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"gnnrun/cuda"
)

// gatherWidths are step 2's row widths in bytes: 128, 512 and 4096 take
// the row kernel's 16-byte words, 100 its 4-byte words.
var gatherWidths = []int{128, 512, 4096, 100}

// gatherRuns is how many timed runs each operation gets after its
// warm-up; the best counts.
const gatherRuns = 5

// gatherGoal is the least GatherPinned / HtoD that counts as the
// zero-copy gather running at PCIe speed.
const gatherGoal = 0.8

// widthResult is step 2's figures at one row width, in GB/s (10^9 bytes
// a second) of the rows' bytes.
type widthResult struct {
	RowBytes int   `json:"row_bytes"`
	Rows     int   `json:"rows"`
	Bytes    int64 `json:"bytes"`
	// GatherPinned: the zero-copy gather of random rows from the
	// registered table; it includes copying its two index arrays (8 bytes
	// a row) to the device, as every call does.
	GatherPinned float64 `json:"gather_pinned_gbs"`
	// HtoD: cuMemcpyHtoD of as many contiguous bytes of the registered
	// table.
	HtoD float64 `json:"htod_gbs"`
	// ScatterRows: the same rows gathered on the host beforehand, copied
	// to the device and scattered by the kernel (gnnrun's device stage
	// today); HostGather: that gather on the host, one thread.
	ScatterRows float64 `json:"scatter_rows_gbs"`
	HostGather  float64 `json:"host_gather_gbs"`
	// CopyRows: the same rows from a copy of the table in device memory.
	CopyRows float64 `json:"copy_rows_gbs"`
	Ratio    float64 `json:"gather_over_htod"`
	// Verified lists the operations whose output was copied back and
	// compared with the table's rows.
	Verified []string `json:"verified"`
}

// gather is step 2: the bandwidth of the device layer's row operations,
// in process (the CUDA backend; the host backend in a dry run), from a
// table in base pages, then GatherPinned again from one advised to take
// huge pages: a random row is a page the GPU must translate, and with
// 4 KiB pages nearly every row is one it has not seen.
func (c *checker) gather(st *Step) error {
	st.Commands = append(st.Commands, c.reproduce(2))
	kind := cuda.CUDA
	if c.o.dryRun {
		kind = cuda.Host
	}
	table, gathered := c.gatherSizes(st)
	dev, err := cuda.Open(kind, 0)
	if err != nil {
		return err
	}
	b, err := newGatherBench(dev, table, gathered, false)
	if err != nil {
		return errors.Join(err, dev.Close())
	}
	base, err := c.gatherWidths(st, b)
	if err = errors.Join(err, b.close()); err == nil {
		err = c.gatherHuge(st, dev, table, gathered, base)
	}
	return errors.Join(err, dev.Close())
}

// gatherWidths measures every width and records its figures.
func (c *checker) gatherWidths(st *Step, b *gatherBench) (results []widthResult, err error) {
	defer func() { st.detail("widths", results) }()
	for _, w := range gatherWidths {
		r, err := b.width(w, false)
		if err != nil {
			return results, fmt.Errorf("rows of %d bytes: %w", w, err)
		}
		results = append(results, r)
		st.Figures = append(st.Figures, fig(fmt.Sprintf("GatherPinned, %d-byte rows", w), r.GatherPinned, "GB/s").
			ratio("GatherPinned / HtoD", r.Ratio, ">=", gatherGoal).
			withNote("%s M rows/s; HtoD %s, ScatterRows %s (host gather before it %s), CopyRows on the device %s GB/s",
				num(r.GatherPinned*1e3/float64(w)), num(r.HtoD), num(r.ScatterRows), num(r.HostGather), num(r.CopyRows)))
	}
	return results, nil
}

// gatherHuge measures GatherPinned at every width from a table advised to
// take huge pages, against the base table's HtoD at that width, and says
// how much of the table the kernel gave huge pages.
func (c *checker) gatherHuge(st *Step, dev cuda.Device, table, gathered int64, base []widthResult) error {
	b, err := newGatherBench(dev, table, gathered, true)
	if err != nil {
		return err
	}
	var results []widthResult
	defer func() { st.detail("widths_huge_pages", results) }()
	huge, herr := hugeBytes(b.table)
	if herr != nil {
		st.note("the huge-page table's huge pages unknown: %v", herr)
	} else {
		st.note("the table advised to take huge pages (MADV_HUGEPAGE) has %d of its %d MiB in them", huge>>20, table>>20)
	}
	for i, w := range gatherWidths {
		r, err := b.width(w, true)
		if err != nil {
			return errors.Join(fmt.Errorf("rows of %d bytes, huge pages: %w", w, err), b.close())
		}
		r.HtoD = base[i].HtoD
		r.Ratio = r.GatherPinned / r.HtoD
		results = append(results, r)
		st.Figures = append(st.Figures, fig(fmt.Sprintf("GatherPinned, %d-byte rows, table in huge pages", w), r.GatherPinned, "GB/s").
			ratio("GatherPinned / HtoD", r.Ratio, ">=", gatherGoal).
			withNote("%s M rows/s, %.2fx the base-page table's", num(r.GatherPinned*1e3/float64(w)), r.GatherPinned/base[i].GatherPinned))
	}
	return b.close()
}

// hugeBytes reads from /proc/self/smaps how many bytes of the mapping
// that starts at b's first byte are huge pages (AnonHugePages).
func hugeBytes(b []byte) (int64, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&b[0])))
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasPrefix(line, start)
			continue
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); in && ok {
			return kiloBytes(v)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/self/smaps has no mapping at %#x", uintptr(unsafe.Pointer(&b[0])))
}

// gatherSizes returns the table's and each gather's bytes: the flags',
// halved while the host's available memory cannot hold the table, the
// gather's staging, copy-back and overwrite buffers and 512 MiB more.
func (c *checker) gatherSizes(st *Step) (table, gathered int64) {
	table, gathered = int64(c.o.tableMiB)<<20, int64(c.o.gatherMiB)<<20
	avail, err := memAvailable()
	if err != nil {
		st.note("host memory available unknown (%v): the table is %d MiB as asked", err, table>>20)
		return table, gathered
	}
	for table+3*gathered+512<<20 > avail && table > 64<<20 {
		table /= 2
		gathered = min(gathered, table/2)
	}
	if table != int64(c.o.tableMiB)<<20 {
		st.note("the host has %d MiB available: the table is %d MiB, each gather %d MiB", avail>>20, table>>20, gathered>>20)
	}
	st.detail("table_bytes", table)
	st.detail("gather_bytes", gathered)
	return table, gathered
}

// kiloBytes parses a /proc value such as "  1024 kB" into bytes.
func kiloBytes(v string) (int64, error) {
	kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	return kb << 10, err
}

// memAvailable reads MemAvailable from /proc/meminfo, in bytes.
func memAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			return kiloBytes(v)
		}
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemAvailable")
}

// gatherBench is step 2's memory: a host table of random rows, page-aligned
// memory of its own registered with the device, its copy in device
// memory, and the destination and host buffers of one gather.
type gatherBench struct {
	dev      cuda.Device
	s        cuda.Stream
	table    []byte // mmap'd, registered as pinned
	pinned   cuda.Pinned
	devTable cuda.Buffer
	dst      cuda.Buffer
	// stage holds rows gathered on the host (ScatterRows' input), back a
	// copy of dst, junk what overwrites dst before an output is checked
	// (so that an operation which writes nothing cannot pass on an
	// earlier one's rows).
	stage, back, junk []byte
}

func newGatherBench(dev cuda.Device, table, gathered int64, huge bool) (b *gatherBench, err error) {
	b = &gatherBench{dev: dev}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.close())
		}
	}()
	if b.table, err = syscall.Mmap(-1, 0, int(table), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS); err != nil {
		return b, fmt.Errorf("mmap of a %d MiB table: %w", table>>20, err)
	}
	if huge {
		// Advice only: where the kernel refuses it, hugeBytes says so.
		_ = unix.Madvise(b.table, unix.MADV_HUGEPAGE)
	}
	rand.NewChaCha8([32]byte{'g', 'p', 'u'}).Read(b.table)
	if b.pinned, err = dev.Register(b.table); err != nil {
		return b, err
	}
	if b.s, err = dev.NewStream(); err != nil {
		return b, err
	}
	if b.devTable, err = dev.Alloc(table); err != nil {
		return b, err
	}
	if b.dst, err = dev.Alloc(gathered); err != nil {
		return b, err
	}
	if err = b.s.CopyToDevice(b.devTable, 0, b.table); err == nil {
		err = b.s.Sync()
	}
	b.stage, b.back, b.junk = make([]byte, gathered), make([]byte, gathered), bytes.Repeat([]byte{0xa5}, int(gathered))
	return b, err
}

// close frees what newGatherBench made, in the order the device needs.
func (b *gatherBench) close() error {
	var errs []error
	if b.s != nil {
		errs = append(errs, b.s.Close())
	}
	for _, buf := range []cuda.Buffer{b.dst, b.devTable} {
		if buf != nil {
			errs = append(errs, buf.Free())
		}
	}
	if b.pinned != nil {
		errs = append(errs, b.pinned.Unregister())
	}
	if b.table != nil {
		errs = append(errs, syscall.Munmap(b.table))
	}
	*b = gatherBench{dev: b.dev}
	return errors.Join(errs...)
}

// width times each operation on as many random rows of w bytes as fill
// the destination, and checks each one's output once.
func (b *gatherBench) width(w int, pinnedOnly bool) (widthResult, error) {
	n := int(b.dst.Len()) / w
	nb := int64(n) * int64(w)
	r := widthResult{RowBytes: w, Rows: n, Bytes: nb}
	rng := rand.New(rand.NewPCG(uint64(w), 2))
	rows := int(int64(len(b.table)) / int64(w))
	src, dst := make([]int32, n), make([]int32, n)
	for k := range src {
		src[k], dst[k] = int32(rng.IntN(rows)), int32(k)
	}
	gatherHost := func() error {
		for k, s := range src {
			copy(b.stage[k*w:(k+1)*w], b.table[int(s)*w:(int(s)+1)*w])
		}
		return nil
	}
	gathered := func(out []byte) error { return sameRows(out, b.table, src, w) }
	ops := []struct {
		name  string
		gbs   *float64
		run   func() error
		check func([]byte) error
	}{
		{"GatherPinned", &r.GatherPinned, func() error { return b.s.GatherPinned(b.dst, dst, b.pinned, src, w) }, gathered},
		{"HtoD", &r.HtoD, func() error { return b.s.CopyToDevice(b.dst, 0, b.table[:nb]) }, func(out []byte) error {
			if i := firstDiff(out, b.table[:nb]); i >= 0 {
				return fmt.Errorf("byte %d differs from the table's", i)
			}
			return nil
		}},
		{"host gather", &r.HostGather, gatherHost, nil},
		{"ScatterRows", &r.ScatterRows, func() error { return b.s.ScatterRows(b.dst, dst, b.stage[:nb], w) }, gathered},
		{"CopyRows", &r.CopyRows, func() error { return b.s.CopyRows(b.dst, dst, b.devTable, src, w) }, gathered},
	}
	if pinnedOnly {
		ops = ops[:1]
	}
	for _, op := range ops {
		t, err := b.best(op.run)
		if err != nil {
			return r, fmt.Errorf("%s: %w", op.name, err)
		}
		*op.gbs = float64(nb) / t.Seconds() / 1e9
		if op.check == nil {
			continue
		}
		if err := b.verify(op.run, op.check, nb); err != nil {
			return r, fmt.Errorf("%s wrote wrong rows: %w", op.name, err)
		}
		r.Verified = append(r.Verified, op.name)
	}
	if !pinnedOnly {
		r.Ratio = r.GatherPinned / r.HtoD
	}
	return r, nil
}

// best runs op once to warm up, then gatherRuns times, each until the
// stream is done, and returns the shortest.
func (b *gatherBench) best(op func() error) (time.Duration, error) {
	var best time.Duration
	for i := range gatherRuns + 1 {
		start := time.Now()
		err := op()
		if err == nil {
			err = b.s.Sync()
		}
		if err != nil {
			return 0, err
		}
		if t := time.Since(start); i > 0 && (best == 0 || t < best) {
			best = t
		}
	}
	return best, nil
}

// verify overwrites the destination's first nb bytes with junk, runs op,
// copies them back and checks them.
func (b *gatherBench) verify(op func() error, check func([]byte) error, nb int64) error {
	err := b.s.CopyToDevice(b.dst, 0, b.junk[:nb])
	if err == nil {
		err = op()
	}
	if err == nil {
		err = b.s.CopyToHost(b.back[:nb], b.dst, 0)
	}
	if err == nil {
		err = b.s.Sync()
	}
	if err != nil {
		return err
	}
	return check(b.back[:nb])
}

// sameRows checks that row k of out is row src[k] of table.
func sameRows(out, table []byte, src []int32, w int) error {
	for k, s := range src {
		got, want := out[k*w:(k+1)*w], table[int(s)*w:(int(s)+1)*w]
		if i := firstDiff(got, want); i >= 0 {
			return fmt.Errorf("row %d (the table's row %d) differs at byte %d: %#x, want %#x", k, s, i, got[i], want[i])
		}
	}
	return nil
}

// firstDiff is the first index where a and b (of one length) differ, or -1.
func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
