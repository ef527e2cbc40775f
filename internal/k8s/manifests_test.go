package k8s

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testOptions() Options {
	return Options{Name: "load-test", Namespace: "perf", Image: "registry.example.com/perfscen:v1", Agents: 3,
		ScenarioFile: "load.yaml", Files: map[string]string{"load.yaml": "version: 1\nmodels: [{name: simple}]\n", "inputs.json": "{\"data\": []}\n"},
		AgentCPU: "2", AgentMemory: "1Gi", CoordinatorCPU: "500m", CoordinatorMemory: "512Mi", AgentCPULimit: "2",
		PodReader: true, RunFlags: []string{"--junit=/results/junit.xml"}}
}

// objects decodes the stream strictly into k8s.io/api's types, with the
// API server's own strict decoder (sigs.k8s.io/json): a field the API
// does not have (or spelled in another case), a value of the wrong type
// or a quantity that does not parse fails here as it would fail kubectl
// apply.
type objects struct {
	configMap      corev1.ConfigMap
	service        corev1.Service
	serviceAccount *corev1.ServiceAccount
	role           *rbacv1.Role
	roleBinding    *rbacv1.RoleBinding
	coordinator    batchv1.Job
	agents         batchv1.Job
	reader         *corev1.Pod // with a results claim
}

func decode(t *testing.T, b []byte) objects {
	t.Helper()
	var o objects
	jobs := 0
	for i, doc := range bytes.Split(b, []byte("\n---\n")) {
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var k struct {
			Kind string `json:"kind"`
		}
		if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &k); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var target any
		switch k.Kind {
		case "ConfigMap":
			target = &o.configMap
		case "Service":
			target = &o.service
		case "ServiceAccount":
			o.serviceAccount = &corev1.ServiceAccount{}
			target = o.serviceAccount
		case "Role":
			o.role = &rbacv1.Role{}
			target = o.role
		case "RoleBinding":
			o.roleBinding = &rbacv1.RoleBinding{}
			target = o.roleBinding
		case "Job":
			target = &o.coordinator
			if jobs++; jobs == 2 {
				target = &o.agents
			}
		case "Pod":
			o.reader = &corev1.Pod{}
			target = o.reader
		default:
			t.Fatalf("document %d is a %q", i, k.Kind)
		}
		// As the API server decodes: field names case-sensitive, unknown
		// and duplicate fields refused.
		strict, err := kjson.UnmarshalStrict(js, target)
		if err == nil && len(strict) > 0 {
			err = fmt.Errorf("%v", strict)
		}
		if err != nil {
			t.Fatalf("document %d does not decode strictly as %T: %v\n%s", i, target, err, doc)
		}
	}
	if o.configMap.Name == "" || o.service.Name == "" || jobs != 2 {
		t.Fatalf("want a ConfigMap, a Service and two Jobs:\n%s", b)
	}
	return o
}

