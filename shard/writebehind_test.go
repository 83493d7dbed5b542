package shard

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gnnrun/graph"
	"gnnrun/graphio"
)

func TestWriteBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feat.npy")
	rf, err := createRowFile(path, graph.Uint8, []int64{4, 2})
	if err != nil {
		t.Fatal(err)
	}
	var wb writeBehind
	// Two buffers in turn, as the node shuffle uses them: the first is
	// filled again only after the submit that waited for its batch.
	a, b := []byte{1, 2, 3, 4}, []byte{5, 6}
	wb.add(rf, 0, a)
	if err := wb.submit(); err != nil {
		t.Fatal(err)
	}
	wb.add(rf, 3, b)
	if err := wb.submit(); err != nil {
		t.Fatal(err)
	}
	copy(a, []byte{7, 8}) // a's batch has been written
	wb.add(rf, 2, a[:2])
	if err := wb.flush(); err != nil {
		t.Fatal(err)
	}
	if wb.done != nil || len(wb.next) != 0 {
		t.Fatal("flush left a batch behind")
	}
	if err := rf.close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := graphio.EncodeNpyHeader(graph.Uint8, []int64{4, 2})
	if want := append(hdr, 1, 2, 3, 4, 7, 8, 5, 6); !bytes.Equal(raw, want) {
		t.Fatalf("file holds %v, want %v", raw[len(hdr):], want[len(hdr):])
	}
}

func TestWriteBehindError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feat.npy")
	rf, err := createRowFile(path, graph.Uint8, []int64{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rf.abort()
	var wb writeBehind
	wb.add(rf, 1, []byte{1, 2, 3, 4}) // rows 1 and 2 of 2
	if err := wb.submit(); err != nil {
		t.Fatalf("submit returned %v before the batch ran", err)
	}
	// The failed batch's error comes back from the next submit.
	wb.add(rf, 0, []byte{1, 2})
	err = wb.submit()
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("submit after a failed write: %v, want an error naming %s", err, path)
	}
	if err := wb.wait(); err != nil {
		t.Fatalf("wait after the error was returned: %v", err)
	}
}

func TestGatherRows(t *testing.T) {
	// More rows than one pwritev takes (1024), each in its own buffer.
	const n, rb = 2500, 3
	path := filepath.Join(t.TempDir(), "label.npy")
	rf, err := createRowFile(path, graph.Uint8, []int64{n + 1, rb})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]byte, n)
	want := make([]byte, rb) // row 0 is never written: zeros
	for i := range rows {
		rows[i] = []byte{byte(i), byte(i >> 8), byte(i * 7)}
		want = append(want, rows[i]...)
	}
	var wb writeBehind
	wb.addGather(rf, 1, rows)
	if err := wb.flush(); err != nil {
		t.Fatal(err)
	}
	if err := rf.close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := graphio.EncodeNpyHeader(graph.Uint8, []int64{n + 1, rb})
	if !bytes.Equal(raw[len(hdr):], want) {
		t.Fatal("gathered rows differ from the buffers written")
	}
}

func TestGatherRowsErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feat.npy")
	rf, err := createRowFile(path, graph.Uint8, []int64{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rf.abort()
	for _, c := range []struct {
		row  int64
		rows [][]byte
		want string
	}{
		{1, [][]byte{{1, 2}, {3, 4}}, "outside"},
		{-1, [][]byte{{1, 2}}, "outside"},
		{0, [][]byte{{1, 2}, {3}}, "row 1 has 1 bytes"},
	} {
		err := rf.gatherRows(c.row, c.rows)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("gatherRows(%d, %v): %v, want an error naming %s with %q", c.row, c.rows, err, path, c.want)
		}
	}
}
