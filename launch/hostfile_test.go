package launch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestReadHostfileGood(t *testing.T) {
	tests := []struct {
		file      string
		want      []Host
		slots     int
		slotsKnow bool
	}{
		{"good-basic.hosts", []Host{
			{Name: "node1", Slots: 4, Line: 3},
			{Name: "node2", Slots: 4, MaxSlots: 6, Line: 4},
		}, 8, true},
		{"good-forms.hosts", []Host{
			{Name: "n1", Slots: 3, Line: 1}, // one slot per line, as mpirun counts them
			{Name: "n2", Slots: 2, Line: 4},
			{Name: "10.0.0.7", Slots: 1, MaxSlots: 2, Line: 5},
			{Name: "n3", User: "alice", Slots: 2, Line: 6},
			{Name: "n4", User: "bob", Slots: 3, MaxSlots: 3, Line: 7}, // max_slots alone sets slots, as in mpirun
		}, 11, true},
		{"good-noslots.hosts", []Host{{Name: "n1", Line: 1}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "hostfiles", tt.file)
			hf, err := ReadHostfile(path)
			if err != nil {
				t.Fatal(err)
			}
			if hf.Path != path {
				t.Errorf("Path = %q, want %q", hf.Path, path)
			}
			got := make([]Host, len(hf.Hosts))
			for i, h := range hf.Hosts {
				h.explicit = false
				got[i] = h
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("hosts\n got %+v\nwant %+v", got, tt.want)
			}
			if n, ok := hf.Slots(); n != tt.slots || ok != tt.slotsKnow {
				t.Errorf("Slots() = %d, %v; want %d, %v", n, ok, tt.slots, tt.slotsKnow)
			}
		})
	}
}

func TestReadHostfileBad(t *testing.T) {
	tests := []struct {
		file string
		want string // the whole message must contain it
	}{
		{"bad-duplicate.hosts", `bad-duplicate.hosts:4: host "NODE1" is already listed at line 1`},
		{"bad-dup-mixed.hosts", `bad-dup-mixed.hosts:2: host "node1" is already listed at line 1`},
		{"bad-slots-word.hosts", `bad-slots-word.hosts:1: slots="four": want a whole number of at least 1`},
		{"bad-slots-zero.hosts", `bad-slots-zero.hosts:1: slots="0"`},
		{"bad-over-max.hosts", `bad-over-max.hosts:2: slots=4 is more than max_slots=2`},
		{"bad-key.hosts", `bad-key.hosts:1: unknown key "slot"`},
		{"bad-key-case.hosts", `bad-key-case.hosts:1: unknown key "Slots"`},
		{"bad-bare.hosts", `bad-bare.hosts:1: "4" is not key=value`},
		{"bad-no-host.hosts", `bad-no-host.hosts:1: line starts with "slots=4"`},
		{"bad-twice.hosts", `bad-twice.hosts:1: slots given twice`},
		{"bad-name.hosts", `bad-name.hosts:1: host name "node/1" has the character '/'`},
		{"bad-empty.hosts", `bad-empty.hosts: no hosts`},
		{"bad-user.hosts", `bad-user.hosts:1: empty user name`},
		{"bad-username.hosts", `bad-username.hosts:1: username="": want one non-empty user name`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := ReadHostfile(filepath.Join("testdata", "hostfiles", tt.file))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "launch: testdata/hostfiles/") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant one starting \"launch: FILE\" and containing %q", err, tt.want)
			}
		})
	}
}

func TestReadHostfileMissing(t *testing.T) {
	_, err := ReadHostfile(filepath.Join(t.TempDir(), "nope"))
	if err == nil || !strings.HasPrefix(err.Error(), "launch: ") {
		t.Fatalf("err = %v, want a launch: error", err)
	}
}

// TestHostfileExample keeps the documented example at the repository root
// valid.
func TestHostfileExample(t *testing.T) {
	hf, err := ReadHostfile(filepath.Join("..", "hostfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := hf.Slots(); !ok || n != 32 || len(hf.Hosts) != 4 {
		t.Fatalf("hostfile.example: %d hosts, %d slots (known %v); the comment promises 4 and 32", len(hf.Hosts), n, ok)
	}
}

// TestHostfileStringRoundTrip checks that String writes a file that parses
// back to the same hosts.
func TestHostfileStringRoundTrip(t *testing.T) {
	hf, err := ReadHostfile(filepath.Join("testdata", "hostfiles", "good-forms.hosts"))
	if err != nil {
		t.Fatal(err)
	}
	text := hf.String()
	want := "n1 slots=3\nn2 slots=2\n10.0.0.7 slots=1 max_slots=2\nalice@n3 slots=2\nbob@n4 slots=3 max_slots=3\n"
	if text != want {
		t.Fatalf("String() =\n%s\nwant\n%s", text, want)
	}
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := ReadHostfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.String() != text {
		t.Fatalf("round trip changed the file:\n%s", again.String())
	}
}

func TestHostfileMaxSlots(t *testing.T) {
	hf, err := ParseHostfile(strings.NewReader("a slots=2 max_slots=3\nb slots=1 max_slots=1\n"), "h")
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := hf.MaxSlots(); n != 4 || !ok {
		t.Fatalf("MaxSlots() = %d, %v; want 4, true", n, ok)
	}
	hf.Hosts[1].MaxSlots = 0
	if _, ok := hf.MaxSlots(); ok {
		t.Fatal("MaxSlots() known with an uncapped host")
	}
}

// stricterThanMpirun lists the test hostfiles mpirun accepts and
// ReadHostfile rejects on purpose: a bare word after the host (mpirun
// ignores it), host names that differ only in case (one machine to DNS, two
// to mpirun) and an empty user name ("@host", "username=").
var stricterThanMpirun = map[string]bool{
	"bad-bare.hosts": true, "bad-duplicate.hosts": true, "bad-user.hosts": true, "bad-username.hosts": true,
}

// TestHostfilesAgreeWithMpirun reads every test hostfile with OpenMPI's own
// mpirun (--display-allocation --do-not-launch: it parses and allocates, and
// starts nothing) and checks that it accepts the files ReadHostfile accepts,
// with the same slot count, and rejects the others, but for the documented
// cases where ReadHostfile is stricter.
func TestHostfilesAgreeWithMpirun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mpirun; skipped in -short mode")
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found: run make deps to install OpenMPI")
	}
	files, err := filepath.Glob(filepath.Join("testdata", "hostfiles", "*.hosts"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test hostfiles: %v", err)
	}
	total := regexp.MustCompile(`Total slots allocated (\d+)`)
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "mpirun", "--hostfile", f, "--display-allocation", "--do-not-launch", "-np", "1", "true")
			cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
			out, _ := cmd.CombinedOutput() // its exit status is 0 either way
			m := total.FindSubmatch(out)
			hf, err := ReadHostfile(f)
			switch {
			case err == nil && m == nil:
				t.Fatalf("ReadHostfile accepts it, mpirun does not:\n%s", out)
			case err != nil && m != nil && !stricterThanMpirun[name]:
				t.Fatalf("mpirun accepts it (%s), ReadHostfile does not: %v", m[0], err)
			case err != nil && m == nil && stricterThanMpirun[name]:
				t.Fatalf("listed as accepted by mpirun, but mpirun rejects it:\n%s", out)
			case err == nil:
				if n, known := hf.Slots(); known && string(m[1]) != strconv.Itoa(n) {
					t.Fatalf("ReadHostfile counts %d slots, mpirun %s", n, m[1])
				}
			}
		})
	}
}
