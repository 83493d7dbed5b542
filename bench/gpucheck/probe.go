package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"gnnrun/cuda"
)

// torchProbe prints, as JSON, what the Python has of PyTorch and NumPy.
const torchProbe = `import json
r = {}
try:
    import torch
    r["torch"] = torch.__version__
    r["cuda"] = bool(torch.cuda.is_available())
    r["cuda_version"] = torch.version.cuda
    r["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if r["cuda"] else []
except Exception as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
try:
    import numpy
    r["numpy"] = numpy.__version__
except Exception as e:
    r["error"] = r.get("error", "") + "%s: %s" % (type(e).__name__, e)
print(json.dumps(r))
`

// torchInfo is what torchProbe prints.
type torchInfo struct {
	Torch       string   `json:"torch"`
	CUDA        bool     `json:"cuda"`
	CUDAVersion *string  `json:"cuda_version"`
	Devices     []string `json:"devices"`
	NumPy       string   `json:"numpy"`
	Error       string   `json:"error"`
}

// probe is step 0: the GPU as gnnrun's driver layer sees it (cuda.Probe,
// then cuda.Open, which loads the kernels), and what else is there:
// nvidia-smi -L, PyTorch and whether it sees CUDA. Without a usable GPU it
// fails, or in a dry run is skipped.
func (c *checker) probe(st *Step) error {
	st.Commands = append(st.Commands, c.reproduce(0))
	c.listGPUs(st)
	c.probeTorch(st)
	g, err := cuda.Probe(0)
	if err == nil {
		var d cuda.Device
		if d, err = cuda.Open(cuda.CUDA, 0); err == nil {
			err = d.Close()
		}
	}
	if c.o.dryRun {
		c.rep.Device = "the host backend"
		if err != nil {
			st.skip("a dry run on the host backend; gnnrun sees no usable GPU: %v", err)
		} else {
			st.skip("a dry run on the host backend, though gnnrun sees %s", g)
		}
		return nil
	}
	if err != nil {
		return err
	}
	c.gpu, c.rep.Device = true, g.String()
	st.detail("gpu", g)
	st.Figures = append(st.Figures,
		fig("GPU memory", float64(g.Memory)/(1<<30), "GiB").withNote("%s, %s", g.Name, g.PCIBusID),
		fig("compute capability", float64(g.Major)+float64(g.Minor)/10, ""),
		fig("the driver's CUDA version", float64(g.Driver/1000)+float64(g.Driver%1000/10)/10, ""),
		fig("GPUs visible", float64(g.VisibleDevices), ""))
	return nil
}

// listGPUs notes what nvidia-smi -L lists, when it is there.
func (c *checker) listGPUs(st *Step) {
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		st.note("nvidia-smi: not on PATH")
		return
	}
	out, err := exec.Command(smi, "-L").CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil {
		st.note("nvidia-smi -L: %v: %s", err, strings.Join(lines, "; "))
		return
	}
	st.detail("nvidia_smi", lines)
	st.note("nvidia-smi -L: %s", strings.Join(lines, "; "))
}

// probeTorch notes the Python's PyTorch and NumPy, and sets torchCUDA
// and torchErr for step 4.
func (c *checker) probeTorch(st *Step) {
	script := filepath.Join(c.work, "torch_probe.py")
	err := os.WriteFile(script, []byte(torchProbe), 0o644)
	var out []byte
	if err == nil {
		out, err = c.run(st, command{args: []string{c.o.python, script}, log: "0-torch"})
	}
	var t torchInfo
	if err == nil {
		err = json.Unmarshal(out, &t)
	}
	switch {
	case err != nil:
		c.torchErr = fmt.Sprintf("the Python %s could not be asked for PyTorch: %v", c.o.python, err)
	case t.Error != "":
		c.torchErr = fmt.Sprintf("the Python %s lacks PyTorch or NumPy: %s", c.o.python, t.Error)
	case !t.CUDA && !c.o.dryRun:
		c.torchErr = fmt.Sprintf("the PyTorch %s of %s sees no CUDA device (torch.cuda.is_available() is False; "+
			"a CPU build of PyTorch, or no GPU for it)", t.Torch, c.o.python)
	}
	c.torchCUDA = t.CUDA
	st.detail("python", t)
	if c.torchErr != "" {
		st.note("%s: step 4 needs a Python with PyTorch (CUDA) and NumPy: make gpu-check PYTHON=...", c.torchErr)
		return
	}
	cv := "none"
	if t.CUDAVersion != nil {
		cv = *t.CUDAVersion
	}
	st.note("PyTorch %s (CUDA %s), NumPy %s, torch.cuda.is_available() %v, devices %q", t.Torch, cv, t.NumPy, t.CUDA, t.Devices)
}
