// Package kernelharness builds and runs the CPU harnesses of gnnrun's CUDA
// kernels for tests: cuda/kernels/harness/<name>.cc includes a kernel
// source, which compat.h turns into plain C++ through the shim cpu.h, and
// is compiled by clang-16 with AddressSanitizer and UBSan (any report
// fails the run). Tests compare what a harness computes with gnnrun's Go
// code, bit for bit, so a kernel is proven before a GPU ever runs it.
//
// Where clang-16 or its sanitizer runtime is missing, Build skips the test
// saying what to install (`make deps` installs both), unless
// GNNRUN_REQUIRE_HARNESS is set (make test sets it), when it fails.
package kernelharness

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Compiler is the clang that builds the harnesses (GNNRUN_CLANG overrides).
func Compiler() string {
	if c := os.Getenv("GNNRUN_CLANG"); c != "" {
		return c
	}
	return "clang-16"
}

// KernelDir returns the directory of the kernel sources.
func KernelDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "cuda", "kernels")
}

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// Build compiles harness name (cuda/kernels/harness/<name>.cc) and returns
// the executable's path. Executables are kept in the user's cache
// directory under a hash of the compiler, the flags and every kernel
// source, so a rerun with unchanged sources builds nothing and a changed
// source never runs a stale harness.
func Build(t testing.TB, name string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	cc := Compiler()
	if _, err := exec.LookPath(cc); err != nil {
		missing(t, fmt.Sprintf("%s is not installed (Debian: apt-get install clang-16 libclang-rt-16-dev, or make deps)", cc))
	}
	src := filepath.Join(KernelDir(), "harness", name+".cc")
	// clang (not clang++) links no C++ runtime, which UBSan's check of
	// calls through function pointers (-fsanitize=function, every kernel
	// launch) needs: its handler and the type information it compares.
	flags := []string{"-x", "c++", "-std=c++17", "-O1", "-g", "-fno-omit-frame-pointer",
		"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-Wall", "-Werror",
		"-I", KernelDir(), src, "-fsanitize-link-c++-runtime", "-lstdc++"}
	out, err := cachePath(name, cc, flags, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err == nil {
		built[name] = out
		return out
	}
	// Built beside its place and renamed there, so that test processes
	// building it at once (go test ./...) never run a half-written file.
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command(cc, append(flags, "-o", tmp)...)
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	err = cmd.Run()
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		os.Remove(tmp)
		if bytes.Contains(msg.Bytes(), []byte("libclang_rt")) {
			missing(t, "clang-16's sanitizer runtime is not installed (Debian: apt-get install libclang-rt-16-dev, or make deps)")
		}
		t.Fatalf("kernelharness: building %s: %v\n%s", src, err, msg.String())
	}
	built[name] = out
	return out
}

// cachePath returns where harness name built by cc with flags from src
// is kept: the user's cache directory (else the temporary one), under a
// hash of the compiler, the flags, src and every source of the kernels.
func cachePath(name, cc string, flags []string, src string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", cc, strings.Join(flags, "\x00"))
	files, err := filepath.Glob(filepath.Join(KernelDir(), "*"))
	if err != nil {
		return "", err
	}
	for _, f := range append(files, src) {
		if ext := filepath.Ext(f); ext != ".cu" && ext != ".h" && ext != ".cuh" && ext != ".cc" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("kernelharness: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(f), len(b))
		h.Write(b)
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "gnnrun", "harness")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("kernelharness: %w", err)
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%x", name, h.Sum(nil)[:8])), nil
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("GNNRUN_REQUIRE_HARNESS") != "" {
		t.Fatalf("kernelharness: %s", why)
	}
	t.Skipf("kernelharness: %s; the CPU harness of the CUDA kernels is not run", why)
}

// Run runs a built harness with args and returns its standard output; a
// non-zero exit (a sanitizer's report among them) fails the test with the
// harness's standard error.
func Run(t testing.TB, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kernelharness: %s %v: %v\n%s", filepath.Base(bin), args, err, errb.String())
	}
	return out.Bytes()
}