// validate checks what the API server would refuse of these objects'
// metadata (names, labels, selectors), with apimachinery's validation.
func validate(t *testing.T, o objects) {
	t.Helper()
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateObjectMeta(&o.configMap.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("configMap"))...)
	errs = append(errs, apivalidation.ValidateObjectMeta(&o.service.ObjectMeta, true, apivalidation.NameIsDNS1035Label, field.NewPath("service"))...)
	for _, j := range []*batchv1.Job{&o.coordinator, &o.agents} {
		errs = append(errs, apivalidation.ValidateObjectMeta(&j.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath(j.Name))...)
		for k, v := range j.Spec.Template.Labels {
			for _, msg := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
				errs = append(errs, field.Invalid(field.NewPath(j.Name, "labels", k), v, msg))
			}
		}
		if p := j.Spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyNever && p != corev1.RestartPolicyOnFailure {
			errs = append(errs, field.Invalid(field.NewPath(j.Name, "restartPolicy"), p, "a Job's pods restart Never or OnFailure"))
		}
		mounted := map[string]bool{}
		for _, v := range j.Spec.Template.Spec.Volumes {
			mounted[v.Name] = true
		}
		for _, c := range j.Spec.Template.Spec.Containers {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(field.NewPath(j.Name, "containers"), c.Name, msg))
			}
			for _, m := range c.VolumeMounts {
				if !mounted[m.Name] {
					errs = append(errs, field.NotFound(field.NewPath(j.Name, "volumeMounts"), m.Name))
				}
			}
			// Requests of both; a memory limit (the node's memory is
			// not shared by quota); a CPU limit, where given, at least
			// the request (the API server's rule).
			r := c.Resources
			if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().Cmp(*r.Requests.Memory()) != 0 {
				errs = append(errs, field.Required(field.NewPath(j.Name, "resources"), "cpu and memory requests, the memory limit"))
			}
			if lim, ok := r.Limits[corev1.ResourceCPU]; ok && lim.Cmp(*r.Requests.Cpu()) < 0 {
				errs = append(errs, field.Invalid(field.NewPath(j.Name, "resources", "limits"), lim.String(), "below the request"))
			}
			if p := c.ReadinessProbe; p != nil && p.TCPSocket != nil {
				named := false
				for _, port := range c.Ports {
					named = named || port.Name == p.TCPSocket.Port.StrVal
				}
				if !named {
					errs = append(errs, field.NotFound(field.NewPath(j.Name, "readinessProbe", "tcpSocket", "port"), p.TCPSocket.Port.String()))
				}
			}
		}
		// The pod failure policy names the Job's container.
		if pfp := j.Spec.PodFailurePolicy; pfp != nil {
			for _, rule := range pfp.Rules {
				if e := rule.OnExitCodes; e == nil || e.ContainerName == nil || *e.ContainerName != j.Spec.Template.Spec.Containers[0].Name {
					errs = append(errs, field.Invalid(field.NewPath(j.Name, "podFailurePolicy"), rule, "names no container of the pod"))
				}
			}
		}
	}
	for _, c := range o.agents.Spec.Template.Spec.TopologySpreadConstraints {
		if _, err := metav1.LabelSelectorAsSelector(c.LabelSelector); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("agents", "topologySpreadConstraints"), c.LabelSelector, err.Error()))
		}
	}
	for k := range o.configMap.Data {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("configMap", "data"), k, msg))
		}
	}
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
}

// The manifests are API objects Kubernetes accepts, and they fit
// together: the agents' Indexed Job has one completion per agent, every
// agent dials the Service that selects the coordinator's pod on the port
// the coordinator listens on, both read the same ConfigMap and token.
func TestManifests(t *testing.T) {
	b, err := Write(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, b)
	validate(t, o)
	if m := o.agents.Spec; m.CompletionMode == nil || *m.CompletionMode != batchv1.IndexedCompletion ||
		*m.Completions != 3 || *m.Parallelism != 3 || *m.BackoffLimit != 0 {
		t.Errorf("agents' Job: %+v", m)
	}
	if o.service.Spec.ClusterIP != corev1.ClusterIPNone || !o.service.Spec.PublishNotReadyAddresses {
		t.Errorf("service is not headless: %+v", o.service.Spec)
	}
	coordPod := o.coordinator.Spec.Template
	for k, v := range o.service.Spec.Selector {
		if coordPod.Labels[k] != v || o.agents.Spec.Template.Labels[labelRole] == v && k == labelRole {
			t.Errorf("service selector %s=%s does not pick the coordinator's pod alone", k, v)
		}
	}
	coord, agent := coordPod.Spec.Containers[0], o.agents.Spec.Template.Spec.Containers[0]
	port := o.service.Spec.Ports[0]
	if arg(coord.Args, "--listen") != fmt.Sprintf("0.0.0.0:%d", port.TargetPort.IntVal) || coord.Ports[0].ContainerPort != port.TargetPort.IntVal {
		t.Errorf("coordinator listens on %s, the service forwards to %v", arg(coord.Args, "--listen"), port.TargetPort)
	}
	if want := fmt.Sprintf("%s.%s.svc:%d", o.service.Name, o.service.Namespace, port.Port); arg(agent.Args, "--coordinator") != want {
		t.Errorf("agents dial %s, want %s", arg(agent.Args, "--coordinator"), want)
	}
	if arg(coord.Args, "--agents") != "3" || !slices.Contains(coord.Args, "--junit=/results/junit.xml") {
		t.Errorf("coordinator args %q", coord.Args)
	}
	for _, c := range []corev1.Container{coord, agent} {
		sc := c.Args[len(c.Args)-1]
		if !strings.HasPrefix(sc, scenarioDir+"/") || o.configMap.Data[strings.TrimPrefix(sc, scenarioDir+"/")] == "" {
			t.Errorf("%s reads %s, not in the ConfigMap", c.Name, sc)
		}
		if arg(c.Args, "--token-file") != tokenDir+"/token" {
			t.Errorf("%s token file %s", c.Name, arg(c.Args, "--token-file"))
		}
	}
	for _, j := range []batchv1.Job{o.coordinator, o.agents} {
		var secret string
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.Secret != nil {
				secret = v.Secret.SecretName
			}
		}
		if secret != "load-test-agent-token" {
			t.Errorf("%s: token secret %q", j.Name, secret)
		}
	}
	golden(t, "testdata/manifests.golden", b)
}

