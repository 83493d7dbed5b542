package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"gnnrun/collective"
	"gnnrun/internal/proc"
	"gnnrun/rank"
	"gnnrun/report"
)

// commonFlags are taken by every command.
type commonFlags struct {
	verbose    int
	report     string
	maxMessage int
	wireZstd   int
	cpuProfile string
	memProfile string
}

func (f *commonFlags) register(fs *pflag.FlagSet) {
	fs.CountVarP(&f.verbose, "verbose", "v", "more log detail: -v logs info from every rank, -vv adds debug")
	fs.StringVar(&f.report, "report", "", "write per-stage wall time, bytes sent/received, peak RSS (shared pages counted by every rank mapping them) and proportional set size of every rank to this JSON file")
	fs.IntVar(&f.maxMessage, "max-message", collective.DefaultMaxMessage, "largest message to one peer in bytes; bigger payloads go in rounds")
	fs.IntVar(&f.wireZstd, "wire-zstd", 0, "compress messages between ranks of at least this many bytes with zstd (0: off)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of each rank to PREFIX.<rank> (for go tool pprof)")
	fs.StringVar(&f.memProfile, "memprofile", "", "write a Go heap profile of each rank, taken at its largest live heap, to PREFIX.<rank> (for go tool pprof)")
}

// env is what a command runs with: the world, logging, stage recording,
// progress, and output that only rank 0 prints.
type env struct {
	comm  *collective.Comm
	log   *slog.Logger
	rec   *report.Recorder
	meter *report.Meter
	out   io.Writer // stdout on rank 0, discarded elsewhere
	flags commonFlags
	cmd   string
	// args are the command's arguments; dashAt is where "--" was among
	// them (-1: none), for commands that take another command after it.
	args   []string
	dashAt int
}

func newEnv(c rank.Comm, cmd string, f commonFlags) (*env, error) {
	cc, err := collective.New(c, collective.MaxMessage(f.maxMessage), collective.CompressAbove(f.wireZstd))
	if err != nil {
		return nil, err
	}
	e := &env{comm: cc, flags: f, cmd: cmd, out: io.Discard}
	if c.Rank() == 0 {
		e.out = os.Stdout
	}
	e.log = newLogger(c, f.verbose)
	e.rec = report.NewRecorder(cc)
	e.meter = report.NewMeter(c.Rank() == 0, e.out)
	// The report is written at the end, by rank 0: a path it cannot write
	// to must fail before the work, not after it.
	if f.report != "" {
		if err := checkOnRoot(cc, func() error { return checkFilePath("--report", f.report) }); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// checkOnRoot runs check on rank 0 only (the one that writes the outputs)
// and returns its error on every rank as an agreed error (see fail). It is
// collective.
func checkOnRoot(c *collective.Comm, check func() error) error {
	var err error
	if c.Rank() == 0 {
		err = check()
	}
	if err := collective.Agree(c, err); err != nil {
		return agreed{err}
	}
	return nil
}

// checkFilePath fails when path cannot become a file: it names a
// directory, or its directory is missing or is not one.
func checkFilePath(flag, path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s: is a directory", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: %v", flag, path, err)
	case !st.IsDir():
		return fmt.Errorf("%s %s: %s is not a directory", flag, path, dir)
	}
	return nil
}

// checkDirPath fails when dir cannot be a directory: it names a file, or
// its nearest existing ancestor is not a directory.
func checkDirPath(flag, dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		switch {
		case err == nil && st.IsDir():
			return nil
		case err == nil:
			return fmt.Errorf("%s %s: %s is a file, not a directory", flag, dir, d)
		case !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return fmt.Errorf("%s %s: %v", flag, dir, err)
		case filepath.Dir(d) == d:
			return nil
		}
	}
}

// printf prints on rank 0 only.
func (e *env) printf(format string, args ...any) { fmt.Fprintf(e.out, format, args...) }

// stage starts a measured stage; call the result to end it.
func (e *env) stage(name string) func() {
	e.log.Debug("stage start", "stage", name)
	return e.rec.Stage(name)
}

// startProfile starts the profiles asked for with --cpuprofile and
// --memprofile and returns the function that stops them and writes them.
func (e *env) startProfile() (func() error, error) {
	stopCPU, err := proc.StartCPUProfile(e.flags.cpuProfile, e.comm.Rank())
	if err != nil {
		return nil, err
	}
	stopHeap := proc.StartPeakHeapProfile(e.flags.memProfile, e.comm.Rank())
	return func() error {
		stopCPU()
		return stopHeap()
	}, nil
}

// finish writes the report if one was asked for; it is collective.
func (e *env) finish() error {
	if e.flags.report == "" {
		return nil
	}
	return e.rec.Write(e.flags.report, e.cmd)
}

// newLogger logs text to stderr with the rank and host in every record.
// Rank 0 logs info by default and the others only warnings, so a P-rank job
// does not print everything P times; -v lets every rank log info, -vv debug.
func newLogger(c rank.Comm, verbose int) *slog.Logger {
	level := slog.LevelWarn
	switch {
	case verbose >= 2:
		level = slog.LevelDebug
	case verbose == 1 || c.Rank() == 0:
		level = slog.LevelInfo
	}
	h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	return slog.New(h).With("rank", c.Rank(), "host", c.Host())
}

// fail prints the error as "gnnrun: rank R/P (host): ..." and ends the whole
// job: MPI_Abort when there are other ranks, so none of them waits forever
// for this one.
//
// An agreed error, one every rank returns alike, ends the job without
// MPI_Abort: rank 0 prints it and every rank finalizes and exits non-zero,
// so the abort of a faster rank cannot cut off rank 0's report.
func fail(c rank.Comm, err error) {
	msg := strings.TrimSpace(err.Error())
	var ag agreed
	together := errors.As(err, &ag)
	if !together || c.Rank() == 0 {
		fmt.Fprintf(os.Stderr, "gnnrun: rank %d/%d (%s): %s\n", c.Rank(), c.Size(), c.Host(), msg)
	}
	if c.Size() > 1 && !together {
		c.Abort(1)
	}
	rank.Finalize()
	os.Exit(1)
}

// agreed marks an error that every rank returns alike (see fail).
type agreed struct{ error }

func (a agreed) Unwrap() error { return a.error }

// guard turns a panic on this goroutine into fail; defer it first thing in
// every goroutine a command starts on its own.
func guard(c rank.Comm) {
	if p := recover(); p != nil {
		fail(c, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
	}
}

// faultPoint injects a failure for the fault-tolerance tests: with
// GNNRUN_FAULT="R:KIND[:POINT]" rank R fails at the named point (default
// "start") with KIND error, panic or exit (exit 3 without MPI_Abort).
func (e *env) faultPoint(point string) error {
	spec := os.Getenv("GNNRUN_FAULT")
	if spec == "" {
		return nil
	}
	parts := strings.Split(spec, ":")
	r, err := strconv.Atoi(parts[0])
	if err != nil || len(parts) < 2 {
		return fmt.Errorf("GNNRUN_FAULT=%q: want RANK:error|panic|exit[:POINT]", spec)
	}
	at := "start"
	if len(parts) > 2 {
		at = parts[2]
	}
	if r != e.comm.Rank() || at != point {
		return nil
	}
	e.log.Warn("injecting fault", "kind", parts[1], "point", point)
	switch parts[1] {
	case "error":
		return fmt.Errorf("injected fault at %s", point)
	case "panic":
		panic("injected panic at " + point)
	case "exit":
		os.Exit(3)
	}
	return fmt.Errorf("GNNRUN_FAULT=%q: unknown kind %q", spec, parts[1])
}
