package launch

import (
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestMPIRun(t *testing.T) {
	hosts := filepath.Join("testdata", "hostfiles", "good-basic.hosts") // 8 slots, node2 capped at 6
	hf, err := ReadHostfile(hosts)
	if err != nil {
		t.Fatal(err)
	}
	capped := &Hostfile{Path: "capped", Hosts: []Host{{Name: "a", Slots: 2, MaxSlots: 3}}}
	noSlots := &Hostfile{Path: "noslots", Hosts: []Host{{Name: "a"}, {Name: "b", Slots: 2}}}
	cmd := []string{"/opt/gnnrun", "selftest"}
	tests := []struct {
		name string
		opts []MPIRunOption
		want string
	}{
		{"np only", []MPIRunOption{NP(2), RunAsRoot(false)}, "mpirun -np 2 /opt/gnnrun selftest"},
		{"root", []MPIRunOption{NP(2), RunAsRoot(true)}, "mpirun -np 2 --allow-run-as-root /opt/gnnrun selftest"},
		{"more ranks than cores oversubscribes", []MPIRunOption{NP(1 << 20), RunAsRoot(false)}, "mpirun -np 1048576 --oversubscribe /opt/gnnrun selftest"},
		{"oversubscribe forced off", []MPIRunOption{NP(1 << 20), RunAsRoot(false), Oversubscribe(false)}, "mpirun -np 1048576 /opt/gnnrun selftest"},
		{"one rank spread over the cores", []MPIRunOption{NP(1), RunAsRoot(false), SpreadCores()}, fmt.Sprintf("mpirun -np 1 --map-by slot:PE=%d /opt/gnnrun selftest", runtime.NumCPU())},
		{"more ranks than cores spread: unbound", []MPIRunOption{NP(1 << 20), RunAsRoot(false), SpreadCores()}, "mpirun -np 1048576 --oversubscribe --bind-to none /opt/gnnrun selftest"},
		{"one rank on the second core", []MPIRunOption{NP(1), RunAsRoot(false), OnCores(1)}, "mpirun -np 1 --cpu-set 1 --bind-to core /opt/gnnrun selftest"},
		{"hostfile fills its slots", []MPIRunOption{WithHostfile(hf), RunAsRoot(false)}, "mpirun -np 8 --hostfile " + hosts + " /opt/gnnrun selftest"},
		{"hostfile fewer ranks", []MPIRunOption{WithHostfile(hf), NP(3), RunAsRoot(false)}, "mpirun -np 3 --hostfile " + hosts + " /opt/gnnrun selftest"},
		{"hostfile oversubscribed on request", []MPIRunOption{WithHostfile(capped), NP(3), Oversubscribe(true), RunAsRoot(false)}, "mpirun -np 3 --hostfile capped --oversubscribe /opt/gnnrun selftest"},
		{"hostfile without slots lets mpirun count", []MPIRunOption{WithHostfile(noSlots), RunAsRoot(false)}, "mpirun --hostfile noslots /opt/gnnrun selftest"},
		{"hostfile without slots and np", []MPIRunOption{WithHostfile(noSlots), NP(9), RunAsRoot(false)}, "mpirun -np 9 --hostfile noslots /opt/gnnrun selftest"},
		{"mca, tcp, agent, export", []MPIRunOption{
			NP(1), RunAsRoot(false), MCA("osc", "ucx"), TCP("10.0.0.0/24"), RshAgent("/ci/nsrsh"), MCA("osc", "pt2pt"),
			Export("GNNRUN_GPU_COUNT=2", "PATH"), Program("/usr/bin/mpirun.openmpi"),
		}, "/usr/bin/mpirun.openmpi -np 1 --mca osc pt2pt --mca btl self,vader,tcp --mca btl_tcp_if_include 10.0.0.0/24 " +
			"--mca oob_tcp_if_include 10.0.0.0/24 --mca plm_rsh_agent /ci/nsrsh -x GNNRUN_GPU_COUNT=2 -x PATH /opt/gnnrun selftest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MPIRun(cmd, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != tt.want {
				t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), tt.want)
			}
		})
	}
}

func TestMPIRunErrors(t *testing.T) {
	hf := &Hostfile{Path: "h", Hosts: []Host{{Name: "a", Slots: 2, MaxSlots: 3}, {Name: "b", Slots: 2, MaxSlots: 3}}}
	tests := []struct {
		name string
		cmd  []string
		opts []MPIRunOption
		want string
	}{
		{"no command", nil, []MPIRunOption{NP(1)}, "needs a command"},
		{"no np", []string{"x"}, nil, "needs NP or a hostfile"},
		{"zero np", []string{"x"}, []MPIRunOption{NP(0)}, "np must be at least 1"},
		{"too many for slots", []string{"x"}, []MPIRunOption{WithHostfile(hf), NP(5)}, "5 ranks but h has 4 slots; add slots or allow oversubscription"},
		{"oversubscribe off", []string{"x"}, []MPIRunOption{WithHostfile(hf), NP(5), Oversubscribe(false)}, "oversubscription is off"},
		{"past max_slots", []string{"x"}, []MPIRunOption{WithHostfile(hf), NP(7), Oversubscribe(true)}, "allows at most 6 (max_slots)"},
		{"hostfile without path", []string{"x"}, []MPIRunOption{WithHostfile(&Hostfile{Hosts: hf.Hosts})}, "has no path"},
		{"bad mca key", []string{"x"}, []MPIRunOption{NP(1), MCA("btl tcp", "x")}, `MCA parameter "btl tcp"`},
		{"empty mca value", []string{"x"}, []MPIRunOption{NP(1), MCA("btl", "")}, "empty value"},
		{"relative agent", []string{"x"}, []MPIRunOption{NP(1), RshAgent("ci/nsrsh")}, "absolute path"},
		{"bad export", []string{"x"}, []MPIRunOption{NP(1), Export("1X")}, `export "1X"`},
		{"bad tcp", []string{"x"}, []MPIRunOption{NP(1), TCP("")}, "TCP interfaces"},
		{"no cores", []string{"x"}, []MPIRunOption{NP(1), OnCores()}, "at least one core"},
		{"negative core", []string{"x"}, []MPIRunOption{NP(1), OnCores(-1)}, "core -1 is negative"},
		{"cores with a hostfile", []string{"x"}, []MPIRunOption{WithHostfile(hf), OnCores(0)}, "not with a hostfile"},
		{"empty program", []string{"x"}, []MPIRunOption{NP(1), Program("")}, "empty mpirun program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MPIRun(tt.cmd, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "launch: ") {
				t.Fatalf("MPIRun = %q, %v; want an error containing %q", got, err, tt.want)
			}
		})
	}
}

// TestMPIRunDefaultRoot checks that the root default follows the process.
func TestMPIRunDefaultRoot(t *testing.T) {
	var o mpirunOptions
	o.setDefault()
	got, err := MPIRun([]string{"x"}, NP(1))
	if err != nil {
		t.Fatal(err)
	}
	has := false
	for _, a := range got {
		has = has || a == "--allow-run-as-root"
	}
	if has != o.asRoot {
		t.Fatalf("--allow-run-as-root in %q is %v, running as root is %v", got, has, o.asRoot)
	}
	if !reflect.DeepEqual(got[len(got)-1:], []string{"x"}) {
		t.Fatalf("command not last: %q", got)
	}
}
