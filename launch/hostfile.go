package launch

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Host is one machine of a hostfile.
type Host struct {
	// Name is the host name or address mpirun reaches the machine by.
	Name string
	// User is the login name of a "user@host" line, or "".
	User string
	// Slots is the number of ranks mpirun places on the host before it
	// oversubscribes. 0 means the file did not say, and OpenMPI then counts
	// the host's cores itself (a host on several lines without slots= has
	// one slot per line).
	Slots int
	// MaxSlots caps the ranks on the host even with --oversubscribe; 0 means
	// no cap.
	MaxSlots int
	// Line is the line of the file that named the host first.
	Line int

	explicit bool // slots= was given
}

// Hostfile is a parsed OpenMPI hostfile: the hosts in the order of the file.
type Hostfile struct {
	// Path is the file the hosts came from, as given to ReadHostfile or
	// ParseHostfile; error messages and mpirun command lines use it.
	Path  string
	Hosts []Host
}

// ReadHostfile reads and validates an OpenMPI hostfile; see ParseHostfile.
func ReadHostfile(path string) (*Hostfile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	defer f.Close()
	return ParseHostfile(f, path)
}

// ParseHostfile parses an OpenMPI hostfile from r; name is the file name used
// in error messages. Each line is
//
//	[user@]host [slots=N] [max_slots=M]   # comment
//
// Blank lines and everything after '#' are ignored, and "slots = 4" is read
// like "slots=4" (as mpirun does). The keys are mpirun's, in all its
// spellings: slots (cpu, count), max_slots (max-slots, slots_max, max_cpu,
// ...) and username. A host with max_slots=M alone gets M slots, as in
// mpirun.
//
// Duplicate hosts follow mpirun's rule: a host listed on several lines
// without slots= gets one slot per line (the form of a PBS node file), and a
// host listed twice where any of its lines gives slots= is an error, as
// mpirun says "multiple definitions of the slot count".
//
// A file this function accepts, mpirun accepts with the same slots (the
// tests check it against mpirun). It is stricter than mpirun where mpirun
// lets a mistake through: a bare word after the host (mpirun ignores it),
// names that differ only in case (one machine to DNS, two hosts to mpirun),
// an empty user name, slots=0; and it does not take mpirun's rare forms
// (^host exclusions, +n relative nodes, C-style comments).
//
// A bad line gives an error "launch: FILE:LINE: reason". An empty file (no
// hosts) is an error as well.
func ParseHostfile(r io.Reader, name string) (*Hostfile, error) {
	hf := &Hostfile{Path: name}
	index := map[string]int{} // lower-case host name -> index in hf.Hosts
	sc := bufio.NewScanner(r)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		h, ok, err := parseHostLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("launch: %s:%d: %v", name, lineNo, err)
		}
		if !ok {
			continue
		}
		h.Line = lineNo
		key := strings.ToLower(h.Name)
		i, dup := index[key]
		if !dup {
			index[key] = len(hf.Hosts)
			hf.Hosts = append(hf.Hosts, h)
			continue
		}
		if err := hf.Hosts[i].merge(h); err != nil {
			return nil, fmt.Errorf("launch: %s:%d: %v", name, lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("launch: %s:%d: %w", name, lineNo+1, err)
	}
	if len(hf.Hosts) == 0 {
		return nil, fmt.Errorf("launch: %s: no hosts", name)
	}
	return hf, nil
}

// merge adds a repeated line for the same host: one more slot, allowed only
// when neither line gave slots= or max_slots=.
func (h *Host) merge(again Host) error {
	if h.explicit || again.explicit || h.MaxSlots != 0 || again.MaxSlots != 0 {
		return fmt.Errorf("host %q is already listed at line %d; give it one line with slots=N (mpirun rejects a repeated host whose slot count is set)", again.Name, h.Line)
	}
	if h.User != again.User {
		return fmt.Errorf("host %q is already listed at line %d with another user", again.Name, h.Line)
	}
	if h.Slots == 0 {
		h.Slots = 1 // the first line's slot, which stood for "all cores" while it was alone
	}
	h.Slots++
	return nil
}

