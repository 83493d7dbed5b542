package main

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gnnrun/collective"
	"gnnrun/cuda"
	"gnnrun/prefetch"
	"gnnrun/python"
	"gnnrun/report"
	"gnnrun/sampler"
	"gnnrun/shard"
	"gnnrun/train"
)

type trainArgs struct {
	pipelineFlags
	device            string
	eval, evalFanouts string
	evalBatch         int
	evalEvery         int
	pad               string
	progressEvery     time.Duration
	checkpoint        string
	checkpointEvery   string
	checkpointKeep    int
	tag, ids          bool
}

var trainFlags trainArgs

func init() {
	register(&command{
		name:    "train",
		summary: "run the user's trainer on every rank (-- CMD ...) and hand it the pipeline's batches through shared memory",
		usage:   "train PARTDIR [loader flags] [--eval val_mask,test_mask] [--eval-fanouts F] [--tag-output] -- CMD [ARGS...]",
		help: `Every rank serves its partitions, runs the mini-batch pipeline (as gnnrun
loader does: sample, gather, copy to the device reusing the rows already
there) and starts CMD as its child, the rank's trainer, which takes the
batches with the Python client, one loader per split as DGL and PyG
scripts hold them (import gnnrun; train_loader = gnnrun.loader("train");
val_loader = gnnrun.loader("val"); each for over train_loader is the next
epoch; gnnrun puts the client on the trainer's PYTHONPATH, from
$TMPDIR/gnnrun-<uid>, a directory it checks only you can write).

Padding (--pad): every rank runs as many training batches an epoch. With
repeat (the default), a rank past the epoch's last seeds runs a full batch
of seeds repeated from the epoch's start (as PyTorch's DistributedSampler
pads; those seeds count twice in that epoch's gradient), so no training
batch is empty; no trainer is handed an empty evaluation batch either (a
rank's evaluation loader has fewer batches instead). With empty, those
ranks get empty batches, evaluation's included.

The trainer's environment has what torch.distributed.init_process_group
needs (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE; MASTER_ADDR and
MASTER_PORT: an address of rank 0's host that every rank has connected to
before the trainers start, 127.0.0.1 when all ranks share it, and a port
free there; GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME: the host's interface
towards it; set them yourself to override, GNNRUN_MASTER_CHECK=off to skip
the check) and GNNRUN_CONTROL_FD, gnnrun's control socket. No address that
every rank reaches fails the job in seconds, saying what to set.
Batches pass without copies on the trainer's side: the features are
the device buffers themselves (shared memory on the host device), the blocks
and labels a shared slot; the trainer says when it is done with a batch.

Evaluation: after every --eval-every epochs and after the last, the batches
of each --eval set follow the epoch's training batches, every node of the
set in exactly one batch over the ranks, sampled with --eval-fanouts (default: --fanouts)
and their own seed. --eval names node masks (link tasks: edge masks); each
set is named by its mask without "_mask" or "_edge" (val_mask: "val"). The default
"auto" takes val_mask and test_mask where the graph has them; "none" takes
none.

Progress: rank 0 prints a line every --progress-every while the trainers
train (its trainer's epoch, batches done of the epoch's, batches/s, the
epoch's and the run's time left, its data wait) and one at each epoch's
end with the figures the trainers logged (gnnrun.log(loss=...,
val_acc=...): each averaged over the rank's calls in the epoch, then over
the ranks); --report keeps the epochs' lines (results.train.epochs).

Checkpoints (--checkpoint DIR, a directory every rank sees): every
--checkpoint-every (30m, or 500b: training batches a rank) the ranks agree
on a training batch after which every trainer saves its state
(gnnrun.checkpoint_due() after the step, then gnnrun.save(obj));
DIR/ckpt-NNNNNN is committed once every rank's part is durable, the
--checkpoint-keep newest are kept. The same command resumes from the
newest: the stream goes on from exactly where it stopped (at another rank
count, the epoch's untrained items split over the new ranks) and
gnnrun.restore() gives the trainer its state back; a checkpoint of other
partitions or flags is refused, naming them. SIGUSR1 or SIGTERM (Slurm's
--signal, scancel --signal=USR1, a time limit) checkpoints within a few
batches, then every rank exits with status 75, on which
launch/gnnrun.sbatch requeues the job.

Either side failing ends the job within seconds: a trainer that exits
non-zero or is killed fails its rank, which fails the job (MPI_Abort); a
gnnrun rank that dies takes its trainer with it (SIGTERM, and the client
raises GnnrunGone); SIGTERM or SIGINT (a Slurm time limit, Ctrl-C) stops
the trainers and ends the job. A trainer that exits 0 before the last batch
stops the run cleanly. --tag-output prefixes the trainer's lines with its
rank; --ids adds each batch's arrays in the input graph's IDs (as sample
--dump writes them) for checks.

` + batchFlagsHelp,
		flags: func(fs *pflag.FlagSet) {
			f := &trainFlags
			f.pipelineFlags.register(fs)
			fs.StringVar(&f.device, "device", "auto", "the trainer's device: auto (the GPU bound to the rank when there is one, else cpu), cuda (fail at start without one) or cpu")
			fs.StringVar(&f.eval, "eval", "auto", "masks of the evaluation sets, comma-separated (auto: val_mask,test_mask where present; none)")
			fs.StringVar(&f.evalFanouts, "eval-fanouts", "", "fanouts of the evaluation batches (default: --fanouts)")
			fs.IntVar(&f.evalBatch, "eval-batch-size", 0, "seeds per evaluation batch (default: --batch-size)")
			fs.IntVar(&f.evalEvery, "eval-every", 1, "evaluate after every this many epochs (and after the last)")
			fs.StringVar(&f.pad, "pad", "repeat", "what ranks past the epoch's last training seeds get: repeat (full batches of seeds repeated from the epoch's start, as DistributedSampler pads) or empty (empty batches, handed over, evaluation's too)")
			fs.DurationVar(&f.progressEvery, "progress-every", 30*time.Second, "rank 0 prints a line of the training's progress this often (0: only at each epoch's end)")
			fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint into this directory (one to every rank: a shared file system), and resume from its newest checkpoint")
			fs.StringVar(&f.checkpointEvery, "checkpoint-every", "30m", "how often to checkpoint: a duration (30m) or a count of training batches a rank (500b)")
			fs.IntVar(&f.checkpointKeep, "checkpoint-keep", 2, "complete checkpoints to keep (older ones are removed)")
			fs.BoolVar(&f.tag, "tag-output", false, "prefix every line the trainer writes with [rank R]")
			fs.BoolVar(&f.ids, "ids", false, "add each batch's arrays in input IDs (ids/seeds, ids/src_0, ...), as sample --dump writes them")
		},
		run: runTrain,
	})
}

