package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// apiRun is what testdata/api_trainer.py wrote for one rank.
type apiRun struct {
	Batches []struct {
		Kind          string
		Epoch, Number int
		Seq           int64
		Items         int
		Padding       bool
		EndOfEpoch    bool `json:"end_of_epoch"`
		LastOfEpoch   bool `json:"last_of_epoch"`
	}
	BadEdges       int      `json:"bad_edges"`
	CheckedEdges   int      `json:"checked_edges"`
	AcceptedWrites int      `json:"accepted_writes"`
	MirrorChecked  int      `json:"mirror_checked"`
	MirrorBad      []string `json:"mirror_bad"`
	Stats          struct {
		Skipped     int   `json:"skipped"`
		BytesCopied int64 `json:"bytes_copied"`
		BytesFull   int64 `json:"bytes_full"`
		BytesHot    int64 `json:"bytes_hot"`
		Ahead       int   `json:"fetched_ahead"`
	}
	Ended float64 `json:"ended"`
	// BytesToDevice is gnnrun's bytes_to_device for the rank (--report).
	BytesToDevice int64 `json:"-"`
}

// stream is a rank's batches as comparable strings.
func (r apiRun) stream() []string {
	var out []string
	for _, b := range r.Batches {
		out = append(out, fmt.Sprintf("%s e%d b%d #%d", b.Kind, b.Epoch, b.Number, b.Seq))
	}
	return out
}

// apiGraph generates a small graph, dispatches it into K = 4 partitions
// and returns the partitions and the folder of the input's feature chunks.
func apiGraph(t *testing.T) (parts, feat string) {
	t.Helper()
	g := genSmall(t, false)
	asg := filepath.Join(t.TempDir(), "asg")
	mustRun(t, 2, "partition", "--in", g, "--parts", "4", "--balance", "nodes,train", "--out", asg)
	parts = filepath.Join(t.TempDir(), "parts")
	mustRun(t, 2, "dispatch", "--in", g, "--assignment", asg, "--out", parts)
	return parts, filepath.Join(g, "node_data", "_N")
}

// runAPITrainer runs testdata/api_trainer.py in a mode under gnnrun train
// on np ranks, with env added to the trainers', and returns what each
// rank's trainer wrote, checking that the job ended within 10 s of the
// last trainer and left nothing in /dev/shm.
func runAPITrainer(t *testing.T, parts, feat string, np int, mode string, env []string, flags ...string) []apiRun {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("testdata", "api_trainer.py"))
	out, vader := t.TempDir(), t.TempDir()
	rep := filepath.Join(out, "report.json")
	flags = append(flags, "--report", rep)
	before := map[string]bool{}
	for _, n := range shmEntries(t) {
		before[n] = true
	}
	// Batches of 24: 7 training batches an epoch, 3 of val and 3 of test,
	// so at 2 ranks one rank's last training batch pads it and one
	// evaluation batch of each set is empty (not handed over).
	args := append([]string{"train", parts, "--fanouts", "4,3", "--batch-size", "24", "--epochs", "3", "--seed", "5", "--ids"}, flags...)
	args = append(args, "--", pythonBin, script, mode)
	// OpenMPI's shared-memory segments go to a folder of this run's, so
	// that other jobs' in /dev/shm are not taken for this one's.
	env = append([]string{"OUT_DIR=" + out, "FEAT=" + feat, "OMPI_MCA_btl_vader_backing_directory=" + vader}, env...)
	r := runGnnrun(t, np, 2*time.Minute, env, args...)
	end := time.Now()
	if r.err != nil {
		t.Fatalf("%s P=%d %v: %v", mode, np, flags, r)
	}
	var report struct {
		Results struct {
			Train struct {
				BytesToDevice []int64 `json:"bytes_to_device"`
			}
		}
	}
	if blob, err := os.ReadFile(rep); err != nil || json.Unmarshal(blob, &report) != nil || len(report.Results.Train.BytesToDevice) != np {
		t.Fatalf("%s P=%d: the report's train.bytes_to_device: %v", mode, np, err)
	}
	runs := make([]apiRun, np)
	for rk := range np {
		runs[rk].BytesToDevice = report.Results.Train.BytesToDevice[rk]
		blob, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.json", rk)))
		if err != nil {
			t.Fatalf("%s P=%d: %v", mode, np, err)
		}
		if err := json.Unmarshal(blob, &runs[rk]); err != nil {
			t.Fatal(err)
		}
		ended := time.Unix(0, int64(runs[rk].Ended*1e9))
		if d := end.Sub(ended); d > 10*time.Second {
			t.Errorf("%s P=%d: the job ended %v after rank %d's trainer", mode, np, d, rk)
		}
	}
	for _, n := range shmEntries(t) {
		if !before[n] && !strings.HasPrefix(n, "vader_segment.") {
			t.Errorf("%s P=%d: left /dev/shm/%s", mode, np, n)
		}
	}
	if left, _ := os.ReadDir(vader); len(left) > 0 {
		t.Errorf("%s P=%d: left OpenMPI's segment %s", mode, np, left[0].Name())
	}
	return runs
}

