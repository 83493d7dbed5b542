package parmetis

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestExpQuality(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	for _, name := range strings.Split(os.Getenv("EXP"), ",") {
		g := readMetis(t, "/work/shared/data/graphs/"+name+".graph")
		for _, k := range []int{2, 8, 32, 64} {
			var cuts []int64
			for s := 1; s <= 7; s++ {
				o := Options{Parts: k, Seed: uint64(s)}
				part, err := PartitionSerial(g, o)
				if err != nil {
					t.Fatal(err)
				}
				cuts = append(cuts, EdgeCut(g, part))
			}
			slices.Sort(cuts)
			t.Logf("%s k=%d median %d %v", name, k, cuts[len(cuts)/2], cuts)
		}
	}
}

func TestExpRmatPart(t *testing.T) {
	if os.Getenv("RMATK") == "" {
		t.Skip()
	}
	g := rmatGraph(18, 16, 1)
	for _, ks := range strings.Split(os.Getenv("RMATK"), ",") {
		var k, th int
		fmt.Sscan(ks, &k)
		fmt.Sscan(os.Getenv("TH"), &th)
		var r0, r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
		part, st, err := PartitionSerialStats(g, Options{Parts: k, Seed: 1, Threads: th})
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		if err != nil {
			t.Fatal(err)
		}
		cpu := float64(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) / 1e9
		t.Logf("k=%d cut %d imb %.4f cpu %.2fs %v", k, EdgeCut(g, part), st.Imbalance, cpu, st.Timers.String())
	}
}

func TestExpMeshProfile(t *testing.T) {
	if os.Getenv("MESH") == "" {
		t.Skip()
	}
	g := readMetis(t, "/work/shared/data/graphs/"+os.Getenv("MESH")+".graph")
	for range 20 {
		for _, k := range []int{2, 8, 64} {
			PartitionSerial(g, Options{Parts: k, Seed: 1, Threads: 1})
		}
	}
}

func TestExpLevels(t *testing.T) {
	if os.Getenv("LEVELS") == "" {
		t.Skip()
	}
	g := readMetis(t, "/work/shared/data/graphs/"+os.Getenv("LEVELS")+".graph")
	o, _ := Options{Parts: 2}.normalized(g.N(), 1)
	c := newSerialCtrl(o, 1)
	for _, l := range c.coarsen(g, nil, c.coarsenTo, newRand(1, 1)) {
		t.Logf("n=%d m=%d", l.g.N(), len(l.g.Adjncy)/2)
	}
}

func TestExpMC(t *testing.T) {
	if os.Getenv("MC") == "" {
		t.Skip()
	}
	var sc int
	fmt.Sscan(os.Getenv("MC"), &sc)
	g := rmatGraph(sc, 16, 1)
	n := g.N()
	var cons []int
	for _, s := range strings.Split(os.Getenv("CONS"), ",") {
		var x int
		fmt.Sscan(s, &x)
		cons = append(cons, x)
	}
	nc := len(cons)
	g.NCon = nc
	g.Vwgt = make([]int64, nc*n)
	for v := range n {
		for i, c := range cons {
			switch c {
			case 0:
				g.Vwgt[nc*v+i] = 1
			case 1:
				if v < n/8 {
					g.Vwgt[nc*v+i] = 1
				}
			case 2:
				g.Vwgt[nc*v+i] = g.Xadj[v+1] - g.Xadj[v]
			}
		}
	}
	for _, k := range []int{2, 8, 64} {
		var r0, r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
		part, st, err := PartitionSerialStats(g, Options{Parts: k, Seed: 1, Threads: 1})
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		cpu := float64(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) / 1e9
		t.Logf("k=%d cut %d imb %.4f err %v cpu %.2fs", k, EdgeCut(g, part), st.Imbalance, err, cpu)
	}
}
