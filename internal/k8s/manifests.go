// Package k8s writes the Kubernetes manifests of a distributed run: the
// scenario as a ConfigMap, a headless Service in front of the coordinator,
// the coordinator's Job and the agents' Indexed Job (completion index =
// agent index).
//
// The manifests are built from small structs of this package, not from
// k8s.io/api's types: those would add about 10 MB to the perfscen binary
// for the few fields written here. The tests decode every manifest
// strictly into k8s.io/api's types (unknown or mistyped fields fail), so
// the structs below cannot drift from the API without a failing test.
package k8s

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Port is where the coordinator listens for agents in the pod.
const Port = 7700

// Options describe the run to deploy.
type Options struct {
	// Name prefixes every object ("perfscen" by default); it must be a
	// DNS label.
	Name      string
	Namespace string
	// Image is the perfscen container image (required).
	Image string
	// Agents is the number of agents (the Indexed Job's completions).
	Agents int
	// ScenarioFile is the scenario's file name in the ConfigMap; Files
	// are the ConfigMap's files by name (the scenario, and the files it
	// reads: input data, a baseline).
	ScenarioFile string
	Files        map[string]string
	// RunName is the scenario's name, which names its result files
	// (<name>.json); the file's base name when empty.
	RunName string
	// TokenSecret names the Secret holding the shared agent token under
	// the key "token"; the manifests do not create it.
	TokenSecret string
	// ResultsClaim, when set, is a PersistentVolumeClaim the coordinator
	// writes its result into; otherwise an emptyDir (the report is in the
	// coordinator's log either way).
	ResultsClaim string
	// Resources of each pod, as Kubernetes quantities: CPU requested
	// (and limited, when a CPU limit is given), memory requested and
	// limited.
	AgentCPU, AgentMemory              string
	CoordinatorCPU, CoordinatorMemory  string
	AgentCPULimit, CoordinatorCPULimit string
	// PodReader gives the coordinator a ServiceAccount allowed to read
	// the pods of the run (a Role and RoleBinding) and tells it to watch
	// its agents' pods (perfscen run --agent-pods), so that it can say
	// why an agent is missing: never scheduled, its image not pulled.
	PodReader bool
	// AgentWait and JoinTimeout bound the coordinator's barrier and the
	// agents' attempts to reach it (pods start in any order).
	AgentWait, JoinTimeout string
	// RunFlags are extra flags for perfscen run (e.g. --junit).
	RunFlags []string
}

// Labels of the objects.
const (
	labelName     = "app.kubernetes.io/name"
	labelInstance = "app.kubernetes.io/instance"
	labelRole     = "app.kubernetes.io/component"
)

// Mount points in the pods.
const (
	scenarioDir = "/etc/perfscen"
	tokenDir    = "/var/run/secrets/perfscen"
	resultsDir  = "/results"
)

// UID is the image's user (Containerfile: USER 10001). The pods' fsGroup
// is its group, so a results claim, which a volume plugin creates owned
// by root, is writable by the coordinator.
const UID = 10001

func (o *Options) defaults() error {
	if o.Name == "" {
		o.Name = "perfscen"
	}
	if o.TokenSecret == "" {
		o.TokenSecret = o.Name + "-agent-token"
	}
	if o.AgentWait == "" {
		o.AgentWait = "10m"
	}
	if o.JoinTimeout == "" {
		o.JoinTimeout = "10m"
	}
	switch {
	case o.Image == "":
		return fmt.Errorf("--image: the perfscen container image is required")
	case o.Agents < 1:
		return fmt.Errorf("--agents %d: at least one agent", o.Agents)
	case o.ScenarioFile == "" || o.Files[o.ScenarioFile] == "":
		return fmt.Errorf("no scenario")
	}
	for _, n := range []struct{ what, v string }{{"--name", o.Name}, {"--namespace", o.Namespace}, {"--token-secret", o.TokenSecret}, {"--results-claim", o.ResultsClaim}} {
		if n.v != "" && !dnsLabel(n.v) {
			return fmt.Errorf("%s %q: not a DNS label (lower case letters, digits and '-', at most 63)", n.what, n.v)
		}
	}
	if len(o.Name) > 40 {
		return fmt.Errorf("--name %q: at most 40 characters, so the objects' names stay DNS labels", o.Name)
	}
	for _, q := range []struct{ flag, v string }{{"--agent-cpu", o.AgentCPU}, {"--agent-memory", o.AgentMemory},
		{"--coordinator-cpu", o.CoordinatorCPU}, {"--coordinator-memory", o.CoordinatorMemory},
		{"--agent-cpu-limit", o.AgentCPULimit}, {"--coordinator-cpu-limit", o.CoordinatorCPULimit}} {
		if q.v == "" {
			continue
		}
		if !quantity.MatchString(q.v) {
			return fmt.Errorf("%s %q: not a Kubernetes quantity (a number with an optional suffix: 500m, 2, 512Mi, 1Gi, 1e9)", q.flag, q.v)
		}
		if !positive(q.v) {
			return fmt.Errorf("%s %q: a resource request must be more than zero", q.flag, q.v)
		}
	}
	for name := range o.Files {
		if !configKey(name) {
			return fmt.Errorf("file %q: a ConfigMap key has letters, digits, '-', '_' and '.' only", name)
		}
	}
	return nil
}

