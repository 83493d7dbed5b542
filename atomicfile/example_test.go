package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"gnnrun/atomicfile"
)

// A file written by offsets, as dispatch fills an array with rows that
// arrive in any order: nothing is under the name until Commit.
func ExampleCreate() {
	dir, err := os.MkdirTemp("", "atomicfile")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rows.bin")
	f, err := atomicfile.Create(path)
	if err != nil {
		panic(err)
	}
	defer f.Abort() // does nothing once committed
	if err := f.Truncate(6); err != nil {
		panic(err)
	}
	f.WriteAt([]byte("def"), 3)
	f.WriteAt([]byte("abc"), 0)
	_, err = os.Stat(path)
	fmt.Println("before Commit:", os.IsNotExist(err))
	if err := f.Commit(); err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(path)
	fmt.Println("after Commit:", string(b))
	// Output:
	// before Commit: true
	// after Commit: abcdef
}
