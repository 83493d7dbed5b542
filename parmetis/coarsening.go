package parmetis

import (
	"fmt"

	"gnnrun/collective"
)

// Coarsening is how the distributed phase groups vertices into coarse ones.
type Coarsening int

// The coarsening schemes.
const (
	// CoarsenAuto picks CoarsenStars for graphs whose highest degree is
	// far above the average (power-law graphs), CoarsenMatch otherwise.
	CoarsenAuto Coarsening = iota
	// CoarsenMatch is ParMETIS' heavy-edge matching by request/grant, with
	// stars for the vertices left unmatched when matching stalls.
	CoarsenMatch
	// CoarsenStars lets every vertex join the star of its heaviest (then
	// highest-degree) neighbour, and keeps only each coarse vertex's heaviest
	// edges (DistDGLv2), so power-law graphs shrink in vertices and edges.
	CoarsenStars
)

// skewedDegree is the ratio of the highest to the average degree above
// which CoarsenAuto treats a graph as power-law: meshes stay below 3.
const skewedDegree = 20

var coarseningNames = []string{"auto", "match", "stars"}

// String returns the scheme's name.
func (c Coarsening) String() string {
	if int(c) < len(coarseningNames) {
		return coarseningNames[c]
	}
	return fmt.Sprintf("Coarsening(%d)", int(c))
}

// ParseCoarsening parses "auto", "match" or "stars".
func ParseCoarsening(s string) (Coarsening, error) {
	for i, n := range coarseningNames {
		if n == s {
			return Coarsening(i), nil
		}
	}
	return 0, fmt.Errorf("parmetis: coarsening %q: want auto, match or stars", s)
}

// resolve turns CoarsenAuto into a scheme for g. It is collective.
func (c Coarsening) resolve(g *DistGraph) (Coarsening, error) {
	if c != CoarsenAuto {
		return c, nil
	}
	var top int64
	for v := range g.NLocal() {
		top = max(top, g.Xadj[v+1]-g.Xadj[v])
	}
	top, err := collective.Max(g.c, top)
	if err != nil {
		return c, err
	}
	arcs, err := g.arcs()
	if err != nil {
		return c, err
	}
	if top*g.N() > skewedDegree*max(arcs, 1) {
		return CoarsenStars, nil
	}
	return CoarsenMatch, nil
}

// Method is how a K-way partition is reached.
type Method int

// The methods.
const (
	// MethodAuto is MethodRB for K > 2 on several ranks, else MethodKway.
	MethodAuto Method = iota
	// MethodKway partitions into K parts directly and refines k-way.
	MethodKway
	// MethodRB bisects recursively, splitting the ranks with the graph.
	MethodRB
)

var methodNames = []string{"auto", "kway", "rb"}

// String returns the method's name.
func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod parses "auto", "kway" or "rb".
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if n == s {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("parmetis: method %q: want auto, kway or rb", s)
}