// Write renders the manifests as one multi-document YAML stream.
func Write(o Options) ([]byte, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	ns := ""
	if o.Namespace != "" {
		ns = " -n " + o.Namespace
	}
	buf.WriteString("# perfscen: a distributed run of " + o.ScenarioFile + " with " + strconv.Itoa(o.Agents) + " agent(s).\n")
	buf.WriteString("# The agents' token is the Secret " + o.TokenSecret + " (key: token), created beforehand:\n")
	buf.WriteString("#   kubectl" + ns + " create secret generic " + o.TokenSecret + " --from-literal=token=$(openssl rand -hex 32)\n")
	// kubectl logs -f refuses a container that has yet to start; the
	// coordinator is Ready once it listens for agents.
	buf.WriteString("# The report, once the coordinator is Ready (it listens for agents):\n")
	buf.WriteString("#   kubectl" + ns + " wait --for=jsonpath='{.status.ready}'=1 job/" + o.Name + "-coordinator --timeout=5m\n")
	buf.WriteString("#   kubectl" + ns + " logs -f job/" + o.Name + "-coordinator   (the Job fails unless the run exits 0)\n")
	if o.ResultsClaim != "" {
		buf.WriteString("# The result files (JSON, HTML report), once the coordinator has ended:\n")
		buf.WriteString("#   kubectl" + ns + " cp " + o.Name + "-results:" + resultsDir + " ./results\n")
	}
	buf.WriteString("# A Job cannot be applied again: before the next run, delete this one (the Secret stays):\n")
	buf.WriteString("#   kubectl" + ns + " delete " + o.Kinds() + " -l " + o.Selector() + "\n")
	docs := []any{o.configMap(), o.service()}
	if o.PodReader {
		docs = append(docs, o.serviceAccount(), o.role(), o.roleBinding())
	}
	docs = append(docs, o.coordinatorJob(), o.agentsJob())
	if o.ResultsClaim != "" {
		docs = append(docs, o.resultsReader())
	}
	for i, doc := range docs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
		enc.Close()
	}
	return buf.Bytes(), nil
}

// Kinds are the kinds of object Write writes, for kubectl delete.
func (o *Options) Kinds() string {
	k := "job,service,configmap"
	if o.ResultsClaim != "" {
		k += ",pod"
	}
	if o.PodReader {
		k += ",serviceaccount,role,rolebinding"
	}
	return k
}

// Selector picks every object of this run (and its pods): what cleaning
// up deletes.
func (o *Options) Selector() string {
	return labelName + "=perfscen," + labelInstance + "=" + o.Name
}

// AgentSelector picks the agents' pods: what the coordinator watches.
func (o *Options) AgentSelector() string {
	return labelName + "=perfscen," + labelInstance + "=" + o.Name + "," + labelRole + "=agent"
}

func (o *Options) meta(name, role string) objectMeta {
	return objectMeta{Name: name, Namespace: o.Namespace, Labels: o.labels(role)}
}

func (o *Options) labels(role string) map[string]string {
	l := map[string]string{labelName: "perfscen", labelInstance: o.Name}
	if role != "" {
		l[labelRole] = role
	}
	return l
}

func (o *Options) configMap() configMap {
	return configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: o.meta(o.Name+"-scenario", ""), Data: o.Files}
}

