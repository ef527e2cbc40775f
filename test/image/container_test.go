package image

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakePodman answers as podman does on a host whose default runtime is
// $FAKE_DEFAULT: "podman info" names it, and "podman run" starts a
// container when its runtime and whether it was given --ulimit flags are
// listed in $FAKE_WORKS (e.g. "runc+limits"), fails with the runtime's
// error otherwise, and fails as podman does for a runtime that is not
// installed ($FAKE_MISSING).
const fakePodman = `#!/bin/bash
case $1 in
info) echo "$FAKE_DEFAULT" ;;
run)
	rt=$FAKE_DEFAULT lim=none
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--runtime) rt=$2; shift ;;
		--ulimit) lim=limits; shift ;;
		esac
		shift
	done
	for m in $FAKE_MISSING; do
		if [ "$m" = "$rt" ]; then echo "Error: default OCI runtime \"$rt\" not found: invalid argument" >&2; exit 125; fi
	done
	for w in $FAKE_WORKS; do
		if [ "$w" = "$rt+$lim" ]; then exit 0; fi
	done
	echo 'time="2026-01-01T00:00:00Z" level=error msg="Removing container"' >&2
	if [ "$lim" = none ]; then
		echo "Error: OCI runtime error: $rt: setrlimit RLIMIT_NOFILE: Operation not permitted" >&2
	else
		echo "Error: OCI runtime error: $rt: cgroups in hybrid mode not supported" >&2
	fi
	exit 126 ;;
*) exit 2 ;;
esac
`

func TestRunFlags(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "podman")
	if err := os.WriteFile(fake, []byte(fakePodman), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name                string
		def, works, missing string
		code                int
		flags               string
		stderr              []string
	}{
		{name: "default runtime starts", def: "crun", works: "crun+none", flags: "",
			stderr: []string{"OCI runtime: crun\n"}},
		{name: "default with the shell's limits", def: "crun", works: "crun+limits", flags: "--ulimit nofile=",
			stderr: []string{"OCI runtime: crun with this shell's limits", "setrlimit RLIMIT_NOFILE"}},
		// The project's test hosts: crun can neither set the limits nor
		// use the hybrid cgroups; runc, installed, runs with the limits.
		{name: "crun cannot, runc can", def: "crun", works: "runc+limits", flags: "--runtime runc --ulimit nofile=",
			stderr: []string{"OCI runtime: runc with this shell's limits", "crun cannot start a container here (Error: OCI runtime error: crun: setrlimit", "cgroups in hybrid mode"}},
		// Debian's podman installs crun, not runc: the error names crun's
		// failures and the package to install, not crun's error alone.
		{name: "crun cannot, runc missing", def: "crun", missing: "runc", code: 1,
			stderr: []string{"no container starts on this host", "crun cannot start a container here (Error: OCI runtime error: crun: setrlimit",
				`runc with this shell's limits cannot start a container here (Error: default OCI runtime "runc" not found`, "apt-get install runc"}},
		{name: "runc the default, with limits", def: "runc", works: "runc+limits", flags: "--ulimit nofile=",
			stderr: []string{"OCI runtime: runc with this shell's limits"}},
		{name: "nothing starts", def: "crun", code: 1,
			stderr: []string{"no container starts on this host", "crun cannot start", "runc with this shell's limits cannot start"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("bash", "scripts/container.sh", "flags", "some-image")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PODMAN="+fake, "FAKE_DEFAULT="+c.def, "FAKE_WORKS="+c.works, "FAKE_MISSING="+c.missing)
			cmd.Env = slicesWithout(cmd.Env, "PODMAN_RUN_FLAGS=")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout.String(), stderr.String())
			}
			if c.code == 0 && !strings.HasPrefix(stdout.String(), c.flags) || c.flags == "" && strings.TrimSpace(stdout.String()) != "" {
				t.Errorf("flags %q, want them to start %q", stdout.String(), c.flags)
			}
			for _, s := range c.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), "time=") {
				t.Errorf("podman's log lines are quoted as the error:\n%s", stderr.String())
			}
		})
	}
}

// slicesWithout is env without the variables that start with prefix.
func slicesWithout(env []string, prefix string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}
