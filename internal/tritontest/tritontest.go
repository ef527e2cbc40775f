//go:build linux

// Package tritontest finds the real Triton Inference Server kept beside the
// repository (../shared/triton relative to its root) and runs it for tests:
// a writable copy of its model repository (with the version folders the
// shared copy lacks), free loopback ports, readiness, and SIGTERM on every
// way out, the test process's own death included.
package tritontest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// EnvDir names the Triton folder instead of ../shared/triton.
const EnvDir = "PERFSCEN_TRITON_DIR"

// Dir is the Triton folder (bin/tritonserver, lib/, backends/, models/):
// $PERFSCEN_TRITON_DIR, else ../shared/triton beside the repository root;
// "" when neither holds a tritonserver.
func Dir() string {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return ""
		}
		dir = filepath.Join(root, "..", "shared", "triton")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", "tritonserver")); err != nil {
		return ""
	}
	return dir
}

// SkipLine is the one line a test binary prints when Dir is "".
func SkipLine(what string) string {
	return fmt.Sprintf("SKIP %s: no real Triton (../shared/triton beside the repository root, or $%s) — these tests did not run", what, EnvDir)
}

// RepoRoot is the directory holding go.mod, from the working directory up.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

// Library is the path of the C API library in dir.
func Library(dir string) string { return filepath.Join(dir, "lib", "libtritonserver.so") }

// Backends is the backend directory in dir.
func Backends(dir string) string { return filepath.Join(dir, "backends") }

// CopyRepo copies dir's model repository into dst (created) and adds the
// empty version folders the shared copy lacks (identity models keep no
// file in 1/, and empty folders get lost on the way here): without them
// Triton refuses to start.
func CopyRepo(dir, dst string) error {
	src := filepath.Join(dir, "models")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), "__pycache__") {
				return filepath.SkipDir
			}
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("copying the model repository: %w", err)
	}
	entries, err := os.ReadDir(dst)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := os.MkdirAll(filepath.Join(dst, e.Name(), "1"), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

// SetParameter rewrites a string parameter of a model's config.pbtxt in
// repo (delay_fp32's delay_ms, say).
func SetParameter(repo, model, key, value string) error {
	path := filepath.Join(repo, model, "config.pbtxt")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	old := fmt.Sprintf(`key: %q value: { string_value: `, key)
	i := bytes.Index(b, []byte(old))
	if i < 0 {
		return fmt.Errorf("%s has no string parameter %s", path, key)
	}
	j := bytes.IndexByte(b[i+len(old):], '}')
	if j < 0 {
		return fmt.Errorf("%s: parameter %s is not closed", path, key)
	}
	out := append(append(append([]byte{}, b[:i+len(old)]...), strconv.Quote(value)+" "...), b[i+len(old)+j:]...)
	return os.WriteFile(path, out, 0o644)
}

// CloneModel copies model's folder in repo to name, renaming it in its
// config, so a test can load and unload a model no other test uses.
func CloneModel(repo, model, name string) error {
	return filepath.WalkDir(filepath.Join(repo, model), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(repo, model), path)
		to := filepath.Join(repo, name, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if d.Name() == "config.pbtxt" {
			b = bytes.Replace(b, []byte(fmt.Sprintf("name: %q", model)), []byte(fmt.Sprintf("name: %q", name)), 1)
		}
		return os.WriteFile(to, b, 0o644)
	})
}

// Options say how to start a server.
type Options struct {
	Dir  string   // the Triton folder (Dir())
	Repo string   // model repository (a CopyRepo copy)
	Args []string // more tritonserver flags (--model-control-mode=explicit, …)
	// ReadyTimeout bounds the start; 0 is 3 minutes (a loaded 2-core
	// machine starts the Python models' stubs slowly).
	ReadyTimeout time.Duration
}

// Server is a running tritonserver.
type Server struct {
	HTTP, GRPC, Metrics string // host:port of each endpoint
	cmd                 *exec.Cmd
	log                 *lockedBuffer
	done                chan struct{}
	stopOnce            sync.Once
	stopErr             error
}

// Start starts tritonserver through the folder's run-triton on free
// loopback ports and waits until it says it is ready. A port taken
// between choosing it and Triton binding it is retried with other ports.
func Start(ctx context.Context, o Options) (*Server, error) {
	var last error
	for try := 0; try < 3; try++ {
		s, err := start(ctx, o)
		if err == nil {
			return s, nil
		}
		last = err
		if !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	return nil, last
}

func start(ctx context.Context, o Options) (*Server, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	s := &Server{HTTP: "127.0.0.1:" + ports[0], GRPC: "127.0.0.1:" + ports[1], Metrics: "127.0.0.1:" + ports[2],
		log: &lockedBuffer{}, done: make(chan struct{})}
	// Triton waits --exit-timeout-secs (30 by default) for models to
	// unload; on a loaded machine the Python backend's stubs can take all
	// of it, and a wait as long as Stop's own ended in SIGKILL. Ten
	// seconds, then Triton exits by itself, well inside Stop's grace.
	args := append([]string{"--http-port", ports[0], "--grpc-port", ports[1], "--metrics-port", ports[2],
		"--model-repository", o.Repo, "--exit-timeout-secs", "10"}, o.Args...)
	s.cmd = exec.Command(filepath.Join(o.Dir, "run-triton"), args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// The kernel sends SIGTERM when the test process dies however it dies
	// (a test timeout's panic, a signal), so no server outlives its tests.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting tritonserver: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	timeout := o.ReadyTimeout
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	if err := s.waitReady(ctx, timeout); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w\n%s", err, s.Log())
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// No kept-alive connection: Triton waits for open connections at
	// shutdown (up to its exit timeout).
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.HTTP+"/v2/health/ready", nil)
		if resp, err := hc.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			if strings.Contains(s.Log(), "Address already in use") {
				return errors.New("tritonserver exited: a port was in use")
			}
			return errors.New("tritonserver exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("tritonserver not ready after %s", timeout)
		case <-tick.C:
		}
	}
}

// Log is what the server printed so far.
func (s *Server) Log() string { return s.log.String() }

// Stop sends SIGTERM and waits for the server to exit (SIGKILL after 60 s,
// well past the 10 s Triton gives its models to unload).
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(60 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
			s.stopErr = errors.New("tritonserver ignored SIGTERM for 60 s; killed")
		}
	})
	return s.stopErr
}

// freePorts returns n distinct ports the system had free a moment ago.
func freePorts(n int) ([]string, error) {
	var out []string
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return out, nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
