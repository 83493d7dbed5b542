package serial

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"gnnrun/graph"
)

// Phase names one step of the serial multilevel partitioner; Timers keeps
// the wall time spent in each.
type Phase int

// The phases of the serial partitioner, in the order a bisection runs them.
const (
	PhaseMatch       Phase = iota // heavy-edge and 2-hop matching
	PhaseContract                 // building the coarse graph
	PhaseInitPart                 // greedy graph growing on the coarsest graph
	PhaseProject                  // carrying a partition one level up
	PhaseRefine2Way               // 2-way FM refinement
	PhaseBalance2Way              // 2-way balancing
	PhaseSplit                    // splitting a bisected graph in two
	PhaseRefineKway               // k-way greedy refinement
	PhaseBalanceKway              // k-way balancing
	numPhases
)

var phaseNames = [numPhases]string{"match", "contract", "initpart", "project", "refine2way", "balance2way", "split", "refinekway", "balancekway"}

// String returns the phase's short name, as used in reports.
func (p Phase) String() string {
	if p < 0 || p >= numPhases {
		return fmt.Sprintf("phase(%d)", int(p))
	}
	return phaseNames[p]
}

// Timers holds the time spent in each phase of one serial partitioning,
// summed over the goroutines that ran it.
type Timers [numPhases]time.Duration

// Total returns the sum over the phases.
func (t *Timers) Total() time.Duration {
	var s time.Duration
	for _, d := range t {
		s += d
	}
	return s
}

// String lists the phases with non-zero time, e.g. "match=12ms contract=30ms".
func (t *Timers) String() string {
	var b strings.Builder
	for p, d := range t {
		if d == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%v", Phase(p), d.Round(time.Millisecond))
	}
	return b.String()
}

// Tuning of the serial partitioner. The values follow METIS 5 where it has
// one (coarsening to 20 vertices per bisection, 100 with several
// constraints; 10 FM passes; a level that keeps more than 85% of its
// vertices ends the coarsening; 2-hop matching when over 10% stay
// unmatched).
const (
	coarsenTo1       = 20
	coarsenToMC      = 100
	coarsenFraction  = 0.85
	unmatchedFor2Hop = 0.10
	fmPasses         = 10
	kwayPasses       = 10
	// kwayMinGain: k-way refinement stops after a pass that lowers the cut
	// by less than 1/kwayMinGain of it.
	kwayMinGain = 1000
	// kwayCoarsenTo times K is where the k-way cycle stops coarsening.
	kwayCoarsenTo = 20
	// growTriesMin is the least number of greedy growings per coarsest
	// graph; Options.Tries raises it. METIS uses 5 to 7.
	growTriesMin = 6
	// skewFactor: a graph whose largest degree exceeds this many times the
	// average is treated as power-law (see skewed).
	skewFactor = 10
	// sparseKeep times the input's average degree is how many edges a
	// vertex of a dense coarse level keeps (see sparsify): on R-MAT this
	// saves 10-25% of the time at the same cut, and meshes never get
	// that dense.
	sparseKeep = 2
)

// ctrl carries the options, the tuning, the per-phase timers and the
// reusable buffers through every phase of one serial partitioning. It is not
// safe for concurrent use: a goroutine takes a fork.
type ctrl struct {
	o    Options // normalized
	ncon int
	// coarsenTo ends the coarsening of a bisection at this many vertices.
	coarsenTo int
	tries     int
	timers    Timers
	ws        workspace
	// slots holds one token per goroutine that may run besides the
	// callers'; shared by all forks.
	slots chan struct{}
}

func newCtrl(o Options, ncon int) *ctrl {
	c := &ctrl{o: o, ncon: ncon, coarsenTo: coarsenTo1, tries: max(o.Tries, growTriesMin)}
	if ncon > 1 {
		c.coarsenTo = coarsenToMC
	}
	threads := o.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	c.slots = make(chan struct{}, max(threads-1, 0))
	return c
}

// fork returns a ctrl with the same options and its own buffers and timers.
func (c *ctrl) fork() *ctrl {
	return &ctrl{o: c.o, ncon: c.ncon, coarsenTo: c.coarsenTo, tries: c.tries, slots: c.slots}
}

// add adds f's phase times to c's; f must be done.
func (c *ctrl) add(f *ctrl) {
	for p, d := range f.timers {
		c.timers[p] += d
	}
}

// parallel runs a and b, b on a fork in another goroutine when a slot is
// free, and returns when both are done. a and b must touch disjoint data.
//
// A panic in b's goroutine would end the process there, past the recovery
// of the program's own goroutines (gnnrun's rank-naming failure path and
// MPI_Abort): it is recovered in the goroutine as a *PanicError and raised
// again here once a is done, to reach the caller's recovery (see catch). A
// panic in a still waits for b, so no goroutine outlives the call.
func (c *ctrl) parallel(a func(*ctrl), b func(*ctrl)) {
	select {
	case c.slots <- struct{}{}:
	default:
		a(c)
		b(c)
		return
	}
	f := c.fork()
	done := make(chan *PanicError, 1)
	go func() {
		defer func() { done <- recovered(recover()) }()
		b(f)
	}()
	defer func() {
		failed := <-done
		<-c.slots
		c.add(f)
		if failed != nil {
			panic(failed)
		}
	}()
	a(c)
}

// since adds the time elapsed from t0 to phase p: defer c.since(p, time.Now()).
func (c *ctrl) since(p Phase, t0 time.Time) { c.timers[p] += time.Since(t0) }

// newRand returns a generator keyed by the seed and the caller's purpose, so
// each bisection draws the same numbers however the recursion is scheduled.
func newRand(seed uint64, key ...uint64) *rand.Rand {
	h := uint64(0x9e3779b97f4a7c15)
	for _, k := range key {
		h = graph.Mix64((h ^ k) + 0x9e3779b97f4a7c15)
	}
	return rand.New(rand.NewPCG(seed, h))
}

// randomPerm fills p with a random permutation of 0..len(p)-1.
func randomPerm(p []int32, rng *rand.Rand) {
	for i := range p {
		p[i] = int32(i)
	}
	for i := len(p) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
}

// constraintTotals returns the total weight of each constraint of g.
func constraintTotals(g *Graph) []int64 {
	t := make([]int64, g.NCon)
	for i, w := range g.Vwgt {
		t[i%g.NCon] += w
	}
	return t
}

// inverseTotals returns 1/t per constraint, 0 where the total is 0, so a
// constraint nobody carries never counts as violated.
func inverseTotals(t []int64) []float64 {
	inv := make([]float64, len(t))
	for i, x := range t {
		if x > 0 {
			inv[i] = 1 / float64(x)
		}
	}
	return inv
}

// ceilLog2 returns the number of bisection levels needed for k parts.
func ceilLog2(k int) int {
	d := 0
	for (1 << d) < k {
		d++
	}
	return d
}

// levelBound returns the per-bisection bound that compounds to ub over
// depth levels of recursive bisection.
func levelBound(ub float64, depth int) float64 {
	if depth <= 1 {
		return ub
	}
	return math.Pow(ub, 1/float64(depth))
}
