package serial

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// goroutineID returns the number of the calling goroutine, from the first
// line of its stack ("goroutine 7 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// A panic on a goroutine the partitioner started (a half of a recursive
// bisection) must come back from Partition as a *PanicError carrying the
// value and that goroutine's stack. Without the recovery in ctrl.parallel
// the panic ends the test binary; without the one in Partition it unwinds
// through the test.
func TestPanicInForkBecomesError(t *testing.T) {
	caller := goroutineID()
	defer func() { levelHook = nil }()
	levelHook = func(b *bisection, _ bool) {
		if goroutineID() != caller {
			panic("injected in a fork")
		}
	}
	g := gridGraph(60, 60)
	part, err := Partition(g, Options{Parts: 8, Seed: 1, Threads: 4})
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (partition of %d vertices), want a *PanicError", err, len(part))
	}
	if pe.Value != "injected in a fork" {
		t.Errorf("panic value %v, want the injected one", pe.Value)
	}
	if !bytes.Contains(pe.Stack, []byte("serial.(*ctrl).bisect")) || bytes.Contains(pe.Stack, []byte("goroutine "+caller+" ")) {
		t.Errorf("the stack is not the fork's bisection's:\n%s", pe.Stack)
	}
	if !strings.HasPrefix(err.Error(), "serial: panic: injected in a fork\n") {
		t.Errorf("error text %q", err.Error()[:min(len(err.Error()), 80)])
	}
}

// A runtime error on the caller's goroutine comes back as an error too, and
// unwraps to the runtime error.
func TestPanicOnCallerBecomesError(t *testing.T) {
	defer func() { levelHook = nil }()
	levelHook = func(b *bisection, _ bool) { _ = b.side[len(b.side)] }
	_, err := Partition(gridGraph(20, 20), Options{Parts: 2, Seed: 1, Threads: 1})
	var re runtime.Error
	if !errors.As(err, &re) {
		t.Fatalf("error %v, want one wrapping the runtime error", err)
	}
}
