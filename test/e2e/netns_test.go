package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// netLab is a small network of separate hosts on this machine: each host
// is a network namespace with its own interface and address, all joined
// by a bridge in a namespace of its own, so traffic between them crosses
// veth pairs and a bridge as between machines, and nothing of it touches
// this host's own network. Made with iproute2; everything is removed when
// the test ends, whatever happened.
type netLab struct {
	t      *testing.T
	prefix string
	sw     string
	hosts  map[string]string // host name → namespace
	addrs  map[string]string // host name → address
	mu     sync.Mutex
	procs  []*hostProc
}

var (
	labSeq    atomic.Int64
	staleOnce sync.Once
)

// labSubnet is the hosts' subnet; it exists only inside the lab's
// namespaces.
const labSubnet = "10.77.0."

// newNetLab makes the namespaces for hosts, or skips the test with one
// loud line where namespaces cannot be made (not root, no iproute2, a
// container without the capability).
func newNetLab(t *testing.T, hosts ...string) *netLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: multi-host tests need network namespaces: not root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("SKIP: multi-host tests need network namespaces: iproute2 (ip) not found")
	}
	staleOnce.Do(removeStaleLabs)
	n := labSeq.Add(1)
	l := &netLab{t: t, prefix: fmt.Sprintf("pst%d-%d", os.Getpid(), n), hosts: map[string]string{}, addrs: map[string]string{}}
	l.sw = l.prefix + "-sw"
	t.Cleanup(l.close)
	if out, err := ipCmd("netns", "add", l.sw); err != nil {
		t.Skip("SKIP: multi-host tests need network namespaces: ip netns add: " + strings.TrimSpace(out))
	}
	l.must("-n", l.sw, "link", "add", "br0", "type", "bridge")
	l.must("-n", l.sw, "link", "set", "br0", "up")
	for i, h := range hosts {
		ns := l.prefix + "-" + h
		addr := labSubnet + strconv.Itoa(i+2)
		// Interface names are per namespace once moved, but are made in
		// this one: unique per process and lab (15 characters at most).
		in, out := fmt.Sprintf("h%d-%d-%d", os.Getpid()%100000, n, i), fmt.Sprintf("s%d-%d-%d", os.Getpid()%100000, n, i)
		l.must("netns", "add", ns)
		l.hosts[h], l.addrs[h] = ns, addr
		l.must("link", "add", in, "type", "veth", "peer", "name", out)
		l.must("link", "set", in, "netns", ns)
		l.must("link", "set", out, "netns", l.sw)
		l.must("-n", ns, "addr", "add", addr+"/24", "dev", in)
		l.must("-n", ns, "link", "set", in, "up")
		l.must("-n", ns, "link", "set", "lo", "up")
		l.must("-n", l.sw, "link", "set", out, "master", "br0")
		l.must("-n", l.sw, "link", "set", out, "up")
	}
	return l
}

func ipCmd(args ...string) (string, error) {
	out, err := exec.Command("ip", args...).CombinedOutput()
	return string(out), err
}

func (l *netLab) must(args ...string) {
	l.t.Helper()
	if out, err := ipCmd(args...); err != nil {
		l.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// removeStaleLabs deletes namespaces left by test processes that died
// before their cleanup (killed test binaries).
func removeStaleLabs() {
	out, err := ipCmd("netns", "list")
	if err != nil {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, "pst")
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		ipCmd("netns", "del", name)
	}
}

// close kills every process still running and deletes the namespaces
// (their interfaces go with them).
func (l *netLab) close() {
	l.mu.Lock()
	procs := l.procs
	l.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
	for _, ns := range l.hosts {
		ipCmd("netns", "del", ns)
	}
	ipCmd("netns", "del", l.sw)
}

// hostProc is a process running on a lab host.
type hostProc struct {
	name     string
	cmd      *exec.Cmd
	out, err notifyBuffer
	done     chan struct{}
	code     int
}

// notifyBuffer collects a process's output; changed is closed (and
// replaced) at every write, so a test waits for output without polling.
type notifyBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func (b *notifyBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.b.Write(p)
}

func (b *notifyBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// next is closed at the next write.
func (b *notifyBuffer) next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

// run starts argv on host with env added to this process's environment.
func (l *netLab) run(host, name string, env []string, argv ...string) *hostProc {
	l.t.Helper()
	ns, ok := l.hosts[host]
	if !ok {
		l.t.Fatalf("no host %s", host)
	}
	p := &hostProc{name: name, done: make(chan struct{})}
	p.cmd = exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.mu.Lock()
	l.procs = append(l.procs, p)
	l.mu.Unlock()
	go func() {
		defer close(p.done)
		err := p.cmd.Wait()
		p.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
	}()
	return p
}

// wait is the process's exit code; a process still running after limit
// fails the test.
func (p *hostProc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		t.Fatalf("%s still running after %s\n%s", p.name, limit, p)
		return -1
	}
}

func (p *hostProc) signal(s syscall.Signal) { _ = p.cmd.Process.Signal(s) }

func (p *hostProc) kill() {
	p.signal(syscall.SIGCONT) // a stopped process cannot die until continued
	p.signal(syscall.SIGKILL)
	<-p.done
}

func (p *hostProc) String() string {
	return fmt.Sprintf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", p.name, p.code, p.out.String(), p.err.String())
}

// waitOutput waits until the process's stderr says want.
func (p *hostProc) waitOutput(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		next := p.err.next()
		if strings.Contains(p.err.String(), want) {
			return
		}
		select {
		case <-next:
		case <-p.done:
			if !strings.Contains(p.err.String(), want) {
				t.Fatalf("%s ended before saying %q\n%s", p.name, want, p)
			}
			return
		case <-deadline.C:
			t.Fatalf("%s did not say %q within %s\n%s", p.name, want, limit, p)
		}
	}
}
