package procacct

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
)

// Config is what a scenario says of a server's process (server.process):
// nothing (find it), off, or where it is.
type Config struct {
	Off     bool   `json:"off,omitempty"`
	PID     int    `json:"pid,omitempty"`
	PIDFile string `json:"pid_file,omitempty"`
	Cgroup  string `json:"cgroup,omitempty"`
}

// Named says whether the scenario names the process.
func (c Config) Named() bool { return c.PID > 0 || c.PIDFile != "" || c.Cgroup != "" }

// Target is one server as Locate sees it.
type Target struct {
	// Field is where the scenario configures it ("server.process").
	Field  string
	Config Config
	// Own is the server's own accounting: the embedded server's model
	// threads. Nil otherwise.
	Own Source
	// Inside says the server runs in this process without accounting of
	// its own (an embedded flavour whose models do not run on threads of
	// their own): nothing can tell its threads from the client's.
	Inside bool
	// Addrs are the host:port addresses its points reach.
	Addrs []string
	// MetricsURL and Scrape read its metrics page, if it has one.
	MetricsURL string
	Scrape     Scrape
	// Root is the /proc to read ("/proc"); Self this process's id.
	Root string
	Self int
	// Instructions asks for instruction counters where they open.
	Instructions bool
}

// Located is what Locate found: the source (nil when none), and what the
// run's notes say about it.
type Located struct {
	Source Source
	Note   string
}

// Locate finds the server's process: the one the scenario names, its own
// accounting, the process listening on its port on this machine, or its
// metrics page's process_cpu_seconds_total, in that order. A process the
// scenario names that cannot be read is an error (invalid input when the
// name itself is wrong, environment when the process is gone); anything
// else that finds nothing is a note, and the run goes on without these
// figures.
func Locate(ctx context.Context, t Target) (Located, error) {
	if t.Root == "" {
		t.Root = "/proc"
	}
	switch {
	case t.Config.Off:
		return Located{Note: "server CPU per inference: not measured (" + t.Field + ": off)"}, nil
	case t.Config.Named():
		src, err := named(t)
		if err != nil {
			return Located{}, err
		}
		return Located{Source: src, Note: "server CPU per inference: " + src.Describe()}, nil
	case t.Own != nil:
		return Located{Source: t.Own, Note: "server CPU per inference: " + t.Own.Describe()}, nil
	case t.Inside:
		return Located{Note: "server CPU per inference: not measured: this embedded server runs inside perfscen, whose threads it shares with the client"}, nil
	}
	var why []string
	for _, a := range t.Addrs {
		src, reason := listening(ctx, t, a)
		if src != nil {
			return Located{Source: src, Note: "server CPU per inference: " + src.Describe()}, nil
		}
		if reason != "" && !slices.Contains(why, reason) {
			why = append(why, reason)
		}
	}
	if t.MetricsURL != "" && t.Scrape != nil {
		p, err := NewPrometheus(ctx, t.MetricsURL, t.Scrape)
		if err == nil {
			return Located{Source: p, Note: "server CPU per inference: " + p.Describe()}, nil
		}
		why = append(why, fmt.Sprintf("its metrics page: %v", err))
	}
	if len(why) == 0 {
		why = append(why, "no process on this machine listens on its address, and no metrics_url with "+ProcessCPU+" is set")
	}
	return Located{Note: "server CPU per inference: not measured (" + strings.Join(why, "; ") +
		"); name the server's process with " + t.Field + ".pid, .pid_file or .cgroup, or export " + ProcessCPU}, nil
}

