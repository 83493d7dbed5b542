package sampler

import (
	"fmt"

	"gnnrun/graph"
)

// Batch is a sampled mini-batch: the blocks, and what a trainer needs
// beside them. Its input nodes, whose features the loader gathers, are
// Blocks[0].Nodes.
type Batch struct {
	Epoch  int
	Number int64
	Blocks []*Block
	// Seeds are the last block's destinations: the seed nodes of a node
	// task; for a link task the distinct endpoints of its positive and
	// negative edges, in the order they first appear (positive sources,
	// positive destinations, negative destinations).
	Seeds []int64
	// Labels are the seeds' rows of the label array (node tasks with
	// Options.Labels), one row per seed.
	Labels *graph.Tensor
	// Link tasks: the positive edges, the negative ones (new IDs), and
	// both as indices into Seeds.
	Pos                []Positive
	NegSrc, NegDst     []int64
	PosPairs, NegPairs [2][]int32
}

// Items returns how many training items the batch holds: its positive
// edges for a link task, its seeds for a node task; 0 for an empty batch.
func (b *Batch) Items() int {
	if len(b.Pos) > 0 {
		return len(b.Pos)
	}
	return len(b.Seeds)
}

// LabelSpec names the node array a node task's batches carry for their
// seeds.
type LabelSpec struct{ NType, Name string }

// SampleTask samples a task of a Plan: a node task's seeds, or a link
// task's positives with their negatives, the batch's exclusions applied.
// With the alltoall transport (or degree negatives or labels over it) it is
// collective.
func (s *Sampler) SampleTask(t Task) (*Batch, error) {
	b := &Batch{Epoch: t.Epoch, Number: t.Number, Seeds: t.Seeds, Pos: t.Pos}
	var excl []Exclusion
	if s.link != nil {
		var err error
		if err = s.linkSeeds(b); err == nil {
			excl, err = s.link.exclusions(t.Pos)
		}
		if err != nil {
			return nil, err
		}
	} else if len(t.Pos) > 0 {
		return nil, fmt.Errorf("sampler: a link task given to a sampler made without link options")
	}
	blocks, err := s.Sample(t.Epoch, t.Number, b.Seeds, excl)
	if err != nil {
		return nil, err
	}
	b.Blocks = blocks
	if s.labels != nil {
		rows, err := s.labels.Pull(b.Seeds)
		if err != nil {
			return nil, err
		}
		b.Labels = &graph.Tensor{DType: s.labelType, Shape: append([]int64{int64(len(b.Seeds))}, s.labelShape...), Data: rows}
	}
	return b, nil
}

// linkSeeds draws the negatives of a link batch and lists its seeds: the
// distinct endpoints, with every edge's endpoints as indices.
func (s *Sampler) linkSeeds(b *Batch) error {
	var err error
	b.NegSrc, b.NegDst, err = s.link.negatives(s.served, BatchKey(s.o.Seed, b.Epoch, b.Number), b.Pos)
	if err != nil {
		return err
	}
	s.ids.Reset(2*len(b.Pos) + len(b.NegDst))
	b.Seeds = nil
	index := func(v int64) int32 {
		i, had := s.ids.Insert(v, int32(len(b.Seeds)))
		if !had {
			b.Seeds = append(b.Seeds, v)
		}
		return i
	}
	for _, p := range b.Pos {
		b.PosPairs[0] = append(b.PosPairs[0], index(p.Src))
	}
	for _, p := range b.Pos {
		b.PosPairs[1] = append(b.PosPairs[1], index(p.Dst))
	}
	for i := range b.NegSrc {
		b.NegPairs[0] = append(b.NegPairs[0], b.PosPairs[0][i/max(1, s.link.o.Negatives)])
		b.NegPairs[1] = append(b.NegPairs[1], index(b.NegDst[i]))
	}
	return nil
}

// CheckPlan fails when the sampler cannot sample the plan's tasks: a link
// plan needs link options, and reverse exclusions a reverse of its edge
// type.
func (s *Sampler) CheckPlan(pl *Plan) error {
	if pl.EdgeType() < 0 {
		return nil
	}
	if s.link == nil {
		return fmt.Errorf("sampler: an edge plan needs a sampler made with link options")
	}
	return s.link.checkReverse(pl.EdgeType())
}
