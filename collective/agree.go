package collective

import "errors"

// Agree makes every rank leave a step with an error when any rank has one:
// every rank gets the lowest failing rank's error (that rank its own typed
// error, the others its message), so the job reports the same cause
// whichever rank prints it, and no rank goes on to a collective the failing
// ones will not join. It is collective.
func Agree(c *Comm, err error) error {
	var msg []byte
	if err != nil {
		msg = []byte(err.Error())
		if len(msg) == 0 {
			msg = []byte("error")
		}
	}
	all, counts, e := Allgatherv(c, msg)
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
