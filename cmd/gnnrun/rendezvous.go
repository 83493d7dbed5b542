package main

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"gnnrun/collective"
)

// The rendezvous finds a MASTER_ADDR every trainer reaches before any
// trainer starts, so that torch.distributed's own rendezvous, which retries
// an unreachable address forever, never gets one. Rank 0 listens on the
// MASTER_PORT itself (so the check also covers a firewall that lets only
// some ports through) and offers its addresses; every rank connects to each
// in parallel and reads rank 0's greeting, a random token, which tells rank
// 0 apart from whatever else answers at that address (another host's
// docker0 has the same 172.17.0.1); the ranks agree on the first address
// every rank reached. Rank 0 closes the port before the trainers start:
// from then until torch binds it, another process could take it, as with
// any port picked in advance.

// probeTimeout bounds one rank's attempt at one address, the connection and
// rank 0's greeting. A LAN connects in milliseconds; 3 s leaves room for a
// loaded host while an unreachable address still fails the job in seconds.
const probeTimeout = 3 * time.Second

// masterCheckEnv turns the check off when set to "off": gnnrun then hands
// out rank 0's host name and a free port unchecked, as before it checked.
const masterCheckEnv = "GNNRUN_MASTER_CHECK"

// masterWant is what rank 0's environment asks of the rendezvous.
type masterWant struct {
	addr, port string // MASTER_ADDR, MASTER_PORT as the user set them ("": gnnrun picks)
	allLocal   bool   // every rank is on rank 0's host: 127.0.0.1 is an address too
	check      bool   // connect from every rank before handing an address out
	timeout    time.Duration
}

// masterWanted reads rank 0's wishes from this process's environment.
func masterWanted(allLocal bool) masterWant {
	return masterWant{addr: os.Getenv("MASTER_ADDR"), port: os.Getenv("MASTER_PORT"), allLocal: allLocal,
		check: os.Getenv(masterCheckEnv) != "off", timeout: probeTimeout}
}

// masterOffer is rank 0's broadcast: the addresses to try, the port rank 0
// listens on and the token it greets with, or why it cannot listen.
type masterOffer struct {
	Host    string   `json:"host"`
	Addrs   []string `json:"addrs"`
	Port    string   `json:"port"`
	Token   []byte   `json:"token"`
	UserSet bool     `json:"user_set"` // Addrs is the user's MASTER_ADDR
	PortSet bool     `json:"port_set"` // Port is the user's MASTER_PORT
	Check   bool     `json:"check"`
	Err     string   `json:"err,omitempty"`
}

// probeReport is one rank's outcome, gathered on every rank.
type probeReport struct {
	Host string   `json:"host"`
	OK   []bool   `json:"ok"`  // per address of the offer
	Why  []string `json:"why"` // why not, per address
	// Iface holds, per address, the interface of this host through which
	// the connection went ("" when it failed or no interface holds it).
	Iface []string `json:"iface"`
	Err   string   `json:"err,omitempty"` // a setting of this rank that contradicts rank 0's
}

// master is the agreed rendezvous of torch.distributed.
type master struct {
	addr, port string
	userSet    bool
	checked    bool // every rank reached rank 0 at addr and port
	tried      []string
	// ifaces is every rank's interface towards addr, in rank order (""
	// where unknown, and all "" when the check is off).
	ifaces []string
	took   time.Duration // from rank 0's offer to the agreement
}

// findMaster agrees on the MASTER_ADDR and MASTER_PORT of every rank's
// trainer. With the check on, every rank has connected to rank 0 at that
// address and port, and the interface of each host it went through is in
// the result. It fails on every rank alike, naming the addresses, the ranks
// that could not reach them and what to set, when no address reached every
// rank within the timeout, or when a rank's own MASTER_ADDR or MASTER_PORT
// differs from rank 0's. It is collective.
func findMaster(c *collective.Comm, want masterWant) (master, error) {
	t0 := time.Now()
	var offer masterOffer
	var srv *greeter
	if c.Rank() == 0 {
		offer, srv = offerMaster(c.Host(), want)
		defer srv.close()
	}
	blob, _ := json.Marshal(offer)
	blob, err := collective.Bcast(c, blob, 0)
	if err != nil {
		return master{}, err
	}
	// From here on every rank sees the same offer and reports: their
	// errors are agreed (see fail).
	if err := json.Unmarshal(blob, &offer); err != nil {
		return master{}, agreed{fmt.Errorf("the rendezvous offer: %w", err)}
	}
	if offer.Err != "" {
		return master{}, agreed{errors.New(offer.Err)}
	}
	mine := probeReport{Host: c.Host(), Err: contradiction(offer)}
	if offer.Check && mine.Err == "" {
		mine.OK, mine.Why, mine.Iface = probeAll(offer, want.timeout)
	}
	blob, _ = json.Marshal(mine)
	all, counts, err := collective.Allgatherv(c, blob)
	if err != nil {
		return master{}, err
	}
	reports := make([]probeReport, len(counts))
	off := 0
	for r, k := range counts {
		if err := json.Unmarshal(all[off:off+k], &reports[r]); err != nil {
			return master{}, agreed{fmt.Errorf("rank %d's rendezvous report: %w", r, err)}
		}
		off += k
	}
	m, err := agreeMaster(offer, reports, want.timeout)
	if err != nil {
		return master{}, agreed{err}
	}
	m.took = time.Since(t0)
	return m, nil
}

