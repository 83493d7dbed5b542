package pack

import (
	"fmt"
	"strings"
)

// Heuristic is the monotone priority of a tuple that the reference packer
// sorts graphs by and buckets open packs by.
type Heuristic int

// The heuristics of the paper's Table 2, in its column order.
const (
	Product   Heuristic = iota // nodes × edges
	Sum                        // nodes + edges
	Max                        // max(nodes, edges)
	Min                        // min(nodes, edges); the published code computes max
	NodesOnly                  // nodes
	EdgesOnly                  // edges
)

// Heuristics lists every heuristic in the paper's column order.
var Heuristics = []Heuristic{Product, Sum, Max, Min, NodesOnly, EdgesOnly}

var heuristicNames = [...]string{"product", "sum", "max", "min", "node", "edge"}

// String returns the name ParseHeuristic reads.
func (h Heuristic) String() string {
	if h < 0 || int(h) >= len(heuristicNames) {
		return fmt.Sprintf("Heuristic(%d)", int(h))
	}
	return heuristicNames[h]
}

// ParseHeuristic returns the heuristic named s (product, sum, max, min,
// node, edge; "prod", "nodes" and "edges" are accepted too).
func ParseHeuristic(s string) (Heuristic, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "prod":
		return Product, nil
	case "nodes":
		return NodesOnly, nil
	case "edges":
		return EdgesOnly, nil
	}
	for i, n := range heuristicNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Heuristic(i), nil
		}
	}
	return 0, fmt.Errorf("pack: unknown heuristic %q (want one of %s)", s, strings.Join(heuristicNames[:], ", "))
}

// ParseHeuristics parses a comma-separated list of heuristics; "all" means
// every heuristic in the paper's order.
func ParseHeuristics(s string) ([]Heuristic, error) {
	if strings.EqualFold(strings.TrimSpace(s), "all") {
		return append([]Heuristic(nil), Heuristics...), nil
	}
	var out []Heuristic
	for _, f := range strings.Split(s, ",") {
		h, err := ParseHeuristic(f)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// Eval returns the heuristic of a tuple of n nodes and e edges. Min is the
// true minimum here; the reference packer reproduces the published quirk.
func (h Heuristic) Eval(n, e int) int {
	switch h {
	case Product:
		return n * e
	case Sum:
		return n + e
	case Max:
		return max(n, e)
	case Min:
		return min(n, e)
	case NodesOnly:
		return n
	case EdgesOnly:
		return e
	}
	panic("pack: invalid heuristic " + h.String())
}

// published returns the heuristic the published code evaluates when asked
// for h: its "min" is a copy of "max".
func (h Heuristic) published() Heuristic {
	if h == Min {
		return Max
	}
	return h
}
