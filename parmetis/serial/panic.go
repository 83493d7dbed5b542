package serial

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic inside the partitioner, on the caller's goroutine
// or on one the partitioner started, returned as an error by Partition,
// PartitionStats and RefineKway: Value is what was passed to panic, Stack
// the panicking goroutine's stack.
type PanicError struct {
	Value any
	Stack []byte
}

// Error returns the panic value and the stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("serial: panic: %v\n%s", e.Value, e.Stack)
}

// Unwrap returns the panic value when it is an error (a runtime error, say),
// else nil.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// recovered turns the value of recover() into a *PanicError carrying the
// current stack, nil for nil. Called in the deferred function of the
// panicking goroutine, the stack still holds the frames of the panic; a
// *PanicError raised again from a fork keeps the fork's stack.
func recovered(p any) *PanicError {
	switch p := p.(type) {
	case nil:
		return nil
	case *PanicError:
		return p
	default:
		return &PanicError{Value: p, Stack: debug.Stack()}
	}
}

// catch turns a panic into *err; the exported entry points defer it, so a
// panic on any of the partitioner's goroutines reaches their caller as an
// error.
func catch(err *error) {
	if pe := recovered(recover()); pe != nil {
		*err = pe
	}
}
