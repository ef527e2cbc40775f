#!/usr/bin/env bash
# Same-job A/B: a pull request's tree (the candidate) against its base
# revision (the base), each served by its own server started here, side by
# side on this runner, measured in the same minutes with interleaved trials
# (base, candidate, base, …) and gated by the scenario's server-against-
# server comparisons. A busy shared runner slows both arms alike, and no
# baseline history is needed (ci/README.md, "Same-job A/B").
#
#   ci/perfscen-ab.sh perfscen/ab.yaml
#
# The scenario names its servers `base` and `candidate` and compares
# candidate/MODEL with base/MODEL; this script points the two at the
# servers it starts (--set servers.base.url=…, servers.candidate.url=…).
#
# Environment:
#   PERFSCEN_AB_BASE   the base revision (commit, branch or tag; GitHub: the
#                      pull request's base sha; GitLab:
#                      $CI_MERGE_REQUEST_DIFF_BASE_SHA), checked out with
#                      `git worktree add` (fetched first when a shallow
#                      clone lacks it)
#   PERFSCEN_AB_START  the command that starts one server in the foreground,
#                      run with bash once per revision with
#                        PERFSCEN_AB_ROLE       base or candidate
#                        PERFSCEN_AB_TREE       that revision's tree (the
#                                               base's worktree, or this one)
#                        PERFSCEN_AB_HTTP_PORT, PERFSCEN_AB_GRPC_PORT,
#                        PERFSCEN_AB_METRICS_PORT
#                      e.g. tritonserver --model-repository "$PERFSCEN_AB_TREE/models"
#                        --http-port "$PERFSCEN_AB_HTTP_PORT" --grpc-port "$PERFSCEN_AB_GRPC_PORT"
#                        --metrics-port "$PERFSCEN_AB_METRICS_PORT"
#   PERFSCEN_AB_PORTS  the base's and the candidate's first port (default
#                      "18000 19000"): HTTP, gRPC = +1, metrics = +2
#   PERFSCEN_AB_URL    which port the scenario's urls get: http (default)
#                      or grpc
#   PERFSCEN_AB_READY  the HTTP path that answers 200 once a server is
#                      ready (default /v2/health/ready)
#   PERFSCEN_AB_READY_TIMEOUT  seconds to wait for both (default 300)
#   PERFSCEN_AB_WORKDIR  where the base's worktree goes (default
#                      $RUNNER_TEMP, else $TMPDIR, else /tmp)
#   and ci/perfscen-gate.sh's (PERFSCEN, PERFSCEN_OUT, PERFSCEN_FLAGS, …).
#
# Exit codes: the gate's (perfscen's, see ci/perfscen-gate.sh); 3 when a
# server exits or is not ready in time (the tail of its log is printed,
# $PERFSCEN_OUT/server-<role>.log keeps all of it); 2 when a setting is
# missing or the base revision cannot be checked out. Both servers are
# stopped (SIGTERM to their process groups) and the worktree removed on
# every way out.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${PERFSCEN_OUT:-out/perfscen}
[ "$#" -gt 0 ] || { echo "perfscen-ab: name the A/B scenarios to run" >&2; exit 2; }
[ -n "${PERFSCEN_AB_BASE:-}" ] || { echo "perfscen-ab: PERFSCEN_AB_BASE is not set: the base revision to compare with" >&2; exit 2; }
[ -n "${PERFSCEN_AB_START:-}" ] || { echo "perfscen-ab: PERFSCEN_AB_START is not set: the command that starts one server" >&2; exit 2; }
read -r base_port cand_port <<<"${PERFSCEN_AB_PORTS:-18000 19000}"
case "${base_port:-}${cand_port:-}" in
*[!0-9]* | "") echo "perfscen-ab: PERFSCEN_AB_PORTS=\"${PERFSCEN_AB_PORTS:-}\": want two port numbers, the base's and the candidate's" >&2; exit 2 ;;
esac
case "${PERFSCEN_AB_URL:-http}" in
http) url_off=0 ;;
grpc) url_off=1 ;;
*) echo "perfscen-ab: PERFSCEN_AB_URL=${PERFSCEN_AB_URL}: want http or grpc" >&2; exit 2 ;;
esac
ready=${PERFSCEN_AB_READY:-/v2/health/ready}
timeout=${PERFSCEN_AB_READY_TIMEOUT:-300}
mkdir -p "$OUT" || exit 2

