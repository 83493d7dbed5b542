package pack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// MarshalJSON writes a tuple as [nodes, edges].
func (t Tuple) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]int{t.Nodes, t.Edges})
}

// UnmarshalJSON reads a tuple written as [nodes, edges].
func (t *Tuple) UnmarshalJSON(b []byte) error {
	var v []int
	if err := json.Unmarshal(b, &v); err != nil || len(v) != 2 {
		return fmt.Errorf("pack: a graph size is [nodes, edges], got %s", b)
	}
	t.Nodes, t.Edges = v[0], v[1]
	return nil
}

// Strategy is a packing as written to and read from JSON: what was packed,
// how, how well, and the packs as lists of graph sizes with repeat counts.
type Strategy struct {
	Dataset    string         `json:"dataset,omitempty"`
	Algo       string         `json:"algo"`
	Heuristic  string         `json:"heuristic,omitempty"` // reference only
	Effort     string         `json:"effort,omitempty"`    // ours only
	Limits     LimitsJSON     `json:"limits"`
	Graphs     int            `json:"graphs"`
	Nodes      int            `json:"nodes"`
	Edges      int            `json:"edges"`
	Packs      int            `json:"packs"`
	LowerBound int            `json:"lower_bound"`
	Efficiency EfficiencyJSON `json:"efficiency"`
	Strategy   []Group        `json:"strategy"`
}

// LimitsJSON is Limits in JSON.
type LimitsJSON struct {
	Nodes  int `json:"nodes"`
	Edges  int `json:"edges"`
	Graphs int `json:"graphs"`
}

// EfficiencyJSON is Efficiency in JSON, in percent.
type EfficiencyJSON struct {
	Nodes          float64 `json:"nodes"`
	Edges          float64 `json:"edges"`
	Harmonic       float64 `json:"harmonic"`
	PublishedNodes float64 `json:"published_nodes"`
	PublishedEdges float64 `json:"published_edges"`
}

// NewStrategy describes packing p of h, the dataset called name.
func NewStrategy(p Packing, h Histogram, name string) Strategy {
	ef := p.Efficiency()
	s := Strategy{
		Dataset: name,
		Algo:    p.Algo.String(),
		Limits:  LimitsJSON{p.Limits.Nodes, p.Limits.Edges, p.Limits.Graphs},
		Graphs:  h.graphs, Nodes: h.nodes, Edges: h.edges,
		Packs:      ef.Packs,
		LowerBound: LowerBound(h, p.Limits),
		Efficiency: EfficiencyJSON{ef.Nodes, ef.Edges, ef.Harmonic, ef.PublishedNodes, ef.PublishedEdges},
		Strategy:   p.Groups,
	}
	if p.Algo == Reference {
		s.Heuristic = p.Heuristic.String()
	} else {
		s.Effort = p.Effort.String()
	}
	return s
}

// Packing returns the packing the strategy describes, checked against its
// limits (not against a dataset: see Packing.Validate).
func (s Strategy) Packing() (Packing, error) {
	algo, err := ParseAlgo(s.Algo)
	if err != nil {
		return Packing{}, err
	}
	p := Packing{Limits: Limits{s.Limits.Nodes, s.Limits.Edges, s.Limits.Graphs}, Algo: algo, Groups: s.Strategy}
	if s.Heuristic != "" {
		if p.Heuristic, err = ParseHeuristic(s.Heuristic); err != nil {
			return Packing{}, err
		}
	}
	if s.Effort != "" {
		if p.Effort, err = ParseEffort(s.Effort); err != nil {
			return Packing{}, err
		}
	}
	if err := p.Limits.check(); err != nil {
		return Packing{}, err
	}
	for i, g := range p.Groups {
		if err := p.checkGroup(g); err != nil {
			return Packing{}, fmt.Errorf("pack: strategy group %d: %w", i, err)
		}
	}
	return p, nil
}

// WriteStrategy writes s as indented JSON, one group of packs per line.
func WriteStrategy(w io.Writer, s Strategy) error {
	groups := s.Strategy
	s.Strategy = nil
	head, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	var buf bytes.Buffer
	buf.Write(bytes.TrimSuffix(head, []byte("null\n}")))
	buf.WriteString("[")
	for i, g := range groups {
		line, err := json.Marshal(g)
		if err != nil {
			return fmt.Errorf("pack: %w", err)
		}
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n  ")
		buf.Write(line)
	}
	buf.WriteString("\n ]\n}\n")
	_, err = w.Write(buf.Bytes())
	return err
}

// ReadStrategy reads a strategy written by WriteStrategy and returns its
// packing.
func ReadStrategy(r io.Reader) (Packing, Strategy, error) {
	var s Strategy
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return Packing{}, s, fmt.Errorf("pack: strategy: %w", err)
	}
	p, err := s.Packing()
	return p, s, err
}
