package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsyaml "sigs.k8s.io/yaml"
)

// perfscen k8s checks the scenario as the coordinator would before it
// writes anything, and names what is missing.
func TestK8sCommand(t *testing.T) {
	dir := t.TempDir()
	sc := writeFile(t, filepath.Join(dir, "load.yaml"), "version: 1\nserver: {url: \"triton.perf.svc:8000\"}\nmodels: [{name: simple}]\nload: {concurrency: 4}\n")
	named := writeFile(t, filepath.Join(dir, "named.yaml"), "version: 1\nname: probe\nserver: {url: \"triton.perf.svc:8000\"}\nmodels: [{name: simple}]\nload: {concurrency: 4}\n")
	local := writeFile(t, filepath.Join(dir, "local.yaml"), "version: 1\nserver: {url: \"127.0.0.1:8000\"}\nmodels: [{name: simple}]\nload: {concurrency: 4}\n")
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"k8s", "--agents", "4", "--image", "reg/perfscen:v1", sc}, 0, "completionMode: Indexed"},
		{[]string{"k8s", "--agents", "4", "--image", "reg/perfscen:v1", local}, 0, "warning: " + local + "'s server 127.0.0.1:8000 is this host's loopback"},
		{[]string{"k8s", "--agents", "5", "--image", "reg/perfscen:v1", sc}, 2, "concurrency 4 is less than the 5 agents"},
		// The HTML report is named as the result file is: by the scenario's name.
		{[]string{"k8s", "--agents", "2", "--image", "reg/perfscen:v1", "--results-claim", "r", named}, 0, "- --html\n            - /results/probe.html\n"},
		{[]string{"k8s", "--agents", "2", sc}, 0, "image: localhost/perfscen:dev\n"},
		{[]string{"k8s", "--agents", "2", sc}, 0, "perfscen: image localhost/perfscen:dev: what make image builds"},
		{[]string{"k8s", "--agents", "2", "--image", "perfscen:v1", sc}, 0, "perfscen: note: image perfscen:v1 names no registry: the nodes look for docker.io/library/perfscen:v1"},
		{[]string{"k8s", "--agents", "2", "--image", "reg/perfscen:v1", "--pod-reader=false", sc}, 0, "kind: Job"},
		{[]string{"k8s", "--agents", "2", "--image", "reg/perfscen:v1", "--agent-cpu-limit", "2x", sc}, 2, `--agent-cpu-limit "2x": not a Kubernetes quantity`},
		{[]string{"k8s", "--agents", "2", "--image", "i", "--include", filepath.Join(dir, "missing.json"), sc}, 2, "missing.json: no such file"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runAtRoot(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.out) {
			t.Errorf("%s: exit %d, want %d saying %q\n%s%s", strings.Join(tc.args, " "), code, tc.code, tc.out, stdout, stderr)
		}
	}
}

// The default image is the tag make image gives a build of that version.
func TestDefaultImage(t *testing.T) {
	for _, tc := range []struct{ version, image string }{
		{"dev", "localhost/perfscen:dev"},
		{"v1.2.0", "localhost/perfscen:v1.2.0"},
		{"4da5920-dirty", "localhost/perfscen:4da5920-dirty"},
		{"devel-0123456789ab-dirty", "localhost/perfscen:devel-0123456789ab-dirty"},
		{"v1.0.0+meta", "localhost/perfscen:v1.0.0-meta"},
		{".x", "localhost/perfscen:_x"},
		{"", "localhost/perfscen:dev"},
	} {
		if got := defaultImage(tc.version); got != tc.image {
			t.Errorf("defaultImage(%q) = %q, want %q", tc.version, got, tc.image)
		}
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	// make image tags perfscen:VERSION with podman, which keeps it as
	// localhost/perfscen:VERSION: the name it has once loaded into a node.
	if !strings.Contains(string(mk), "IMAGE     ?= perfscen:$(VERSION)") {
		t.Error("the Makefile's IMAGE is no longer perfscen:$(VERSION): perfscen k8s's default image must follow it")
	}
}

// The default manifests of the documented run (two agents) schedule on
// one node of 2 CPUs beside the server: Kubernetes said "0/1 nodes are
// available: 1 Insufficient cpu" to the earlier defaults (a coordinator
// of 1 CPU and agents of 2, limited to that). Half the node is left to
// the server and the system; memory is limited, CPU is not.
func TestK8sDefaultsFitASmallNode(t *testing.T) {
	sc := writeFile(t, filepath.Join(t.TempDir(), "load.yaml"), "version: 1\nserver: {url: \"server:8000\"}\nmodels: [{name: simple}]\nload: {concurrency: 4}\n")
	code, stdout, stderr := runAtRoot(t, nil, "k8s", "--agents", "2", sc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var cpu, mem resource.Quantity
	for _, doc := range strings.Split(stdout, "\n---\n") {
		js, err := sigsyaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var j batchv1.Job
		if err := json.Unmarshal(js, &j); err != nil || j.Kind != "Job" {
			continue
		}
		pods := int64(1)
		if j.Spec.Completions != nil {
			pods = int64(*j.Spec.Completions)
		}
		for _, c := range j.Spec.Template.Spec.Containers {
			for i := int64(0); i < pods; i++ {
				cpu.Add(*c.Resources.Requests.Cpu())
				mem.Add(*c.Resources.Requests.Memory())
			}
			if _, limited := c.Resources.Limits[corev1.ResourceCPU]; limited || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s: limits %v: memory limited, CPU not", c.Name, c.Resources.Limits)
			}
		}
	}
	if cpu.MilliValue() > 1000 || mem.Value() > 1<<30 {
		t.Errorf("coordinator and 2 agents request %s CPU and %s memory: more than half a 2-CPU node", cpu.String(), mem.String())
	}
}

// docBlock is the fenced block after "<!-- k8s-check: name -->" in a
// Markdown file: what make k8s-check runs as written (scripts/k8s-check.sh
// finds them the same way).
func docBlock(t *testing.T, doc, name string) string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "<!-- k8s-check: "+name+" -->\n```")
	if !ok {
		t.Fatalf("docs/distributed.md has no block marked k8s-check: %s", name)
	}
	_, body, _ := strings.Cut(after, "\n")
	body, _, _ = strings.Cut(body, "\n```")
	return body + "\n"
}

