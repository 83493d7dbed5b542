package sampler

import (
	"testing"

	"gnnrun/collective"
	"gnnrun/internal/testgraph"
)

// The tests check the sampler against the input graph, read plainly (see
// package testgraph): every sampled edge must be an input edge with the
// endpoints and original ID the batch says, with the counts the fanouts
// ask for.

// fixture is a test graph, with the checks of sampled batches as methods.
type fixture struct{ *testgraph.Graph }

// getFixture returns the test graph, dispatched into k partitions.
func getFixture(t *testing.T, hetero bool, k int) *fixture {
	t.Helper()
	return &fixture{testgraph.Get(t, testgraph.Spec{Hetero: hetero, K: k})}
}

func world(t *testing.T, p int, fn func(c *collective.Comm) error) {
	t.Helper()
	testgraph.World(t, p, fn)
}

func worldRun(p int, fn func(c *collective.Comm) error) error { return testgraph.WorldRun(p, fn) }