func runTrain(e *env, args []string) error {
	f := trainFlags
	if e.dashAt != 1 || len(args) < 2 {
		return fmt.Errorf("want a partition directory, then -- and the trainer's command (see gnnrun help train)")
	}
	o, err := f.options()
	if err != nil {
		return err
	}
	if f.evalEvery < 1 {
		return fmt.Errorf("--eval-every %d: must be at least 1", f.evalEvery)
	}
	if f.pad != "repeat" && f.pad != "empty" {
		return fmt.Errorf("--pad %q: want repeat or empty", f.pad)
	}
	if f.progressEvery < 0 {
		return fmt.Errorf("--progress-every %v: must be >= 0", f.progressEvery)
	}
	o.EvalEvery = f.evalEvery
	o.Sampler.OrigEIDs = f.ids
	if f.dump != "" {
		return fmt.Errorf("--dump: not for train (the trainer gets the batches; use --ids, or gnnrun loader --dump)")
	}
	if _, err := exec.LookPath(args[1]); err != nil {
		return fmt.Errorf("the trainer %q: %w", args[1], err)
	}
	tdev, err := trainerDevice(f.device, placement.local.Rank)
	if err = agreeErr(e.comm, err); err != nil {
		return err
	}
	env, m, client, err := trainerEnv(e)
	defer client.Remove()
	if err != nil {
		return err
	}
	// The batches' buffers stay in host memory the trainer maps; a GPU
	// trainer's client mirrors them on its device (python/gnnrun).
	dev, served, err := f.open(e, args[0], cuda.Host, cuda.Shared())
	if err != nil {
		return err
	}
	o.Device = dev
	t := &trainRun{e: e, f: f, served: served, device: tdev}
	if f.checkpoint != "" {
		if t.cp, t.resume, err = newCheckpointer(e, f.checkpoint, f.checkpointEvery, f.checkpointKeep, t.fingerprint()); err != nil {
			return err
		}
		if t.resume != nil {
			if err := t.cp.checkResume(t.resume, o.Epochs); err != nil {
				return err
			}
		}
	}
	if err := t.start(o); err != nil {
		return err
	}
	e.reportMaster(m)
	tag := ""
	if f.tag {
		tag = fmt.Sprintf("[rank %d] ", e.comm.Rank())
	}
	prog, err := newTrainProgress(e, t.startEpoch, o.Epochs, t.perEpoch, f.progressEvery)
	if err != nil {
		return err
	}
	ro := train.Options{Child: train.ChildSpec{Args: args[1:], Env: env, Tag: tag}, Hello: t.hello, Extra: t.extra, Monitor: prog}
	if t.cp != nil {
		ro.Checkpoints = t.cp
	}
	end := e.stage("train")
	st, err := train.Run(t.l, ro)
	end()
	stopped := errors.Is(err, train.ErrCheckpointStop)
	if err != nil && !stopped {
		// The pipeline may be inside exchanges: the job ends (prefetch.Loader.Next).
		return err
	}
	// After the last batch, an early stop or the checkpoint a signal asked
	// for: every rank closes its pipeline, then settles its progress and
	// checkpoints.
	if err := t.l.Close(); err != nil {
		return err
	}
	if t.epochs, err = prog.end(); err != nil {
		return err
	}
	if t.cp != nil {
		if t.checkpoints, err = t.cp.end(t.l.CheckpointsMarked()); err != nil {
			return err
		}
	}
	if t.ids != nil {
		if err := t.ids.close(); err != nil {
			return err
		}
	}
	if err := t.report(st); err != nil {
		return err
	}
	if err := served.Close(); err != nil {
		return err
	}
	if err := dev.Close(); err != nil {
		return err
	}
	if stopped {
		return errCheckpointExit
	}
	return nil
}

