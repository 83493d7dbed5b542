package rank

import (
	"errors"
	"os"
)

// soloComm is a world of one without MPI (the nompi build's World): a local
// world with a single member, so every collective and window keeps the local
// world's checks and copies, and traffic counts nothing because a rank's
// messages to itself are not counted. What differs from a member of a local
// world is what differs in a one-rank MPI job: Abort ends the process, as
// MPI_Abort would, and the world communicator cannot be freed.
type soloComm struct {
	*localComm
	world bool
}

// newSolo returns the world communicator of a world of one on host.
func newSolo(host string) *soloComm {
	g := newWorld().newGroup([]int{0})
	return &soloComm{localComm: &localComm{g: g, host: host, traffic: new(trafficCounter)}, world: true}
}

// Split implements Comm.
func (c *soloComm) Split(color, key int) (Comm, error) {
	return derived(c.localComm.Split(color, key))
}

// Dup implements Comm.
func (c *soloComm) Dup() (Comm, error) { return derived(c.localComm.Dup()) }

// SplitShared implements Comm: the one rank shares memory with itself.
func (c *soloComm) SplitShared() (Comm, error) { return derived(c.localComm.SplitShared()) }

// derived wraps a communicator split off a solo one, so that its Abort too
// ends the process instead of only the calling goroutine.
func derived(d Comm, err error) (Comm, error) {
	if err != nil {
		return nil, err
	}
	return &soloComm{localComm: d.(*localComm)}, nil
}

// Free implements Comm.
func (c *soloComm) Free() error {
	if c.world {
		return errors.New("rank: the world communicator cannot be freed")
	}
	return c.localComm.Free()
}

// Abort implements Comm: the process is the whole job, so it exits with
// code.
func (c *soloComm) Abort(code int) { os.Exit(code) }

// soloHost names the machine as MPI_Get_processor_name does on Linux, from
// the kernel's host name.
func soloHost() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}