// named opens the process the scenario names.
func named(t Target) (Source, error) {
	c := t.Config
	switch {
	case c.Cgroup != "":
		if st, err := os.Stat(c.Cgroup); err != nil || !st.IsDir() {
			return nil, failure.Invalid(fmt.Errorf("%s.cgroup: %s is not a cgroup folder (e.g. /sys/fs/cgroup/system.slice/NAME.scope)", t.Field, c.Cgroup))
		}
		src, err := NewProcs(t.Root, "the processes of cgroup "+c.Cgroup, Cgroup(c.Cgroup), t.Instructions)
		if err != nil {
			return nil, failure.Env(fmt.Errorf("%s.cgroup: %w", t.Field, err))
		}
		return src, nil
	case c.PIDFile != "":
		b, err := os.ReadFile(c.PIDFile)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("%s.pid_file: %w", t.Field, err))
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return nil, failure.Invalid(fmt.Errorf("%s.pid_file: %s holds %q, not a process id", t.Field, c.PIDFile, strings.TrimSpace(string(b))))
		}
		return byPID(t, pid, fmt.Sprintf("%s.pid_file (%s)", t.Field, c.PIDFile))
	}
	return byPID(t, c.PID, t.Field+".pid")
}

func byPID(t Target, pid int, field string) (Source, error) {
	comm, err := os.ReadFile(fmt.Sprintf("%s/%d/comm", t.Root, pid))
	if err != nil {
		return nil, failure.Env(fmt.Errorf("%s: process %d is not running on this machine", field, pid))
	}
	what := fmt.Sprintf("process %d (%s) and its children, named by %s", pid, strings.TrimSpace(string(comm)), field)
	src, err := NewProcs(t.Root, what, Tree(t.Root, pid), t.Instructions)
	if err != nil {
		return nil, failure.Env(fmt.Errorf("%s: %w", field, err))
	}
	return src, nil
}

// listening finds the process listening on addr on this machine; reason
// says why none was found where that is worth saying.
func listening(ctx context.Context, t Target, addr string) (Source, string) {
	target, ok := resolveLocal(ctx, addr)
	if !ok {
		return nil, ""
	}
	ls, err := FindListener(t.Root, target)
	if err != nil {
		return nil, fmt.Sprintf("reading the listening sockets: %v", err)
	}
	if len(ls) == 0 {
		return nil, fmt.Sprintf("nothing in this network namespace listens on %s (a server in a container, reached through its own network, is not visible)", target)
	}
	inodes := make([]uint64, len(ls))
	for i, l := range ls {
		inodes[i] = l.Inode
	}
	owners, denied, err := Owners(t.Root, inodes)
	if err != nil {
		return nil, fmt.Sprintf("finding who listens on %s: %v", target, err)
	}
	if len(owners) == 0 {
		if denied > 0 {
			return nil, fmt.Sprintf("the process listening on %s is another user's, whose descriptors perfscen may not read (run perfscen as that user or as root, or name it)", target)
		}
		return nil, fmt.Sprintf("no process holds the socket listening on %s", target)
	}
	var pids []int
	var names []string
	for _, o := range owners {
		switch {
		case o.PID == t.Self:
			return nil, "the process listening on " + target.String() + " is perfscen itself"
		case IsForwarder(o.Comm):
			return nil, fmt.Sprintf("port %d is held by %s (pid %d), which forwards it to the server (a container's port mapping or a tunnel)", target.Port(), o.Comm, o.PID)
		}
		pids = append(pids, o.PID)
		names = append(names, fmt.Sprintf("%d (%s)", o.PID, o.Comm))
	}
	what := fmt.Sprintf("process %s and its children, found listening on %s", strings.Join(names, ", "), target)
	list := func() ([]int, error) {
		var out []int
		for _, pid := range pids {
			ps, err := Tree(t.Root, pid)()
			if err != nil {
				continue
			}
			out = append(out, ps...)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("process %s is gone", strings.Join(names, ", "))
		}
		return out, nil
	}
	src, err := NewProcs(t.Root, what, list, t.Instructions)
	if err != nil {
		return nil, err.Error()
	}
	return src, ""
}

// resolveLocal resolves addr (host:port) and says whether it is an
// address of this machine.
func resolveLocal(ctx context.Context, addr string) (netip.AddrPort, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, false
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(ip.Unmap(), uint16(p)), IsLocal(ip)
	}
	if host == "localhost" {
		return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(p)), true
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.AddrPort{}, false
	}
	for _, ip := range ips {
		if IsLocal(ip) {
			return netip.AddrPortFrom(ip.Unmap(), uint16(p)), true
		}
	}
	return netip.AddrPort{}, false
}
