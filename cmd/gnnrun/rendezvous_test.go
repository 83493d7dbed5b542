package main

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gnnrun/collective"
	"gnnrun/rank"
)

// rendezvousOn runs findMaster on size in-process ranks, 2 per pretend host,
// and returns every rank's result and error.
func rendezvousOn(t *testing.T, size int, want masterWant) ([]master, []error) {
	t.Helper()
	ms, errs := make([]master, size), make([]error, size)
	var mu sync.Mutex
	err := rank.RunLocal(size, func(c rank.Comm) error {
		m, err := findMaster(collective.MustNew(c), want)
		mu.Lock()
		ms[c.Rank()], errs[c.Rank()] = m, err
		mu.Unlock()
		return nil
	}, rank.RanksPerHost(2), rank.Timeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return ms, errs
}

// clearMasterEnv unsets the ranks' own MASTER_ADDR and MASTER_PORT for the
// test (the in-process ranks share this environment).
func clearMasterEnv(t *testing.T) {
	t.Setenv("MASTER_ADDR", "")
	t.Setenv("MASTER_PORT", "")
}

// loopbackName is the name of this host's loopback interface.
func loopbackName(t *testing.T) string {
	addrs, err := hostAddrs()
	if err != nil {
		t.Fatal(err)
	}
	return holder(addrs, net.IPv4(127, 0, 0, 1))
}

func TestRendezvousAllLocalTakesLoopback(t *testing.T) {
	clearMasterEnv(t)
	ms, errs := rendezvousOn(t, 4, masterWant{allLocal: true, check: true, timeout: probeTimeout})
	lo := loopbackName(t)
	for r, m := range ms {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		if m.addr != "127.0.0.1" || m.port == "" || m.port != ms[0].port || !m.checked || m.ifaces[r] != lo {
			t.Errorf("rank %d: %+v; want 127.0.0.1, rank 0's port, checked, through %s", r, m, lo)
		}
	}
	// The port is closed again, for torch to bind.
	ln, err := net.Listen("tcp", ":"+ms[0].port)
	if err != nil {
		t.Fatalf("MASTER_PORT %s still taken after the rendezvous: %v", ms[0].port, err)
	}
	ln.Close()
}

func TestRendezvousAcrossHostsTakesAnInterfaceAddress(t *testing.T) {
	clearMasterEnv(t)
	addrs, err := hostAddrs()
	if err != nil {
		t.Fatal(err)
	}
	offered := offers(addrs, false)
	if len(offered) == 0 {
		t.Skip("this machine has no address but loopback")
	}
	ms, errs := rendezvousOn(t, 4, masterWant{check: true, timeout: probeTimeout})
	want := holder(addrs, net.ParseIP(offered[0]))
	for r, m := range ms {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		if m.addr != offered[0] || m.ifaces[r] != want || !slices.Equal(m.tried, offered) {
			t.Errorf("rank %d: %+v; want %s (the first of %v) through %s", r, m, offered[0], offered, want)
		}
	}
}

// An address nobody answers at fails every rank alike within seconds,
// naming the address, the ranks by host, and what to set.
func TestRendezvousUnreachableFailsFast(t *testing.T) {
	clearMasterEnv(t)
	start := time.Now()
	// 198.51.100.1 is TEST-NET-2 (RFC 5737): no host answers there.
	_, errs := rendezvousOn(t, 4, masterWant{addr: "198.51.100.1", check: true, timeout: 500 * time.Millisecond})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v to fail", took)
	}
	for r, err := range errs {
		var ag agreed
		if err == nil || !errors.As(err, &ag) || err.Error() != errs[0].Error() {
			t.Fatalf("rank %d: %v; want rank 0's agreed error %v", r, err, errs[0])
		}
	}
	msg := errs[0].Error()
	t.Log(msg)
	for _, want := range []string{"MASTER_ADDR=198.51.100.1 (yours)", "local0 (ranks 0, 1), local1 (ranks 2, 3)", "GLOO_SOCKET_IFNAME", "unset MASTER_ADDR"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
}

func TestRendezvousBusyPortFails(t *testing.T) {
	clearMasterEnv(t)
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	t.Setenv("MASTER_PORT", port)
	_, errs := rendezvousOn(t, 2, masterWant{port: port, allLocal: true, check: true, timeout: probeTimeout})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "MASTER_PORT="+port+": rank 0's host (local0) cannot listen on it") {
			t.Errorf("rank %d: %v; want the busy port named", r, err)
		}
	}
}

