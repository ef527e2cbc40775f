package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/atomicfile"
	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/k8s"
	"github.com/perfscen/perfscen/scenario"
)

func init() { register(newK8sCmd) }

func newK8sCmd(e *env) *cobra.Command {
	var (
		o        k8s.Options
		includes []string
		out      string
	)
	cmd := &cobra.Command{
		Use:   "k8s --agents N [--image IMAGE] FILE",
		Short: "Write the Kubernetes manifests of a distributed run: coordinator Job, agents' Indexed Job, Service, ConfigMap",
		Long: `k8s writes, as one YAML stream, what a distributed run of the scenario needs
on Kubernetes: the scenario (and --include files) as a ConfigMap, a headless
Service in front of the coordinator, the coordinator's Job (perfscen run
--agents N, its result in /results: an emptyDir, or --results-claim, which
also keeps the HTML report) and the agents' Indexed Job, whose completion
index is each agent's index. Agents dial the Service; they need no inbound
port. A ServiceAccount with a Role to read pods lets the coordinator say
why an agent is missing (never scheduled, its image not pulled) while it
waits, and when it gives up (--pod-reader=false leaves them out).

Pods request the CPU and memory given and are limited to that memory; CPU
is limited only by --agent-cpu-limit/--coordinator-cpu-limit (a CPU quota
stalls a load generator mid-request). The defaults fit a run of a few
agents on one 2-CPU node; give more for more load. The coordinator is
Ready once it listens for agents (a TCP probe): wait for it before
kubectl logs -f. Agents are spread over the nodes (a topology spread
constraint on kubernetes.io/hostname, ScheduleAnyway: one node takes them
all, several share them evenly).

With --results-claim the coordinator also writes the HTML report, and a
pod, NAME-results, holds the claim read-only for kubectl cp:
  kubectl cp NAME-results:/results ./results

The image defaults to localhost/perfscen:VERSION, the name podman gives what
make image builds from the tree this binary was built from (Containerfile;
docs/distributed.md): load it into the cluster's nodes, or push it and name
it with --image. A name without a registry, such as perfscen:v1, is
docker.io/library/perfscen:v1 to the nodes.

The shared token is a Secret (key: token) the manifests name but do not
create:
  kubectl create secret generic NAME-agent-token --from-literal=token=$(openssl rand -hex 32)
A Job cannot be applied twice: delete a run before the next one (the
command is at the top of the stream).

The scenario is checked as the coordinator would check it (exit 2): a
server the pods can reach (not embedded), time windows, and a concurrency
of at least N at every point. Files the scenario reads sit beside it in
the pods; a scenario must name them by base name.`,
		Example: `  perfscen k8s --agents 2 --namespace perf load.yaml | kubectl apply -f -
  kubectl -n perf logs -f job/perfscen-coordinator
  perfscen k8s --agents 8 --image registry.example.com/perfscen:v1 --agent-cpu 2 --namespace perf load.yaml | kubectl apply -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			pl, err := scenario.LoadPlan(file, e.getenv)
			if err != nil {
				printScenarioError(e, file, err)
				return exitSilently(exitcode.Invalid)
			}
			if err := engine.CheckDistributed(pl, o.Agents); err != nil {
				return exitcode.AsInvalid(fmt.Errorf("%s: %w", file, err))
			}
			o.Files = map[string]string{}
			for _, f := range append([]string{file}, includes...) {
				b, err := os.ReadFile(f)
				if err != nil {
					return exitcode.AsInvalid(fmt.Errorf("--include: %w", err))
				}
				name := filepath.Base(f)
				if _, dup := o.Files[name]; dup {
					return exitcode.AsInvalid(fmt.Errorf("two files named %s: the pods see one directory", name))
				}
				o.Files[name] = string(b)
			}
			o.ScenarioFile = filepath.Base(file)
			o.RunName = pl.Scenario
			if o.Image == "" {
				o.Image = defaultImage(e.versionString())
				fmt.Fprintf(e.stderr, "perfscen: image %s: what make image builds from this binary's tree; load it into the nodes, or push it and name it with --image\n", o.Image)
			} else if full, bare := k8s.NormalizeImage(o.Image); bare {
				fmt.Fprintf(e.stderr, "perfscen: note: image %s names no registry: the nodes look for %s (podman's local images are localhost/…)\n", o.Image, full)
			}
			for _, srv := range pl.Servers {
				if u, err := url.Parse("//" + strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://")); err == nil && isLoopback(u.Hostname()) {
					fmt.Fprintf(e.stderr, "perfscen: warning: %s's server %s is this host's loopback; the pods reach a server by a name or address of the cluster\n", file, srv.URL)
				}
			}
			for _, m := range pl.Models {
				for _, p := range m.Input.Paths {
					if _, ok := o.Files[filepath.Base(p)]; !ok {
						fmt.Fprintf(e.stderr, "perfscen: warning: %s reads %s; give --include %s and name it %s in the scenario\n", file, p, p, filepath.Base(p))
					}
				}
			}
			b, err := k8s.Write(o)
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			if out == "" || out == "-" {
				_, err := e.stdout.Write(b)
				return err
			}
			return exitcode.AsEnvironment(atomicfile.Write(out, b, 0o644))
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Agents, "agents", 0, "number of agents (required)")
	fl.StringVar(&o.Image, "image", "", "perfscen container image (default localhost/perfscen:VERSION, the image make image builds from the tree this binary was built from, as podman names it)")
	fl.StringVar(&o.Name, "name", "perfscen", "prefix of every object's name")
	fl.StringVar(&o.Namespace, "namespace", "", "namespace of every object (default: kubectl's)")
	fl.StringVar(&o.TokenSecret, "token-secret", "", "Secret holding the agents' token under key token (default NAME-agent-token)")
	fl.StringVar(&o.ResultsClaim, "results-claim", "", "PersistentVolumeClaim for the coordinator's result files (default: an emptyDir; the report is in its log)")
	fl.StringVar(&o.AgentCPU, "agent-cpu", DefaultAgentCPU, "CPU request of each agent")
	fl.StringVar(&o.AgentMemory, "agent-memory", DefaultAgentMemory, "memory request and limit of each agent")
	fl.StringVar(&o.AgentCPULimit, "agent-cpu-limit", "", "CPU limit of each agent (default none: a CPU quota stalls load mid-request; equal to a whole --agent-cpu it makes the pod Guaranteed)")
	fl.StringVar(&o.CoordinatorCPU, "coordinator-cpu", DefaultCoordinatorCPU, "CPU request of the coordinator")
	fl.StringVar(&o.CoordinatorMemory, "coordinator-memory", DefaultCoordinatorMemory, "memory request and limit of the coordinator")
	fl.StringVar(&o.CoordinatorCPULimit, "coordinator-cpu-limit", "", "CPU limit of the coordinator (default none)")
	fl.BoolVar(&o.PodReader, "pod-reader", true, "a ServiceAccount, Role and RoleBinding letting the coordinator read the run's pods, to say why an agent is missing (perfscen run --agent-pods)")
	fl.StringVar(&o.AgentWait, "agent-wait", "10m", "the coordinator's --agent-wait (pods may be scheduled slowly)")
	fl.StringVar(&o.JoinTimeout, "join-timeout", "10m", "the agents' --join-timeout")
	fl.StringArrayVar(&includes, "include", nil, "another file for the ConfigMap, beside the scenario (repeatable): input data, a baseline")
	fl.StringArrayVar(&o.RunFlags, "run-flag", nil, "an extra flag for the coordinator's perfscen run (repeatable), e.g. --run-flag=--junit=/results/junit.xml")
	fl.StringVarP(&out, "output", "o", "", "write the manifests here instead of stdout")
	return cmd
}

// The default resources fit a run of two agents on one node of 2 CPUs
// beside the server: 3 × 250m requested. A request is a share of a busy
// node, not a cap (see k8s.resources).
const (
	DefaultAgentCPU          = "250m"
	DefaultAgentMemory       = "256Mi"
	DefaultCoordinatorCPU    = "250m"
	DefaultCoordinatorMemory = "256Mi"
)

// defaultImage is the image make image builds for a build of this
// version, as podman names it: localhost/perfscen:VERSION (make image tags
// perfscen:VERSION, which podman keeps under localhost/), with any
// character a tag cannot hold replaced by '-'. Loaded into a node
// (podman save, then kind load image-archive or ctr import) it keeps that
// name, which a bare perfscen:VERSION (docker.io/library/…) would miss.
func defaultImage(version string) string {
	tag := []byte(version)
	for i, c := range tag {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			i > 0 && (c == '.' || c == '-')
		switch {
		case ok:
		case i == 0: // a tag starts with a word character
			tag[i] = '_'
		default:
			tag[i] = '-'
		}
	}
	if len(tag) > 128 {
		tag = tag[:128]
	}
	if len(tag) == 0 {
		tag = []byte("dev")
	}
	return "localhost/perfscen:" + string(tag)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
