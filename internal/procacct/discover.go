package procacct

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Listener is a listening TCP socket of this machine's network namespace.
type Listener struct {
	Addr  netip.AddrPort
	Inode uint64
}

// ParseNetTCP reads /proc/net/tcp or /proc/net/tcp6 and returns the
// sockets in the LISTEN state.
//
//	sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
//	 0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  0  0 12345 …
//
// Addresses are hex in the kernel's byte order (32-bit words in host
// order, little-endian on every machine perfscen builds for).
func ParseNetTCP(b []byte) ([]Listener, error) {
	var out []Listener
	sc := bufio.NewScanner(bytes.NewReader(b))
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue // the header
		}
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		if f[3] != "0A" { // TCP_LISTEN
			continue
		}
		ap, err := parseHexAddrPort(f[1])
		if err != nil {
			return nil, fmt.Errorf("local address %q: %w", f[1], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("inode %q: %w", f[9], err)
		}
		out = append(out, Listener{Addr: ap, Inode: inode})
	}
	return out, sc.Err()
}

func parseHexAddrPort(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("no port")
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("not an address")
	}
	// Each 32-bit word is in host (little-endian) order.
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

// Accepts says whether a listener on l receives connections to target.
func (l Listener) Accepts(target netip.AddrPort) bool {
	if l.Addr.Port() != target.Port() {
		return false
	}
	a := l.Addr.Addr()
	return a.IsUnspecified() || a == target.Addr().Unmap()
}

// Owner is a process holding a listening socket.
type Owner struct {
	PID  int
	Comm string
}

// Owners finds the processes whose file descriptors hold any of the
// sockets (by inode), scanning /proc/*/fd under root. Processes whose
// descriptors cannot be read (another user's, without privilege) are
// counted in denied.
func Owners(root string, inodes []uint64) (owners []Owner, denied int, err error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, 0, err
	}
	want := map[string]bool{}
	for _, n := range inodes {
		want["socket:["+strconv.FormatUint(n, 10)+"]"] = true
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(root, e.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			if os.IsPermission(err) {
				denied++
			}
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err == nil && want[link] {
				comm, _ := os.ReadFile(filepath.Join(root, e.Name(), "comm"))
				owners = append(owners, Owner{PID: pid, Comm: strings.TrimSpace(string(comm))})
				break
			}
		}
	}
	return owners, denied, nil
}

// forwarders are programs that hold a port on a server's behalf: a
// container engine's port forwarding, a tunnel. The process found behind
// such a port is not the server.
var forwarders = []string{"docker-proxy", "rootlessport", "rootlessport-child", "conmon", "slirp4netns", "pasta", "pasta.avx2", "kubectl", "socat", "sshd", "ssh"}

// IsForwarder says whether a process named comm forwards ports rather
// than serving them.
func IsForwarder(comm string) bool { return slices.Contains(forwarders, comm) }

// IsLocal says whether addr is one of this machine's own addresses: the
// loopback, the unspecified address, or an address of a local interface.
func IsLocal(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.IsLoopback() || addr.IsUnspecified() {
		return true
	}
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range ifs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == addr {
			return true
		}
	}
	return false
}

// FindListener returns the listening sockets of this machine that accept
// connections to target, from /proc/net/tcp and tcp6 under root.
func FindListener(root string, target netip.AddrPort) ([]Listener, error) {
	var out []Listener
	for _, name := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join(root, "net", name))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		ls, err := ParseNetTCP(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(root, "net", name), err)
		}
		for _, l := range ls {
			if l.Accepts(target) {
				out = append(out, l)
			}
		}
	}
	return out, nil
}
