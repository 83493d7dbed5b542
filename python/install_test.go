package python

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// sameAsEmbedded fails unless dir holds every file of the client with its
// embedded bytes.
func sameAsEmbedded(t *testing.T, dir string) {
	t.Helper()
	files, _, err := clientFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("the embedded client has no files")
	}
	for _, p := range files {
		want, _ := Client.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: not the embedded client's bytes (err %v)", p, err)
		}
	}
}

// asTmp gives dir /tmp's mode: writable by all, with the sticky bit.
func asTmp(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
}

// userRoot is where Install keeps the shared copy under base.
func userRoot(base string) string { return filepath.Join(base, fmt.Sprintf("gnnrun-%d", os.Getuid())) }

func TestInstallPrivate(t *testing.T) {
	base := t.TempDir()
	asTmp(t, base)
	in, err := Install(base)
	if err != nil {
		t.Fatal(err)
	}
	if in.Temporary || in.Note != "" {
		t.Fatalf("a fresh base: want the shared directory, got %+v", in)
	}
	if filepath.Dir(in.Dir) != userRoot(base) {
		t.Fatalf("installed in %s, want under %s", in.Dir, userRoot(base))
	}
	fi, err := os.Lstat(userRoot(base))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s has mode %04o, want 0700", userRoot(base), fi.Mode().Perm())
	}
	sameAsEmbedded(t, in.Dir)
	// A second run (another rank, a later job) uses the same copy.
	again, err := Install(base)
	if err != nil || again != in {
		t.Fatalf("second install: %+v, %v; want %+v", again, err, in)
	}
	// A file changed there (by this user) is put back.
	init := filepath.Join(in.Dir, "gnnrun", "__init__.py")
	if err := os.WriteFile(init, []byte("raise SystemExit(3)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(base); err != nil {
		t.Fatal(err)
	}
	sameAsEmbedded(t, in.Dir)
}

// TestInstallRefusesForeignDirectory plants the shared directory before
// gnnrun as another user could (writable by all, a symlink to theirs, or
// theirs), with a client of theirs inside: Install must neither write into
// it nor hand it to Python.
func TestInstallRefusesForeignDirectory(t *testing.T) {
	_, sum, err := clientFiles()
	if err != nil {
		t.Fatal(err)
	}
	plant := func(t *testing.T, dir string) {
		t.Helper()
		evil := filepath.Join(dir, sum, "gnnrun")
		if err := os.MkdirAll(evil, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(evil, "__init__.py"), []byte("import os; os.system('evil')\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, why string
		make      func(t *testing.T, root string)
	}{
		{"world-writable", "others can write it", func(t *testing.T, root string) {
			if err := os.Mkdir(root, 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(root, 0o777) // past the umask
			plant(t, root)
		}},
		{"symlink", "is a symlink", func(t *testing.T, root string) {
			theirs := t.TempDir()
			os.Chmod(theirs, 0o700)
			plant(t, theirs)
			if err := os.Symlink(theirs, root); err != nil {
				t.Fatal(err)
			}
		}},
		{"another user's", "is owned by uid 4242", func(t *testing.T, root string) {
			if os.Getuid() != 0 {
				t.Skip("needs root to make a directory another user owns")
			}
			if err := os.Mkdir(root, 0o700); err != nil {
				t.Fatal(err)
			}
			plant(t, root)
			if err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(p, 4242, 4242)
			}); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file", "is not a directory", func(t *testing.T, root string) {
			if err := os.WriteFile(root, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			asTmp(t, base)
			root := userRoot(base)
			c.make(t, root)
			in, err := Install(base)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Remove()
			if !in.Temporary || !strings.Contains(in.Note, c.why) {
				t.Fatalf("want a temporary directory and a note saying %q, got %+v", c.why, in)
			}
			real, _ := filepath.EvalSymlinks(root)
			if strings.HasPrefix(in.Dir, root) || (real != "" && strings.HasPrefix(in.Dir, real)) {
				t.Fatalf("installed in %s, inside the planted %s", in.Dir, root)
			}
			fi, err := os.Lstat(in.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != 0o700 || int(st.Uid) != os.Getuid() {
				t.Fatalf("%s: mode %04o owner %d, want 0700 and %d", in.Dir, fi.Mode().Perm(), st.Uid, os.Getuid())
			}
			sameAsEmbedded(t, in.Dir)
			if err := in.Remove(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(in.Dir); !os.IsNotExist(err) {
				t.Fatalf("Remove left %s: %v", in.Dir, err)
			}
		})
	}
}

func TestInstallRefusesOpenBase(t *testing.T) {
	base := t.TempDir()
	os.Chmod(base, 0o777) // writable by all, no sticky bit
	_, err := Install(base)
	if err == nil || !strings.Contains(err.Error(), "sticky bit") {
		t.Fatalf("a base anyone can rename entries of: want an error naming the sticky bit, got %v", err)
	}
}
