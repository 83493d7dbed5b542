package parmetis

import (
	"math"

	"gnnrun/parmetis/serial"
)

// Options are the parameters of a distributed partitioning: those of the
// serial partitioner (parts, bounds, targets, seed, tries, threads), which
// partitions the graphs one rank holds whole, and the limits of the
// distributed scheme. The zero value of each limit chooses for the graph.
type Options struct {
	serial.Options
	// MaxReplicated bounds the coarsest graph, in vertices plus arcs, that
	// every rank holds whole for the initial partition. 0 picks
	// max(1000000, (N+arcs)/(3P)), so a rank's share of memory stays
	// O((N+M)/P), and inside PartitionRB the arcs a lone rank may
	// partition (see splitBudget); a ceiling so picked may be exceeded by
	// ceilingSlack. On one rank the whole graph is partitioned serially,
	// unless Partition finds communities (see probeCommunities) or a dense
	// core (see hangsOnCore).
	MaxReplicated int64
	// MaxLevels bounds the levels of distributed coarsening (default 40).
	MaxLevels int
	// Coarsening picks the grouping of vertices (default CoarsenAuto).
	Coarsening Coarsening
	// Method picks recursive bisection or direct k-way (default MethodAuto).
	Method Method

	// bisection marks a bisection inside PartitionRB: its balancing may
	// leave it above its share of the bound (an odd vertex too many), which
	// the final k-way balancing against the whole bound mends or reports.
	bisection bool
	// coarsenFirst: a graph above replicateFloor is coarsened one level
	// before it is replicated, even under MaxReplicated (see PartitionRB).
	coarsenFirst bool
	// firstLeader is the first level's matching, made already (see
	// Partition), or nil.
	firstLeader []int64
	// start is a partition of the owned vertices to refine on the graph
	// itself, without coarsening (a core split, see rbRecurse), or nil.
	start []int32
	// core is PartitionRB's decision whether the graph hangs on a dense
	// core, where Partition made it already (1; see rbStats.core), or 0.
	core int8
}

// defaultMaxLevels is Options.MaxLevels' default.
const defaultMaxLevels = 40

// normalized returns o with the defaults filled in for a graph of n
// vertices and ncon constraints: the serial partitioner's (see
// serial.Options.Normalized: bounds, targets, tries) and MaxLevels. It
// fails on options no partition of such a graph can meet.
func (o Options) normalized(n int64, ncon int) (Options, error) {
	so, err := o.Options.Normalized(int(min(n, math.MaxInt32)), ncon)
	if err != nil {
		return o, err
	}
	o.Options = so
	if o.MaxLevels == 0 {
		o.MaxLevels = defaultMaxLevels
	}
	return o, nil
}

