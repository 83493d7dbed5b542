package pack

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestStrategyRoundTrip(t *testing.T) {
	h := mustReadCSV(t, "tu-NCI1.csv")
	for _, opts := range [][]Option{nil, {WithAlgo(Reference), WithHeuristic(Sum)}} {
		p := mustPack(t, h, opts...)
		var buf bytes.Buffer
		if err := WriteStrategy(&buf, NewStrategy(p, h, "NCI1")); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("invalid JSON:\n%s", buf.Bytes())
		}
		q, s, err := ReadStrategy(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Validate(h); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(q.Groups, p.Groups) || q.Limits != p.Limits || q.Algo != p.Algo || q.Heuristic != p.Heuristic {
			t.Errorf("round trip changed the packing")
		}
		if s.Packs != p.Packs() || s.Graphs != h.Graphs() || s.Efficiency.Nodes != p.Efficiency().Nodes {
			t.Errorf("summary %+v", s)
		}
	}
}

func TestReadStrategyErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"algo":"ours","limits":{"nodes":5,"edges":5,"graphs":2},"strategy":[{"count":1,"graphs":[[3,3],[3,3]]}]}`, "6 nodes and 6 edges exceed the limits"},
		{`{"algo":"magic","limits":{"nodes":5,"edges":5,"graphs":2}}`, `unknown algorithm "magic"`},
		{`{"algo":"ours","limits":{"nodes":5,"edges":5,"graphs":2},"strategy":[{"count":1,"graphs":[[3]]}]}`, "a graph size is [nodes, edges]"},
		{`{"algo":"ours","limits":{"nodes":0,"edges":5,"graphs":2}}`, "limits must be at least"},
	} {
		if _, _, err := ReadStrategy(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

// Typed constants print the words their parsers read.
func TestNamesRoundTrip(t *testing.T) {
	for _, h := range Heuristics {
		if got, err := ParseHeuristic(h.String()); err != nil || got != h {
			t.Errorf("heuristic %v: %v %v", h, got, err)
		}
	}
	for _, a := range []Algo{Ours, Reference} {
		if got, err := ParseAlgo(a.String()); err != nil || got != a {
			t.Errorf("algo %v: %v %v", a, got, err)
		}
	}
	for _, o := range []Order{LongestFirst, ShortestFirst} {
		if got, err := ParseOrder(o.String()); err != nil || got != o {
			t.Errorf("order %v: %v %v", o, got, err)
		}
	}
	for _, e := range []Effort{Thorough, Quick} {
		if got, err := ParseEffort(e.String()); err != nil || got != e {
			t.Errorf("effort %v: %v %v", e, got, err)
		}
	}
	if hs, err := ParseHeuristics("all"); err != nil || !reflect.DeepEqual(hs, Heuristics) {
		t.Errorf("all: %v %v", hs, err)
	}
	if hs, err := ParseHeuristics("prod, edges"); err != nil || !reflect.DeepEqual(hs, []Heuristic{Product, EdgesOnly}) {
		t.Errorf("list: %v %v", hs, err)
	}
	for _, bad := range []func() error{
		func() error { _, err := ParseHeuristic("median"); return err },
		func() error { _, err := ParseAlgo("best"); return err },
		func() error { _, err := ParseOrder("random"); return err },
		func() error { _, err := ParseEffort("max"); return err },
	} {
		if err := bad(); err == nil || !strings.HasPrefix(err.Error(), "pack: unknown") {
			t.Errorf("bad name: %v", err)
		}
	}
	if Heuristic(9).String() != "Heuristic(9)" || Algo(9).String() != "Algo(9)" {
		t.Error("out-of-range names")
	}
}
