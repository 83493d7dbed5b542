package cuda

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// ptxFS holds the kernels of kernels/*.cu as PTX, one file per source and
// architecture (kernels/ptx/<source>.sm_<XX>.ptx), built ahead of time by
// make kernels with clang-16 and checked in. The driver JIT-compiles a
// module's PTX when it is loaded, so a GPU node needs no CUDA toolkit.
//
//go:embed kernels/ptx/*.ptx
var ptxFS embed.FS

const ptxDir = "kernels/ptx"

// modulePTX is the PTX of one kernel source for one architecture.
type modulePTX struct {
	name string // the source's name without .cu: "rows"
	arch int    // the architecture sm_XX as XX: 70
	ptx  []byte // NUL-terminated, as cuModuleLoadData reads it
}

// ptxArchs returns the architectures of each module in dir of fsys,
// ascending, by module name.
func ptxArchs(fsys fs.FS, dir string) (map[string][]int, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("cuda: the kernels' PTX: %w", err)
	}
	mods := map[string][]int{}
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".ptx")
		i := strings.LastIndex(base, ".sm_")
		if !ok || i <= 0 {
			return nil, fmt.Errorf("cuda: %s/%s is not named <kernels>.sm_<arch>.ptx", dir, e.Name())
		}
		arch, err := strconv.Atoi(base[i+len(".sm_"):])
		if err != nil || arch <= 0 {
			return nil, fmt.Errorf("cuda: %s/%s is not named <kernels>.sm_<arch>.ptx", dir, e.Name())
		}
		mods[base[:i]] = append(mods[base[:i]], arch)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("cuda: no kernels' PTX in %s", dir)
	}
	for _, archs := range mods {
		sort.Ints(archs)
	}
	return mods, nil
}

// choosePTX returns, for each module in dir of fsys (in name order), the
// PTX of the highest architecture at most the device's compute capability
// major.minor: PTX runs on its architecture and every later one. A device
// older than some module's lowest architecture gets an error wrapping
// ErrNoGPU.
func choosePTX(fsys fs.FS, dir string, major, minor int) ([]modulePTX, error) {
	mods, err := ptxArchs(fsys, dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(mods))
	lowest := 0
	for name, archs := range mods {
		names = append(names, name)
		lowest = max(lowest, archs[0])
	}
	sort.Strings(names)
	cc := 10*major + minor
	if cc < lowest {
		return nil, fmt.Errorf("cuda: a GPU of compute capability %d.%d is older than gnnrun's kernels support (sm_%d and later) (%w)",
			major, minor, lowest, ErrNoGPU)
	}
	out := make([]modulePTX, 0, len(names))
	for _, name := range names {
		archs := mods[name]
		best := archs[0]
		for _, a := range archs {
			if a <= cc {
				best = a
			}
		}
		ptx, err := fs.ReadFile(fsys, path.Join(dir, fmt.Sprintf("%s.sm_%d.ptx", name, best)))
		if err != nil {
			return nil, fmt.Errorf("cuda: the kernels' PTX: %w", err)
		}
		out = append(out, modulePTX{name: name, arch: best, ptx: append(ptx, 0)})
	}
	return out, nil
}

// rowsBlock is the row kernel's block: 8 warps, a row each.
const rowsBlock = 256

// rowsGrid returns the grid and block of gnnrun_copy_rows over n rows, one
// warp per row (the CPU harness launches with the same).
func rowsGrid(n int) (grid, block uint32) {
	return uint32((n*32 + rowsBlock - 1) / rowsBlock), rowsBlock
}
