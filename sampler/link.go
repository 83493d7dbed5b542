package sampler

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"gnnrun/collective"
	"gnnrun/graph"
	"gnnrun/rank"
	"gnnrun/shard"
)

// Link tasks: every positive edge (u, v) gets k negatives (u, w), w drawn
// from the nodes of v's type uniformly or in proportion to in-degree^0.75
// (word2vec's and PinSAGE's smoothing), by draws keyed by the batch and the
// positive's index in it, so a negative is the same at any rank count.

// NegativeDist is how negative destinations are drawn.
type NegativeDist int

// The distributions of negatives.
const (
	Uniform NegativeDist = iota
	Degree               // in proportion to in-degree^0.75
)

// String returns the distribution's flag name.
func (d NegativeDist) String() string {
	if d == Degree {
		return "degree"
	}
	return "uniform"
}

// ParseNegativeDist parses "uniform" or "degree".
func ParseNegativeDist(s string) (NegativeDist, error) {
	switch s {
	case "uniform":
		return Uniform, nil
	case "degree":
		return Degree, nil
	}
	return 0, fmt.Errorf("sampler: negative distribution %q is not uniform or degree", s)
}

// Exclude says which edges a link batch keeps out of its neighbourhoods.
type Exclude int

// What a link batch excludes.
const (
	ExcludeNone    Exclude = iota
	ExcludeSelf            // the batch's positive edges
	ExcludeReverse         // and their reverse edges: v -> u for a positive u -> v
)

// ParseExclude parses "none", "self" or "reverse".
func ParseExclude(s string) (Exclude, error) {
	switch s {
	case "none", "":
		return ExcludeNone, nil
	case "self":
		return ExcludeSelf, nil
	case "reverse":
		return ExcludeReverse, nil
	}
	return 0, fmt.Errorf("sampler: --exclude %q is not none, self or reverse", s)
}

// LinkOptions are the parameters of link-prediction batches.
type LinkOptions struct {
	Negatives int // per positive edge
	Dist      NegativeDist
	Exclude   Exclude
	// ReverseEtypes maps an edge type to its reverse type ("src:rel:dst" or
	// a unique relation on both sides), for ExcludeReverse on types whose
	// endpoints differ; a type joining a node type to itself is its own
	// reverse unless mapped.
	ReverseEtypes map[string]string
}

// linkSampler draws negatives and exclusions.
type linkSampler struct {
	o       LinkOptions
	etypes  []graph.EdgeType
	reverse []int // per edge type: its reverse type, or -1
	// Per node type: its nodes per partition in new-ID order, cumulated.
	typeCum [][]int64
	// Degree: per node type, each partition's total weight cumulated, and
	// the alias rows (prob float64, alias int64) of every node.
	weightCum [][]float64
	alias     []*shard.Store
}

// newLinkSampler prepares the negatives' distributions; it is collective.
func newLinkSampler(c *collective.Comm, s *shard.Served, o LinkOptions, t shard.Transport) (*linkSampler, error) {
	if o.Negatives < 0 {
		return nil, fmt.Errorf("sampler: %d negatives per positive edge", o.Negatives)
	}
	cfg := s.Config
	ls := &linkSampler{o: o, etypes: cfg.EdgeTypes}
	var err error
	if ls.reverse, err = reverseEtypes(cfg.EdgeTypes, o); err != nil {
		return nil, err
	}
	for ti := range cfg.NodeTypes {
		cum := make([]int64, cfg.NumParts+1)
		for q := range cfg.NumParts {
			lo, hi := s.Book.TypeRange(q, ti)
			cum[q+1] = cum[q] + hi - lo
		}
		ls.typeCum = append(ls.typeCum, cum)
	}
	if o.Dist == Degree && o.Negatives > 0 {
		if err := ls.buildAlias(c, s, t); err != nil {
			ls.close()
			return nil, err
		}
	}
	return ls, nil
}

