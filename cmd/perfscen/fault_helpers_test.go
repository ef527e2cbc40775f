package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/result"
)

// faultRunLimit stops a fault test that hangs: reliability is exactly what
// these tests check, so a stuck run must fail the test, not the suite.
const faultRunLimit = 60 * time.Second

// cliRun is one in-process perfscen invocation.
type cliRun struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// runFault runs perfscen with args under ctx and fails the test when the
// command does not return within faultRunLimit.
func runFault(t *testing.T, ctx context.Context, args ...string) cliRun {
	t.Helper()
	var out, errb syncBuffer
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- run(ctx, args, strings.NewReader(""), &out, &errb) }()
	select {
	case code := <-done:
		return cliRun{code: code, stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	case <-time.After(faultRunLimit):
		t.Fatalf("perfscen %s did not return within %s\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), faultRunLimit, out.String(), errb.String())
		return cliRun{}
	}
}

func (r cliRun) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout:\n%s\nstderr:\n%s", r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

// startServer starts a reference server on loopback ephemeral ports with a
// short shutdown grace, closed when the test ends.
func startServer(t *testing.T, opts refserver.Options) *refserver.Server {
	t.Helper()
	opts.HTTPAddr, opts.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	if opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = 200 * time.Millisecond
	}
	if opts.Models == nil {
		opts.Models = []string{"simple"}
	}
	srv, err := refserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// waitSuccesses blocks until the server has answered n requests of model
// successfully, so a fault lands while the run is measuring.
func waitSuccesses(t *testing.T, srv *refserver.Server, model string, n uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range srv.Statistics() {
			if s.Name == model && s.Success.Count >= n {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("server never answered %d requests of %s", n, model)
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func readResult(t *testing.T, path string) *result.Run {
	t.Helper()
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatalf("results not readable: %v", err)
	}
	return r
}

func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// pointErrors sums the failed requests of every point.
func pointErrors(r *result.Run) int64 {
	var n int64
	for _, p := range r.Points {
		n += p.Errors.Count
	}
	return n
}

// runAtRoot runs perfscen with its servers and clients on net (nil: the
// machine's network) from the repository root: an @path argument is
// relative to the root, and the root is written out of the output, so
// paths read as a user would type them.
func runAtRoot(t *testing.T, net *kinds.Net, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..")
	for i, a := range args {
		if strings.HasPrefix(a, "@") {
			args[i] = filepath.Join(root, a[1:])
		}
	}
	var out, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv, net: net}
	code = runEnv(e, args)
	r := strings.NewReplacer(root+string(filepath.Separator), "")
	return code, r.Replace(out.String()), r.Replace(errb.String())
}
