package train

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ControlFD is the trainer's descriptor of the control socket
// (GNNRUN_CONTROL_FD says it too).
const ControlFD = 3

// killGrace is how long a trainer asked to stop (SIGTERM) has before it is
// killed.
const killGrace = 3 * time.Second

// ChildSpec says how to start the trainer.
type ChildSpec struct {
	Args []string // the command and its arguments
	Env  []string // added to gnnrun's environment
	// Tag, when set, prefixes every line the trainer writes with it.
	Tag string
}

// child is the trainer process.
type child struct {
	cmd   *exec.Cmd
	name  string
	done  chan struct{} // closed when it has exited
	err   error         // how it exited, once done
	lines sync.WaitGroup
}

// startChild starts the trainer in a process group of its own, with the
// control socket as its descriptor 3, killed when this process dies.
func startChild(spec ChildSpec, control *os.File) (*child, error) {
	if len(spec.Args) == 0 {
		return nil, fmt.Errorf("train: no trainer command (give it after --)")
	}
	cmd := exec.Command(spec.Args[0], spec.Args[1:]...)
	cmd.Env = append(append(os.Environ(), spec.Env...), fmt.Sprintf("GNNRUN_CONTROL_FD=%d", ControlFD))
	cmd.ExtraFiles = []*os.File{control}
	// Pdeathsig: the kernel sends the trainer SIGTERM when the thread that
	// started it ends (gnnrun starts it from the main thread, locked to
	// it: that is this process's death). SIGTERM rather than SIGKILL, so
	// the Python client can say why it ends (GnnrunGone); its watchdog
	// ends it should the signal be ignored.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	c := &child{cmd: cmd, name: spec.Args[0], done: make(chan struct{})}
	var ours []*os.File // our copies of the pipes' write ends, closed after Start
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if spec.Tag != "" {
		for _, p := range []struct {
			set func(*os.File)
			to  *os.File
		}{{func(f *os.File) { cmd.Stdout = f }, os.Stdout}, {func(f *os.File) { cmd.Stderr = f }, os.Stderr}} {
			r, w, err := os.Pipe()
			if err != nil {
				return nil, err
			}
			p.set(w)
			ours = append(ours, w)
			c.lines.Add(1)
			go func() {
				defer c.lines.Done()
				defer r.Close()
				tagLines(r, p.to, spec.Tag)
			}()
		}
	}
	err := cmd.Start()
	for _, w := range ours {
		w.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("train: starting the trainer %q: %w", spec.Args[0], err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// tagLines copies r to w line by line, each prefixed with tag.
func tagLines(r io.Reader, w io.Writer, tag string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		fmt.Fprintf(w, "%s%s\n", tag, sc.Bytes())
	}
}

// exited returns how the trainer ended once it has: nil for exit 0.
func (c *child) exited() error {
	<-c.done
	// Give its last lines a moment to come through the tag pipes (a
	// grandchild holding them open must not keep us).
	flushed := make(chan struct{})
	go func() { c.lines.Wait(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(time.Second):
	}
	var ee *exec.ExitError
	if errors.As(c.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Errorf("the trainer %s was killed by signal %d (%v)", c.name, int(ws.Signal()), ws.Signal())
		}
		return fmt.Errorf("the trainer %s exited with status %d", c.name, ee.ExitCode())
	}
	if c.err != nil {
		return fmt.Errorf("the trainer %s: %w", c.name, c.err)
	}
	return nil
}

// stop asks the trainer's process group to end (SIGTERM), kills it after
// killGrace, and waits for the trainer.
func (c *child) stop() {
	pgid := -c.cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(killGrace):
		syscall.Kill(pgid, syscall.SIGKILL)
		<-c.done
	}
	syscall.Kill(pgid, syscall.SIGKILL) // what it left behind in its group
}
