//go:build !cgo || !linux

package cuda

import "fmt"

// Probe says why this build cannot use a GPU: the driver is loaded at run
// time through the C library's dlopen, which a build without cgo (the
// static build, CGO_ENABLED=0) does not have.
func Probe(int) (GPUInfo, error) {
	return GPUInfo{}, fmt.Errorf("cuda: this gnnrun is built without cgo (CGO_ENABLED=0), which cannot load the NVIDIA driver; build with CGO_ENABLED=1 (%w)", ErrNoGPU)
}

// openCUDA says why this build has no CUDA backend.
func openCUDA(ordinal int, _ openOptions) (Device, error) {
	_, err := Probe(ordinal)
	return nil, fmt.Errorf("%w; use --device host", err)
}