// serviceName is the coordinator's headless Service; agents dial
// serviceName.namespace.svc:Port.
func (o *Options) serviceName() string { return o.Name + "-coordinator" }

func (o *Options) coordinatorAddr() string {
	host := o.serviceName()
	if o.Namespace != "" {
		host += "." + o.Namespace + ".svc"
	}
	return host + ":" + strconv.Itoa(Port)
}

func (o *Options) service() service {
	return service{APIVersion: "v1", Kind: "Service", Metadata: o.meta(o.serviceName(), "coordinator"),
		Spec: serviceSpec{ClusterIP: "None", Selector: o.labels("coordinator"), PublishNotReadyAddresses: true,
			Ports: []servicePort{{Name: "agents", Port: Port, TargetPort: Port, Protocol: "TCP"}}}}
}

func (o *Options) volumes() ([]volume, []volumeMount) {
	vols := []volume{
		{Name: "scenario", ConfigMap: &configMapVolume{Name: o.Name + "-scenario"}},
		{Name: "token", Secret: &secretVolume{SecretName: o.TokenSecret, Items: []keyToPath{{Key: "token", Path: "token"}}}},
	}
	mounts := []volumeMount{{Name: "scenario", MountPath: scenarioDir, ReadOnly: true}, {Name: "token", MountPath: tokenDir, ReadOnly: true}}
	return vols, mounts
}

// resources requests cpu and mem, and limits memory to what it requests.
// CPU is limited only when cpuLimit says so: a CPU limit is a CFS quota,
// and a load generator that spends its quota early in a 100 ms period is
// stopped for the rest of it, which its requests in flight measure as
// latency. The request is what protects it from its neighbours (its
// share of a busy node's CPUs); with cpuLimit equal to a whole cpu
// request the pod is Guaranteed, and a node with the static CPU manager
// gives it cores of its own.
func resources(cpu, mem, cpuLimit string) *resourceRequirements {
	if cpu == "" && mem == "" && cpuLimit == "" {
		return nil
	}
	req, lim := map[string]string{}, map[string]string{}
	if cpu != "" {
		req["cpu"] = cpu
	}
	if cpuLimit != "" {
		lim["cpu"] = cpuLimit
	}
	if mem != "" {
		req["memory"] = mem
		lim["memory"] = mem
	}
	if len(lim) == 0 {
		lim = nil
	}
	return &resourceRequirements{Requests: req, Limits: lim}
}

// pullPolicy is IfNotPresent whatever the tag: the default image
// (perfscen:VERSION, what make image builds) is loaded into a cluster's
// nodes rather than pulled, and a version's image never changes.
const pullPolicy = "IfNotPresent"

// restricted is the Pod Security Standards' "restricted" container
// context: the image runs as user 10001 (Containerfile), perfscen needs no
// capability, and writes only to /results.
func restricted() *securityContext {
	return &securityContext{RunAsNonRoot: true, ReadOnlyRootFilesystem: true,
		Capabilities:   &capabilities{Drop: []string{"ALL"}},
		SeccompProfile: &seccomp{Type: "RuntimeDefault"}}
}

