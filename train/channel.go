package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// maxMessage bounds one control message; a batch's layout takes a few KiB.
const maxMessage = 1 << 20

// channel is gnnrun's end of the control socket: sequenced packets, so a
// message arrives whole, each a JSON object, descriptors beside it.
type channel struct {
	fd    int
	child *os.File // the trainer's end, until the trainer has it
}

// newChannel makes the socket pair.
func newChannel() (*channel, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("train: control socket: %w", err)
	}
	return &channel{fd: fds[0], child: os.NewFile(uintptr(fds[1]), "gnnrun-control")}, nil
}

// send sends msg as JSON with the descriptors fds.
func (c *channel) send(msg any, fds ...int) error {
	blob, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if len(blob) > maxMessage {
		return fmt.Errorf("train: a control message of %d bytes (at most %d)", len(blob), maxMessage)
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(c.fd, blob, oob, nil, 0); err != nil {
		return fmt.Errorf("train: sending to the trainer: %w", err)
	}
	return nil
}

// errClosed is recv's error when the trainer closed its end (or exited).
var errClosed = errors.New("train: the trainer closed the control socket")

// recv receives one message into msg; errClosed at the trainer's end.
func (c *channel) recv(msg any) error {
	buf := make([]byte, maxMessage)
	n, _, _, _, err := unix.Recvmsg(c.fd, buf, nil, 0)
	switch {
	case err != nil:
		return fmt.Errorf("train: reading from the trainer: %w", err)
	case n == 0:
		return errClosed
	}
	if err := json.Unmarshal(buf[:n], msg); err != nil {
		return fmt.Errorf("train: a message from the trainer: %w: %q", err, buf[:min(n, 200)])
	}
	return nil
}

// closeChild closes gnnrun's copy of the trainer's end, once the trainer
// has it, so that the trainer's death reads as end-of-file here.
func (c *channel) closeChild() error {
	if c.child == nil {
		return nil
	}
	err := c.child.Close()
	c.child = nil
	return err
}

// close shuts the socket down (a recv blocked on it returns) and closes it.
func (c *channel) close() error {
	c.closeChild()
	unix.Shutdown(c.fd, unix.SHUT_RDWR)
	return unix.Close(c.fd)
}