// parseHostLine parses one line; ok is false for blank and comment lines.
func parseHostLine(line string) (h Host, ok bool, err error) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(spacedEquals.ReplaceAllString(line, "="))
	if len(fields) == 0 {
		return Host{}, false, nil
	}
	h.Name = fields[0]
	if at := strings.LastIndexByte(h.Name, '@'); at >= 0 {
		h.User, h.Name = h.Name[:at], h.Name[at+1:]
		if h.User == "" {
			return Host{}, false, fmt.Errorf("empty user name in %q", fields[0])
		}
	}
	if err := checkHostName(h.Name); err != nil {
		return Host{}, false, err
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		key, val, found := strings.Cut(f, "=")
		if !found {
			return Host{}, false, fmt.Errorf("%q is not key=value (want slots=N or max_slots=M)", f)
		}
		canon, known := hostKeys[key]
		if !known {
			return Host{}, false, fmt.Errorf("unknown key %q (want slots, max_slots or username)", key)
		}
		if seen[canon] {
			return Host{}, false, fmt.Errorf("%s given twice", canon)
		}
		seen[canon] = true
		if canon == "username" {
			if val == "" || h.User != "" {
				return Host{}, false, fmt.Errorf("username=%q: want one non-empty user name", val)
			}
			h.User = val
			continue
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return Host{}, false, fmt.Errorf("%s=%q: want a whole number of at least 1", canon, val)
		}
		if canon == "slots" {
			h.Slots, h.explicit = n, true
		} else {
			h.MaxSlots = n
		}
	}
	if h.MaxSlots != 0 && h.Slots > h.MaxSlots {
		return Host{}, false, fmt.Errorf("slots=%d is more than max_slots=%d", h.Slots, h.MaxSlots)
	}
	if h.MaxSlots != 0 && !h.explicit {
		h.Slots, h.explicit = h.MaxSlots, true // mpirun's rule for max_slots alone
	}
	return h, true, nil
}

// hostKeys maps the keys of mpirun's hostfile lexer (OpenMPI 4.1,
// orte/util/hostfile/hostfile_lex.l; case matters there as here) to ours.
var hostKeys = map[string]string{
	"slots": "slots", "cpu": "slots", "count": "slots",
	"max_slots": "max_slots", "max-slots": "max_slots", "slots_max": "max_slots", "slots-max": "max_slots",
	"max_cpu": "max_slots", "max-cpu": "max_slots", "cpu_max": "max_slots", "cpu-max": "max_slots",
	"max_count": "max_slots", "max-count": "max_slots", "count_max": "max_slots", "count-max": "max_slots",
	"username": "username", "user_name": "username", "user-name": "username",
}

// spacedEquals matches '=' with the blanks around it, so "slots = 4" reads
// as one field.
var spacedEquals = regexp.MustCompile(`[ \t]*=[ \t]*`)

// checkHostName accepts DNS names, IPv4 and IPv6 addresses.
func checkHostName(name string) error {
	if name == "" {
		return fmt.Errorf("empty host name")
	}
	if strings.Contains(name, "=") {
		return fmt.Errorf("line starts with %q: the host name must come first", name)
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '-' || c == '_' || c == ':'
		if !ok {
			return fmt.Errorf("host name %q has the character %q", name, c)
		}
	}
	return nil
}

// Slots returns the total slot count of the file, and false when some host
// does not give slots= (mpirun then counts that host's cores, which only the
// host knows).
func (hf *Hostfile) Slots() (int, bool) {
	n := 0
	for _, h := range hf.Hosts {
		if h.Slots == 0 {
			return 0, false
		}
		n += h.Slots
	}
	return n, true
}

// MaxSlots returns the most ranks the file allows with oversubscription, and
// false when some host has no max_slots cap.
func (hf *Hostfile) MaxSlots() (int, bool) {
	n := 0
	for _, h := range hf.Hosts {
		if h.MaxSlots == 0 {
			return 0, false
		}
		n += h.MaxSlots
	}
	return n, true
}

// String renders the hosts in hostfile syntax, one line per host.
func (hf *Hostfile) String() string {
	var b strings.Builder
	for _, h := range hf.Hosts {
		if h.User != "" {
			b.WriteString(h.User + "@")
		}
		b.WriteString(h.Name)
		if h.Slots != 0 {
			fmt.Fprintf(&b, " slots=%d", h.Slots)
		}
		if h.MaxSlots != 0 {
			fmt.Fprintf(&b, " max_slots=%d", h.MaxSlots)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
