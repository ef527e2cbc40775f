//go:build linux

package ci

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/tritontest"
)

// exampleRepo is the worked example's model repository as a pull
// request's checkout: ci/examples/triton-model-repo committed as the base,
// then edit applied and committed as the pull request. It returns the
// checkout and the base commit.
func exampleRepo(t *testing.T, edit func(dir string)) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "models-repo")
	if err := copyTree(filepath.Join("examples", "triton-model-repo"), dir); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "featurize model")
	base := git(t, dir, "rev-parse", "HEAD")
	edit(dir)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "the pull request")
	return dir, base
}

// freePorts returns n first ports of blocks of three free loopback ports
// (HTTP, gRPC, metrics), the layout ci/perfscen-ab.sh gives each server.
// They are taken below the kernel's ephemeral range: a port there that is
// free now can be handed to any outgoing connection or port-0 listener of
// the tests running beside this one before Triton binds it.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				low = v
			}
		}
	}
	const from = 20000
	if low-from < 1000 {
		t.Fatalf("ephemeral ports start at %d: no room below for the servers", low)
	}
	var out []int
	for tries := 0; len(out) < n && tries < 1000; tries++ {
		p := from + rand.IntN(low-from-3)
		ok := true
		for _, q := range out {
			ok = ok && (p+2 < q || p > q+2)
		}
		var held []net.Listener
		for k := 0; ok && k <= 2; k++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+k))
			if err != nil {
				ok = false
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if ok {
			out = append(out, p)
		}
	}
	if len(out) < n {
		t.Fatal("no free ports")
	}
	return out
}

// The worked example of ci/README.md, end to end against the real Triton:
// a pull request to a Triton model repository, the GitHub A/B workflow
// run step by step, ci/perfscen-ab.sh checking out the base revision
// beside it and starting a tritonserver on each tree's models/ (Triton
// from ../shared/triton stands in for the image's), and the example's
// scenario gating the candidate's p50 against the base's. A pull request
// that doubles the model's device time fails (exit 1); one that leaves
// the model alone passes (exit 0). Both servers are stopped and the
// worktree removed afterwards.
func TestSameJobABExample(t *testing.T) {
	dir := tritontest.Dir()
	if dir == "" {
		fmt.Println(tritontest.SkipLine("ci TestSameJobABExample (the same-job A/B example)"))
		t.Skip("no real Triton")
	}
	shim := t.TempDir()
	writeFile(t, filepath.Join(shim, "tritonserver"), "#!/bin/sh\nexec "+filepath.Join(dir, "run-triton")+" \"$@\"\n")
	if err := os.Chmod(filepath.Join(shim, "tritonserver"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join("models", "featurize", "config.pbtxt")
	for _, tc := range []struct {
		name    string
		edit    func(dir string)
		code    string
		success bool
		verdict string
	}{
		{"candidate twice as slow", func(dir string) {
			b, err := os.ReadFile(filepath.Join(dir, config))
			if err != nil {
				t.Fatal(err)
			}
			const from, to = `key: "device_ms" value: { string_value: "5" }`, `key: "device_ms" value: { string_value: "10" }`
			if !strings.Contains(string(b), from) {
				t.Fatalf("%s has no %s", config, from)
			}
			writeFile(t, filepath.Join(dir, config), strings.Replace(string(b), from, to, 1))
		}, "1", false, "FAIL: a check failed"},
		{"unchanged model", func(dir string) {
			writeFile(t, filepath.Join(dir, "CHANGELOG.md"), "- documentation only\n")
		}, "0", true, "PASS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, base := exampleRepo(t, tc.edit)
			s := newGHSetup(t, filepath.Join("github", "perfscen-ab.yml"), "ab", repo)
			s.path = []string{shim}
			// A port another process takes between the choice and Triton's
			// bind fails the job with exit 3 ("already in use"): new ports,
			// another try, as tritontest.Start does.
			var ports []int
			var res *jobResult
			var gate stepResult
			for try := 0; try < 3; try++ {
				ports = freePorts(t, 2)
				res = s.run("pull_request", "refs/pull/7/merge", prEventBase(base),
					map[string]string{"PERFSCEN_AB_PORTS": fmt.Sprintf("%d %d", ports[0], ports[1])})
				gate = res.step("Run the base and the candidate side by side and gate their ratio")
				if !strings.Contains(gate.output, "already in use") {
					break
				}
				s.api = &fakeGitHub{}
				srv := httptest.NewServer(s.api)
				t.Cleanup(srv.Close)
				s.apiURL = srv.URL
			}
			verdict := tc.verdict
			// On a machine too busy for the two arms' p50 to settle
			// within the bound's interval (measured at load 11: the
			// 99.8% interval [0.68, 1.39] around 1.10), the unchanged
			// model's honest answer is "needs a rerun", exit 4, which the
			// workflow turns into a warning: never a failure. The 2×
			// candidate must fail on any machine.
			const rerun = "NEEDS A RERUN"
			if tc.code == "0" && strings.Contains(gate.output, "perfscen-gate: exit 4: "+rerun) {
				la, _ := engine.ReadCPU("/proc")
				t.Logf("the unchanged model's run was inconclusive on this busy machine (load average %.1f): exit 4, not 0", la.Load1)
				verdict = rerun
			} else if res.success != tc.success || !strings.Contains(gate.output, "perfscen-gate: exit "+tc.code+": "+tc.verdict) {
				t.Errorf("job success %v, want %v; gate step:\n%s", res.success, tc.success, gate.output)
			}
			_, bodies := s.api.state()
			if len(bodies) != 1 || !strings.HasPrefix(bodies[0], "<!-- perfscen-comment:perfscen-ab -->\n**perfscen:** "+verdict) ||
				!strings.Contains(bodies[0], "candidate/featurize") {
				t.Errorf("comments: %q", bodies)
			}
			for _, p := range []int{ports[0], ports[0] + 1, ports[1], ports[1] + 1} {
				l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
				if err != nil {
					t.Errorf("port %d still taken after the job: %v", p, err)
					continue
				}
				l.Close()
			}
		})
	}
}
