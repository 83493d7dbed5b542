package cuda

import "fmt"

// openCUDA opens GPU ordinal through the driver API. The backend is not
// built yet: every call says so, wrapping ErrNoGPU so that Auto falls back
// to the host backend.
func openCUDA(ordinal int, _ openOptions) (Device, error) {
	return nil, fmt.Errorf("cuda: device %d: the CUDA backend is not built into gnnrun yet (%w); use --device host", ordinal, ErrNoGPU)
}