// checkStream checks one rank's batches: in stream order (seq rising;
// gaps only where an empty evaluation batch was not handed over), none
// empty, every epoch's batches together and in order, each epoch's
// training batches before its evaluation batches, the marks on the right
// batches, and block 0's rows all the input's.
func checkStream(t *testing.T, what string, r apiRun, epochs int) {
	t.Helper()
	if r.CheckedEdges == 0 || r.BadEdges != 0 {
		t.Errorf("%s: %d of %d edges of block 0 read other rows than their endpoints'", what, r.BadEdges, r.CheckedEdges)
	}
	lastEpoch, lastKind := 0, "train"
	for i, b := range r.Batches {
		switch {
		case i > 0 && b.Seq <= r.Batches[i-1].Seq, i == 0 && b.Seq != 0:
			t.Fatalf("%s: batch %d of the stream has seq %d", what, i, b.Seq)
		case i > 0 && b.Kind == "train" && r.Batches[i-1].Kind == "train" && r.Batches[i-1].Epoch == b.Epoch && b.Seq != r.Batches[i-1].Seq+1:
			t.Fatalf("%s: training batch %d of the stream has seq %d after %d: a training batch was not handed over", what, i, b.Seq, r.Batches[i-1].Seq)
		case b.Items == 0:
			t.Fatalf("%s: batch %d (%s, epoch %d) is empty", what, i, b.Kind, b.Epoch)
		case b.Epoch < lastEpoch || (b.Epoch == lastEpoch && b.Kind == "train" && lastKind != "train"):
			t.Fatalf("%s: %s batch of epoch %d after a %s batch of epoch %d", what, b.Kind, b.Epoch, lastKind, lastEpoch)
		}
		next := i+1 < len(r.Batches)
		// The epoch's last batch, if an empty evaluation batch left out
		// after it was not.
		last := !next || r.Batches[i+1].Epoch != b.Epoch
		if b.LastOfEpoch && !last || !b.LastOfEpoch && last && b.Kind == "train" {
			t.Errorf("%s: batch %d (%s, epoch %d): last_of_epoch %v", what, i, b.Kind, b.Epoch, b.LastOfEpoch)
		}
		if want := b.Kind == "train" && (!next || r.Batches[i+1].Kind != "train" || r.Batches[i+1].Epoch != b.Epoch); b.EndOfEpoch != want {
			t.Errorf("%s: batch %d (%s, epoch %d): end_of_epoch %v", what, i, b.Kind, b.Epoch, b.EndOfEpoch)
		}
		lastEpoch, lastKind = b.Epoch, b.Kind
	}
	if lastEpoch != epochs-1 {
		t.Errorf("%s: the stream ended at epoch %d of %d", what, lastEpoch, epochs)
	}
}