// What running the manifests on a cluster asked for: the coordinator may
// read its agents' pods and nothing else, and watches exactly them; the
// agents spread over nodes by a constraint that selects them alone and
// never blocks scheduling; both Jobs carry the container's exit code
// into their Failed condition; a results claim is writable by the
// image's user; the coordinator is Ready once it listens.
func TestManifestsOnACluster(t *testing.T) {
	o := decode(t, must(Write(testOptions())))
	validate(t, o)
	coordPod, agentPod := o.coordinator.Spec.Template, o.agents.Spec.Template
	agentLabels, coordLabels := labels.Set(agentPod.Labels), labels.Set(coordPod.Labels)

	// The pod reader: ServiceAccount ← RoleBinding → Role (get, list pods).
	sa := o.serviceAccount.Name
	if coordPod.Spec.ServiceAccountName != sa || coordPod.Spec.AutomountServiceAccountToken == nil || !*coordPod.Spec.AutomountServiceAccountToken {
		t.Errorf("coordinator runs as %q (automount %v), the ServiceAccount is %q", coordPod.Spec.ServiceAccountName, coordPod.Spec.AutomountServiceAccountToken, sa)
	}
	if a := agentPod.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("agents mount an API token: %v", a)
	}
	rb := o.roleBinding
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != o.role.Name || len(rb.Subjects) != 1 ||
		rb.Subjects[0].Kind != rbacv1.ServiceAccountKind || rb.Subjects[0].Name != sa || rb.Subjects[0].Namespace != "perf" {
		t.Errorf("role binding %+v does not bind role %s to %s", rb, o.role.Name, sa)
	}
	if r := o.role.Rules; len(r) != 1 || !slices.Equal(r[0].APIGroups, []string{""}) || !slices.Equal(r[0].Resources, []string{"pods"}) ||
		!slices.Equal(r[0].Verbs, []string{"get", "list"}) {
		t.Errorf("role rules %+v: want get and list of pods, nothing more", r)
	}
	watched, err := labels.Parse(arg(coordPod.Spec.Containers[0].Args, "--agent-pods"))
	if err != nil || !watched.Matches(agentLabels) || watched.Matches(coordLabels) {
		t.Errorf("--agent-pods %q (%v) must select the agents' pods and not the coordinator's", arg(coordPod.Spec.Containers[0].Args, "--agent-pods"), err)
	}
	for _, obj := range []metav1.ObjectMeta{o.configMap.ObjectMeta, o.service.ObjectMeta, o.serviceAccount.ObjectMeta, o.role.ObjectMeta,
		o.roleBinding.ObjectMeta, o.coordinator.ObjectMeta, o.agents.ObjectMeta} {
		if sel := labels.SelectorFromSet(labels.Set{labelName: "perfscen", labelInstance: "load-test"}); !sel.Matches(labels.Set(obj.Labels)) {
			t.Errorf("%s is not labelled for cleaning up: %v", obj.Name, obj.Labels)
		}
	}

	// Spread: soft, per node, over the agents alone.
	ts := agentPod.Spec.TopologySpreadConstraints
	if len(ts) != 1 || ts[0].TopologyKey != corev1.LabelHostname || ts[0].WhenUnsatisfiable != corev1.ScheduleAnyway || ts[0].MaxSkew != 1 {
		t.Fatalf("agents' topology spread: %+v", ts)
	}
	spread, _ := metav1.LabelSelectorAsSelector(ts[0].LabelSelector)
	if !spread.Matches(agentLabels) || spread.Matches(coordLabels) {
		t.Errorf("the spread's selector %v must count the agents alone", spread)
	}
	if agentPod.Spec.Affinity != nil {
		t.Errorf("agents have an affinity besides the spread: %+v", agentPod.Spec.Affinity)
	}

	for _, j := range []batchv1.Job{o.coordinator, o.agents} {
		pfp := j.Spec.PodFailurePolicy
		if pfp == nil || len(pfp.Rules) != 1 || pfp.Rules[0].Action != batchv1.PodFailurePolicyActionFailJob ||
			pfp.Rules[0].OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpNotIn || !slices.Equal(pfp.Rules[0].OnExitCodes.Values, []int32{0}) {
			t.Errorf("%s: pod failure policy %+v: want FailJob on any nonzero exit", j.Name, pfp)
		}
	}
	if sc := coordPod.Spec.SecurityContext; sc == nil || sc.FSGroup == nil || *sc.FSGroup != UID {
		t.Errorf("coordinator's fsGroup: %+v, want %d", sc, UID)
	}
	coord := coordPod.Spec.Containers[0]
	if p := coord.ReadinessProbe; p == nil || p.TCPSocket == nil || p.TCPSocket.Port.StrVal != "agents" {
		t.Errorf("coordinator's readiness probe: %+v", p)
	}
	// CPU limited only when asked (testOptions asks for the agents).
	if _, ok := coord.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Errorf("coordinator has a CPU limit it was not given: %v", coord.Resources.Limits)
	}
	if q := agentPod.Spec.Containers[0].Resources.Limits.Cpu(); q.Value() != 2 {
		t.Errorf("agents' CPU limit %v, want 2", q)
	}

	// Without the pod reader: no RBAC objects, no API token, no watching.
	opts := testOptions()
	opts.PodReader = false
	o = decode(t, must(Write(opts)))
	validate(t, o)
	c := o.coordinator.Spec.Template.Spec
	if o.role != nil || c.ServiceAccountName != "" || *c.AutomountServiceAccountToken || slices.Contains(c.Containers[0].Args, "--agent-pods") {
		t.Errorf("without the pod reader: role %v, service account %q, automount %v, args %q", o.role, c.ServiceAccountName, *c.AutomountServiceAccountToken, c.Containers[0].Args)
	}
}

