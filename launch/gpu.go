package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Variables that steer BindGPU.
const (
	// VisibleDevicesVar is CUDA's list of the devices a process may use.
	VisibleDevicesVar = "CUDA_VISIBLE_DEVICES"
	// GPUBindVar chooses the BindMode: auto (default), split or off.
	GPUBindVar = "GNNRUN_GPU_BIND"
	// GPUCountVar overrides device detection with a count N (devices
	// 0..N-1); 0 means no GPU.
	GPUCountVar = "GNNRUN_GPU_COUNT"
)

// nvidiaGPUs holds one directory per NVIDIA GPU the driver sees.
const nvidiaGPUs = "/proc/driver/nvidia/gpus"

// BindMode says how BindGPU treats a CUDA_VISIBLE_DEVICES that is already set.
type BindMode int

const (
	// BindAuto leaves a set CUDA_VISIBLE_DEVICES alone (Slurm's
	// --gpus-per-task, a user's or a container's choice) and otherwise gives
	// local rank r device r mod N of the host's N GPUs.
	BindAuto BindMode = iota
	// BindSplit takes a set CUDA_VISIBLE_DEVICES as the list of the host's
	// devices that every local rank was given, and narrows it to entry
	// r mod N. It is for launchers that hand each rank the whole list, such
	// as mpirun inside a Slurm GPU allocation (launch/gnnrun.sbatch sets it
	// then). Unset, it behaves like BindAuto.
	BindSplit
	// BindOff never touches CUDA_VISIBLE_DEVICES.
	BindOff
)

var bindModeNames = []string{"auto", "split", "off"}

// String returns the mode's name as GNNRUN_GPU_BIND spells it.
func (m BindMode) String() string {
	if m >= 0 && int(m) < len(bindModeNames) {
		return bindModeNames[m]
	}
	return "BindMode(" + strconv.Itoa(int(m)) + ")"
}

// ParseBindMode parses "auto", "split" or "off".
func ParseBindMode(s string) (BindMode, error) {
	for i, n := range bindModeNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return BindMode(i), nil
		}
	}
	return 0, fmt.Errorf("launch: GPU binding %q: want one of %s", s, strings.Join(bindModeNames, ", "))
}

// Binding is what BindGPU found and did.
type Binding struct {
	// Devices is CUDA_VISIBLE_DEVICES after the call, "" when it is unset.
	Devices string
	// Bound is true when BindGPU set CUDA_VISIBLE_DEVICES itself.
	Bound bool
	// Pool is the number of devices dealt out (0 when none were).
	Pool int
	// Sharing is the number of local ranks bound to the same device: more
	// than 1 when the host runs more ranks than it has GPUs.
	Sharing int
	// Reason says in a few words why the binding is what it is.
	Reason string
}

// String renders the binding for gnnrun info: the devices, then the reason.
func (b Binding) String() string {
	d := b.Devices
	if d == "" {
		d = "-"
	}
	return d + " (" + b.Reason + ")"
}

// BindGPU gives the rank at place l on its host one GPU by setting
// CUDA_VISIBLE_DEVICES, which CUDA reads when it initialises, so it must run
// before anything touches the GPU. The mode comes from GNNRUN_GPU_BIND
// (default auto):
//
//   - auto: a CUDA_VISIBLE_DEVICES that is already set is left as it is;
//     otherwise the host's GPUs are counted (GNNRUN_GPU_COUNT, else the
//     entries of /proc/driver/nvidia/gpus) and local rank r gets device
//     r mod N, so ranks share devices round-robin when the host has fewer
//     GPUs than ranks; with no GPU nothing is set;
//   - split: a set CUDA_VISIBLE_DEVICES is dealt out the same way, entry
//     r mod N of its list; unset, as auto;
//   - off: nothing is touched.
//
// It fails on a malformed GNNRUN_GPU_* or CUDA_VISIBLE_DEVICES (in split
// mode), a bad place, or an unreadable /proc/driver/nvidia/gpus.
func BindGPU(l Local) (Binding, error) {
	return bindGPU(l, os.LookupEnv, os.Setenv, countNvidiaGPUs)
}

func bindGPU(l Local, lookup lookupFunc, setenv func(k, v string) error, count func() (int, error)) (Binding, error) {
	mode := BindAuto
	if v, ok := lookup(GPUBindVar); ok {
		m, err := ParseBindMode(v)
		if err != nil {
			return Binding{}, err
		}
		mode = m
	}
	visible, set := lookup(VisibleDevicesVar)
	switch {
	case mode == BindOff:
		return Binding{Devices: visible, Reason: GPUBindVar + "=off"}, nil
	case set && mode == BindAuto:
		return Binding{Devices: visible, Reason: VisibleDevicesVar + " was set"}, nil
	}
	if l.Size < 1 || l.Rank < 0 || l.Rank >= l.Size {
		return Binding{}, fmt.Errorf("launch: bad local place %d/%d", l.Rank, l.Size)
	}
	var pool []string
	from := ""
	if set {
		ids, err := parseDeviceList(visible)
		if err != nil {
			return Binding{}, fmt.Errorf("launch: %s=%q: %v", VisibleDevicesVar, visible, err)
		}
		pool, from = ids, " split from "+VisibleDevicesVar
	} else {
		n, src, err := deviceCount(lookup, count)
		if err != nil {
			return Binding{}, err
		}
		for i := 0; i < n; i++ {
			pool = append(pool, strconv.Itoa(i))
		}
		from = src
	}
	if len(pool) == 0 {
		return Binding{Devices: visible, Reason: "no GPU" + from}, nil
	}
	n := len(pool)
	d := l.Rank % n
	if err := setenv(VisibleDevicesVar, pool[d]); err != nil {
		return Binding{}, fmt.Errorf("launch: set %s: %w", VisibleDevicesVar, err)
	}
	return Binding{
		Devices: pool[d], Bound: true, Pool: n,
		Sharing: (l.Size - d + n - 1) / n, // local ranks r < Size with r mod n == d
		Reason:  fmt.Sprintf("local rank %d/%d of %d GPUs%s", l.Rank, l.Size, n, from),
	}, nil
}

// deviceCount returns the number of GPUs on the host and, for the reason
// text, where the number came from.
func deviceCount(lookup lookupFunc, count func() (int, error)) (int, string, error) {
	if v, ok := lookup(GPUCountVar); ok {
		c, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || c < 0 {
			return 0, "", fmt.Errorf("launch: %s=%q: want a whole number of at least 0", GPUCountVar, v)
		}
		return c, " from " + GPUCountVar, nil
	}
	c, err := count()
	return c, "", err
}

// parseDeviceList splits "0,1,2" or "GPU-uuid,..." into its entries; empty
// entries, blanks inside an entry and repeats are errors, and an empty list
// means no device.
func parseDeviceList(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	seen := map[string]bool{}
	var ids []string
	for _, id := range strings.Split(v, ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "":
			return nil, errors.New("empty device in the list")
		case strings.ContainsAny(id, " \t"):
			return nil, fmt.Errorf("device %q has a blank", id)
		case seen[id]:
			return nil, fmt.Errorf("device %q listed twice", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}

// countNvidiaGPUs counts the GPUs the NVIDIA driver sees; 0 without the
// driver.
func countNvidiaGPUs() (int, error) {
	entries, err := os.ReadDir(nvidiaGPUs)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("launch: count GPUs: %w", err)
	}
	return len(entries), nil
}