// checkPaddedAndSkipped checks that a 2-rank run of runAPITrainer's split
// (7 training batches, 3 of each evaluation set) padded one rank's
// training epochs (3 batches of repeated seeds, one an epoch) and left
// out the empty evaluation batches (6 in the 2 epochs that evaluate: the
// first and the last), on the rank that got them.
func checkPaddedAndSkipped(t *testing.T, what string, runs []apiRun) {
	t.Helper()
	padded, skipped := 0, 0
	for _, r := range runs {
		skipped += r.Stats.Skipped
		for _, b := range r.Batches {
			if b.Padding {
				padded++
			}
		}
	}
	if padded != 3 || skipped < 4 {
		t.Errorf("%s: %d padding batches (want 3, one an epoch) and %d batches skipped (want the empty evaluation ones)", what, padded, skipped)
	}
}

// TestTrainerLoopsUnderMPI: the loop shapes PyTorch users write — an
// epoch loop over a re-iterable loader, the whole stream broken at every
// epoch's end, an exception in the loop caught outside and the loop
// entered again, `with` blocks broken out of — at P = 1 and 2, with the
// reuse cache and without: none hangs, every rank's trainer gets the
// whole stream in order (the same as the plain epoch loop's), block 0's
// rows are the input's for every edge, and the job ends within 10 s of
// the trainers leaving nothing in /dev/shm.
func TestTrainerLoopsUnderMPI(t *testing.T) {
	needPython(t, false)
	parts, feat := apiGraph(t)
	for _, np := range []int{1, 2} {
		for _, cache := range []string{"reuse", "none"} {
			var want [][]string
			for _, mode := range []string{"loader", "break", "exception", "context"} {
				what := fmt.Sprintf("%s P=%d cache %s", mode, np, cache)
				runs := runAPITrainer(t, parts, feat, np, mode, nil, "--cache", cache)
				if np == 2 {
					checkPaddedAndSkipped(t, what, runs)
				}
				for rk, r := range runs {
					checkStream(t, fmt.Sprintf("%s rank %d", what, rk), r, 3)
					if want == nil {
						continue
					}
					if got := r.stream(); !slices.Equal(got, want[rk]) {
						t.Errorf("%s rank %d: the stream differs from the epoch loop's:\n%v\n%v", what, rk, got, want[rk])
					}
				}
				if want == nil {
					for _, r := range runs {
						want = append(want, r.stream())
					}
				}
			}
		}
	}
}

// TestTrainerBatchesReadOnlyUnderMPI: over every batch of a 3-epoch run
// with the reuse and hot caches at P = 2, in-place writes to x (numpy's,
// torch's, dropout and relu with inplace=True, out=, +=, views) all
// raise, and block 0's rows stay the input's; a repeated acknowledgement
// of an earlier batch does not release the batch the trainer holds.
func TestTrainerBatchesReadOnlyUnderMPI(t *testing.T) {
	needPython(t, true)
	parts, feat := apiGraph(t)
	for _, mode := range []string{"writes", "stray"} {
		runs := runAPITrainer(t, parts, feat, 2, mode, nil, "--cache", "reuse", "--hot-cache", "256")
		for rk, r := range runs {
			what := fmt.Sprintf("%s rank %d", mode, rk)
			checkStream(t, what, r, 3)
			if r.AcceptedWrites != 0 {
				t.Errorf("%s: %d in-place writes to the batch's features were accepted", what, r.AcceptedWrites)
			}
		}
	}
}