func (o *Options) coordinatorJob() job {
	vols, mounts := o.volumes()
	results := volume{Name: "results", EmptyDir: &struct{}{}}
	if o.ResultsClaim != "" {
		results = volume{Name: "results", PersistentVolumeClaim: &claimVolume{ClaimName: o.ResultsClaim}}
	}
	vols = append(vols, results)
	mounts = append(mounts, volumeMount{Name: "results", MountPath: resultsDir})
	args := []string{"run", "--agents", strconv.Itoa(o.Agents), "--listen", "0.0.0.0:" + strconv.Itoa(Port),
		"--token-file", path.Join(tokenDir, "token"), "--agent-wait", o.AgentWait,
		"--out-dir", resultsDir}
	if o.PodReader {
		args = append(args, "--agent-pods", o.AgentSelector())
	}
	if o.ResultsClaim != "" && !o.hasRunFlag("--html") {
		// A claim outlives the pod: the HTML report is kept beside the
		// result (an emptyDir goes with the pod, the report is its log).
		name := o.RunName
		if name == "" {
			name = strings.TrimSuffix(o.ScenarioFile, path.Ext(o.ScenarioFile))
		}
		args = append(args, "--html", path.Join(resultsDir, name+".html"))
	}
	args = append(args, o.RunFlags...)
	args = append(args, path.Join(scenarioDir, o.ScenarioFile))
	c := container{Name: "coordinator", Image: o.Image, ImagePullPolicy: pullPolicy, Args: args,
		Ports:        []containerPort{{Name: "agents", ContainerPort: Port, Protocol: "TCP"}},
		VolumeMounts: mounts, Resources: resources(o.CoordinatorCPU, o.CoordinatorMemory, o.CoordinatorCPULimit),
		// Ready once it listens for agents: kubectl wait and the
		// Service's endpoints see when agents can join. (The Service
		// publishes the address before that, so agents that start
		// first resolve it and retry.)
		ReadinessProbe:  &probe{TCPSocket: &tcpSocketAction{Port: "agents"}, PeriodSeconds: 2},
		SecurityContext: restricted()}
	spec := podSpec{RestartPolicy: "Never", Containers: []container{c}, Volumes: vols,
		SecurityContext: &podSecurityContext{FSGroup: ptr(UID), FSGroupChangePolicy: "OnRootMismatch"}}
	if o.PodReader {
		spec.ServiceAccountName = o.serviceAccountName()
		spec.AutomountServiceAccountToken = ptr(true)
	} else {
		spec.AutomountServiceAccountToken = ptr(false)
	}
	return job{APIVersion: "batch/v1", Kind: "Job", Metadata: o.meta(o.Name+"-coordinator", "coordinator"),
		Spec: jobSpec{BackoffLimit: ptr(0), PodFailurePolicy: failJob("coordinator"), TTLSecondsAfterFinished: ptr(86400),
			Template: podTemplate{Metadata: objectMeta{Labels: o.labels("coordinator")}, Spec: spec}}}
}

// resultsReader is a pod that holds the results claim read-only, so that
// kubectl cp can copy the result files out of it: the coordinator's own
// pod has ended by then, and a finished container cannot be copied from.
// It sleeps until deleted, on the coordinator's node (a ReadWriteOnce
// claim is mounted on one node at a time); the image's sleep and tar
// (which kubectl cp runs) do the rest.
func (o *Options) resultsReader() pod {
	c := container{Name: "results", Image: o.Image, ImagePullPolicy: pullPolicy, Command: []string{"sleep", "infinity"},
		VolumeMounts: []volumeMount{{Name: "results", MountPath: resultsDir, ReadOnly: true}},
		Resources:    resources("10m", "32Mi", ""), SecurityContext: restricted()}
	return pod{APIVersion: "v1", Kind: "Pod", Metadata: o.meta(o.Name+"-results", "results"),
		Spec: podSpec{RestartPolicy: "Never", Containers: []container{c}, AutomountServiceAccountToken: ptr(false),
			Volumes: []volume{{Name: "results", PersistentVolumeClaim: &claimVolume{ClaimName: o.ResultsClaim, ReadOnly: true}}},
			Affinity: &affinity{PodAffinity: &podAffinity{Required: []podAffinityTerm{{TopologyKey: "kubernetes.io/hostname",
				LabelSelector: labelSelector{MatchLabels: o.labels("coordinator")}}}}},
			// sleep, as PID 1, ignores SIGTERM: nothing to wait for.
			TerminationGracePeriodSeconds: ptr(1)}}
}

// failJob fails the Job on the container's first nonzero exit with the
// exit code in the Job's condition ("Container coordinator for pod … failed
// with exit code 3 matching FailJob rule at index 0"): the Job's status
// says which exit the run had, where backoffLimit alone says only that
// it failed.
func failJob(container string) *podFailurePolicy {
	return &podFailurePolicy{Rules: []podFailurePolicyRule{{Action: "FailJob",
		OnExitCodes: &podFailurePolicyExitCodes{ContainerName: container, Operator: "NotIn", Values: []int{0}}}}}
}

// hasRunFlag says whether RunFlags set flag (--flag or --flag=…).
func (o *Options) hasRunFlag(flag string) bool {
	for _, f := range o.RunFlags {
		if f == flag || strings.HasPrefix(f, flag+"=") {
			return true
		}
	}
	return false
}

func (o *Options) serviceAccountName() string { return o.Name + "-coordinator" }

func (o *Options) serviceAccount() serviceAccount {
	return serviceAccount{APIVersion: "v1", Kind: "ServiceAccount", Metadata: o.meta(o.serviceAccountName(), "coordinator")}
}

