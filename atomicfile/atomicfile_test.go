package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// withUmask runs fn with the process's umask set to mask. The umask is
// process-wide, so these tests do not run in parallel.
func withUmask(t *testing.T, mask int, fn func()) {
	t.Helper()
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

// onlyFiles fails unless dir holds exactly the named files.
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("%s holds %q, want %q", dir, got, names)
	}
}

func TestModeFollowsUmask(t *testing.T) {
	for _, c := range []struct {
		mask int
		want os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		dir := t.TempDir()
		writers := map[string]func(string) error{
			"WriteFile": func(p string) error { return WriteFile(p, []byte("x")) },
			"WriteFunc": func(p string) error {
				return WriteFunc(p, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
			},
			"Create": func(p string) error {
				f, err := Create(p)
				if err != nil {
					return err
				}
				return f.Commit()
			},
		}
		withUmask(t, c.mask, func() {
			for name, write := range writers {
				p := filepath.Join(dir, name)
				if err := write(p); err != nil {
					t.Fatal(err)
				}
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != c.want {
					t.Errorf("umask %03o: %s made mode %v, want %v", c.mask, name, st.Mode().Perm(), c.want)
				}
			}
		})
	}
}

func TestContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.bin")
	big := make([]byte, 3<<20+17) // past WriteFunc's buffer
	for i := range big {
		big[i] = byte(i * 7)
	}
	if err := WriteFunc(p, func(w io.Writer) error {
		_, err := w.Write(big[:5])
		if err == nil {
			_, err = w.Write(big[5:])
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(big) {
		t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(big))
	}
	onlyFiles(t, dir, "a.bin")
}

func TestReplacesTargetAtCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.json")
	if err := WriteFile(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("new content"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("before Commit the target reads %q, want the old content", b)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new content" {
		t.Fatalf("after Commit the target reads %q", b)
	}
	// A reader that opened the old file keeps it whole: the new one is
	// another inode renamed over the name, not the old one rewritten.
	if b, _ := io.ReadAll(reader); string(b) != "old" {
		t.Fatalf("an open reader of the old file reads %q", b)
	}
	onlyFiles(t, dir, "m.json")
}

func TestNothingLeftOnFailure(t *testing.T) {
	boom := errors.New("boom")
	cases := map[string]func(p string) error{
		"callback error": func(p string) error {
			err := WriteFunc(p, func(w io.Writer) error {
				io.WriteString(w, "partial")
				return boom
			})
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), p) {
				t.Errorf("callback error came back as %v", err)
			}
			return err
		},
		"callback panic": func(p string) (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = boom
				}
			}()
			return WriteFunc(p, func(w io.Writer) error { panic("boom") })
		},
		"abort": func(p string) error {
			f, err := Create(p)
			if err != nil {
				return err
			}
			f.WriteString("partial")
			f.Abort()
			f.Abort() // twice is harmless
			return boom
		},
		"closed before commit": func(p string) error {
			f, err := Create(p)
			if err != nil {
				return err
			}
			f.Close()
			return f.Commit()
		},
		"commit twice": func(p string) error {
			f, err := Create(p)
			if err != nil {
				return err
			}
			if err := f.Commit(); err != nil {
				return err
			}
			os.Remove(p)
			return f.Commit()
		},
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "out.npy")
			if err := os.WriteFile(filepath.Join(dir, "keep"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := run(p); err == nil {
				t.Fatal("no error")
			}
			onlyFiles(t, dir, "keep")
		})
	}
}

func TestFailingRenameKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "target")
	if err := os.Mkdir(p, 0o755); err != nil { // a non-empty directory cannot be renamed over
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(p, []byte("data"))
	if err == nil || !strings.HasPrefix(err.Error(), "atomicfile: "+p+": ") {
		t.Fatalf("error %v, want one naming %s", err, p)
	}
	onlyFiles(t, dir, "target")
}

func TestCreateInMissingDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "such", "f")
	if _, err := Create(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v, want one naming %s", err, p)
	}
}

func TestRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := WriteFile("rel.txt", []byte("r")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile("rel.txt"); err != nil || string(b) != "r" {
		t.Fatalf("read %q, %v", b, err)
	}
	onlyFiles(t, ".", "rel.txt")
}
