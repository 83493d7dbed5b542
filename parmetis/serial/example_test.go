package serial_test

import (
	"fmt"

	"gnnrun/parmetis/serial"
)

// A 4x2 grid cut into two parts: the cheapest balanced cut crosses the two
// middle edges.
func ExamplePartition() {
	// 0-1-2-3
	// | | | |
	// 4-5-6-7
	g := &serial.Graph{
		NCon:   1,
		Xadj:   []int64{0, 2, 5, 8, 10, 12, 15, 18, 20},
		Adjncy: []int32{1, 4, 0, 2, 5, 1, 3, 6, 2, 7, 0, 5, 1, 4, 6, 2, 5, 7, 3, 6},
		Vwgt:   []int64{1, 1, 1, 1, 1, 1, 1, 1},
	}
	g.Adjwgt = make([]int32, len(g.Adjncy))
	for i := range g.Adjwgt {
		g.Adjwgt[i] = 1
	}
	part, err := serial.Partition(g, serial.Options{Parts: 2, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println("cut:", serial.EdgeCut(g, part))
	fmt.Println("same part:", part[0] == part[1] && part[0] == part[4] && part[0] == part[5])
	// Output:
	// cut: 2
	// same part: true
}