// Tuning of the distributed partitioner, in the order of the phases.
const (
	// replicateFloor is the size, in vertices plus arcs, below which a
	// graph is always replicated whole (about 16 MB): bounded by a
	// constant, so memory stays O((N+M)/P), and on graphs this small the
	// serial partitioner's quality beats any distributed refinement.
	replicateFloor = 1_000_000

	// collapseRatio: a first star level that leaves fewer than one vertex
	// in collapseRatio has collapsed communities (see probeCommunities): planted
	// R-MAT scale 20 leaves one in 105, R-MAT one in 4.
	collapseRatio = 16
	// probeMaxParts is the most parts for which probeCommunities looks for
	// communities.
	probeMaxParts = 8

	// ceilingSlack is how far above a replication ceiling the partitioner
	// chose itself a graph may be and still be replicated rather than
	// coarsened once more. Near the ceiling, R-MAT's dense core coarsens
	// by a few percent a level (3.09 → 2.85 M vertices plus arcs against
	// a ceiling of 3.07 M), and the level after such a stall raises the
	// coarse-vertex weight limit: each such level costs a contraction and
	// a refinement and gains nothing. With 10%, rmat18 K = 64 at np = 2
	// skips five levels in three bisections and ran in 13.6 s against
	// 15.1 s (medians of six interleaved runs), cut +0.2%.
	ceilingSlack = 0.1

	// skewedDegree is the ratio of the highest to the average degree above
	// which CoarsenAuto treats a graph as power-law: meshes stay below 3.
	skewedDegree = 20

	// matchPasses is the number of request/grant passes per level, as in
	// ParMETIS.
	matchPasses = 4

	// When more than 1/unmatchedForStars of the vertices stay unmatched
	// after the matching passes, the unmatched ones join stars.
	unmatchedForStars = 4

	// A coarse vertex may hold at most coarseVertexSlack/(coarsenPerPart*K)
	// of a constraint's total, so the coarsest graph can still be balanced
	// (METIS' rule of thumb: 1.5 times a vertex's share of a graph
	// coarsened to 20K vertices). (A tighter limit for K < 5, 1.5/100,
	// stalled the coarsening of R-MAT's dense core in bisections: a level
	// shrank by 4% until the limit was relaxed; with 1.5/40 rmat20 K = 2 at
	// np = 2 took 18% less time for the same cuts over seeds 1-3, and the
	// meshes' cuts did not change.)
	coarseVertexSlack = 1.5
	coarsenPerPart    = 20

	// stallRelaxations is how many times a level that shrank the graph by
	// under 10% may double the coarse-vertex weight limit before the
	// coarsening gives up.
	stallRelaxations = 6

	// A coarsest graph of at most smallCoarsest vertices plus arcs is
	// partitioned initialRuns times in all, each a complete serial
	// multilevel run; on meshes the best of 4 runs is a few percent below
	// a single run's median, for a time that is small on graphs this size.
	smallCoarsest = 2_000_000
	initialRuns   = 4

	// replicaKeep: the serial runs on a coarsest graph that finer levels
	// will refine see, of each vertex's edges, the replicaKeep heaviest
	// and those its neighbours keep (see sparsify). The dense cores of
	// power-law graphs leave coarsest graphs of 8-13 M arcs, replicated
	// on every rank, whose serial runs were a third of a rank's time (R-MAT
	// 20, K = 64, 2 ranks: 1.0-1.5 s for each of five bisections); kept to
	// 12 a vertex, 0.1-0.35 s, for cuts 0.5% below at K = 64, 1.3% at
	// K = 4, and the same on planted communities. 6 cut 2-3% more; 16 and
	// 24 were within the same 2% as 12.
	replicaKeep = 12

	// coreSplitCut: a power-law graph whose degree split (see
	// degreeSplit) cuts at most this fraction of its edge weight hangs on
	// a dense core, and every bisection of its recursive bisection starts
	// from its side's degree split instead of coarsening. R-MAT 20's is
	// cut 4.4% by it (its dense core, bisected again at K = 64, 11%, 18%,
	// 23%, 31% and 35%); the planted graph's communities 31%, where the
	// split led to a 6% larger cut than the multilevel scheme's.
	coreSplitCut = 0.25

	// refinePasses is the number of two-phase greedy passes per level.
	refinePasses = 4

	// refineGain: a level's refinement stops after a pass that lowered the
	// cut by less than this fraction (0.1%).
	refineGain = 0.001

	// fmFruitless bounds the moves an FM phase makes past its best prefix
	// before it gives up; those moves are then rolled back. On power-law
	// graphs the finest level's FM does most of a bisection's work (R-MAT
	// scale 20: from 4.0 M projected to 0.47 M), and it needs a long
	// climb: 256 stopped it at 0.52-0.56 M over three seeds at np = 2, 2048
	// reaches 0.47-0.48 M in the same time; meshes' cuts do not change.
	fmFruitless = 2048

	// balanceRounds bounds the rounds of the balancing phase; each round
	// moves every rank's share of the excess, so few are needed.
	balanceRounds = 32
	// unlockKeep is the share of each constraint's allowance over its
	// target that the bounds keep while unlock balances constraints that
	// lock each other.
	unlockKeep = 0.875

	// splitBudget is the fraction of a rank's share of the input's arcs
	// that a split may give one rank to partition alone. The serial
	// partitioner needed about 100 bytes per arc, eight times what the
	// distributed graph does (a third less for its coarse levels since
	// their edge weights are 32-bit), so a rank holding 0.8 of its share
	// (0.4 of the graph at P = 2) peaks near half of what one rank needs
	// for the whole graph.
	splitBudget = 0.8

	// finishGain: the greedy k-way passes after the bisections of
	// PartitionRB gain little: on R-MAT scale 18 at K = 8, 32, 64, the
	// first pass 0.5%, each later one 0.1-0.3%, for about a tenth of the
	// partitioning time each. They stop after a pass under 0.5%: cuts
	// 0.2-0.5% higher, finish 1.4 -> 0.8 s.
	finishGain = 0.005
)

// Thresholds the tests lower to reach the paths of big graphs on small ones.
var (
	// isolatedFloor is the size (vertices plus arcs) up to which graphs are
	// left to the serial partitioner's own setting aside of the isolated
	// vertices: replicateFloor.
	isolatedFloor int64 = replicateFloor

	// pendingCeiling bounds the work of the pieces of a recursive
	// bisection deferred and not solved yet: past it they are solved at
	// once, so deferral holds at most a few pieces' memory.
	pendingCeiling int64 = 8 * replicateFloor
)