// A rank whose MASTER_PORT is not rank 0's is refused: its trainer would
// wait at another port.
func TestRendezvousContradictionFails(t *testing.T) {
	clearMasterEnv(t)
	t.Setenv("MASTER_PORT", "29999")
	_, errs := rendezvousOn(t, 2, masterWant{allLocal: true, check: true, timeout: probeTimeout})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "rank 0 (local0): MASTER_PORT=29999 here, unset on rank 0") {
			t.Errorf("rank %d: %v; want the contradiction named", r, err)
		}
	}
}

func TestRendezvousCheckOff(t *testing.T) {
	clearMasterEnv(t)
	ms, errs := rendezvousOn(t, 4, masterWant{allLocal: false, check: false})
	for r, m := range ms {
		if errs[r] != nil || m.addr != "local0" || m.port == "" || m.checked || m.ifaces[r] != "" {
			t.Errorf("rank %d: %+v, %v; want rank 0's host name, a port, unchecked", r, m, errs[r])
		}
	}
}

// Something else answering at the address is not taken for rank 0.
func TestProbeRefusesAnotherProgram(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("SSH-2.0-OpenSSH_9.2p1\r\n"))
			c.Close()
		}
	}()
	_, err = probe(ln.Addr().String(), []byte("0123456789abcdef"), time.Second)
	if err == nil || !strings.Contains(err.Error(), "is not rank 0's gnnrun") {
		t.Fatalf("got %v; want a refusal", err)
	}
}

func TestOffersOrder(t *testing.T) {
	addrs := []hostAddr{
		{iface: "lo", ip: net.ParseIP("127.0.0.1"), loopback: true},
		{iface: "lo", ip: net.ParseIP("::1"), loopback: true},
		{iface: "eth0", ip: net.ParseIP("fe80::1")},
		{iface: "eth0", ip: net.ParseIP("10.0.0.5")},
		{iface: "ib0", ip: net.ParseIP("2001:db8::5")},
		{iface: "ib0", ip: net.ParseIP("192.168.7.5")},
		{iface: "eth1", ip: net.ParseIP("169.254.3.3")},
	}
	for _, tc := range []struct {
		allLocal bool
		want     []string
	}{
		{false, []string{"10.0.0.5", "192.168.7.5", "2001:db8::5"}},
		{true, []string{"127.0.0.1", "10.0.0.5", "192.168.7.5", "2001:db8::5"}},
	} {
		if got := offers(addrs, tc.allLocal); !slices.Equal(got, tc.want) {
			t.Errorf("allLocal %v: offers %v, want %v", tc.allLocal, got, tc.want)
		}
	}
	if got := holder(addrs, net.ParseIP("192.168.7.5")); got != "ib0" {
		t.Errorf("192.168.7.5 is held by %q, want ib0", got)
	}
}

// The ranks agree on the first address that every rank reached, and each
// rank gets its own interface towards it.
func TestAgreeMasterFirstReachedByAll(t *testing.T) {
	o := masterOffer{Host: "h0", Addrs: []string{"10.0.0.1", "10.1.0.1", "10.2.0.1"}, Port: "5000", Check: true}
	reports := []probeReport{
		{Host: "h0", OK: []bool{true, true, true}, Why: []string{"", "", ""}, Iface: []string{"eth0", "ib0", "eth2"}},
		{Host: "h1", OK: []bool{false, true, true}, Why: []string{"i/o timeout", "", ""}, Iface: []string{"", "ib1", "eth2"}},
	}
	m, err := agreeMaster(o, reports, time.Second)
	if err != nil || m.addr != "10.1.0.1" || !slices.Equal(m.ifaces, []string{"ib0", "ib1"}) {
		t.Fatalf("got %+v, %v; want 10.1.0.1 through ib0, ib1", m, err)
	}
	reports[1].OK[1], reports[1].OK[2] = false, false
	reports[1].Why[1], reports[1].Why[2] = "connection refused", "no route to host"
	_, err = agreeMaster(o, reports, time.Second)
	want := "10.0.0.1 not from h1 (rank 1), e.g. rank 1: i/o timeout; 10.1.0.1 not from h1 (rank 1), e.g. rank 1: connection refused"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "tried 10.0.0.1, 10.1.0.1, 10.2.0.1") {
		t.Fatalf("got %v; want it to say %q", err, want)
	}
}