// reverseEtypes resolves the reverse of every edge type for exclusions.
func reverseEtypes(etypes []graph.EdgeType, o LinkOptions) ([]int, error) {
	rev := make([]int, len(etypes))
	for t, et := range etypes {
		rev[t] = -1
		if et.Src == et.Dst {
			rev[t] = t
		}
	}
	for a, b := range o.ReverseEtypes {
		ta, err := findEtype(etypes, a)
		if err != nil {
			return nil, err
		}
		tb, err := findEtype(etypes, b)
		if err != nil {
			return nil, err
		}
		if etypes[ta].Src != etypes[tb].Dst || etypes[ta].Dst != etypes[tb].Src {
			return nil, fmt.Errorf("sampler: %s cannot be the reverse of %s: its endpoints are not swapped", etypes[tb], etypes[ta])
		}
		rev[ta], rev[tb] = tb, ta
	}
	return rev, nil
}

func (ls *linkSampler) close() error {
	var first error
	for _, st := range ls.alias {
		if st == nil {
			continue
		}
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// buildAlias builds, for every node type, the alias table of each served
// partition's nodes weighted by in-degree^0.75, shares the partitions'
// total weights, and opens a store over the tables. It is collective.
func (ls *linkSampler) buildAlias(c *collective.Comm, s *shard.Served, t shard.Transport) error {
	cfg := s.Config
	for ti, nt := range cfg.NodeTypes {
		totals := make([]float64, cfg.NumParts)
		for q := range totals {
			totals[q] = -1
		}
		rows := make([][]byte, len(s.Parts))
		for k, p := range s.Parts {
			lo, hi := s.Book.TypeRange(p.ID, ti)
			w := make([]float64, hi-lo)
			for i := range w {
				local := lo - p.Lo + int64(i)
				w[i] = math.Pow(float64(p.Indptr[local+1]-p.Indptr[local]), 0.75)
			}
			rows[k], totals[p.ID] = aliasRows(w)
		}
		totals, err := collective.Allreduce(c, totals, rank.Max)
		if err != nil {
			return err
		}
		cum := make([]float64, len(totals)+1)
		for q, w := range totals {
			cum[q+1] = cum[q] + w
		}
		ls.weightCum = append(ls.weightCum, cum)
		st, err := shard.NewRowStore(c, s, nt, "negative alias of "+nt, rows, 16, t)
		if err != nil {
			return err
		}
		ls.alias = append(ls.alias, st)
	}
	return nil
}

// aliasRows returns Vose's alias table of weights w, as rows of (probability
// of keeping the column, float64; the alias column, int64), and the weights'
// sum. A draw takes column c uniformly and keeps it with its probability,
// else takes its alias: column i comes with probability w[i]/sum.
func aliasRows(w []float64) ([]byte, float64) {
	n := len(w)
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	prob := make([]float64, n)
	alias := make([]int64, n)
	var small, large []int
	for i, x := range w {
		prob[i] = 0
		if sum > 0 {
			prob[i] = x * float64(n) / sum
		}
		alias[i] = int64(i)
		if prob[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		l, g := small[len(small)-1], large[len(large)-1]
		small, large = small[:len(small)-1], large[:len(large)-1]
		alias[l] = int64(g)
		prob[g] = prob[g] + prob[l] - 1
		if prob[g] < 1 {
			small = append(small, g)
		} else {
			large = append(large, g)
		}
	}
	// What is left is 1 up to rounding.
	for _, i := range large {
		prob[i] = 1
	}
	for _, i := range small {
		if sum > 0 {
			prob[i] = 1
		}
	}
	rows := make([]byte, 16*n)
	for i := range n {
		binary.LittleEndian.PutUint64(rows[16*i:], math.Float64bits(prob[i]))
		binary.LittleEndian.PutUint64(rows[16*i+8:], uint64(alias[i]))
	}
	return rows, sum
}

// negatives draws k destinations for each positive of a batch, of the type
// of its destination. It is collective for the degree distribution over the
// alltoall transport (every rank must call it for every batch, with or
// without positives).
func (ls *linkSampler) negatives(s *shard.Served, key Key, pos []Positive) ([]int64, []int64, error) {
	k := ls.o.Negatives
	src, dst := make([]int64, 0, len(pos)*k), make([]int64, 0, len(pos)*k)
	for i, p := range pos {
		st := NewStream(key, ForNegatives, 0, int64(i))
		ti := s.Book.NodeType(p.Dst)
		for j := range k {
			src = append(src, p.Src)
			if ls.o.Dist == Uniform {
				dst = append(dst, ls.typeNode(s, ti, int64(Below(st.Uint64(uint32(j)), uint64(ls.typeCum[ti][len(ls.typeCum[ti])-1])))))
				continue
			}
			// Degree: a partition by its weight, then a column of its alias
			// table, resolved once the rows are fetched.
			u := Unit(st.Uint64(uint32(3*j))) * ls.weightCum[ti][len(ls.weightCum[ti])-1]
			q := sort.SearchFloat64s(ls.weightCum[ti][1:], u)
			q = min(q, len(ls.weightCum[ti])-2)
			lo, hi := s.Book.TypeRange(q, ti)
			if hi == lo {
				return nil, nil, fmt.Errorf("sampler: no node of type %s has in-edges to draw negatives from", s.Config.NodeTypes[ti])
			}
			dst = append(dst, lo+int64(Below(st.Uint64(uint32(3*j+1)), uint64(hi-lo))))
		}
	}
	if ls.o.Dist == Degree {
		return src, dst, ls.resolveAlias(s, key, pos, dst)
	}
	return src, dst, nil
}

// typeNode returns the x-th node of type ti in new-ID order.
func (ls *linkSampler) typeNode(s *shard.Served, ti int, x int64) int64 {
	cum := ls.typeCum[ti]
	q := sort.Search(len(cum)-1, func(q int) bool { return cum[q+1] > x })
	lo, _ := s.Book.TypeRange(q, ti)
	return lo + x - cum[q]
}

// resolveAlias replaces each drawn column by itself or its alias, with the
// column's probability: one pull of the alias rows per node type.
func (ls *linkSampler) resolveAlias(s *shard.Served, key Key, pos []Positive, cols []int64) error {
	k := ls.o.Negatives
	for ti, st := range ls.alias {
		var ids []int64
		var at []int
		for i, v := range cols {
			if s.Book.NodeType(v) == ti {
				ids, at = append(ids, v), append(at, i)
			}
		}
		rows, err := st.Pull(ids)
		if err != nil {
			return err
		}
		for n, i := range at {
			prob := math.Float64frombits(binary.LittleEndian.Uint64(rows[16*n:]))
			alias := int64(binary.LittleEndian.Uint64(rows[16*n+8:]))
			st := NewStream(key, ForNegatives, 0, int64(i/k))
			u := Unit(st.Uint64(uint32(3*(i%k) + 2)))
			if u > prob {
				_, _, row := s.Book.TypeRow(cols[i])
				cols[i] = cols[i] - row + alias
			}
		}
	}
	return nil
}

// exclusions returns what a batch of positives keeps out of its
// neighbourhoods.
func (ls *linkSampler) exclusions(pos []Positive) ([]Exclusion, error) {
	if ls.o.Exclude == ExcludeNone {
		return nil, nil
	}
	out := make([]Exclusion, 0, 2*len(pos))
	for _, p := range pos {
		out = append(out, Exclusion{Dst: p.Dst, EType: p.EType, EID: p.EID})
		if ls.o.Exclude == ExcludeReverse {
			if err := ls.checkReverse(p.EType); err != nil {
				return nil, err
			}
			out = append(out, Exclusion{Dst: p.Src, EType: ls.reverse[p.EType], EID: -1, Src: p.Dst})
		}
	}
	return out, nil
}

// checkReverse fails when reverse edges are to be excluded for edge type
// et and it has none.
func (ls *linkSampler) checkReverse(et int) error {
	if ls.o.Exclude == ExcludeReverse && ls.reverse[et] < 0 {
		return fmt.Errorf("sampler: --exclude reverse: edge type %s joins two node types; name its reverse type (as src:rel:dst=dst:rev:src)", ls.etypes[et])
	}
	return nil
}