// trainerDevice returns the device the rank's trainer computes on, as
// torch names it: "cuda:N" for the GPU the rank's binding leaves it
// (device 0 when CUDA_VISIBLE_DEVICES shows one, else the local rank's
// turn among those shown), "cpu" for cpu, or for auto on a host without
// a usable GPU. cuda without one fails, saying why.
func trainerDevice(flag string, localRank int) (string, error) {
	switch flag {
	case "cpu", "host":
		return "cpu", nil
	case "cuda", "auto":
	default:
		return "", fmt.Errorf("--device %q: want auto, cuda or cpu", flag)
	}
	g, err := cuda.Probe(0)
	if err == nil && g.VisibleDevices > 1 {
		g, err = cuda.Probe(localRank % g.VisibleDevices)
	}
	switch {
	case err == nil:
		return fmt.Sprintf("cuda:%d", g.Ordinal), nil
	case flag == "auto" && errors.Is(err, cuda.ErrNoGPU):
		return "cpu", nil
	}
	return "", fmt.Errorf("--device cuda: %w", err)
}

// trainRun is one run of the command.
type trainRun struct {
	e        *env
	f        trainArgs
	served   *shard.Served
	device   string // the trainer's, as torch names it
	l        *prefetch.Loader
	ids      *dumper
	hello    map[string]any
	epochs   []map[string]any // rank 0: each epoch's progress line, for the report
	perEpoch int64            // training batches per epoch on every rank

	cp          *checkpointer    // --checkpoint, or nil
	resume      *manifest        // the checkpoint the run resumes from, or nil
	startEpoch  int              // the stream's first epoch
	checkpoints []map[string]any // rank 0: the checkpoints written, for the report
}