// TestTrainerMirrorUnderMPI: the trainer's persistent copy of gnnrun's
// buffers (batches(device="cpu", mirror=True): the GPU's code path on the
// CPU), with the reuse and hot caches at P = 1 and 2 and in every loop
// shape (the client fetches one batch ahead, which a break or an
// exception leaves for the next loop): every batch's mirror equals the
// shared buffer byte for byte and is a copy of it, the rows the client
// copied are exactly gnnrun's bytes_to_device, and the stream is the
// plain loop's. Epochs alternating between host views and the mirror
// copy the missed buffers whole and stay equal.
func TestTrainerMirrorUnderMPI(t *testing.T) {
	needPython(t, true)
	parts, feat := apiGraph(t)
	ahead := 0
	for _, np := range []int{1, 2} {
		var want [][]string
		for _, mode := range []string{"loader", "break", "exception", "context", "switch"} {
			what := fmt.Sprintf("mirror %s P=%d", mode, np)
			runs := runAPITrainer(t, parts, feat, np, mode, []string{"MIRROR=1"}, "--cache", "reuse", "--hot-cache", "256")
			for rk, r := range runs {
				w := fmt.Sprintf("%s rank %d", what, rk)
				checkStream(t, w, r, 3)
				if want != nil && !slices.Equal(r.stream(), want[rk]) {
					t.Errorf("%s: the stream differs from the epoch loop's", w)
				}
				checkMirror(t, w, r, mode == "switch")
				ahead += r.Stats.Ahead
			}
			if want == nil {
				for _, r := range runs {
					want = append(want, r.stream())
				}
			}
		}
	}
	if ahead == 0 { // the trainer checks each batch for longer than gnnrun takes to send the next
		t.Errorf("no batch was fetched ahead in any run")
	}
	t.Logf("%d batches fetched ahead", ahead)
}

// checkMirror checks one rank's mirror: every batch (every other epoch's
// when switching) checked and equal, and the bytes it copied gnnrun's
// bytes_to_device (switching: fewer, plus whole buffers).
func checkMirror(t *testing.T, what string, r apiRun, switching bool) {
	t.Helper()
	if len(r.MirrorBad) > 0 {
		t.Errorf("%s: %d batches' mirrors differ, first: %s", what, len(r.MirrorBad), r.MirrorBad[0])
	}
	s := r.Stats
	switch {
	case switching:
		if r.MirrorChecked == 0 || r.MirrorChecked >= len(r.Batches) || s.BytesFull == 0 || s.BytesCopied >= r.BytesToDevice {
			t.Errorf("%s: %d of %d batches on the mirror, %d bytes copied whole, %d by updates (gnnrun's %d)",
				what, r.MirrorChecked, len(r.Batches), s.BytesFull, s.BytesCopied, r.BytesToDevice)
		}
	case r.MirrorChecked != len(r.Batches):
		t.Errorf("%s: %d of %d batches had a mirror", what, r.MirrorChecked, len(r.Batches))
	case s.BytesCopied != r.BytesToDevice || s.BytesFull != 0 || r.BytesToDevice == 0:
		t.Errorf("%s: the mirror copied %d bytes (and %d whole), gnnrun copied %d to its buffers", what, s.BytesCopied, s.BytesFull, r.BytesToDevice)
	}
	if s.BytesHot == 0 {
		t.Errorf("%s: the hot cache's rows were never copied", what)
	}
}

// TestTrainPadEmptyUnderMPI: --pad empty keeps the ranks past the last
// seeds on empty batches and hands them over, evaluation's too: at 2
// ranks with runAPITrainer's split (7 training batches, 3 of each
// evaluation set), the split loaders get one empty training batch an
// epoch and one empty batch of each set after every epoch, and none
// padded.
func TestTrainPadEmptyUnderMPI(t *testing.T) {
	needPython(t, false)
	parts, feat := apiGraph(t)
	runs := runAPITrainer(t, parts, feat, 2, "loader", nil, "--pad", "empty")
	empty := map[string]int{}
	for _, r := range runs {
		for _, b := range r.Batches {
			if b.Padding {
				t.Fatalf("--pad empty: a padding batch (%s, epoch %d)", b.Kind, b.Epoch)
			}
			if b.Items == 0 {
				empty[b.Kind]++
			}
		}
	}
	if empty["train"] != 3 || empty["val"] != 3 || empty["test"] != 3 {
		t.Errorf("--pad empty: empty batches handed over %v, want 3 of each kind", empty)
	}
}
