package python

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"gnnrun/atomicfile"
)

// Installed is where Install put the client.
type Installed struct {
	// Dir goes on the trainer's PYTHONPATH: it holds the package gnnrun.
	Dir string
	// Temporary is set when Dir is this run's own (the user's shared
	// directory could not be trusted); Remove deletes it.
	Temporary bool
	// Note says why the shared directory was not used, or is empty.
	Note string
}

// Remove deletes a temporary install; it does nothing to a shared one.
func (in Installed) Remove() error {
	if !in.Temporary {
		return nil
	}
	return os.RemoveAll(in.Dir)
}

// Install writes the embedded client where only this user can write, and
// returns the directory to put on PYTHONPATH. Everything Python imports
// from it (the sources, and the __pycache__ it writes beside them) must be
// out of other users' reach: a directory another user could write, or
// create first, lets them run code in the trainer.
//
// The client goes to base/gnnrun-<uid>/<hash of the client>, so the ranks
// of a host and later runs of the same version share one copy. That
// directory is created 0700 and checked without following symlinks: it
// must be a directory, owned by this user, that no one else can write.
// When it is not (another user made it first, or it is a symlink), Install
// uses a fresh directory of its own in base instead (Temporary, made
// 0700 under a random name) and says why in Note. base is os.TempDir()
// when empty. Install fails when base is writable by others but lacks the
// sticky bit (anyone could rename the directories in it), or when it
// cannot write there.
func Install(base string) (Installed, error) {
	if base == "" {
		base = os.TempDir()
	}
	if err := checkBase(base); err != nil {
		return Installed{}, err
	}
	files, sum, err := clientFiles()
	if err != nil {
		return Installed{}, err
	}
	root := filepath.Join(base, fmt.Sprintf("gnnrun-%d", os.Getuid()))
	if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return Installed{}, fmt.Errorf("python: the client's directory: %w", err)
	}
	in := Installed{Dir: filepath.Join(root, sum)}
	if why := notPrivate(root); why != "" {
		tmp, err := os.MkdirTemp(base, "gnnrun-python-")
		if err != nil {
			return Installed{}, fmt.Errorf("python: the client's directory: %w", err)
		}
		in = Installed{Dir: tmp, Temporary: true, Note: fmt.Sprintf("%s %s: not used; the client goes to %s for this run", root, why, tmp)}
	}
	if err := writeFiles(in.Dir, files); err != nil {
		in.Remove()
		return Installed{}, err
	}
	return in, nil
}

// checkBase refuses a base directory in which others could replace ours.
func checkBase(base string) error {
	fi, err := os.Stat(base)
	if err != nil {
		return fmt.Errorf("python: the client's base directory: %w", err)
	}
	if m := fi.Mode(); m&0o002 != 0 && m&fs.ModeSticky == 0 {
		return fmt.Errorf("python: %s (TMPDIR) is writable by every user and lacks the sticky bit, so anyone could replace the trainer's client there: set TMPDIR to a directory of your own", base)
	}
	return nil
}

// notPrivate says why dir is not this user's own directory, out of
// others' reach, or returns "". It does not follow a symlink.
func notPrivate(dir string) string {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err.Error()
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "is a symlink"
	case !fi.IsDir():
		return "is not a directory"
	case !ok:
		return "has no owner to check"
	case int(st.Uid) != os.Getuid():
		return fmt.Sprintf("is owned by uid %d, not %d", st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Sprintf("has mode %04o: others can write it", fi.Mode().Perm())
	}
	return ""
}

// clientFiles returns the client's file names, sorted, and a name for
// their content: the first 16 hex digits of a hash of names and bytes.
func clientFiles() ([]string, string, error) {
	var files []string
	err := fs.WalkDir(Client, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("python: the embedded client: %w", err)
	}
	slices.Sort(files)
	h := sha256.New()
	for _, p := range files {
		b, _ := Client.ReadFile(p)
		h.Write([]byte(p))
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	return files, hex.EncodeToString(h.Sum(nil))[:16], nil
}

// writeFiles writes the client's files under dir, each atomically, and
// skips those already there with the same bytes (ranks of a host install
// at once).
func writeFiles(dir string, files []string) error {
	for _, p := range files {
		b, _ := Client.ReadFile(p)
		dst := filepath.Join(dir, p)
		if old, err := os.ReadFile(dst); err == nil && string(old) == string(b) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return fmt.Errorf("python: the client: %w", err)
		}
		if err := atomicfile.WriteFile(dst, b); err != nil {
			return fmt.Errorf("python: the client: %w", err)
		}
	}
	return nil
}
