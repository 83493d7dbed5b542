package sampler

import (
	"fmt"
	"strconv"
	"strings"

	"gnnrun/graph"
	"gnnrun/shard"
)

// Options are the parameters of neighbour sampling.
type Options struct {
	// Fanouts are the in-edges drawn per destination node at each layer,
	// the first for the hop nearest the seeds (as GraphSAGE and PyG read
	// "15,10,5"; DGL lists them the other way round); -1 takes all of
	// them. They apply to every edge type unless EtypeFanouts names it.
	Fanouts []int
	// EtypeFanouts overrides Fanouts for edge types, keyed by "src:rel:dst"
	// or by a relation name no other type shares; one value per layer, 0
	// to draw none of the type's edges.
	EtypeFanouts map[string][]int
	// Replace draws with replacement (an edge may come several times).
	Replace bool
	// Prob names an edge array of every sampled edge type: in-edges are
	// drawn with probability proportional to it (it must be finite and
	// non-negative; edges of weight 0 are never drawn, and a node with no
	// in-edge of positive weight draws none). Empty: uniform.
	Prob string
	// Transport is how frontier nodes whose in-edges live on other ranks
	// are sampled: by an all-to-all exchange with their owners, or by
	// one-sided reads of the owners' arrays. Both give the same batches.
	Transport shard.Transport
	// Seed keys every draw, with the epoch and the batch number.
	Seed uint64
	// OrigEIDs fills Block.OrigEIDs with the input's type-wise edge IDs.
	OrigEIDs bool
	// Budget bounds the bytes one rank receives in one step of an
	// all-to-all exchange (default 256 MiB).
	Budget int
	// HostGraph samples the partitions the other ranks of this host serve
	// as this rank's own, from their files mapped here
	// (shard.OpenHostParts), instead of asking those ranks: only the
	// frontier nodes of other hosts are remote. Their edge table is held
	// once per host, in shared memory (newHostEdgeTable: 8 bytes an edge
	// of the host's partitions, 16 past 2^64 node and edge IDs together);
	// where the host's shared memory refuses it, the host's ranks ask
	// each other as without (Sampler.HostGraphOff says why). The batches
	// are the same either way.
	HostGraph bool
	// Link makes link-prediction batches (SampleTask of edge tasks).
	Link *LinkOptions
	// Labels names the node array node batches carry for their seeds.
	Labels LabelSpec
}

// ParseFanouts parses "15,10,5" (-1: all in-edges). Every value must be -1
// or positive, and there must be at least one.
func ParseFanouts(s string) ([]int, error) {
	return parseFanoutList(s, false)
}

func parseFanoutList(s string, zeroOK bool) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("sampler: no fanouts given (want e.g. 15,10,5: one per layer, the hop nearest the seeds first)")
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("sampler: fanout %q of %q is not a whole number", f, s)
		}
		if v < -1 || (v == 0 && !zeroOK) {
			allowed := "-1 (all in-edges) or positive"
			if zeroOK {
				allowed = "-1 (all), 0 (none) or positive"
			}
			return nil, fmt.Errorf("sampler: fanout %d in %q: each must be %s", v, s, allowed)
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseEtypeFanout parses "ETYPE=F1,F2,..." (0 allowed: draw none of the
// type's edges) into the type's key and its fanouts.
func ParseEtypeFanout(s string) (string, []int, error) {
	et, list, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(et) == "" {
		return "", nil, fmt.Errorf("sampler: per-type fanout %q is not ETYPE=F1,F2,...", s)
	}
	f, err := parseFanoutList(list, true)
	return strings.TrimSpace(et), f, err
}

// layerFanouts resolves the options into one fanout per layer and edge
// type of the graph's types: out[layer][etype].
func (o *Options) layerFanouts(etypes []graph.EdgeType) ([][]int, error) {
	if len(o.Fanouts) == 0 {
		return nil, fmt.Errorf("sampler: no fanouts given")
	}
	for _, f := range o.Fanouts {
		if f < -1 || f == 0 {
			return nil, fmt.Errorf("sampler: fanout %d: each must be -1 (all in-edges) or positive", f)
		}
	}
	per := make([][]int, len(etypes))
	for key, fs := range o.EtypeFanouts {
		t, err := findEtype(etypes, key)
		if err != nil {
			return nil, err
		}
		if per[t] != nil {
			return nil, fmt.Errorf("sampler: edge type %s given two per-type fanouts", etypes[t])
		}
		if len(fs) != len(o.Fanouts) {
			return nil, fmt.Errorf("sampler: edge type %s has %d per-type fanouts, the sampling has %d layers", etypes[t], len(fs), len(o.Fanouts))
		}
		per[t] = fs
	}
	out := make([][]int, len(o.Fanouts))
	for l, f := range o.Fanouts {
		out[l] = make([]int, len(etypes))
		for t := range etypes {
			out[l][t] = f
			if per[t] != nil {
				out[l][t] = per[t][l]
			}
		}
	}
	return out, nil
}

// findEtype returns the index of the edge type named "src:rel:dst", or by a
// relation name that names exactly one type.
func findEtype(etypes []graph.EdgeType, key string) (int, error) {
	found := -1
	for t, et := range etypes {
		if et.String() == key {
			return t, nil
		}
		if et.Rel == key {
			if found >= 0 {
				return 0, fmt.Errorf("sampler: relation %q names edge types %s and %s; write src:rel:dst", key, etypes[found], et)
			}
			found = t
		}
	}
	if found < 0 {
		names := make([]string, len(etypes))
		for t, et := range etypes {
			names[t] = et.String()
		}
		return 0, fmt.Errorf("sampler: no edge type %q (the graph has %s)", key, strings.Join(names, ", "))
	}
	return found, nil
}