// contradiction says why this rank's own MASTER_ADDR or MASTER_PORT cannot
// be used with rank 0's ("" when they agree or are unset here): the
// trainers must share one rendezvous.
func contradiction(o masterOffer) string {
	root := map[string]string{"MASTER_ADDR": "unset", "MASTER_PORT": "unset"}
	if o.UserSet {
		root["MASTER_ADDR"] = o.Addrs[0]
	}
	if o.PortSet {
		root["MASTER_PORT"] = o.Port
	}
	for _, name := range []string{"MASTER_ADDR", "MASTER_PORT"} {
		if mine := os.Getenv(name); mine != "" && mine != root[name] {
			return fmt.Sprintf("%s=%s here, %s on rank 0 (%s): set it alike on every rank (mpirun -x %s), or on none",
				name, mine, root[name], o.Host, name)
		}
	}
	return ""
}

// offerMaster is rank 0's part: the addresses, a listener on the port and
// its token.
func offerMaster(host string, want masterWant) (masterOffer, *greeter) {
	o := masterOffer{Host: host, Port: want.port, UserSet: want.addr != "", PortSet: want.port != "", Check: want.check}
	if o.UserSet {
		o.Addrs = []string{want.addr}
	} else if want.check {
		addrs, err := hostAddrs()
		if err != nil {
			o.Err = fmt.Sprintf("listing the addresses of rank 0's host (%s): %v", host, err)
			return o, nil
		}
		o.Addrs = offers(addrs, want.allLocal)
	} else if want.allLocal {
		o.Addrs = []string{"127.0.0.1"}
	} else {
		o.Addrs = []string{host}
	}
	if !want.check && o.Port != "" {
		return o, nil
	}
	ln, err := net.Listen("tcp", ":"+cmp.Or(o.Port, "0"))
	if err != nil {
		if o.Port != "" {
			o.Err = fmt.Sprintf("MASTER_PORT=%s: rank 0's host (%s) cannot listen on it: %v; set MASTER_PORT to a free port, or unset it", o.Port, host, err)
		} else {
			o.Err = fmt.Sprintf("finding a free port for MASTER_PORT on rank 0's host (%s): %v", host, err)
		}
		return o, nil
	}
	o.Port = fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	if !want.check {
		ln.Close()
		return o, nil
	}
	o.Token = make([]byte, 16)
	rand.Read(o.Token)
	if len(o.Addrs) == 0 {
		ln.Close()
		o.Err = fmt.Sprintf("rank 0's host (%s) has no address but loopback to offer as MASTER_ADDR, and its ranks are on other hosts; set MASTER_ADDR (and GLOO_SOCKET_IFNAME) yourself", host)
		return o, nil
	}
	return o, greet(ln, o.Token, want.timeout)
}

// greeter is rank 0's listener: it writes the token to every connection
// and waits for the other side to close first (so that no TIME_WAIT is
// left on the port torch will bind).
type greeter struct {
	ln       net.Listener
	accepted chan struct{} // closed when the accept loop has ended
	conns    sync.WaitGroup
}

// greet greets every connection to ln with token until closed.
func greet(ln net.Listener, token []byte, timeout time.Duration) *greeter {
	g := &greeter{ln: ln, accepted: make(chan struct{})}
	go func() {
		defer close(g.accepted)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			g.conns.Add(1)
			go func() {
				defer g.conns.Done()
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(timeout))
				if _, err := conn.Write(token); err == nil {
					io.Copy(io.Discard, conn)
				}
			}()
		}
	}()
	return g
}

// close stops listening and waits for the connections' ends (at most their
// timeout).
func (g *greeter) close() {
	if g == nil {
		return
	}
	g.ln.Close()
	<-g.accepted
	g.conns.Wait()
}

// probeAll connects to every offered address at once and returns, per
// address, whether rank 0 answered, why not, and the interface the
// connection left this host through.
func probeAll(o masterOffer, timeout time.Duration) (ok []bool, why, iface []string) {
	n := len(o.Addrs)
	ok, why, iface = make([]bool, n), make([]string, n), make([]string, n)
	var wg sync.WaitGroup
	for i, a := range o.Addrs {
		wg.Go(func() {
			local, err := probe(net.JoinHostPort(a, o.Port), o.Token, timeout)
			if err != nil {
				why[i] = err.Error()
				return
			}
			ok[i] = true
			if addrs, err := hostAddrs(); err == nil {
				iface[i] = holder(addrs, local)
			}
		})
	}
	wg.Wait()
	return ok, why, iface
}

