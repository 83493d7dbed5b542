package graphio

import "fmt"

// InputError is bad input: the file, where in it (a 1-based line of a text
// file, or a 0-based row of an array), and what is wrong.
type InputError struct {
	File string
	Line int64 // 1-based line of a text file; 0 when not a line
	Row  int64 // 0-based row of an array file; -1 when not a row
	Msg  string
}

// Error returns "graphio: FILE:LINE: MSG", "graphio: FILE: row R: MSG" or
// "graphio: FILE: MSG".
func (e *InputError) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("graphio: %s:%d: %s", e.File, e.Line, e.Msg)
	case e.Row >= 0:
		return fmt.Sprintf("graphio: %s: row %d: %s", e.File, e.Row, e.Msg)
	}
	return fmt.Sprintf("graphio: %s: %s", e.File, e.Msg)
}

// fileErr returns an InputError about a whole file.
func fileErr(file, format string, args ...any) *InputError {
	return &InputError{File: file, Row: -1, Msg: fmt.Sprintf(format, args...)}
}

// lineErr returns an InputError about one line of a text file.
func lineErr(file string, line int64, format string, args ...any) *InputError {
	return &InputError{File: file, Line: line, Row: -1, Msg: fmt.Sprintf(format, args...)}
}

// rowErr returns an InputError about one row of an array file.
func rowErr(file string, row int64, format string, args ...any) *InputError {
	return &InputError{File: file, Row: row, Msg: fmt.Sprintf(format, args...)}
}
