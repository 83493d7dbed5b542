//go:build !cgo || !linux

package cuda

// GPUGraph is one partition's CSC in a GPU's memory; this build has no GPU
// (see Probe), and NewGPUGraph says so.
type GPUGraph struct{}

// NewGPUGraph fails with an error wrapping ErrNoGPU: this build cannot
// load the NVIDIA driver.
func NewGPUGraph(Device, CSC) (*GPUGraph, error) {
	_, err := Probe(0)
	return nil, err
}

// SampleLayer fails: there is no GPUGraph in this build.
func (*GPUGraph) SampleLayer([]int64, [2]uint32, int, []int, bool) (*SampledBlock, error) {
	_, err := Probe(0)
	return nil, err
}

// Spent returns nothing: there are no calls in this build.
func (*GPUGraph) Spent() LayerTimes { return LayerTimes{} }

// Close does nothing.
func (*GPUGraph) Close() error { return nil }
