package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// command is a program a step runs: gnnrun, a test binary, Python.
type command struct {
	args []string
	env  []string // added to gpucheck's own environment
	dir  string   // working directory; "" is gpucheck's (the repository root)
	log  string   // the name of its log under <work>/logs
}

// run runs cmd under the per-command timeout, adds the line that
// reproduces it to st's commands, writes its stdout and stderr to its log
// and returns its stdout. Its error names the command and ends with the
// log's last lines.
func (c *checker) run(st *Step, cmd command) ([]byte, error) {
	line := shellLine(cmd)
	st.Commands = append(st.Commands, line)
	fmt.Fprintf(os.Stderr, "gpucheck: step %d: %s\n", st.Number, line)
	logPath := filepath.Join(c.work, "logs", cmd.log+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	fmt.Fprintf(log, "$ %s\n", line)
	ctx, cancel := context.WithTimeout(context.Background(), c.o.timeout)
	defer cancel()
	x := exec.CommandContext(ctx, cmd.args[0], cmd.args[1:]...)
	// SIGTERM first: gnnrun then stops its trainer (SIGKILL would leave
	// that to the trainer's death signal).
	x.Cancel = func() error { return x.Process.Signal(syscall.SIGTERM) }
	x.WaitDelay = 15 * time.Second
	x.Dir, x.Env = cmd.dir, append(os.Environ(), cmd.env...)
	var stdout bytes.Buffer
	x.Stdout, x.Stderr = io.MultiWriter(&stdout, log), log
	err = x.Run()
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("timed out after %v", c.o.timeout)
	}
	if err != nil {
		log.Sync()
		return stdout.Bytes(), fmt.Errorf("%s: %v (log: %s)%s", cmd.args[0], err, logPath, tail(logPath, 12))
	}
	return stdout.Bytes(), nil
}

// tail returns the last n lines of the file at path, each indented, after
// a colon and newline; "" when there are none.
func tail(path string, n int) string {
	blob, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(blob), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return ":\n    " + strings.Join(lines, "\n    ")
}

// shellLine is the command as one would type it in a shell from the
// repository root.
func shellLine(cmd command) string {
	var words []string
	for _, e := range cmd.env {
		k, v, _ := strings.Cut(e, "=")
		words = append(words, k+"="+quote(v))
	}
	for _, a := range cmd.args {
		words = append(words, quote(a))
	}
	s := strings.Join(words, " ")
	if cmd.dir != "" {
		s = fmt.Sprintf("(cd %s && %s)", quote(cmd.dir), s)
	}
	return s
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// quote quotes s for a POSIX shell when it needs it.
func quote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