// start makes the plans, the loader and the trainer's hello. It is
// collective.
func (t *trainRun) start(o prefetch.Options) error {
	e := t.e
	pl, err := t.f.plan(e.comm, t.served, &o.Sampler)
	if err == nil && t.f.pad == "repeat" {
		err = pl.Pad(e.comm, t.served)
	}
	if err == nil && t.resume != nil {
		err = pl.Resume(e.comm, t.served, o.Sampler.Seed, t.resume.Epoch, t.resume.Segments)
		t.startEpoch, o.StartEpoch = t.resume.Epoch, t.resume.Epoch
	}
	if err != nil {
		return err
	}
	if t.cp != nil {
		o.CheckpointDue = t.cp.due
	}
	if o.Eval, err = t.evalSets(o.Sampler); err != nil {
		return err
	}
	classes, err := t.classes(o.Sampler.Labels)
	if err != nil {
		return err
	}
	o.Fault = e.faultPoint
	end := e.stage("setup")
	t.l, err = prefetch.New(e.comm, t.served, pl, o)
	end()
	if err != nil {
		return err
	}
	if t.f.ids {
		if t.ids, err = newDumper(e.comm, t.served, "", o.Sampler.Transport); err != nil {
			return err
		}
	}
	evals := []map[string]any{} // [] in the hello, not null
	names := []string{}
	for _, s := range o.Eval {
		// The trainer is handed no empty evaluation batch unless --pad empty.
		n := s.Plan.Filled()
		if t.f.pad == "empty" {
			n = s.Plan.BatchesPerEpoch()
		}
		evals = append(evals, map[string]any{"name": s.Name, "batches": n})
		names = append(names, s.Name)
	}
	t.perEpoch = pl.BatchesPerEpoch()
	t.hello = map[string]any{"rank": e.comm.Rank(), "world_size": e.comm.Size(), "task": t.f.task, "epochs": o.Epochs, "start_epoch": t.startEpoch,
		"batches_per_epoch": pl.BatchesPerEpoch(), "eval": evals, "eval_every": o.EvalEvery, "pad": t.f.pad, "classes": classes,
		"fanouts": o.Sampler.Fanouts, "device": t.device, "device_buffers": t.l.DeviceBuffers()}
	if t.cp != nil {
		t.hello["checkpoint"] = map[string]any{"dir": t.cp.dir}
	}
	if m := t.resume; m != nil {
		part := m.Parts[0] // another rank count: rank 0's state serves every rank
		if m.Ranks == e.comm.Size() {
			part = m.Parts[e.comm.Rank()]
		}
		t.hello["resume"] = map[string]any{"checkpoint": m.Name, "epoch": m.Epoch, "segments": m.Segments,
			"batches": pl.BatchesIn(m.Epoch), "part": filepath.Join(t.cp.dir, m.Name, part.File)}
	}
	t.f.describe(e, t.served, pl, "train", t.l.HostGraphOff())
	if m := t.resume; m != nil {
		e.printf("  resuming from %s: epoch %d of %d, where %s; %d training batches a rank left in it at %d ranks\n",
			filepath.Join(t.cp.dir, m.Name), m.Epoch+1, o.Epochs, segmentsText(m.Segments), pl.BatchesIn(m.Epoch), e.comm.Size())
	}
	e.printf("  trainer's device %s (rank 0), cache %s, evaluation sets %v every %d epochs, trainer: %s\n",
		t.device, t.f.cache, names, o.EvalEvery, strings.Join(commandArgs(e), " "))
	return nil
}

// evalSets makes the evaluation sets the flags name: complete plans of
// their masks. It is collective.
func (t *trainRun) evalSets(so sampler.Options) ([]prefetch.EvalSet, error) {
	c, s, f := t.e.comm, t.served, t.f
	masks := strings.Split(f.eval, ",")
	switch f.eval {
	case "none":
		return nil, nil
	case "auto":
		masks = nil
		for _, m := range []string{"val_mask", "test_mask"} {
			if f.task != "node" {
				continue // edge masks are named, never guessed
			}
			has, err := s.HasNodeArray(c, t.ntype(), m)
			if err != nil {
				return nil, err
			}
			if has {
				masks = append(masks, m)
			}
		}
	}
	o := so
	if f.evalFanouts != "" {
		var err error
		if o.Fanouts, err = sampler.ParseFanouts(f.evalFanouts); err != nil {
			return nil, fmt.Errorf("--eval-fanouts: %w", err)
		}
	}
	bs := f.batch
	if f.evalBatch != 0 {
		bs = f.evalBatch
	}
	if bs < 1 {
		return nil, fmt.Errorf("--eval-batch-size %d: must be at least 1", bs)
	}
	var sets []prefetch.EvalSet
	for k, m := range masks {
		var pl *sampler.Plan
		var err error
		if f.task == "link" {
			pl, err = sampler.NewEdgePlan(c, s, f.etype, m, bs)
		} else {
			pl, err = sampler.NewNodePlan(c, s, t.ntype(), m, bs)
		}
		if err != nil {
			return nil, fmt.Errorf("--eval %s: %w", m, err)
		}
		so := o
		so.Seed = o.Seed + uint64(k+1)*0x9e3779b97f4a7c15 // draws of their own
		sets = append(sets, prefetch.EvalSet{Name: evalName(m), Plan: pl, Sampler: so})
	}
	return sets, nil
}