// With a claim the HTML report is kept beside the result, unless a
// --run-flag names one, and a reader pod holds the claim for kubectl cp:
// read-only, on the coordinator's node (a ReadWriteOnce volume is
// mounted on one node), deleted with the run.
func TestManifestsResultsClaim(t *testing.T) {
	for _, tc := range []struct {
		claim string
		flags []string
		want  string
	}{
		{"", nil, ""},
		{"perf-results", nil, "/results/load.html"},
		{"perf-results", []string{"--html=/results/mine.html"}, ""},
	} {
		opts := testOptions()
		opts.ResultsClaim, opts.RunFlags = tc.claim, tc.flags
		b := must(Write(opts))
		o := decode(t, b)
		validate(t, o)
		if got := arg(o.coordinator.Spec.Template.Spec.Containers[0].Args, "--html"); got != tc.want {
			t.Errorf("claim %q, flags %q: --html %q, want %q", tc.claim, tc.flags, got, tc.want)
		}
		if (o.reader != nil) != (tc.claim != "") {
			t.Errorf("claim %q: reader %v", tc.claim, o.reader)
		}
		if o.reader == nil {
			continue
		}
		r := o.reader.Spec
		v := r.Volumes[0].PersistentVolumeClaim
		if v == nil || v.ClaimName != tc.claim || !v.ReadOnly || !r.Containers[0].VolumeMounts[0].ReadOnly || r.Containers[0].VolumeMounts[0].MountPath != resultsDir {
			t.Errorf("reader's volume %+v, mounts %+v", r.Volumes, r.Containers[0].VolumeMounts)
		}
		aff := r.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		sel, err := metav1.LabelSelectorAsSelector(aff[0].LabelSelector)
		if err != nil || aff[0].TopologyKey != corev1.LabelHostname || !sel.Matches(labels.Set(o.coordinator.Spec.Template.Labels)) ||
			sel.Matches(labels.Set(o.agents.Spec.Template.Labels)) {
			t.Errorf("reader's affinity %+v does not follow the coordinator's pod", aff)
		}
		if sc := r.Containers[0].SecurityContext; !slices.Equal(r.Containers[0].Command, []string{"sleep", "infinity"}) || sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("reader's container %+v", r.Containers[0])
		}
		header := string(b[:bytes.Index(b, []byte("apiVersion"))])
		if !strings.Contains(header, "kubectl -n perf cp load-test-results:/results ./results") || !strings.Contains(header, "delete job,service,configmap,pod,") {
			t.Errorf("header:\n%s", header)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// A results claim replaces the emptyDir; without a namespace the agents
// dial the Service by its short name (kubectl's namespace for all).
func TestManifestsVariants(t *testing.T) {
	opts := testOptions()
	opts.Namespace, opts.ResultsClaim = "", "perf-results"
	opts.AgentCPU, opts.AgentMemory = "1500m", "2Gi"
	b, err := Write(opts)
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, b)
	var claim string
	for _, v := range o.coordinator.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim != "perf-results" || arg(o.agents.Spec.Template.Spec.Containers[0].Args, "--coordinator") != "load-test-coordinator:7700" {
		t.Errorf("claim %q, agents dial %s", claim, arg(o.agents.Spec.Template.Spec.Containers[0].Args, "--coordinator"))
	}
	if q := o.agents.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu(); q.MilliValue() != 1500 {
		t.Errorf("agent cpu %v", q)
	}
	// The coordinator's --set overrides go to the agents too, in order:
	// the coordinator refuses agents whose plan they would not match.
	opts = testOptions()
	opts.RunFlags = append(opts.RunFlags, "--set=measurement.window=2s", "--set", "load.concurrency=8")
	if b, err = Write(opts); err != nil {
		t.Fatal(err)
	}
	o = decode(t, b)
	agentArgs := strings.Join(o.agents.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(agentArgs, "--set=measurement.window=2s --set load.concurrency=8 /etc/perfscen/") || strings.Contains(agentArgs, "junit") {
		t.Errorf("agent args: %s", agentArgs)
	}
	bad := []struct {
		mod  func(o *Options)
		want string
	}{
		{func(o *Options) { o.Name = "Load_Test" }, "--name \"Load_Test\": not a DNS label"},
		{func(o *Options) { o.Agents = 0 }, "--agents 0"},
		{func(o *Options) { o.Image = "" }, "--image"},
		{func(o *Options) { o.Files["data/x.json"] = "{}" }, `file "data/x.json"`},
	}
	for _, tc := range bad {
		o := testOptions()
		tc.mod(&o)
		if _, err := Write(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func arg(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the manifests written (go test -update if intended):\n%s", path, got)
	}
}

// The manifests pass only args and ask for a non-root, read-only
// container: the image the repository's Containerfile builds must have
// perfscen as its entrypoint and a numeric non-root user (runAsNonRoot
// can verify only a numeric one).
func TestContainerfileFitsTheManifests(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var entrypoint, user string
	for _, line := range strings.Split(string(b), "\n") {
		switch f := strings.Fields(line); {
		case len(f) > 1 && f[0] == "ENTRYPOINT":
			entrypoint = strings.Join(f[1:], " ")
		case len(f) > 1 && f[0] == "USER":
			user = f[1]
		}
	}
	if entrypoint != `["/usr/local/bin/perfscen"]` {
		t.Errorf("Containerfile's ENTRYPOINT is %q: the manifests' args are a perfscen command line", entrypoint)
	}
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("Containerfile's USER is %q: runAsNonRoot needs a numeric non-root user", user)
	}
	if gid, err := strconv.Atoi(strings.TrimPrefix(user[len(uid):], ":")); err != nil || gid != UID {
		t.Errorf("Containerfile's USER is %q: the pods' fsGroup is %d", user, UID)
	}
	m := restricted()
	if !m.RunAsNonRoot || !m.ReadOnlyRootFilesystem {
		t.Errorf("the containers' security context is no longer restricted: %+v", m)
	}
}
