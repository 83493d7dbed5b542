// Package pack batches datasets of many small graphs (molecules, proteins,
// code ASTs) into packs of a static shape with tuple packing, so an
// accelerator that wants fixed tensor sizes wastes little work on padding.
//
// Every graph is a tuple (nodes, edges). A pack holds graphs whose nodes,
// edges and count stay within Limits. The packers work on the 2-D Histogram
// of graph sizes, never on graphs, so their time depends on the number of
// distinct sizes and of packs, not on how the dataset is stored.
//
// Two algorithms are provided. Reference reproduces the published
// longest-pack-first histogram packing of "Tuple Packing: Efficient Batching
// of Small Graphs in Graph Neural Networks" (Graphcore, 2022) exactly,
// including its quirks, so its efficiencies match the paper's Table 2 to the
// last printed digit; it exists to prove that, not to be used. Ours (the
// default) fills one pack at a time with the heaviest graph (under prices
// from the lower bound) that fits and leaves a gap the graphs left can still
// fill exactly, repeats each pack as often as the counts allow, tries a few
// such strategies, and then empties the emptiest packs into the others by
// swaps. On the histograms of testdata it uses fewer packs than the best
// published heuristic, or as many where that is already optimal, and stays
// within 0.7% of the lower bound on all but MUTAG, whose optimum (144 packs)
// is far above the bound (121).
//
// Around the packers: Efficiency and LowerBound judge a Packing, Sweep
// searches a grid of limits for the best shape (SweepShare and Collect
// split it over ranks; a worker's panic comes back as an error), Assign
// gives concrete graphs to packs for an epoch, NewBatch pads one pack to
// its static shape (and Unbatch undoes it), and ReadHistogramCSV, ReadTU
// and ReadOGB read inputs.
// The algorithms are pure functions over slices; only the readers do I/O.
package pack