// evalName names an evaluation set by its mask: val_mask and val_edge are
// "val".
func evalName(mask string) string {
	for _, suffix := range []string{"_mask", "_edges", "_edge"} {
		if n := strings.TrimSuffix(mask, suffix); n != mask && n != "" {
			return n
		}
	}
	return mask
}

// ntype is the node task's seed type.
func (t *trainRun) ntype() string {
	if t.f.ntype != "" {
		return t.f.ntype
	}
	return t.served.Config.NodeTypes[0]
}

// classes returns the number of classes of integer labels (the largest
// label + 1, over all partitions), or 0. It is collective.
func (t *trainRun) classes(spec sampler.LabelSpec) (int64, error) {
	var top int64 = -1
	if spec.Name != "" {
		for _, p := range t.served.Parts {
			ten := p.NodeFeat(spec.NType, spec.Name)
			if ten == nil || ten.RowLen() != 1 || ten.DType.IsFloat() {
				continue
			}
			for i := range ten.Rows() {
				top = max(top, int64(ten.Float64At(i, 0)))
			}
		}
	}
	top, err := collective.Max(t.e.comm, top)
	return top + 1, err
}

// extra adds a batch's arrays in input IDs (--ids). It is collective with
// the alltoall transport (every rank hands its batches in order).
func (t *trainRun) extra(b *prefetch.Batch) ([]train.Array, error) {
	if t.ids == nil {
		return nil, nil
	}
	arrays, err := t.ids.arrays(b.Batch, b.NodeSources())
	if err != nil {
		return nil, err
	}
	out := make([]train.Array, len(arrays))
	for i, a := range arrays {
		out[i] = train.Array{Name: "ids/" + a.Name, DType: a.Data.DType, Shape: a.Data.Shape, Data: a.Data.Data}
	}
	return out, nil
}

// report prints and records the hand-off's figures beside a plain memcpy
// of the same bytes, timed here; it is collective.
func (t *trainRun) report(st train.Stats) error {
	e := t.e
	n := max(st.Batches, 1)
	slot, all := st.SlotBytes/n, (st.SlotBytes+st.FeatureBytes)/n
	mine := []float64{float64(st.Batches), st.Handoff.Seconds() / float64(n) * 1e6, memcpyTime(slot).Seconds() * 1e6,
		memcpyTime(all).Seconds() * 1e6, float64(slot), float64(all), 0, float64(t.l.Stats().BytesToDevice)}
	if st.StoppedEarly {
		mine[6] = 1
	}
	got, _, err := collective.Allgatherv(e.comm, mine)
	if err != nil {
		return err
	}
	w := len(mine)
	var batches, toDevice []int64
	var us, cpSlot, cpAll, bSlot, bAll, early float64
	for r := range e.comm.Size() {
		x := got[r*w : (r+1)*w]
		batches, toDevice = append(batches, int64(x[0])), append(toDevice, int64(x[7]))
		us, cpSlot, cpAll = max(us, x[1]), max(cpSlot, x[2]), max(cpAll, x[3])
		bSlot, bAll, early = max(bSlot, x[4]), max(bAll, x[5]), early+x[6]
	}
	e.printf("  handed %v batches (per rank) to the trainers: %.0f µs per batch (the slowest rank's mean; a plain memcpy of the slot's %s takes %.0f µs, of the whole batch's %s with its features %.0f µs); %d trainer(s) stopped early\n",
		batches, us, report.Bytes(int64(bSlot)), cpSlot, report.Bytes(int64(bAll)), cpAll, int(early))
	perEpoch, items := t.l.Trained()
	trained, err := t.f.reportTrained(e, perEpoch, items)
	if err != nil {
		return err
	}
	e.rec.Set("train", map[string]any{"batches": batches, "handoff_us_per_batch": us, "slot_bytes_per_batch": bSlot,
		"batch_bytes_per_batch": bAll, "memcpy_us_slot": cpSlot, "memcpy_us_batch": cpAll, "stopped_early": early, "trained": trained,
		"bytes_to_device": toDevice, "epochs": t.epochs, "checkpoints": t.checkpoints})
	return nil
}

// memcpyTime is the time of one plain copy of n bytes between two buffers
// already touched, the best of 5 (0 for 0 bytes).
func memcpyTime(n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src)
	best := time.Duration(math.MaxInt64)
	for range 5 {
		t0 := time.Now()
		copy(dst, src)
		best = min(best, time.Since(t0))
	}
	return best
}

