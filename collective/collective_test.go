package collective

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"gnnrun/rank"
)

var worldSizes = []int{1, 2, 3, 5, 8}

func runLocal(t *testing.T, n int, fn func(c *Comm) error, opts ...Option) {
	t.Helper()
	err := rank.RunLocal(n, func(rc rank.Comm) error {
		c, err := New(rc, opts...)
		if err != nil {
			return err
		}
		return fn(c)
	}, rank.RanksPerHost(2))
	if err != nil {
		t.Fatal(err)
	}
}

func TestSelfTestOnLocalWorlds(t *testing.T) {
	for _, n := range worldSizes {
		for _, scale := range []int{0, 1, 17, 300} {
			t.Run(fmt.Sprintf("P%d/scale%d", n, scale), func(t *testing.T) {
				runLocal(t, n, func(c *Comm) error { return SelfTest(c, 42, scale) })
			})
		}
	}
}

// spyComm records the length of every raw message and counts raw
// all-to-alls.
type spyComm struct {
	rank.Comm
	mu    *sync.Mutex
	calls *int
	sizes map[int]int
}

func newSpy(c rank.Comm, mu *sync.Mutex, calls *int, sizes map[int]int) spyComm {
	return spyComm{c, mu, calls, sizes}
}

func (s spyComm) Alltoallv(send, recv [][]byte) error {
	s.mu.Lock()
	*s.calls++
	for _, m := range send {
		s.sizes[len(m)]++
	}
	s.mu.Unlock()
	return s.Comm.Alltoallv(send, recv)
}

// checkSizes fails unless every raw message is a header or at most limit
// bytes long.
func checkSizes(t *testing.T, sizes map[int]int, limit int) {
	t.Helper()
	for n := range sizes {
		if n > limit && n != headerSize {
			t.Errorf("raw message of %d bytes exceeds the %d-byte limit", n, limit)
		}
	}
}

