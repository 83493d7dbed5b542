package graphio

import (
	"archive/zip"
	"fmt"
	"io"
	"time"

	"gnnrun/atomicfile"
	"gnnrun/graph"
)

// NpzArray is one array of an .npz file: its name (without ".npy") and
// contents.
type NpzArray struct {
	Name string
	Data *graph.Tensor
}

// npzTime is the modification time of every entry, so the same arrays
// always give the same bytes (zip's dates start in 1980).
var npzTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteNpz writes the arrays, in order, as an uncompressed .npz (what
// numpy.savez writes; numpy.load reads it) to path, atomically. The bytes
// depend only on the arrays.
func WriteNpz(path string, arrays []NpzArray) error {
	err := atomicfile.WriteFunc(path, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for _, a := range arrays {
			f, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: zip.Store, Modified: npzTime})
			if err != nil {
				return err
			}
			if _, err := f.Write(EncodeNpyHeader(a.Data.DType, a.Data.Shape)); err != nil {
				return err
			}
			if _, err := f.Write(a.Data.Data); err != nil {
				return err
			}
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("graphio: %w", err)
	}
	return nil
}