// commandArgs returns the trainer's command, after the "--".
func commandArgs(e *env) []string { return e.args[e.dashAt:] }

// trainerEnv returns the variables the trainer gets, torch.distributed's
// (its rendezvous checked: see findMaster) and the client's place on
// PYTHONPATH (a directory only this user can write: python.Install), the
// rendezvous, and the client's install, to remove at the end. It is
// collective.
func trainerEnv(e *env) ([]string, master, python.Installed, error) {
	c := e.comm
	end := e.stage("rendezvous")
	m, err := findMaster(c, masterWanted(placement.local.Size == c.Size()))
	end()
	if err != nil {
		return nil, m, python.Installed{}, fmt.Errorf("torch.distributed's rendezvous: %w", err)
	}
	client, err := python.Install("")
	if err = collective.Agree(c, err); err != nil {
		return nil, m, client, err
	}
	if client.Note != "" {
		e.log.Warn("the trainer's client", "why", client.Note)
	}
	pythonPath := client.Dir
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pythonPath += string(os.PathListSeparator) + old
	}
	l := placement.local
	vars := []string{
		fmt.Sprintf("RANK=%d", c.Rank()), fmt.Sprintf("WORLD_SIZE=%d", c.Size()),
		fmt.Sprintf("LOCAL_RANK=%d", l.Rank), fmt.Sprintf("LOCAL_WORLD_SIZE=%d", l.Size),
		"MASTER_ADDR=" + m.addr, "MASTER_PORT=" + m.port, "PYTHONPATH=" + pythonPath,
	}
	// Gloo and NCCL bind to the interface of the host name's address
	// otherwise, which fails where host names do not resolve.
	if iface := m.ifaces[c.Rank()]; iface != "" {
		for _, v := range []string{"GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"} {
			if os.Getenv(v) == "" {
				vars = append(vars, v+"="+iface)
			}
		}
	}
	return vars, m, client, nil
}

// reportMaster prints and records the rendezvous the ranks agreed on.
func (e *env) reportMaster(m master) {
	how := "chosen by gnnrun"
	if m.userSet {
		how = "yours"
	}
	checked := "unchecked (" + masterCheckEnv + "=off)"
	if m.checked {
		var ifaces []string // distinct, in rank order
		for _, f := range m.ifaces {
			if f = cmp.Or(f, "?"); !slices.Contains(ifaces, f) {
				ifaces = append(ifaces, f)
			}
		}
		checked = fmt.Sprintf("reached from every rank (through %s; tried %s) in %v",
			strings.Join(ifaces, ", "), strings.Join(m.tried, ", "), m.took.Round(time.Millisecond))
	}
	e.printf("  torch.distributed: MASTER_ADDR=%s (%s) MASTER_PORT=%s, %s\n", m.addr, how, m.port, checked)
	e.rec.Set("rendezvous", map[string]any{"master_addr": m.addr, "master_port": m.port, "user_set": m.userSet,
		"checked": m.checked, "tried": m.tried, "interfaces": m.ifaces, "seconds": m.took.Seconds()})
}

// fingerprint is what a checkpoint must share with this run to resume
// it: the partitions and every flag that changes the batches.
func (t *trainRun) fingerprint() map[string]string {
	c, f := t.served.Config, t.f
	return map[string]string{
		"graph": fmt.Sprintf("%s: %d partitions, %d nodes, %d edges", c.GraphName, c.NumParts, c.NumNodes, c.NumEdges),
		"task":  f.task, "ntype": f.ntype, "mask": f.mask, "label": f.label, "etype": f.etype, "edge-mask": f.edgeMask,
		"seed": fmt.Sprint(f.seed), "fanouts": f.fanouts, "etype-fanouts": strings.Join(f.etypeFanouts, " "),
		"batch-size": fmt.Sprint(f.batch), "batches-per-epoch": fmt.Sprint(f.perEpoch), "pad": f.pad, "prob": f.prob,
		"replace": fmt.Sprint(f.replace), "negatives": fmt.Sprint(f.negatives), "neg-dist": f.negDist, "exclude": f.exclude,
		"eval": f.eval, "eval-fanouts": f.evalFanouts, "eval-batch-size": fmt.Sprint(f.evalBatch), "eval-every": fmt.Sprint(f.evalEvery),
	}
}
