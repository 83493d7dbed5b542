package parteval

import "fmt"

// Option configures EvaluateFiles.
type Option func(*options) error

type options struct {
	format  string
	balance string
	parts   int
	target  []float64
}

// Format names the input graph's format instead of guessing it from the
// path: chunked, edgelist, metis, mtx, npz or npy.
func Format(name string) Option { return func(o *options) error { o.format = name; return nil } }

// Measure lists the constraints to measure, as Input.Constraints takes
// them (default: nodes, or vwgt for a weighted METIS file).
func Measure(spec string) Option { return func(o *options) error { o.balance = spec; return nil } }

// Parts sets K instead of the assignment's own (num_parts, or a .part
// file's largest part + 1): a .part file whose last parts are empty needs
// it.
func Parts(k int) Option {
	return func(o *options) error {
		if k < 1 {
			return fmt.Errorf("parteval: %d parts, need at least 1", k)
		}
		o.parts = k
		return nil
	}
}

// Targets sets each part's target share of every constraint (default: 1/K
// each), as gnnrun partition's --tpwgts.
func Targets(shares ...float64) Option {
	return func(o *options) error { o.target = shares; return nil }
}

// EvaluateFiles measures the assignment at asgPath (a DGL assignment
// directory or a METIS .part file, see ReadAssignment) of the graph at
// graphPath (see ReadInput): its cut and the balance of the constraints
// Measure names. It fails when either cannot be read or they do not fit.
func EvaluateFiles(graphPath, asgPath string, opts ...Option) (*Result, error) {
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	in, err := ReadInput(graphPath, o.format)
	if err != nil {
		return nil, err
	}
	cons, err := in.Constraints(o.balance)
	if err != nil {
		return nil, err
	}
	part, k, err := ReadAssignment(asgPath, &in.Meta)
	if err != nil {
		return nil, err
	}
	if o.parts > 0 {
		k = o.parts
	}
	return Evaluate(in.Graph, part, k, o.target, cons)
}
