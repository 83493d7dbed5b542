package parteval_test

import (
	"fmt"

	"gnnrun/parteval"
)

// A partitioner's in-memory graph, a path 0-1-2-3 in CSR form with edge
// weights and two weights per vertex (nodes, and a mask set on 0 and 1),
// split down the middle: the cut is the middle edge, and the mask sits
// wholly in part 0.
func ExampleEvaluate() {
	g, err := parteval.FromCSR([]int64{0, 1, 3, 5, 6}, []int32{1, 0, 2, 1, 3, 2}, []int64{4, 4, 7, 7, 2, 2})
	if err != nil {
		panic(err)
	}
	cons, err := parteval.SplitWeights([]int64{1, 1, 1, 1, 1, 0, 1, 0}, 2, "nodes", "train")
	if err != nil {
		panic(err)
	}
	res, err := parteval.Evaluate(g, []int32{0, 0, 1, 1}, 2, nil, cons)
	if err != nil {
		panic(err)
	}
	fmt.Println("cut", res.Cut)
	for _, b := range res.Balance {
		fmt.Printf("%s %v imbalance %.2f\n", b.Name, b.Parts, b.Imbalance)
	}
	// Output:
	// cut 7
	// nodes [2 2] imbalance 1.00
	// train [2 0] imbalance 2.00
}