func TestChunkingSplitsIntoSmallMessages(t *testing.T) {
	const limit = 3
	var mu sync.Mutex
	calls, sizes := 0, map[int]int{}
	err := rank.RunLocal(4, func(rc rank.Comm) error {
		c := MustNew(newSpy(rc, &mu, &calls, sizes), MaxMessage(limit))
		send := make([][]int64, 4)
		for d := range send {
			send[d] = make([]int64, 10*(d+1)) // up to 320 bytes to rank 3
			for k := range send[d] {
				send[d][k] = int64(100*c.Rank() + k)
			}
		}
		recv, err := Exchange(c, send)
		if err != nil {
			return err
		}
		for s, r := range recv {
			if len(r) != 10*(c.Rank()+1) || r[len(r)-1] != int64(100*s+len(r)-1) {
				return fmt.Errorf("rank %d: bad data from %d: %v", c.Rank(), s, r)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkSizes(t, sizes, limit)
	// One header round, then 320 bytes in 3-byte rounds: 107 on each of 4 ranks.
	if want := 4 * (1 + 107); calls != want {
		t.Errorf("%d raw all-to-alls, want %d", calls, want)
	}
}

func TestAllgathervRoundsNeverExceedLimit(t *testing.T) {
	var mu sync.Mutex
	sizes := map[int]int{}
	err := rank.RunLocal(3, func(rc rank.Comm) error {
		c := MustNew(gatherSpy{rc, &mu, sizes}, MaxMessage(20))
		local := []byte(strings.Repeat("x", 100*(c.Rank()+1)))
		all, counts, err := Allgatherv(c, local)
		if err != nil {
			return err
		}
		if len(all) != 600 || counts[2] != 300 {
			return fmt.Errorf("gathered %d bytes, counts %v", len(all), counts)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkSizes(t, sizes, 20)
}

// gatherSpy records the length of every raw all-gather contribution.
type gatherSpy struct {
	rank.Comm
	mu    *sync.Mutex
	sizes map[int]int
}

func (s gatherSpy) Allgatherv(send []byte, recv [][]byte) error {
	s.mu.Lock()
	if len(send) != 8 { // the size round
		s.sizes[len(send)]++
	}
	s.mu.Unlock()
	return s.Comm.Allgatherv(send, recv)
}

func TestCompressionShrinksWire(t *testing.T) {
	var plain, packed rank.Traffic
	for _, opts := range [][]Option{nil, {CompressAbove(1)}} {
		err := rank.RunLocal(2, func(rc rank.Comm) error {
			c := MustNew(rc, opts...)
			send := [][]int64{make([]int64, 1<<14), make([]int64, 1<<14)} // zeros compress well
			recv, err := Exchange(c, send)
			if err != nil {
				return err
			}
			if len(recv[1-c.Rank()]) != 1<<14 {
				return fmt.Errorf("got %d values", len(recv[1-c.Rank()]))
			}
			if c.Rank() == 0 {
				if opts == nil {
					plain = c.Traffic()
				} else {
					packed = c.Traffic()
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if packed.Sent*10 > plain.Sent {
		t.Errorf("compressed traffic %d bytes is not under a tenth of plain %d", packed.Sent, plain.Sent)
	}
}

func TestRequestAnswerErrorFailsEveryRank(t *testing.T) {
	err := rank.RunLocal(3, func(rc rank.Comm) error {
		c := MustNew(rc)
		_, err := Request(c, []int64{0, 1, 2}, func(k int64) int { return int(k) }, func(src int, ks []int64) ([]int64, error) {
			if c.Rank() == 2 {
				return nil, errors.New("no such key")
			}
			return ks, nil
		})
		return err
	}, rank.Timeout(10e9))
	if err == nil || !strings.Contains(err.Error(), "rank 2/3: no such key") {
		t.Fatalf("want rank 2's error, got %v", err)
	}
}

func TestRejectsBadInput(t *testing.T) {
	runLocal(t, 2, func(c *Comm) error {
		if _, err := Exchange(c, [][]*int{nil, nil}); err == nil || !strings.Contains(err.Error(), "pointers") {
			return fmt.Errorf("pointer elements: got %v", err)
		}
		if _, _, err := Alltoallv(c, []int32{1, 2}, []int{1, 2}); err == nil {
			return errors.New("counts beyond the data were accepted")
		}
		if _, err := Request(c, []int64{5}, func(int64) int { return 7 }, func(int, []int64) ([]int64, error) { return nil, nil }); err == nil {
			return errors.New("owner out of range was accepted")
		}
		return nil
	})
	if _, err := New(nil, MaxMessage(0)); err == nil {
		t.Error("a zero message limit was accepted")
	}
}

func TestOffset(t *testing.T) {
	runLocal(t, 5, func(c *Comm) error {
		before, total, err := Offset(c, int64(c.Rank()+1))
		if err != nil {
			return err
		}
		r := int64(c.Rank())
		if before != r*(r+1)/2 || total != 15 {
			return fmt.Errorf("rank %d: offset %d of %d", r, before, total)
		}
		return nil
	})
}

func TestAgree(t *testing.T) {
	runLocal(t, 4, func(c *Comm) error {
		var mine error
		if c.Rank() == 2 || c.Rank() == 3 {
			mine = fmt.Errorf("rank %d broke", c.Rank())
		}
		got := Agree(c, mine)
		switch {
		case c.Rank() == 2 && got != mine:
			return fmt.Errorf("rank 2 lost its own error: %v", got)
		case got == nil || got.Error() != "rank 2 broke":
			return fmt.Errorf("rank %d got %v, want the lowest failing rank's", c.Rank(), got)
		}
		if err := Agree(c, nil); err != nil {
			return err
		}
		return nil
	})
}

// TestAlltoallvIntoReusesGrowingBuffer exchanges volumes that grow a
// little each step, as the endpoint lookups' do: after the first step the
// receive buffer, allocated with room to spare, is reused, and every step
// delivers the right elements.
func TestAlltoallvIntoReusesGrowingBuffer(t *testing.T) {
	runLocal(t, 3, func(c *Comm) error {
		var buf []int64
		for step := range 5 {
			n := 1000 + step // elements to each rank
			send := make([]int64, 0, n*c.Size())
			counts := make([]int, c.Size())
			for j := range c.Size() {
				for i := range n {
					send = append(send, int64(c.Rank()*1_000_000+j*10_000+i))
				}
				counts[j] = n
			}
			got, rc, err := AlltoallvInto(c, send, counts, buf)
			if err != nil {
				return err
			}
			if step > 0 && &got[0] != &buf[:1][0] {
				return fmt.Errorf("step %d: receive buffer of capacity %d reallocated for %d elements", step, cap(buf), len(got))
			}
			for src, off := 0, 0; src < c.Size(); off, src = off+rc[src], src+1 {
				for i := range n {
					if want := int64(src*1_000_000 + c.Rank()*10_000 + i); got[off+i] != want {
						return fmt.Errorf("step %d: element %d from rank %d is %d, want %d", step, i, src, got[off+i], want)
					}
				}
			}
			buf = got
		}
		return nil
	})
}

// TestExchangeIntoReusesBuffers exchanges messages that grow a little each
// step and, from one rank, none at all: after the first step every other
// rank's message arrives in the memory of the last result, the rank's own
// is its send slice, and every step delivers the right elements.
func TestExchangeIntoReusesBuffers(t *testing.T) {
	runLocal(t, 3, func(c *Comm) error {
		var last [][]int64
		for step := range 5 {
			send := make([][]int64, c.Size())
			for j := range send {
				if c.Rank() == 2 {
					continue // rank 2 sends nothing
				}
				for i := range 1000 + step {
					send[j] = append(send[j], int64(c.Rank()*1_000_000+j*10_000+i))
				}
			}
			got, err := ExchangeInto(c, send, last)
			if err != nil {
				return err
			}
			if len(got[c.Rank()]) > 0 && &got[c.Rank()][0] != &send[c.Rank()][0] {
				return fmt.Errorf("step %d: a rank's own message was copied", step)
			}
			for src, m := range got {
				n := 1000 + step
				if src == 2 {
					n = 0
				}
				if len(m) != n {
					return fmt.Errorf("step %d: %d elements from rank %d, want %d", step, len(m), src, n)
				}
				if step > 0 && n > 0 && src != c.Rank() && &m[0] != &last[src][:1][0] {
					return fmt.Errorf("step %d: message from rank %d not received into the last one's memory (capacity %d)", step, src, cap(last[src]))
				}
				for i, v := range m {
					if want := int64(src*1_000_000 + c.Rank()*10_000 + i); v != want {
						return fmt.Errorf("step %d: element %d from rank %d is %d, want %d", step, i, src, v, want)
					}
				}
			}
			last = got
		}
		return nil
	})
}

// A container's OMPI_MCA_btl_vader_single_copy_mechanism=none made
// MPI_Win_create fail on the GPU host; the hint must name it and the cure.
func TestOneSidedHintNamesSingleCopyNone(t *testing.T) {
	t.Setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "cma")
	t.Setenv("OMPI_MCA_btl_sm_single_copy_mechanism", "")
	if h := oneSidedHint(); !strings.Contains(h, "--transport alltoall") || strings.Contains(h, "single_copy") {
		t.Errorf("with cma, the general hint, got %q", h)
	}
	t.Setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
	if h := oneSidedHint(); !strings.Contains(h, "OMPI_MCA_btl_vader_single_copy_mechanism=none") || !strings.Contains(h, "--mca btl_vader_single_copy_mechanism cma") {
		t.Errorf("with none, a hint naming the variable and the cure, got %q", h)
	}
}

// All holds only where every rank's condition does, Any where one does,
// against the conditions counted plainly.
func TestAllAndAny(t *testing.T) {
	const n = 3
	for mask := range 1 << n { // rank r's condition: bit r of mask
		err := rank.RunLocal(n, func(rc rank.Comm) error {
			c := MustNew(rc)
			cond := mask>>c.Rank()&1 == 1
			all, err := All(c, cond)
			if err != nil {
				return err
			}
			some, err := Any(c, cond)
			if err != nil {
				return err
			}
			if all != (mask == 1<<n-1) || some != (mask != 0) {
				return fmt.Errorf("conditions %03b: All %v, Any %v", mask, all, some)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
