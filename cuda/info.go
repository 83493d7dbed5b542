package cuda

import "fmt"

// GPUInfo describes a GPU as the driver sees it.
type GPUInfo struct {
	Ordinal        int
	Name           string
	Memory         uint64
	Major, Minor   int // compute capability
	Driver         int // the driver's CUDA version, e.g. 12040
	PCIBusID       string
	VisibleDevices int
}

// String is what gnnrun info prints.
func (g GPUInfo) String() string {
	return fmt.Sprintf("%s, %.1f GiB, sm_%d%d, driver CUDA %d.%d, %s", g.Name, float64(g.Memory)/(1<<30), g.Major, g.Minor,
		g.Driver/1000, g.Driver%1000/10, g.PCIBusID)
}