// role lets the coordinator read pods in its namespace, and nothing
// else: it lists its agents' pods while it waits for them.
func (o *Options) role() role {
	return role{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", Metadata: o.meta(o.serviceAccountName(), "coordinator"),
		Rules: []policyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
}

func (o *Options) roleBinding() roleBinding {
	return roleBinding{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Metadata: o.meta(o.serviceAccountName(), "coordinator"),
		RoleRef: roleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: o.serviceAccountName()},
		// Without a namespace the binding's own applies (kubectl's).
		Subjects: []subject{{Kind: "ServiceAccount", Name: o.serviceAccountName(), Namespace: o.Namespace}}}
}

func (o *Options) agentsJob() job {
	vols, mounts := o.volumes()
	// The agent's index is the Indexed Job's completion index, which
	// Kubernetes sets as JOB_COMPLETION_INDEX in every pod.
	args := []string{"agent", "--coordinator", o.coordinatorAddr(), "--token-file", path.Join(tokenDir, "token"),
		"--join-timeout", o.JoinTimeout}
	args = append(args, o.setFlags()...)
	args = append(args, path.Join(scenarioDir, o.ScenarioFile))
	c := container{Name: "agent", Image: o.Image, ImagePullPolicy: pullPolicy, Args: args, VolumeMounts: mounts,
		Resources: resources(o.AgentCPU, o.AgentMemory, o.AgentCPULimit), SecurityContext: restricted()}
	n := o.Agents
	return job{APIVersion: "batch/v1", Kind: "Job", Metadata: o.meta(o.Name+"-agents", "agent"),
		Spec: jobSpec{CompletionMode: "Indexed", Completions: &n, Parallelism: &n,
			// A retried agent would find its run gone: the coordinator
			// already decided "could not measure" without it.
			BackoffLimit: ptr(0), PodFailurePolicy: failJob("agent"), TTLSecondsAfterFinished: ptr(86400),
			Template: podTemplate{Metadata: objectMeta{Labels: o.labels("agent")},
				Spec: podSpec{RestartPolicy: "Never", Containers: []container{c}, Volumes: vols,
					// Agents talk to the coordinator and the server, never
					// to the API server.
					AutomountServiceAccountToken: ptr(false),
					// Agents on different nodes, where the scheduler can:
					// the point is load from several hosts. A soft
					// constraint (one node takes them all), and a spread
					// rather than a pod anti-affinity, whose cost grows
					// with the pods already placed: hundreds of agents
					// schedule in seconds.
					TopologySpreadConstraints: []topologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
						WhenUnsatisfiable: "ScheduleAnyway", LabelSelector: labelSelector{MatchLabels: o.labels("agent")}}}}}}}
}

// setFlags are the coordinator's --set overrides among RunFlags, in
// order: agents must build the same plan, and the coordinator refuses
// those whose overrides differ.
func (o *Options) setFlags() []string {
	var out []string
	for i := 0; i < len(o.RunFlags); i++ {
		f := o.RunFlags[i]
		switch {
		case strings.HasPrefix(f, "--set="):
			out = append(out, f)
		case f == "--set" && i+1 < len(o.RunFlags):
			out = append(out, f, o.RunFlags[i+1])
			i++
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// dnsLabel is RFC 1123's label: what Kubernetes names objects with.
func dnsLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// configKey is a valid ConfigMap key.
func configKey(s string) bool {
	if s == "" || len(s) > 253 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
			return false
		}
	}
	return true
}

// quantity is the grammar of a Kubernetes resource quantity
// (k8s.io/apimachinery/pkg/api/resource): a signed decimal number, then a
// binary-SI suffix (Ki … Ei), a decimal-SI one (m, k, M … E) or a decimal
// exponent (e3, E-2). The manifests are written without k8s.io's packages
// (above), so the tests hold this to resource.ParseQuantity, which
// Kubernetes applies to what it is given.
var quantity = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]{1,9})?$`)

// positive says whether a quantity that matched the grammar is above zero.
func positive(q string) bool {
	if strings.HasPrefix(q, "-") {
		return false
	}
	for _, r := range q {
		switch {
		case r >= '1' && r <= '9':
			return true
		case r == '0' || r == '.' || r == '+':
		default:
			return false // the suffix: the number was all zeros
		}
	}
	return false
}