cand_tree=$(git rev-parse --show-toplevel 2>/dev/null) || { echo "perfscen-ab: $PWD is not a git checkout" >&2; exit 2; }
if ! git cat-file -e "${PERFSCEN_AB_BASE}^{commit}" 2>/dev/null; then
	echo "perfscen-ab: fetching the base revision $PERFSCEN_AB_BASE" >&2
	git fetch --quiet --depth 1 origin "$PERFSCEN_AB_BASE" 2>&1 | sed 's/^/perfscen-ab: /' >&2
fi
workdir=${PERFSCEN_AB_WORKDIR:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}}
base_tree=$(mktemp -d "$workdir/perfscen-ab-base.XXXXXX") || exit 2
rmdir "$base_tree"
if ! git worktree add --quiet --detach "$base_tree" "$PERFSCEN_AB_BASE" >&2; then
	echo "perfscen-ab: cannot check out the base revision $PERFSCEN_AB_BASE" >&2
	exit 2
fi
echo "perfscen-ab: base $(git -C "$base_tree" rev-parse --short HEAD) in $base_tree; candidate $(git rev-parse --short HEAD) in $cand_tree" >&2

pids=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local p i
	for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null; done
	# Triton stops in a few seconds; whatever is left after 30 is killed.
	for p in "${pids[@]}"; do
		for ((i = 0; i < 60; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
		kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	git worktree remove --force "$base_tree" 2>/dev/null || rm -rf "$base_tree"
	git worktree prune 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start ROLE TREE PORT: the server in its own process group (setsid), so
# that stopping it stops whatever it started.
start() {
	local role=$1 tree=$2 port=$3
	PERFSCEN_AB_ROLE=$role PERFSCEN_AB_TREE=$tree PERFSCEN_AB_HTTP_PORT=$port \
		PERFSCEN_AB_GRPC_PORT=$((port + 1)) PERFSCEN_AB_METRICS_PORT=$((port + 2)) \
		setsid bash -c "$PERFSCEN_AB_START" </dev/null >"$OUT/server-$role.log" 2>&1 &
	pids+=($!)
	echo "perfscen-ab: $role: started (pid $!), HTTP 127.0.0.1:$port, log $OUT/server-$role.log" >&2
}
start base "$base_tree" "$base_port"
start candidate "$cand_tree" "$cand_port"

# unmeasured ROLE WHY: exit 3 with the server's log, in the files and
# summaries the gate script would have written.
unmeasured() {
	local role=$1 why=$2
	echo "perfscen-ab: the $role server $why; the end of its log:" >&2
	tail -n 20 "$OUT/server-$role.log" >&2
	echo 3 >"$OUT/exit-code"
	echo "COULD NOT MEASURE: the $role server $why" >"$OUT/verdict.txt"
	{
		echo "**perfscen:** COULD NOT MEASURE: the $role server $why"
		echo
		echo "The end of its log (all of it is in the reports, server-$role.log):"
		echo
		echo '```'
		tail -n 20 "$OUT/server-$role.log"
		echo '```'
	} >"$OUT/comment.md"
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		sed '1s/^\*\*perfscen:\*\*/### perfscen:/' "$OUT/comment.md" >>"$GITHUB_STEP_SUMMARY"
	fi
	exit 3
}

# Both must answer the readiness path; a server that exits first is a
# failure to measure, with its log.
roles=(base candidate)
ports=("$base_port" "$cand_port")
deadline=$((SECONDS + timeout))
for i in 0 1; do
	until curl -sf -o /dev/null "http://127.0.0.1:${ports[$i]}$ready"; do
		kill -0 "${pids[$i]}" 2>/dev/null || unmeasured "${roles[$i]}" "exited before it was ready"
		((SECONDS < deadline)) || unmeasured "${roles[$i]}" "was not ready within ${timeout}s"
		sleep 0.5
	done
	echo "perfscen-ab: ${roles[$i]}: ready" >&2
done

export PERFSCEN_FLAGS="${PERFSCEN_FLAGS:-} --set servers.base.url=127.0.0.1:$((base_port + url_off)) --set servers.candidate.url=127.0.0.1:$((cand_port + url_off))"
bash "$here/perfscen-gate.sh" "$@"
exit $?
