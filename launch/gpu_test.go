package launch

import (
	"errors"
	"strings"
	"testing"
)

func TestBindGPU(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		local   Local
		gpus    int // what /proc/driver/nvidia/gpus would show
		want    string
		set     bool // BindGPU must set CUDA_VISIBLE_DEVICES
		sharing int
		reason  string
	}{
		{"no gpu", nil, Local{0, 4, "openmpi"}, 0, "", false, 0, "no GPU"},
		{"one per rank", nil, Local{2, 4, "openmpi"}, 4, "2", true, 1, "local rank 2/4 of 4 GPUs"},
		{"round robin", nil, Local{5, 8, "slurm"}, 3, "2", true, 2, "local rank 5/8 of 3 GPUs"},
		{"round robin wraps to 0", nil, Local{6, 8, "slurm"}, 3, "0", true, 3, "of 3 GPUs"},
		{"already set", map[string]string{VisibleDevicesVar: "3"}, Local{0, 4, "slurm"}, 4, "3", false, 0, "CUDA_VISIBLE_DEVICES was set"},
		{"set empty is set", map[string]string{VisibleDevicesVar: ""}, Local{0, 4, "slurm"}, 4, "", false, 0, "was set"},
		{"count override", map[string]string{GPUCountVar: "2"}, Local{3, 4, "openmpi"}, 8, "1", true, 2, "of 2 GPUs from GNNRUN_GPU_COUNT"},
		{"count override zero", map[string]string{GPUCountVar: "0"}, Local{3, 4, "openmpi"}, 8, "", false, 0, "no GPU from GNNRUN_GPU_COUNT"},
		{"split", map[string]string{GPUBindVar: "split", VisibleDevicesVar: "4,5,6,7"}, Local{1, 4, "openmpi"}, 8, "5", true, 1, "split from CUDA_VISIBLE_DEVICES"},
		{"split uuids", map[string]string{GPUBindVar: "split", VisibleDevicesVar: "GPU-a, GPU-b"}, Local{3, 4, "openmpi"}, 0, "GPU-b", true, 2, "of 2 GPUs"},
		{"split unset is auto", map[string]string{GPUBindVar: "Split"}, Local{1, 2, "openmpi"}, 2, "1", true, 1, "local rank 1/2 of 2 GPUs"},
		{"off", map[string]string{GPUBindVar: "off"}, Local{1, 2, "openmpi"}, 2, "", false, 0, "GNNRUN_GPU_BIND=off"},
		{"singleton", nil, Local{0, 1, "node communicator"}, 2, "0", true, 1, "local rank 0/1 of 2 GPUs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			setCalled := false
			setenv := func(k, v string) error {
				setCalled = true
				env[k] = v
				return nil
			}
			b, err := bindGPU(tt.local, envMap(env), setenv, func() (int, error) { return tt.gpus, nil })
			if err != nil {
				t.Fatal(err)
			}
			if b.Devices != tt.want || b.Bound != tt.set || setCalled != tt.set || b.Sharing != tt.sharing {
				t.Errorf("got %+v (setenv called %v); want devices %q bound %v sharing %d", b, setCalled, tt.want, tt.set, tt.sharing)
			}
			if tt.set && env[VisibleDevicesVar] != tt.want {
				t.Errorf("CUDA_VISIBLE_DEVICES = %q, want %q", env[VisibleDevicesVar], tt.want)
			}
			if !strings.Contains(b.Reason, tt.reason) {
				t.Errorf("reason %q does not contain %q", b.Reason, tt.reason)
			}
		})
	}
}

func TestBindGPUErrors(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		local Local
		count error
		want  string
	}{
		{"bad mode", map[string]string{GPUBindVar: "each"}, Local{0, 1, "x"}, nil, `GPU binding "each": want one of auto, split, off`},
		{"bad count", map[string]string{GPUCountVar: "two"}, Local{0, 1, "x"}, nil, `GNNRUN_GPU_COUNT="two"`},
		{"negative count", map[string]string{GPUCountVar: "-1"}, Local{0, 1, "x"}, nil, `GNNRUN_GPU_COUNT="-1"`},
		{"split repeat", map[string]string{GPUBindVar: "split", VisibleDevicesVar: "0,0"}, Local{0, 1, "x"}, nil, `device "0" listed twice`},
		{"split hole", map[string]string{GPUBindVar: "split", VisibleDevicesVar: "0,,1"}, Local{0, 1, "x"}, nil, "empty device"},
		{"bad place", nil, Local{2, 2, "x"}, nil, "bad local place 2/2"},
		{"unreadable proc", nil, Local{0, 1, "x"}, errors.New("launch: count GPUs: permission denied"), "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			count := func() (int, error) { return 1, tt.count }
			_, err := bindGPU(tt.local, envMap(tt.env), func(string, string) error { return nil }, count)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "launch: ") {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestBindModeNames(t *testing.T) {
	for _, m := range []BindMode{BindAuto, BindSplit, BindOff} {
		got, err := ParseBindMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseBindMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if s := BindMode(9).String(); s != "BindMode(9)" {
		t.Errorf("String of an unknown mode = %q", s)
	}
}

// TestCountNvidiaGPUs runs the real detection: without the driver it must
// say 0, not fail.
func TestCountNvidiaGPUs(t *testing.T) {
	n, err := countNvidiaGPUs()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d NVIDIA GPUs in %s", n, nvidiaGPUs)
}

func TestBindingString(t *testing.T) {
	if s := (Binding{Reason: "no GPU"}).String(); s != "- (no GPU)" {
		t.Errorf("got %q", s)
	}
	if s := (Binding{Devices: "1", Reason: "r"}).String(); s != "1 (r)" {
		t.Errorf("got %q", s)
	}
}
