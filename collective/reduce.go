package collective

import (
	"gnnrun/rank"
)

// Allreduce combines v element-wise over all ranks with op and returns the
// result; v is not modified.
func Allreduce[T int64 | float64](c *Comm, v []T, op rank.Op) ([]T, error) {
	out := make([]T, len(v))
	var err error
	switch x := any(v).(type) {
	case []int64:
		err = c.Comm.AllreduceInt64(x, any(out).([]int64), op)
	case []float64:
		err = c.Comm.AllreduceFloat64(x, any(out).([]float64), op)
	}
	return out, err
}

// Sum returns the sum of v over all ranks.
func Sum[T int64 | float64](c *Comm, v T) (T, error) {
	out, err := Allreduce(c, []T{v}, rank.Sum)
	if err != nil {
		return 0, err
	}
	return out[0], nil
}

// Max returns the maximum of v over all ranks.
func Max[T int64 | float64](c *Comm, v T) (T, error) {
	out, err := Allreduce(c, []T{v}, rank.Max)
	if err != nil {
		return 0, err
	}
	return out[0], nil
}

// Min returns the minimum of v over all ranks.
func Min[T int64 | float64](c *Comm, v T) (T, error) {
	out, err := Allreduce(c, []T{v}, rank.Min)
	if err != nil {
		return 0, err
	}
	return out[0], nil
}

// Any reports whether cond holds on at least one rank.
func Any(c *Comm, cond bool) (bool, error) {
	v := int64(0)
	if cond {
		v = 1
	}
	m, err := Max(c, v)
	return m == 1, err
}

// All reports whether cond holds on every rank.
func All(c *Comm, cond bool) (bool, error) {
	fails, err := Any(c, !cond)
	return err == nil && !fails, err
}

// Offset returns the sum of n over the ranks before this one and over all
// ranks: where this rank's share starts in a global numbering, and its end.
func Offset(c *Comm, n int64) (before, total int64, err error) {
	all, err := allgatherInt64(c.Comm, n)
	if err != nil {
		return 0, 0, err
	}
	for i, v := range all {
		if i < c.Rank() {
			before += v
		}
		total += v
	}
	return before, total, nil
}
