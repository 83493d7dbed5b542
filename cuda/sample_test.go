package cuda

import (
	"strings"
	"testing"
)

// A CSC and a layer are checked before anything reaches a GPU: each wrong
// length, fanout and frontier node is refused with a message naming it.
func TestSampleChecks(t *testing.T) {
	good := func() CSC {
		return CSC{TypedIndptr: []int64{0, 1, 1, 3, 3}, EdgeTypes: 2, Indices32: []int32{0, 1, 2}, NumInner: 2, Lo: 10, Local2Global: []int64{10, 11, 40}}
	}
	c := good()
	if err := c.check(); err != nil {
		t.Fatalf("a valid CSC: %v", err)
	}
	if err := c.checkLayer([]int64{11, 10}, []int{-1, 0}); err != nil {
		t.Fatalf("a valid layer: %v", err)
	}
	for _, bad := range []struct {
		want string
		edit func(c *CSC)
	}{
		{"0 edge types", func(c *CSC) { c.EdgeTypes = 0 }},
		{"typed indptr of 5 entries for 2 inner nodes of 1 edge types", func(c *CSC) { c.EdgeTypes = 1 }},
		{"int32 or as int64", func(c *CSC) { c.Indices64 = []int64{0, 1, 2} }},
		{"int32 or as int64", func(c *CSC) { c.Indices32 = nil }},
		{"2 indices for the indptr's 3 edges", func(c *CSC) { c.Indices32 = c.Indices32[:2] }},
		{"1 local nodes for 2 inner nodes", func(c *CSC) { c.Local2Global = c.Local2Global[:1] }},
	} {
		c := good()
		bad.edit(&c)
		if err := c.check(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("check: %v, want an error saying %q", err, bad.want)
		}
	}
	for _, bad := range []struct {
		want     string
		frontier []int64
		fanouts  []int
	}{
		{"1 fanouts for 2 edge types", nil, []int{3}},
		{"fanout -2 of edge type 1", nil, []int{3, -2}},
		{"frontier node 12 is not among the partition's inner nodes [10, 12)", []int64{10, 12}, []int{1, 1}},
		{"frontier node 9 is not", []int64{9}, []int{1, 1}},
	} {
		if err := c.checkLayer(bad.frontier, bad.fanouts); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("checkLayer: %v, want an error saying %q", err, bad.want)
		}
	}
}
