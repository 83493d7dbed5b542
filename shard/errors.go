package shard

import (
	"errors"
	"fmt"

	"gnnrun/collective"
)

// errorf returns an error prefixed with the package name.
func errorf(format string, args ...any) error { return fmt.Errorf("shard: "+format, args...) }

// agree makes every rank leave a step with an error when any rank has one:
// the lowest failing rank's message, so the job reports the real cause
// whichever rank prints it. It is collective.
func agree(c *collective.Comm, err error) error {
	var msg []byte
	if err != nil {
		msg = []byte(err.Error())
		if len(msg) == 0 {
			msg = []byte("error")
		}
	}
	all, counts, e := collective.Allgatherv(c, msg)
	if e != nil {
		return e
	}
	off := 0
	for r, k := range counts {
		if k > 0 {
			if r == c.Rank() {
				return err
			}
			return errors.New(string(all[off : off+k]))
		}
		off += k
	}
	return nil
}
