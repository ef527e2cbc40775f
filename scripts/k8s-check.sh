#!/usr/bin/env bash
# make k8s-check: perfscen's distributed run on a real one-node Kubernetes
# (../shared/k8s: kube-apiserver, scheduler, controller-manager, kubelet,
# kube-proxy, containerd, CoreDNS as host processes), as a user runs it,
# then the faults a cluster brings, each with its documented outcome:
#
#   1. the documented run of docs/distributed.md, its blocks run as they
#      are written there (the server Deployment, the namespace, token and
#      claim, perfscen k8s … | kubectl apply -f -, kubectl logs -f
#      job/perfscen-coordinator, kubectl cp of the results, the clean-up):
#      one report, one verdict, the coordinator Job's status matching the
#      run's exit code and the result JSON copied off the results claim;
#   2. the same against the real Triton of ../shared/triton (when there)
#      in a pod behind a Service;
#   3. faults: an agent pod deleted mid-run (exit 3, naming the agent); an
#      agent with the wrong token (refused and named by its pod's
#      address); agents that cannot be scheduled (an early warning, then
#      exit 3 after --agent-wait saying they were never scheduled); the
#      coordinator pod deleted (agents exit nonzero, no Job Complete); the
#      ConfigMap edited between coordinator and agents (exit 2);
#   4. with K8S_CHECK_AGENTS=N, a run of N agents (as many as the node
#      holds: its pod limit is 50).
#
# It always tears the cluster down and checks that no process, mount,
# interface or iptables rule of it is left. Exit 0 when every check held.
#
# Settings: PERFSCEN_K8S_DIR (the cluster scripts, default ../shared/k8s
# beside this checkout or its main checkout), K8S_CACHE (their binaries,
# images and logs: /var/cache/perfscen-k8s; the first build takes about
# 8 minutes on 2 cores), K8S_CHECK_AGENTS, K8S_CHECK_FAULTS=0 (the
# documented runs only). Needs root, podman and debootstrap (make image),
# and Debian's containerd, runc, CNI plugins, iptables, conntrack,
# busybox-static and etcd (installed with apt when missing).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
T0=$(date +%s)
log() { printf 'k8s-check [%4ds] %s\n' $(($(date +%s) - T0)) "$*"; }
FAILED=()
check() { # DESCRIPTION CONDITION... : one line per check, kept for the summary
	local what=$1
	shift
	if "$@"; then log "ok   $what"; else log "FAIL $what"; FAILED+=("$what"); fi
}
die() { log "FAIL $*"; FAILED+=("$*"); exit 1; }

[ "$(id -u)" = 0 ] || { echo "k8s-check: needs root (the cluster runs as host processes)"; exit 1; }
K8S_HOME=${PERFSCEN_K8S_DIR:-}
if [ -z "$K8S_HOME" ]; then
	for d in ../shared/k8s "$(dirname "$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || echo .)")/../shared/k8s"; do
		[ -x "$d/cluster.sh" ] && { K8S_HOME=$(cd "$d" && pwd); break; }
	done
fi
[ -n "$K8S_HOME" ] || { echo "SKIP: no ../shared/k8s (set PERFSCEN_K8S_DIR): make k8s-check needs the cluster scripts"; exit 1; }
export K8S_HOME K8S_CACHE=${K8S_CACHE:-/var/cache/perfscen-k8s}
TRITON_HOME=${PERFSCEN_TRITON_DIR:-$(cd "$K8S_HOME/../triton" 2>/dev/null && pwd)}
NS=perf
WORK=$(mktemp -d /tmp/perfscen-k8s-check.XXXXXX)
export KUBECONFIG=/var/lib/peer-k8s/pki/admin.kubeconfig PATH=$REPO/bin:$K8S_CACHE/bin:$PATH

