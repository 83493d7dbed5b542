package pack

import (
	"fmt"
	"strings"
)

// Algo selects a packing algorithm.
type Algo int

const (
	// Ours is our packer: weighted largest-first filling of one pack at a
	// time under several weightings, then emptying of the emptiest packs.
	Ours Algo = iota
	// Reference is the published histogram packing, reproduced exactly with
	// its quirks to match the paper's Table 2. It exists to prove that.
	Reference
)

var algoNames = [...]string{"ours", "reference"}

// String returns the name ParseAlgo reads.
func (a Algo) String() string {
	if a < 0 || int(a) >= len(algoNames) {
		return fmt.Sprintf("Algo(%d)", int(a))
	}
	return algoNames[a]
}

// ParseAlgo returns the algorithm named s: "ours" or "reference" ("paper"
// is accepted for the latter).
func ParseAlgo(s string) (Algo, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ours":
		return Ours, nil
	case "reference", "paper":
		return Reference, nil
	}
	return 0, fmt.Errorf("pack: unknown algorithm %q (want ours or reference)", s)
}

// Order is the order in which the reference packer searches the open packs
// for one that fits.
type Order int

const (
	// LongestFirst offers a graph to the fullest packs first: the bucket with
	// the smallest heuristic of the remaining space at least the graph's
	// (best fit). The paper's algorithm.
	LongestFirst Order = iota
	// ShortestFirst offers it to the emptiest packs first: the same search
	// from the largest key down (first fit).
	ShortestFirst
)

var orderNames = [...]string{"longest-first", "shortest-first"}

// String returns the name ParseOrder reads.
func (o Order) String() string {
	if o < 0 || int(o) >= len(orderNames) {
		return fmt.Sprintf("Order(%d)", int(o))
	}
	return orderNames[o]
}

// ParseOrder returns the order named s: longest-first (lpf) or
// shortest-first (spf).
func ParseOrder(s string) (Order, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "longest-first", "lpf":
		return LongestFirst, nil
	case "shortest-first", "spf":
		return ShortestFirst, nil
	}
	return 0, fmt.Errorf("pack: unknown order %q (want longest-first or shortest-first)", s)
}

// Option configures Pack.
type Option func(*options) error

type options struct {
	limits        Limits // 0 fields: take the default
	capFromLimits bool   // the published max_tuples_per_pack = "max"
	algo          Algo
	heuristic     Heuristic
	order         Order
	effort        Effort
}

// setDefault fills what no option set: limits from the dataset maxima, the
// paper's cap of 256 graphs per pack.
func (o *options) setDefault(h Histogram) {
	if o.limits.Nodes == 0 {
		o.limits.Nodes = h.maxNodes
	}
	if o.limits.Edges == 0 {
		o.limits.Edges = max(h.maxEdges, 1)
	}
	if o.capFromLimits {
		o.limits.Graphs = min(o.limits.Nodes, o.limits.Edges)
	}
	if o.limits.Graphs == 0 {
		o.limits.Graphs = DefaultMaxGraphs
	}
}

func resolve(h Histogram, opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	o.setDefault(h)
	return o, o.limits.check()
}

// MaxNodes limits the nodes of a pack to n >= 1; the default is the largest
// graph's node count.
func MaxNodes(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("pack: max nodes per pack must be >= 1, got %d", n)
		}
		o.limits.Nodes = n
		return nil
	}
}

// MaxEdges limits the edges of a pack to n >= 1; the default is the largest
// graph's edge count.
func MaxEdges(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("pack: max edges per pack must be >= 1, got %d", n)
		}
		o.limits.Edges = n
		return nil
	}
}

// MaxGraphs caps the graphs of a pack at n >= 1; the default is 256.
func MaxGraphs(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("pack: max graphs per pack must be >= 1, got %d", n)
		}
		o.limits.Graphs, o.capFromLimits = n, false
		return nil
	}
}

// MaxGraphsFromLimits caps the graphs of a pack at min(max nodes, max
// edges), what the published code does for max_tuples_per_pack = "max".
func MaxGraphsFromLimits() Option {
	return func(o *options) error {
		o.limits.Graphs, o.capFromLimits = 0, true
		return nil
	}
}

// WithLimits sets all three limits at once; each must be >= 1.
func WithLimits(l Limits) Option {
	return func(o *options) error {
		if err := l.check(); err != nil {
			return err
		}
		o.limits, o.capFromLimits = l, false
		return nil
	}
}

// WithAlgo selects the algorithm; the default is Ours.
func WithAlgo(a Algo) Option {
	return func(o *options) error {
		if a != Ours && a != Reference {
			return fmt.Errorf("pack: invalid algorithm %v", a)
		}
		o.algo = a
		return nil
	}
}

// WithHeuristic sets the heuristic of the reference packer; the default is
// Product. Our packer does not use one.
func WithHeuristic(h Heuristic) Option {
	return func(o *options) error {
		if h < Product || h > EdgesOnly {
			return fmt.Errorf("pack: invalid heuristic %v", h)
		}
		o.heuristic = h
		return nil
	}
}

// WithOrder sets the search order of the reference packer; the default is
// LongestFirst, the paper's.
func WithOrder(ord Order) Option {
	return func(o *options) error {
		if ord != LongestFirst && ord != ShortestFirst {
			return fmt.Errorf("pack: invalid order %v", ord)
		}
		o.order = ord
		return nil
	}
}

// WithEffort sets how hard our packer works; the default is Thorough.
func WithEffort(e Effort) Option {
	return func(o *options) error {
		if e != Thorough && e != Quick {
			return fmt.Errorf("pack: invalid effort %v", e)
		}
		o.effort = e
		return nil
	}
}
