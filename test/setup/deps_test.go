package setup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Fakes of the commands scripts/deps.sh runs: dpkg-query answers from
// the package list in $FAKE_DB, apt-get installs into it (and logs its
// calls to $FAKE_LOG; $FAKE_APT_FAIL makes install fail), id -u prints
// $FAKE_UID, and sudo works only when $FAKE_SUDO is "ok".
var fakes = map[string]string{
	"dpkg-query": `#!/bin/bash
p=${!#}
if grep -qx -- "$p" "$FAKE_DB"; then echo -n "install ok installed"; else echo "dpkg-query: no packages found matching $p" >&2; exit 1; fi
`,
	"apt-get": `#!/bin/bash
echo "apt-get $*" >> "$FAKE_LOG"
for a in "$@"; do
	case $a in
	update) exit 0 ;;
	install) inst=1 ;;
	-*) ;;
	*) if [ -n "${inst:-}" ] && [ -n "${FAKE_APT_FAIL:-}" ]; then echo "E: Unable to locate package $a" >&2; exit 100; fi
	   if [ -n "${inst:-}" ]; then echo "$a" >> "$FAKE_DB"; fi ;;
	esac
done
`,
	"id":   "#!/bin/bash\necho \"$FAKE_UID\"\n",
	"sudo": "#!/bin/bash\n[ \"${FAKE_SUDO:-}\" = ok ] || exit 1\nshift\n\"$@\"\n",
}

const (
	triton     = "libgrpc++1.51 libprotobuf32 libre2-9 libevent-2.1-7 libb64-0d libnuma1 libssl3 zlib1g libprometheus-cpp-core1.0 libpython3.11 python3-numpy libarchive13"
	torchserve = "openjdk-17-jre-headless libnetty-java libgrpc-java libprotobuf-java libgoogle-common-protos-java libguava-java libperfmark-java libgoogle-gson-java libcommons-cli-java libcommons-io-java libcommons-compress-java libslf4j-java liblog4j2-java libdisruptor-java libyaml-snake-java python3-torch python3-psutil python3-yaml python3-packaging"
	cc         = "gcc libc6-dev"
	optional   = "python3-grpcio iproute2 protobuf-compiler libprotobuf-dev"
)

type depsRun struct {
	code           int
	stdout, stderr string
	apt            string
	db             []string
}