component() { # PIDFILE: true while the process it names runs and is that component
	# (not a zombie: PID 1 here reaps only every 2 s; not a process that
	# has since been given the same PID: this machine starts many)
	local p n
	p=$(cat "$1" 2>/dev/null) n=$(basename "$1" .pid)
	[ -n "$p" ] && [ -r /proc/$p/stat ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] &&
		[ "$(basename "$(tr '\0' '\n' 2>/dev/null <"/proc/$p/cmdline" | head -1)")" = "$n" ]
}
forget_stale() { # pid files of components no longer running: cluster.sh would signal their PID
	local f
	for f in "$K8S_CACHE"/logs/*.pid; do
		[ -f "$f" ] && ! component "$f" && rm -f "$f"
	done
}
leftovers() { # what the cluster could leave behind: none of it may remain
	local left=()
	for f in "$K8S_CACHE"/logs/*.pid; do
		[ -f "$f" ] && component "$f" && left+=("process $(basename "$f" .pid) ($(cat "$f"))")
	done
	for p in /proc/[0-9]*; do
		grep -qa -e /run/peer-k8s -e /var/lib/peer-k8s "$p/cmdline" 2>/dev/null &&
			[ "$(awk '{print $3}' "$p/stat" 2>/dev/null)" != Z ] && left+=("process ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" | cut -c1-80)")
	done
	while read -r m; do left+=("mount $m"); done < <(awk '$2 ~ "^(/var/lib/peer-k8s|/run/peer-k8s)/" {print $2}' /proc/self/mounts)
	ip link show peerk8s0 >/dev/null 2>&1 && left+=("interface peerk8s0")
	for n in $(ip netns list 2>/dev/null | awk '$1 ~ /^cni-/ {print $1}'); do left+=("netns $n"); done
	for ipt in iptables ip6tables; do
		n=$($ipt-save 2>/dev/null | grep -c 'KUBE-')
		[ "$n" = 0 ] || left+=("$n $ipt lines naming KUBE-")
	done
	printf '%s\n' "${left[@]}"
}

stray_shims() { # end the container shims of this cluster's containerd that outlived it
	# Under load a shim whose task containerd already deleted can stay,
	# holding its bundle: containerd is gone, so nothing else will end it.
	local p c pids=()
	for p in /proc/[0-9]*; do
		c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")
		[[ $c == *containerd-shim*" -address /run/peer-k8s/containerd.sock"* ]] && pids+=("${p#/proc/}")
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	echo "stray shims: ${pids[*]}" >>"$WORK/down.log"
	kill "${pids[@]}" 2>/dev/null
	for _ in $(seq 50); do
		local alive=0
		for p in "${pids[@]}"; do [ -r /proc/$p/stat ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] && alive=1; done
		[ $alive = 0 ] && return 0
		sleep 0.1
	done
	kill -9 "${pids[@]}" 2>/dev/null
}

teardown() {
	local rc=$?
	trap - EXIT
	log "tearing down"
	local left try
	for try in 1 2 3; do
		forget_stale
		"$K8S_HOME/cluster.sh" down >>"$WORK/down.log" 2>&1
		stray_shims
		"$K8S_HOME/cluster.sh" clean >>"$WORK/down.log" 2>&1
		left=$(leftovers)
		[ -z "$left" ] && break
		# A process the cluster started may still be on its way out
		# (PID 1 here reaps only every 2 s): down and clean again.
		sleep 3
	done
	if [ -n "$left" ]; then
		sed 's/^/    down: /' "$WORK/down.log"
		log "FAIL the cluster left behind:"
		echo "$left" | sed 's/^/    /'
		FAILED+=("teardown")
	else
		log "ok   teardown: no process, mount, interface or iptables rule left"
	fi
	rm -rf "$WORK"
	log "versions: $VERSIONS"
	if [ ${#FAILED[@]} -gt 0 ]; then
		log "k8s-check FAILED (${#FAILED[@]}): $(printf '%s; ' "${FAILED[@]}")"
		exit 1
	fi
	log "k8s-check passed"
	exit "$rc"
}
VERSIONS=
trap teardown EXIT
# A signal ends the check through its EXIT trap: the cluster goes down.
trap 'exit 130' INT TERM HUP

# --- packages, cluster binaries, cluster ----------------------------------
need=
for p in containerd runc containernetworking-plugins iptables conntrack busybox-static etcd-server etcd-client podman debootstrap; do
	dpkg -s $p >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
	log "installing$need"
	apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=900 $need >/dev/null || die "apt-get install$need"
fi
if ! [ -x "$K8S_CACHE/bin/crictl" ] || ! [ -f "$K8S_CACHE/images/pause.tar" ]; then
	log "building Kubernetes, CoreDNS and crictl into $K8S_CACHE (about 8 minutes on 2 cores the first time)"
	nice -n 10 "$K8S_HOME/build.sh" >"$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log"; die "build.sh"; }
	log "built"
fi
# A check killed outright (SIGKILL: no EXIT trap) leaves the cluster's
# mounts, network namespaces and iptables rules behind: clear them first.
forget_stale
if [ -n "$(leftovers)" ]; then
	log "clearing what an earlier, interrupted check left: $(leftovers | paste -sd ';' | cut -c1-200)"
	"$K8S_HOME/cluster.sh" down >"$WORK/down.log" 2>&1
	stray_shims
	"$K8S_HOME/cluster.sh" clean >>"$WORK/down.log" 2>&1
fi
"$K8S_HOME/cluster.sh" up >"$WORK/up.log" 2>&1 || { cat "$WORK/up.log"; tail -n 3 "$K8S_CACHE"/logs/*.log; die "cluster up"; }
log "cluster up"
# smoke.sh waits for its namespace's default ServiceAccount with kubectl
# wait, which fails at once while the controller-manager has yet to make
# it: make the namespace and wait for the account here first.
kubectl create namespace smoke --dry-run=client -o yaml | kubectl apply -f - >/dev/null
for _ in $(seq 120); do kubectl -n smoke get serviceaccount default >/dev/null 2>&1 && break; sleep 0.5; done
"$K8S_HOME/smoke.sh" >"$WORK/smoke.log" 2>&1 || { cat "$WORK/smoke.log"; die "smoke test"; }
log "smoke test passed"
make -s build >/dev/null || die "make build"
V=$(bin/perfscen version | awk '{print $2}')
# make image tags perfscen:V; podman keeps it as localhost/perfscen:V, the
# name perfscen k8s writes and the node gets with cluster.sh load.
make -s image >"$WORK/image.log" 2>&1 || { tail -20 "$WORK/image.log"; die "make image"; }
IMG=localhost/perfscen:$V
"$K8S_HOME/cluster.sh" load "$IMG" >/dev/null || die "cluster.sh load $IMG"
log "image $IMG loaded"
NODE=$(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')
VERSIONS="perfscen $V; Kubernetes $(kubectl version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1); containerd $(containerd --version | awk '{print $3}'); runc $(runc --version | awk 'NR==1 {print $3}'); kernel $(uname -r); $(nproc) CPUs"
log "versions: $VERSIONS"

# --- the documentation's blocks ----------------------------------------------
DOC=docs/distributed.md
block() { # NAME: the fenced block after <!-- k8s-check: NAME --> in the docs
	awk -v name="$1" '
		$0 == "<!-- k8s-check: " name " -->" {armed = 1; next}
		armed && /^```/ && !inside {inside = 1; next}
		inside && /^```/ {exit}
		inside {print}' "$DOC"
}
for b in server load.yaml run verdict collect clean-up; do
	[ -n "$(block $b)" ] || die "$DOC has no block marked <!-- k8s-check: $b -->"
done

kc() { kubectl -n $NS "$@"; }
# The summary line of a report (internal/report): one per report.
VERDICT='^(PASS|FAIL|COULD NOT MEASURE|INTERRUPTED|INCONCLUSIVE)[: ]'
coordinator_code() {
	kc get pods -l job-name=perfscen-coordinator -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}' 2>/dev/null
}
job_state() { # JOB: Complete, Failed or nothing yet
	kc get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' 2>/dev/null |
		grep -E '^(Complete|Failed)$' | head -1
}
wait_job() { # JOB SECONDS: until it is Complete or Failed
	local end=$(($(date +%s) + $2))
	while [ -z "$(job_state "$1")" ]; do
		[ "$(date +%s)" -lt $end ] || return 1
		sleep 1
	done
}
wait_log() { # POD-OR-JOB TEXT SECONDS: until its log says TEXT
	local end=$(($(date +%s) + $3))
	until kc logs "$1" 2>/dev/null | grep -qF -- "$2"; do
		[ "$(date +%s)" -lt $end ] || return 1
		sleep 0.5
	done
}
clean_run() { # delete a run's objects (the docs' clean-up) and wait for its pods to go
	(cd "$WORK/doc" && bash "$WORK/clean-up.sh") >/dev/null 2>&1
	kc delete pod -l app.kubernetes.io/name=perfscen --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1
}
follow() { # OUT: wait for the coordinator to be Ready, then follow its log into OUT (as the docs do)
	kc wait --for=jsonpath='{.status.ready}'=1 job/perfscen-coordinator --timeout=3m >/dev/null 2>&1
	kc logs -f job/perfscen-coordinator >"$1" 2>&1
	wait_job perfscen-coordinator 60
}
measured() { # CODE OUT WHAT: exit 0, or exit 3 only because a busy node let no point stabilize
	# The server was measured and the run ended as it should; on a node
	# shared with other work the windows may move past any band (make
	# image-check accepts exit 4 for the same reason). Any other failed
	# check, or any other exit, is a failure.
	[ "$1" = 0 ] && return 0
	if [ "$1" = 3 ] && grep -qE '^COULD NOT MEASURE: 1 of [0-9]+ checks failed: measurement stable @ [^;(]* \(did not stabilize' "$2"; then
		log "note $3: exit 3 is 'did not stabilize': the node was too busy for a stable measurement ($(grep -m1 -o 'load average ≤[0-9.]*' "$2")); the run measured the server and failed nothing else"
		return 0
	fi
	return 1
}
job_matches_code() { # the coordinator Job's condition says the run's exit code
	local code=$1 state msg
	state=$(job_state perfscen-coordinator)
	msg=$(kc get job perfscen-coordinator -o jsonpath='{.status.conditions[?(@.type=="Failed")].message}')
	case $code in
	0) [ "$state" = Complete ] ;;
	'') return 1 ;;
	*) [ "$state" = Failed ] && [[ $msg == *"exit code $code "* ]] ;;
	esac
}

# A clean namespace and volume: the cluster's state (etcd) outlives a check.
kubectl delete namespace $NS --ignore-not-found --wait=true --timeout=120s >/dev/null || die "deleting the namespace $NS of an earlier run"
kubectl delete pv perfscen-k8s-check-results --ignore-not-found --wait=true >/dev/null

# The cluster's storage for the claim the docs create: a local volume (no
# provisioner on this node), its directory owned by root as a volume
# plugin would make it; the coordinator's fsGroup must make it writable.
mkdir -p /var/lib/peer-k8s/results-pv
rm -rf /var/lib/peer-k8s/results-pv/* && chown 0:0 /var/lib/peer-k8s/results-pv && chmod 0755 /var/lib/peer-k8s/results-pv
cat <<EOF | kubectl apply -f - >/dev/null || die "results volume"
apiVersion: v1
kind: PersistentVolume
metadata: {name: perfscen-k8s-check-results}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  local: {path: /var/lib/peer-k8s/results-pv}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$NODE]}]}]
EOF

mkdir -p "$WORK/doc"
for b in server load.yaml run verdict collect clean-up; do block $b >"$WORK/$b.sh"; done
cp "$WORK/load.yaml.sh" "$WORK/doc/load.yaml"
docblock() { # NAME: run the docs' block NAME in the docs' directory, as a user's shell would (on past a failing line: each outcome is checked below)
	(cd "$WORK/doc" && bash "$WORK/$1.sh")
}

log "1. the documented run ($DOC), as written there"
docblock server >"$WORK/server.out" 2>&1 || { cat "$WORK/server.out"; die "the docs' server block"; }
t=$(date +%s)
docblock run >"$WORK/run.out" 2>&1
rc=$?
run_s=$(($(date +%s) - t))
sed 's/^/    | /' "$WORK/run.out"
check "the documented run's commands exit 0 (kubectl logs -f ended with the coordinator)" [ $rc = 0 ]
check "one report in the coordinator's log" [ "$(grep -c '^\*\*\* Scenario:' "$WORK/run.out")" = 1 ]
wait_job perfscen-coordinator 60
code=$(coordinator_code)
log "coordinator exit code $code, Job $(job_state perfscen-coordinator), $run_s s from apply to the end of the log"
check "one verdict line in the coordinator's log" [ "$(grep -cE "$VERDICT" "$WORK/run.out")" = 1 ]
check "the run passed (exit 0, or 3 for a busy node alone)" measured "$code" "$WORK/run.out" "the documented run"
check "the coordinator Job's status matches exit $code" job_matches_code "$code"
docblock verdict >"$WORK/verdict.out" 2>&1
check "the docs' verdict block prints the exit code ($code)" [ "$(tail -1 "$WORK/verdict.out")" = "$code" ]
wait_job perfscen-agents 60
check "the agents' Job is Complete" [ "$(job_state perfscen-agents)" = Complete ]
docblock collect >"$WORK/collect.out" 2>&1 || cat "$WORK/collect.out"
res=$(ls "$WORK"/doc/results/*.json 2>/dev/null | head -1)
check "the result JSON copied off the claim ($(basename "${res:-none}"))" [ -s "${res:-/nonexistent}" ]
check "the result's exit code is the coordinator's" grep -q "\"exit_code\": $code" "${res:-/nonexistent}"
check "the HTML report copied off the claim" [ -s "${res%.json}.html" ]
docblock clean-up >"$WORK/clean.out" 2>&1
check "the docs' clean-up deletes every object of the run" [ -z "$(kc get job,service,configmap,serviceaccount,role,rolebinding,pod -l app.kubernetes.io/name=perfscen -o name 2>/dev/null)" ]
kc delete pod -l app.kubernetes.io/name=perfscen --wait=true --timeout=60s >/dev/null 2>&1

# --- the real Triton -------------------------------------------------------
if [ -x "$TRITON_HOME/run-triton" ]; then
	log "2. against the real Triton ($TRITON_HOME), in a pod behind the Service triton"
	# ../shared/triton is a build for Debian 12 that links Debian's
	# libraries: its pod runs it from a read-only hostPath on the image's
	# Debian 12 root, with the node's /usr (those libraries, bash, Python
	# and numpy for the Python backend) and /etc/alternatives (numpy's
	# BLAS) mounted read-only over it.
	cat <<EOF | kc apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: triton, labels: {app: triton}}
spec:
  containers:
  - name: triton
    image: $IMG
    command: [$TRITON_HOME/run-triton]
    args: [--http-port, "8000", --grpc-port, "8001", --metrics-port, "8002", --http-address=0.0.0.0, --grpc-address=0.0.0.0]
    ports: [{containerPort: 8000}]
    readinessProbe: {httpGet: {path: /v2/health/ready, port: 8000}, periodSeconds: 1}
    volumeMounts:
    - {name: triton, mountPath: $TRITON_HOME, readOnly: true}
    - {name: usr, mountPath: /usr, readOnly: true}
    - {name: alternatives, mountPath: /etc/alternatives, readOnly: true}
  volumes:
  - {name: triton, hostPath: {path: $TRITON_HOME, type: Directory}}
  - {name: usr, hostPath: {path: /usr, type: Directory}}
  - {name: alternatives, hostPath: {path: /etc/alternatives, type: Directory}}
---
apiVersion: v1
kind: Service
metadata: {name: triton}
spec: {selector: {app: triton}, ports: [{name: http, port: 8000}]}
EOF
	t=$(date +%s)
	kc wait --for=condition=Ready pod/triton --timeout=3m >/dev/null || { kc logs triton | tail -5; FAILED+=("Triton: its pod never became Ready"); }
	log "Triton's pod Ready in $(($(date +%s) - t)) s: $(kc logs triton 2>/dev/null | grep -c '| READY') models READY"
	mkdir -p "$WORK/triton"
	printf '%s\n' 'version: 1' 'name: k8s-triton' 'server: {url: "triton:8000", protocol: http}' \
		'models: [{name: identity_fp32}]' 'load: {concurrency: 4}' "$(grep '^measurement:' "$WORK/doc/load.yaml")" \
		'thresholds: [errors == 0]' >"$WORK/triton/triton.yaml"
	t=$(date +%s)
	(cd "$WORK/triton" && perfscen k8s --agents 2 --namespace $NS triton.yaml 2>/dev/null) | kubectl apply -f - >/dev/null
	follow "$WORK/triton.out"
	code=$(coordinator_code)
	grep -E "$VERDICT|^perfscen: (all|session)|status (stable|unstable)|Note:" "$WORK/triton.out" | cut -c1-200 | sed 's/^/    | /'
	log "coordinator exit code $code, $(($(date +%s) - t)) s"
	check "Triton: one verdict line" [ "$(grep -cE "$VERDICT" "$WORK/triton.out")" = 1 ]
	check "Triton: the run passed (exit 0, or 3 for a busy node alone)" measured "$code" "$WORK/triton.out" Triton
	check "Triton: the coordinator Job's status matches exit $code" job_matches_code "$code"
	clean_run
	kc delete service triton >/dev/null
	kc delete pod triton --wait=true --timeout=60s >/dev/null
else
	log "SKIP: no ../shared/triton: the run against the real Triton"
fi

[ "${K8S_CHECK_FAULTS:-1}" = 0 ] && exit 0

# --- faults ----------------------------------------------------------------
# The faults' scenarios: the docs' server and load, a wide stability band
# (what is checked is each fault's outcome, not the machine's calm), and
# for the faults that strike mid-run, ten kept windows.
mkdir -p "$WORK/f"
grep -v '^measurement:' "$WORK/doc/load.yaml" >"$WORK/f/load.yaml"
cp "$WORK/f/load.yaml" "$WORK/f/long.yaml"
echo 'measurement: {window: 1s, trials: 3, max_trials: 30, stability: 50%}' >>"$WORK/f/load.yaml"
echo 'measurement: {window: 1s, trials: 10, max_trials: 30, stability: 50%}' >>"$WORK/f/long.yaml"
fk8s() { (cd "$WORK/f" && perfscen k8s --namespace $NS "$@" 2>/dev/null); }

log "3a. an agent pod deleted mid-run"
fk8s --agents 2 long.yaml | kubectl apply -f - >/dev/null
if wait_log job/perfscen-coordinator "session 1:" 120; then
	sleep 3 # into the load
	victim=$(kc get pods -l job-name=perfscen-agents,batch.kubernetes.io/job-completion-index=1 -o jsonpath='{.items[0].metadata.name}')
	kc delete pod "$victim" --wait=false >/dev/null
	wait_job perfscen-coordinator 120
	kc logs job/perfscen-coordinator >"$WORK/f/a.out" 2>&1
	code=$(coordinator_code)
	grep -E "agent 1 .* lost|lost agent|could not measure" "$WORK/f/a.out" | head -3 | sed 's/^/    | /'
	check "agent pod deleted: the run exits 3 (got ${code:-none})" [ "$code" = 3 ]
	# An Indexed Job's pod has the host name JOB-INDEX: the agent's name.
	check "agent pod deleted: the log names agent 1 (perfscen-agents-1, pod $victim)" grep -q "agent 1 (perfscen-agents-1) lost" "$WORK/f/a.out"
	check "agent pod deleted: the coordinator Job reads Failed, exit 3" job_matches_code 3
else
	FAILED+=("agent pod deleted: the run never started")
	kc logs job/perfscen-coordinator | tail -20
fi
clean_run

log "3b. an agent with the wrong token"
fk8s --agents 2 load.yaml >"$WORK/f/m.yaml"
# The intruder knocks first, and its refusal is awaited before the agents'
# Job exists: a short run could otherwise end before the intruder's pod
# starts, with no refusal to check.
kubectl apply -f "$WORK/f/m.yaml" --dry-run=client -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)
items = items.get("items", [items])
agents = [i for i in items if i["kind"] == "Job" and i["metadata"]["name"] == "perfscen-agents"]
rest = [i for i in items if i not in agents]
json.dump({"apiVersion": "v1", "kind": "List", "items": agents}, open(sys.argv[1], "w"))
json.dump({"apiVersion": "v1", "kind": "List", "items": rest}, open(sys.argv[2], "w"))' "$WORK/f/agents.json" "$WORK/f/rest.json"
kubectl apply -f "$WORK/f/rest.json" >/dev/null
kc create secret generic perfscen-wrong-token --from-literal=token=not-the-token --dry-run=client -o yaml | kubectl apply -f - >/dev/null
# The agents' pod, once more, as a plain pod holding another token.
python3 -c '
import json, sys
job = json.load(open(sys.argv[1]))["items"][0]
t = job["spec"]["template"]
for v in t["spec"]["volumes"]:
    if "secret" in v:
        v["secret"]["secretName"] = "perfscen-wrong-token"
c = t["spec"]["containers"][0]
c["args"] = [a for a in c["args"]]
c["args"][-1:-1] = ["--index", "1"]
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "perfscen-intruder", "labels": {"app.kubernetes.io/name": "perfscen", "app.kubernetes.io/instance": "intruder"}},
       "spec": dict(t["spec"], restartPolicy="Never")}
json.dump(pod, sys.stdout)' "$WORK/f/agents.json" | kc apply -f - >/dev/null
wait_log job/perfscen-coordinator "wrong token" 180 || log "note wrong token: no refusal logged within 180s; the agents start anyway"
kubectl apply -f "$WORK/f/agents.json" >/dev/null
wait_job perfscen-coordinator 180
for _ in $(seq 60); do [ -n "$(kc get pod perfscen-intruder -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" ] && break; sleep 1; done
ip=$(kc get pod perfscen-intruder -o jsonpath='{.status.podIP}')
icode=$(kc get pod perfscen-intruder -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')
kc logs job/perfscen-coordinator >"$WORK/f/b.out" 2>&1
code=$(coordinator_code)
grep -F "wrong token" "$WORK/f/b.out" | head -2 | sed 's/^/    | /'
kc logs perfscen-intruder 2>&1 | tail -1 | sed 's/^/    | intruder: /'
check "wrong token: refused and named by its pod's address ($ip)" grep -q "refused an agent from $ip: wrong token" "$WORK/f/b.out"
check "wrong token: the agent exits 2 (got ${icode:-none})" [ "$icode" = 2 ]
check "wrong token: the run goes on with its agents and passes (exit ${code:-none})" measured "$code" "$WORK/f/b.out" "wrong token"
check "wrong token: the coordinator Job matches exit ${code:-none}" job_matches_code "$code"
kc delete pod perfscen-intruder --wait=false >/dev/null
kc delete secret perfscen-wrong-token >/dev/null
clean_run

log "3c. agents that cannot be scheduled"
t=$(date +%s)
fk8s --agents 2 --agent-cpu 64 --agent-wait 45s load.yaml | kubectl apply -f - >/dev/null
wait_job perfscen-coordinator 120
kc logs --timestamps job/perfscen-coordinator >"$WORK/f/c.out" 2>&1
code=$(coordinator_code)
grep -E "not scheduled yet|never scheduled" "$WORK/f/c.out" | sed 's/^/    | /' | cut -c1-220
warn_at=$(grep -m1 "not scheduled yet" "$WORK/f/c.out" | awk '{print $1}')
gone_at=$(grep -m1 "never scheduled" "$WORK/f/c.out" | awk '{print $1}')
lead=$(($(date -d "$gone_at" +%s 2>/dev/null || echo 0) - $(date -d "$warn_at" +%s 2>/dev/null || echo 0)))
check "unschedulable: exit 3 after --agent-wait 45s (got ${code:-none}, $(($(date +%s) - t)) s)" [ "$code" = 3 ]
check "unschedulable: the give-up says they were never scheduled, and why" grep -q "never scheduled (pods .*): 0/1 nodes are available: 1 Insufficient cpu" "$WORK/f/c.out"
check "unschedulable: warned ${lead} s before giving up" [ "$lead" -ge 30 ]
check "unschedulable: the coordinator Job reads Failed, exit 3" job_matches_code 3
clean_run

log "3d. the coordinator pod deleted mid-run"
fk8s --agents 2 long.yaml | kubectl apply -f - >/dev/null
if wait_log job/perfscen-coordinator "session 1:" 120; then
	sleep 3 # into the load
	kc delete pod -l job-name=perfscen-coordinator --wait=false >/dev/null
	wait_job perfscen-agents 120
	codes=$(kc get pods -l job-name=perfscen-agents -o jsonpath='{range .items[*]}{.status.containerStatuses[0].state.terminated.exitCode}{" "}{end}')
	kc logs -l job-name=perfscen-agents --tail=1 2>&1 | sed 's/^/    | agent: /'
	wait_job perfscen-coordinator 60
	check "coordinator deleted: the agents exit nonzero (got $codes)" bash -c "[ -n '$codes' ] && ! echo ' $codes' | grep -q ' 0 '"
	check "coordinator deleted: the agents' Job reads Failed" [ "$(job_state perfscen-agents)" = Failed ]
	check "coordinator deleted: the coordinator's Job does not read Complete ($(job_state perfscen-coordinator))" [ "$(job_state perfscen-coordinator)" != Complete ]
else
	FAILED+=("coordinator deleted: the run never started")
fi
clean_run

log "3e. the ConfigMap edited between the coordinator's start and the agents'"
fk8s --agents 2 --agent-wait 60s load.yaml >"$WORK/f/e.yaml"
kubectl apply -f "$WORK/f/e.yaml" -l 'app.kubernetes.io/component!=agent' >/dev/null
if wait_log job/perfscen-coordinator "waiting for 2 agent(s)" 120; then
	kc get configmap perfscen-scenario -o json | python3 -c '
import json, sys
cm = json.load(sys.stdin)
cm["data"]["load.yaml"] = cm["data"]["load.yaml"].replace("concurrency: 4", "concurrency: 6")
json.dump(cm, sys.stdout)' | kc replace -f - >/dev/null
	kubectl apply -f "$WORK/f/e.yaml" -l 'app.kubernetes.io/component=agent' >/dev/null
	wait_job perfscen-coordinator 150
	kc logs job/perfscen-coordinator >"$WORK/f/e.out" 2>&1
	code=$(coordinator_code)
	grep -E "refused agent" "$WORK/f/e.out" | head -2 | cut -c1-220 | sed 's/^/    | /'
	check "ConfigMap edited: the coordinator refuses the agents by name, for their scenario" grep -q 'refused agent ".*" (index [01]) .*scenario' "$WORK/f/e.out"
	check "ConfigMap edited: exit 2 (got ${code:-none})" [ "$code" = 2 ]
	check "ConfigMap edited: the coordinator Job reads Failed, exit 2" job_matches_code 2
else
	FAILED+=("ConfigMap edited: the coordinator never waited for agents")
fi
clean_run

# --- as many agents as the node holds ---------------------------------------
if [ -n "${K8S_CHECK_AGENTS:-}" ]; then
	n=$K8S_CHECK_AGENTS
	log "4. $n agents"
	sed "s/concurrency: [0-9]*/concurrency: $n/" "$WORK/f/load.yaml" >"$WORK/f/many.yaml"
	t=$(date +%s)
	fk8s --agents $n --agent-cpu 10m --agent-memory 64Mi many.yaml | kubectl apply -f - >/dev/null
	# The coordinator's memory (working set, largest seen) and CPU time
	# (its last reading), from the container runtime, every 2 s.
	(
		sock=unix:///run/peer-k8s/containerd.sock
		while [ -z "$(job_state perfscen-coordinator)" ]; do
			id=$(crictl -r $sock ps -q --name '^coordinator$' 2>/dev/null | head -1)
			[ -n "$id" ] && crictl -r $sock stats -o json "$id" 2>/dev/null |
				python3 -c 'import json,sys; s=json.load(sys.stdin)["stats"][0]; print(s["memory"]["workingSetBytes"]["value"], s["cpu"]["usageCoreNanoSeconds"]["value"])' 2>/dev/null
			sleep 2
		done
	) >"$WORK/f/coord-stats" &
	sampler=$!
	wait_log job/perfscen-coordinator "all $n agent(s) ready" 300 && ready=$(($(date +%s) - t))
	wait_job perfscen-coordinator 600
	wait $sampler
	mem=$(awk '$1 > m {m = $1} END {printf "%.0f", m / 1048576}' "$WORK/f/coord-stats")
	cpu=$(awk 'END {printf "%.1f", $2 / 1e9}' "$WORK/f/coord-stats")
	log "$n agents: the coordinator's working set at most ${mem} MiB, ${cpu} s of CPU (sampled every 2 s)"
	kc logs job/perfscen-coordinator >"$WORK/f/many.out" 2>&1
	code=$(coordinator_code)
	grep -E "$VERDICT|agent\(s\) sent|connections carried" "$WORK/f/many.out" | sed 's/^/    | /'
	log "$n agents: all ready ${ready:-never} s after apply, exit $code after $(($(date +%s) - t)) s"
	check "$n agents: one verdict, the Job matches exit ${code:-none}" job_matches_code "$code"
	clean_run
fi