// The documented Kubernetes run (docs/distributed.md), which make
// k8s-check runs on a real cluster, agrees with what perfscen k8s writes:
// its perfscen k8s line runs on its load.yaml, with the default image;
// the scenario names the server Service the docs deploy; the clean-up,
// the copy of the results and the exit code the docs read name the
// objects the manifests have.
func TestK8sDocumentedRun(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "distributed.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	dir := t.TempDir()
	sc := writeFile(t, filepath.Join(dir, "load.yaml"), docBlock(t, doc, "load.yaml"))
	if code, _, stderr := runAtRoot(t, nil, "validate", sc); code != 0 {
		t.Fatalf("the docs' load.yaml: exit %d\n%s", code, stderr)
	}
	var line string
	for _, l := range strings.Split(docBlock(t, doc, "run"), "\n") {
		if strings.HasPrefix(l, "perfscen k8s ") {
			line = l
		}
	}
	cmd, pipe, _ := strings.Cut(line, " | ")
	args := strings.Fields(cmd)[1:]
	if pipe != "kubectl apply -f -" || args[len(args)-1] != "load.yaml" || slices.Contains(args, "--image") {
		t.Fatalf("the docs' run: %q", line)
	}
	args[len(args)-1] = sc
	code, out, stderr := runAtRoot(t, nil, args...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", line, code, stderr)
	}
	// What the documented run applies, with the defaults a user gets: they
	// schedule on one node of 2 CPUs (TestK8sDefaultsFitASmallNode), and
	// make k8s-check applies them to a real one.
	golden(t, filepath.Join("testdata", "k8s-documented-run.golden"), out)
	header := out[:strings.Index(out, "apiVersion")]
	cleanup := strings.Join(strings.Fields(strings.ReplaceAll(docBlock(t, doc, "clean-up"), "\\\n", "")), " ")
	collect := strings.TrimSpace(strings.SplitN(docBlock(t, doc, "collect"), "#", 2)[0])
	ready := ""
	for _, l := range strings.Split(docBlock(t, doc, "run"), "\n") {
		if strings.Contains(l, " wait --for=") {
			ready = l
		}
	}
	for _, want := range []string{cleanup, collect, ready, "kubectl -n perf logs -f job/perfscen-coordinator"} {
		if !strings.Contains(header, want) {
			t.Errorf("the manifests' header does not say %q:\n%s", want, header)
		}
	}
	if !strings.Contains(docBlock(t, doc, "verdict"), "job-name=perfscen-coordinator") || !strings.Contains(out, "\n  name: perfscen-coordinator\n") {
		t.Error("the docs read the exit code of another Job than the manifests' coordinator")
	}
	if !strings.Contains(docBlock(t, doc, "server"), "metadata: {name: psc-server}") || !strings.Contains(docBlock(t, doc, "load.yaml"), `url: "psc-server:8000"`) {
		t.Error("the docs' scenario does not name the server Service the docs deploy")
	}
}
