package cuda

import "fmt"

// openCUDA opens GPU ordinal through the driver API. The backend's device
// operations are not built yet: with a GPU there, it says so, wrapping
// ErrNoGPU so that Auto falls back to the host backend; without one, it
// says why there is none.
func openCUDA(ordinal int, _ openOptions) (Device, error) {
	g, err := Probe(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w; use --device host", err)
	}
	return nil, fmt.Errorf("cuda: %s is here, but the CUDA backend's device operations are not built into gnnrun yet (%w); use --device host", g, ErrNoGPU)
}