// probe connects to addr, checks rank 0's token and returns the local
// address of the connection.
func probe(addr string, token []byte, timeout time.Duration) (net.IP, error) {
	deadline := time.Now().Add(timeout)
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(deadline)
	got := make([]byte, len(token))
	if _, err := io.ReadFull(conn, got); err != nil {
		return nil, fmt.Errorf("connected to %s, but no greeting from rank 0: %w", addr, err)
	}
	if !bytes.Equal(got, token) {
		return nil, fmt.Errorf("%s is not rank 0's gnnrun (another program answers there)", addr)
	}
	return conn.LocalAddr().(*net.TCPAddr).IP, nil
}

// hostAddr is one address of one interface of this host.
type hostAddr struct {
	iface    string
	ip       net.IP
	loopback bool
}

// hostAddrs lists the addresses of this host's interfaces that are up.
func hostAddrs() ([]hostAddr, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []hostAddr
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				out = append(out, hostAddr{iface: ifc.Name, ip: ipn.IP, loopback: ifc.Flags&net.FlagLoopback != 0})
			}
		}
	}
	return out, nil
}

// offers orders rank 0's addresses to try as MASTER_ADDR: 127.0.0.1 first
// when every rank is on rank 0's host, then the IPv4 addresses of the
// interfaces in the kernel's order, then the global IPv6 ones. Loopback
// otherwise, and link-local addresses (which need a zone and do not cross
// routers), are left out.
func offers(addrs []hostAddr, allLocal bool) []string {
	var v4, v6 []string
	if allLocal {
		v4 = append(v4, "127.0.0.1")
	}
	for _, a := range addrs {
		if a.loopback || a.ip.IsLoopback() || a.ip.IsLinkLocalUnicast() || !a.ip.IsGlobalUnicast() {
			continue
		}
		if a.ip.To4() != nil {
			v4 = append(v4, a.ip.String())
		} else {
			v6 = append(v6, a.ip.String())
		}
	}
	return slices.Compact(append(v4, v6...))
}

// holder returns the interface that holds ip ("" when none does).
func holder(addrs []hostAddr, ip net.IP) string {
	for _, a := range addrs {
		if a.ip.Equal(ip) {
			return a.iface
		}
	}
	return ""
}

// agreeMaster picks the first address every rank reached, or fails alike on
// every rank (it sees the same reports on every rank).
func agreeMaster(o masterOffer, reports []probeReport, timeout time.Duration) (master, error) {
	for r, rep := range reports {
		if rep.Err != "" {
			return master{}, fmt.Errorf("rank %d (%s): %s", r, rep.Host, rep.Err)
		}
	}
	m := master{port: o.Port, userSet: o.UserSet, checked: o.Check, tried: o.Addrs, ifaces: make([]string, len(reports))}
	if !o.Check {
		m.addr = o.Addrs[0]
		return m, nil
	}
	for i, a := range o.Addrs {
		if slices.IndexFunc(reports, func(r probeReport) bool { return !r.OK[i] }) < 0 {
			m.addr = a
			for r, rep := range reports {
				m.ifaces[r] = rep.Iface[i]
			}
			return m, nil
		}
	}
	return master{}, unreached(o, reports, timeout)
}

// unreached is the error of a rendezvous no address passed: per address,
// the hosts and ranks that could not reach it and the first one's reason,
// then what to set.
func unreached(o masterOffer, reports []probeReport, timeout time.Duration) error {
	var b strings.Builder
	if o.UserSet {
		fmt.Fprintf(&b, "MASTER_ADDR=%s (yours): not every rank reached rank 0's gnnrun there at TCP port %s within %v:", o.Addrs[0], o.Port, timeout)
	} else {
		fmt.Fprintf(&b, "no address of rank 0's host (%s) reached every rank at TCP port %s within %v (tried %s):",
			o.Host, o.Port, timeout, strings.Join(o.Addrs, ", "))
	}
	for i, a := range o.Addrs {
		var hosts []string // in rank order
		ranks := map[string][]string{}
		first := -1
		for r, rep := range reports {
			if rep.OK[i] {
				continue
			}
			if first < 0 {
				first = r
			}
			if _, seen := ranks[rep.Host]; !seen {
				hosts = append(hosts, rep.Host)
			}
			ranks[rep.Host] = append(ranks[rep.Host], fmt.Sprint(r))
		}
		if i > 0 {
			b.WriteString(";")
		}
		for k, h := range hosts {
			s := "rank "
			if len(ranks[h]) > 1 {
				s = "ranks "
			}
			hosts[k] = fmt.Sprintf("%s (%s%s)", h, s, strings.Join(ranks[h], ", "))
		}
		fmt.Fprintf(&b, " %s not from %s, e.g. rank %d: %s", a, strings.Join(hosts, ", "), first, reports[first].Why[i])
	}
	fmt.Fprintf(&b, ". To fix: set MASTER_ADDR to an address of %s that every host reaches (mpirun -x MASTER_ADDR=...) and GLOO_SOCKET_IFNAME (NCCL_SOCKET_IFNAME with NCCL) to each host's interface towards it", o.Host)
	if o.UserSet {
		fmt.Fprintf(&b, ", or unset MASTER_ADDR to let gnnrun try every address of %s", o.Host)
	}
	fmt.Fprintf(&b, "; let TCP port %s through any firewall, or set MASTER_PORT to a port that passes", o.Port)
	return errors.New(b.String())
}
