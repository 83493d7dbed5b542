package rank

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLocalAlltoallvMovesEveryMessage(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		err := RunLocal(n, func(c Comm) error {
			send := make([][]byte, n)
			recv := make([][]byte, n)
			for j := range n {
				send[j] = []byte(strings.Repeat(fmt.Sprint(c.Rank()), j))
				recv[j] = make([]byte, c.Rank())
			}
			if err := c.Alltoallv(send, recv); err != nil {
				return err
			}
			for i, m := range recv {
				if string(m) != strings.Repeat(fmt.Sprint(i), c.Rank()) {
					return fmt.Errorf("from %d got %q", i, m)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("P=%d: %v", n, err)
		}
	}
}

func TestLocalLengthMismatchIsAnError(t *testing.T) {
	err := RunLocal(2, func(c Comm) error {
		return c.Alltoallv([][]byte{{1}, {2}}, [][]byte{make([]byte, 1), make([]byte, 2)})
	})
	if err == nil || !strings.Contains(err.Error(), "expects 2") {
		t.Fatalf("got %v", err)
	}
}

func TestLocalFailureUnblocksOthers(t *testing.T) {
	start := time.Now()
	err := RunLocal(4, func(c Comm) error {
		if c.Rank() == 2 {
			return errors.New("injected")
		}
		return c.Barrier()
	}, Timeout(10*time.Second))
	if err == nil || err.Error() != "rank 2/4: injected" {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("failure took too long to reach the other ranks")
	}
}

func TestLocalPanicAndAbortFailTheWorld(t *testing.T) {
	err := RunLocal(3, func(c Comm) error {
		if c.Rank() == 1 {
			panic("boom")
		}
		return c.Barrier()
	})
	if err == nil || !strings.Contains(err.Error(), "rank 1/3: panic: boom") {
		t.Fatalf("panic: got %v", err)
	}
	err = RunLocal(3, func(c Comm) error {
		if c.Rank() == 0 {
			c.Abort(3)
		}
		return c.Barrier()
	})
	if err == nil || !strings.Contains(err.Error(), "rank 0/3") {
		t.Fatalf("abort: got %v", err)
	}
}

func TestLocalTimeout(t *testing.T) {
	err := RunLocal(2, func(c Comm) error {
		if c.Rank() == 0 {
			return nil // never enters the barrier
		}
		return c.Barrier()
	}, Timeout(200*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("got %v", err)
	}
}

func TestLocalHostsAndSplitShared(t *testing.T) {
	err := RunLocal(5, func(c Comm) error {
		node, err := c.SplitShared()
		if err != nil {
			return err
		}
		wantSize := 2
		if c.Rank() == 4 {
			wantSize = 1
		}
		if node.Size() != wantSize || node.Rank() != c.Rank()%2 || node.Host() != c.Host() {
			return fmt.Errorf("rank %d on %s: node rank %d of %d", c.Rank(), c.Host(), node.Rank(), node.Size())
		}
		return nil
	}, RanksPerHost(2))
	if err != nil {
		t.Fatal(err)
	}
}

func TestLocalTrafficCountsPeersOnly(t *testing.T) {
	err := RunLocal(3, func(c Comm) error {
		send := [][]byte{make([]byte, 10), make([]byte, 10), make([]byte, 10)}
		recv := [][]byte{make([]byte, 10), make([]byte, 10), make([]byte, 10)}
		if err := c.Alltoallv(send, recv); err != nil {
			return err
		}
		if tr := c.Traffic(); tr.Sent != 20 || tr.Received != 20 {
			return fmt.Errorf("traffic %+v, want 20 each way", tr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLocalWindowBoundsChecked(t *testing.T) {
	err := RunLocal(2, func(c Comm) error {
		w, err := c.CreateWindow(make([]byte, 8))
		if err != nil {
			return err
		}
		if err := w.Get(make([]byte, 1), 0, 0); err == nil {
			return errors.New("get outside an epoch was accepted")
		}
		if err := w.LockAll(); err != nil {
			return err
		}
		if err := w.Get(make([]byte, 4), 1-c.Rank(), 6); err == nil {
			return errors.New("get past the end was accepted")
		}
		if err := w.UnlockAll(); err != nil {
			return err
		}
		return w.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
}