// runDeps runs scripts/deps.sh args with the fakes first on PATH, the
// packages installed listed, and a shared folder holding the folders
// named in shared.
func runDeps(t *testing.T, installed string, shared []string, env []string, args ...string) depsRun {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range fakes {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, log := filepath.Join(dir, "db"), filepath.Join(dir, "log")
	if err := os.WriteFile(db, []byte(strings.Join(strings.Fields(installed), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := filepath.Join(dir, "shared")
	for _, s := range shared {
		if err := os.MkdirAll(filepath.Join(sh, s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", append([]string{"scripts/deps.sh"}, args...)...)
	cmd.Dir = root
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "FAKE_DB=" + db, "FAKE_LOG=" + log, "FAKE_UID=0",
		"PERFSCEN_SHARED=" + sh, "HOME=" + dir}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	r := depsRun{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(log); err == nil {
		r.apt = string(b)
	}
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	r.db = strings.Fields(string(b))
	return r
}

func TestDeps(t *testing.T) {
	all := strings.Join([]string{cc, triton, torchserve, optional}, " ")
	for _, c := range []struct {
		name      string
		installed string
		shared    []string
		env       []string
		args      []string
		code      int
		line      string   // the one line on stdout
		stderr    []string // each must appear
		apt       []string // each must appear in apt-get's calls; nil: no call at all
		nowHas    string   // packages installed afterwards
	}{
		{name: "all there", installed: all, shared: []string{"triton", "torchserve"},
			line: "deps (test): cc ok; triton ok; torchserve ok; grpcio ok; netns ok; protoc ok"},
		// A fresh machine, as root, with the real servers beside the
		// checkout: everything is installed, after one apt-get update.
		{name: "fresh machine as root", shared: []string{"triton", "torchserve"},
			line: "deps (test): cc: installed gcc libc6-dev; triton: installed " + triton + "; torchserve: installed " + torchserve +
				"; grpcio: installed python3-grpcio; netns: installed iproute2; protoc: installed protobuf-compiler libprotobuf-dev",
			apt: []string{"apt-get -o DPkg::Lock::Timeout=600 update -qq --error-on=any\napt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends gcc libc6-dev\n"}, nowHas: all},
		{name: "no shared folder", installed: cc + " " + optional,
			line: "deps (test): cc ok; grpcio ok; netns ok; protoc ok"},
		// Not root and no sudo: a required feature stops with the line to
		// run; an optional one says which tests will skip.
		{name: "not root", installed: cc + " " + torchserve, shared: []string{"triton", "torchserve"}, env: []string{"FAKE_UID=1000"}, code: 1,
			line:   "deps (test): cc ok; triton: MISSING " + triton + "; torchserve ok; grpcio: missing python3-grpcio, the Python grpcio test will SKIP (apt-get install python3-grpcio); netns: not root, the multi-host tests will SKIP; protoc: missing protobuf-compiler libprotobuf-dev, the protoc import comparison will SKIP (apt-get install protobuf-compiler libprotobuf-dev)",
			stderr: []string{"deps: triton needs: apt-get install " + triton + " (not installed)"}},
		{name: "passwordless sudo", installed: all, env: []string{"FAKE_UID=1000", "FAKE_SUDO=ok"}, args: []string{"screenshots"},
			line: "deps (screenshots): screenshots: installed chromium", apt: []string{"install -y -qq --no-install-recommends chromium"}, nowHas: "chromium"},
		{name: "check only", env: []string{"PERFSCEN_DEPS=check"}, args: []string{"image"}, code: 1,
			line:   "deps (image): image: MISSING podman runc debootstrap debian-archive-keyring ca-certificates",
			stderr: []string{"deps: image needs: apt-get install podman runc debootstrap debian-archive-keyring ca-certificates"}},
		{name: "apt-get fails", env: []string{"FAKE_APT_FAIL=1"}, args: []string{"cc"}, code: 1,
			line: "deps (cc): cc: MISSING gcc libc6-dev", stderr: []string{"E: Unable to locate package gcc", "(apt-get failed)"},
			apt: []string{"install"}},
		{name: "unknown feature", args: []string{"gpu"}, code: 2, stderr: []string{"deps: unknown feature gpu"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runDeps(t, c.installed, c.shared, c.env, c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.code, r.stdout, r.stderr)
			}
			if got := strings.TrimSuffix(r.stdout, "\n"); c.line != "" && got != c.line {
				t.Errorf("stdout\n%s\nwant\n%s", got, c.line)
			}
			if strings.Count(r.stdout, "\n") > 1 {
				t.Errorf("more than one line on stdout:\n%s", r.stdout)
			}
			for _, s := range c.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if c.apt == nil && r.apt != "" {
				t.Errorf("apt-get ran: %s", r.apt)
			}
			for _, s := range c.apt {
				if !strings.Contains(r.apt, s) {
					t.Errorf("apt-get calls lack %q:\n%s", s, r.apt)
				}
			}
			if n := strings.Count(r.apt, " update "); n > 1 {
				t.Errorf("apt-get update ran %d times", n)
			}
			for _, p := range strings.Fields(c.nowHas) {
				found := false
				for _, q := range r.db {
					found = found || p == q
				}
				if !found {
					t.Errorf("%s not installed afterwards", p)
				}
			}
		})
	}
}

// The package lists of scripts/deps.sh are the ones the real servers'
// READMEs name, so make test installs what those servers need.
func TestDepsListsMatchTheServersREADMEs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ server, variable string }{{"triton", "TRITON_PKGS"}, {"torchserve", "TORCHSERVE_PKGS"}} {
		readme := filepath.Join(root, "..", "shared", c.server, "README.md")
		b, err := os.ReadFile(readme)
		if err != nil {
			t.Logf("SKIP: %v: the %s package list was not compared with its README", err, c.server)
			continue
		}
		want := aptPackages(string(b))
		_, rest, ok := strings.Cut(string(script), c.variable+`="`)
		if !ok {
			t.Fatalf("scripts/deps.sh has no %s", c.variable)
		}
		list, _, _ := strings.Cut(rest, `"`)
		if got := strings.Fields(list); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("scripts/deps.sh %s:\n%v\n%s names:\n%v", c.variable, got, readme, want)
		}
	}
}

// aptPackages are the packages of the first "apt-get install" line of a
// README (with its continuation lines).
func aptPackages(readme string) []string {
	_, rest, ok := strings.Cut(readme, "apt-get install")
	if !ok {
		return nil
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		cont := strings.HasSuffix(strings.TrimSpace(line), `\`)
		for _, f := range strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), `\`)) {
			if !strings.HasPrefix(f, "-") {
				out = append(out, f)
			}
		}
		if !cont {
			break
		}
	}
	return out
}
