#!/usr/bin/env bash
# Does the real gate, on a real server, stay quiet when nothing changed and
# speak when something did? The reference server's `delay` model sleeps a
# set service time per execution and its `mlp_reference` computes an MLP
# whose compute can be repeated a set factor of times, so a slowdown can be
# injected exactly; everything else (server, client, runner, verdict) is
# the product. One invocation measures one cell: a model, a mode and a
# machine condition; every arm (the A/A runs, and one arm per slowdown) is
# run SOUND_N times, alternating.
#
# Models (SOUND_MODEL):
#   delay  sleep-bound: the `delay` model, SOUND_DELAY (10ms) per execution;
#          a slowdown F makes it F × SOUND_DELAY (2: 20 ms)
#   cpu    CPU-bound: `mlp_reference` with batches of SOUND_BATCH (8); a
#          slowdown F is `--model-param mlp_reference.slowdown=F`, F times
#          the compute (internal/refserver/mlp.go)
#
# Modes (SOUND_MODE):
#   history  the baseline-history gate: K history runs of the unchanged
#            server recorded first in the same condition, then the A/A and
#            slowdown runs gated against that history. A history that
#            cannot be recorded ends the cell with exit 3, "could not
#            record … because …", and no gated run.
#   ab       the same-job A/B: per run, two separate `perfscen serve`
#            processes (base and candidate, each on its own ports; the
#            candidate has the arm's slowdown, or none for A/A) and one
#            scenario with `servers: {base: …, candidate: …}` whose
#            comparisons gate candidate against base on interleaved
#            trials (README "Server against server in one run"). No
#            history is needed.
# (The older same-run mode, SOUND_SAME_N, compares two models of one
# embedded server: `delay` against identity_fp32 with added latency.)
#
# Gated metrics: in history mode the default gate, what a user's baseline
# gets (throughput, p50, p95, p99, and the server's work per inference,
# server_work_infer, where the run and the history measured it); in ab
# mode p50 for the delay model and the server's work per inference for the
# cpu one (SOUND_CPU_METRIC: server_work_infer where $PERFSCEN knows it,
# else server_cpu_infer, else server_compute_infer, the server's inference
# time, which contention stretches). Work rather than CPU time: the two
# servers may sit on different vCPUs, and the host slows one vCPU and not
# the other for tens of seconds; work divides each CPU's share of a
# server's CPU time by that CPU's own kernel time, which cancels it
# (docs/statistics.md, the fourteenth pass). SOUND_METRICS=a,b overrides both; in
# ab mode each becomes a comparison candidate ≤ (1 + SOUND_AB_TOL) × base
# (throughput: ≥ 1 − SOUND_AB_TOL), with unchanged_ratio 1: a slowdown
# fails once a change is shown and its ratio is beyond the tolerance.
#
# Exit 3 (server trouble, an unstable measurement, a machine too busy to
# measure) is neither a pass nor an alarm; it is counted apart and left out
# of the rates. Exit 4 (inconclusive: the data could not decide even after
# the extra trials, or the testbed was disturbed) is counted apart too: it
# is not a false alarm, and for a slowdown it is not a miss that passes
# silently.
#
# Machine conditions: SOUND_LOAD=N holds the 1-minute load average near N
# for the whole cell, history and gated runs alike, with real background
# work (loops of cold `go build -a` in scratch copies of this repository,
# scripts/lib/busy.sh); every run records the load average it saw (min,
# median, max of 1 s samples). With SOUND_HOG=1 a CPU hog (a busy loop,
# pinned to CPU 0 where taskset exists) runs during the gated runs, not
# while the history is recorded. With SOUND_NEIGHBOUR=MS a neighbour on
# each core is busy MS milliseconds of every 100 through the whole harness,
# and SOUND_GATE_NEIGHBOUR=MS gives the gated runs a different one. Every
# run's disturbance medians (share of CPU used by other processes,
# perfscen's run-queue wait, CPU pressure) are recorded with its exit code.
#
#   make soundness                               # defaults: about 8 minutes on 2 cores
#   make soundness-hog                           # the same with a CPU hog on one core
#   SOUND_N=50 SOUND_SAME_N=20 make soundness    # tighter intervals
#   SOUND_MODEL=cpu SOUND_MODE=ab SOUND_LOAD=10 SOUND_N=40 bash scripts/soundness.sh
#   scripts/gate-campaign.sh                     # every cell of the load × model × mode matrix
#
# Settings (environment):
#   SOUND_MODEL=delay    delay or cpu (above)
#   SOUND_MODE=history   history or ab (above)
#   SOUND_K=5            history runs (the gate's prediction interval needs 5)
#   SOUND_N=20           runs of each arm (0 skips the mode)
#   SOUND_SAME_N=5       same-run mode runs of each arm (delay model, history
#                        mode only; 0 otherwise)
#   SOUND_AA=1           0: no A/A arm is gated (the history is still
#                        recorded on the unchanged build); to add slowdown
#                        runs to a cell whose A/A runs are already counted
#   SOUND_SLOWDOWNS=     slowdown factors, one arm each ("2 1.1": 2× and
#                        10%); default: cpu "2 1.1", delay the one of
#                        SOUND_SLOW_DELAY
#   SOUND_DELAY=10ms     service time of the unchanged delay model
#   SOUND_SLOW_DELAY=11ms  service time of the slowed runs when
#                        SOUND_SLOWDOWNS is not set (the delay model sleeps to
#                        within ~15 us, so 10.5ms is a 5% slowdown)
#   SOUND_BATCH=8        the cpu model's batch size
#   SOUND_PROTOCOL=grpc  SOUND_CONCURRENCY=1
#   SOUND_LOAD=          target 1-minute load average of staged background
#                        work (5, 10, 20); empty: none
#   SOUND_SETTLE=300     seconds to wait at most for the load average to reach
#                        SOUND_LOAD before the first run
#   SOUND_OUT=FILE       also write the summary (Markdown) there
#   SOUND_TSV=FILE       also write every run, one line each (tab-separated,
#                        with a header) there
#   SOUND_HOG=1          run a CPU hog on one core during the gated runs
#   SOUND_NEIGHBOUR=0    ms of every 100 ms a neighbour keeps each core
#                        busy, through the history and the gated runs
#   SOUND_GATE_NEIGHBOUR=$SOUND_NEIGHBOUR  the same during the gated runs
#   SOUND_SERVER=external  the server(s) in separate `perfscen serve`
#                        processes, started per run with the run's model
#                        parameters (gRPC/HTTP on SOUND_PORT=18611; ab mode's
#                        candidate on SOUND_PORT+10), as CI measures a real
#                        server; `embedded` puts them in perfscen's process
#                        (their threads then count in perfscen's own
#                        run-queue wait, the disturbance signal); `triton`
#                        (history mode, delay model) runs the real Triton
#                        (TRITON_DIR, default ../shared/triton): its
#                        delay_fp32 model with delay_ms set to the run's
#                        service time, Triton's own statistics as server
#                        figures (SOUND_METRICS=p50,server_compute_infer
#                        gates them)
#   SOUND_METRICS=       the gated metrics (above)
#   SOUND_KEEP=DIR       also keep every run's result JSON there
#                        (MODE-ARM-RUN.json), to replay through the verdict
#   SOUND_AB_TOL=5       ab mode's tolerance, percent
#   SOUND_AB_UNCHANGED=1 0: the comparisons without unchanged_ratio (a fail
#                        needs the ratio shown beyond the tolerance)
#   SOUND_TRIALS=        trials per point (default: history 5, ab 20, as
#                        ci/examples' A/B; a comparison needs at least 10
#                        per arm)
#   SOUND_MAX_EXTRA=     the gate's max_extra_trials and max_extra_time
#   SOUND_MAX_EXTRA_TIME=  (default: the scenario defaults, 20 and 3m); with
#                        SOUND_TRIALS=60 SOUND_MAX_EXTRA=60
#                        SOUND_MAX_EXTRA_TIME=5m an A/B run has two looks, at
#                        60 and 120 trials per arm
#   SOUND_STABILITY=10%  SOUND_ALLOW_UNSTABLE=false in history mode, true
#                        in ab mode (as ci/examples' A/B: the interleaved
#                        trials carry a busy machine's wobble into the
#                        test; a history mode run on a loaded shared
#                        machine needs e.g. 25% and true: the gate then
#                        judges the kept trials of a point that never
#                        stabilized)
#
# Exit status: 0 when every run was made (whatever the runs' own exit
# codes: those are the measurement), 3 when the history could not be
# recorded (the summary says why), 2 on a usage or setup error.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${SOUND_MODEL:=delay}"
: "${SOUND_MODE:=history}"
: "${SOUND_K:=5}"
: "${SOUND_N:=20}"
if [ "$SOUND_MODEL" = delay ] && [ "$SOUND_MODE" = history ]; then : "${SOUND_SAME_N:=5}"; else : "${SOUND_SAME_N:=0}"; fi
: "${SOUND_DELAY:=10ms}"
: "${SOUND_SLOW_DELAY:=11ms}"
: "${SOUND_SLOWDOWNS:=}"
: "${SOUND_BATCH:=8}"
: "${SOUND_PROTOCOL:=grpc}"
: "${SOUND_CONCURRENCY:=1}"
: "${SOUND_LOAD:=}"
: "${SOUND_SETTLE:=300}"
: "${SOUND_OUT:=}"
: "${SOUND_TSV:=}"
: "${SOUND_HOG:=0}"
: "${SOUND_STABILITY:=10%}"
if [ "$SOUND_MODE" = ab ]; then : "${SOUND_ALLOW_UNSTABLE:=true}"; else : "${SOUND_ALLOW_UNSTABLE:=false}"; fi
: "${SOUND_SERVER:=external}"
: "${SOUND_NEIGHBOUR:=0}"
: "${SOUND_GATE_NEIGHBOUR:=$SOUND_NEIGHBOUR}"
: "${SOUND_PORT:=18611}"
: "${TRITON_DIR:=${PERFSCEN_TRITON_DIR:-../shared/triton}}"
: "${SOUND_METRICS:=}"
: "${SOUND_KEEP:=}"
: "${SOUND_AB_TOL:=5}"
: "${SOUND_TRIALS:=}"
: "${SOUND_MAX_EXTRA:=}"
: "${SOUND_MAX_EXTRA_TIME:=}"
PERFSCEN=${PERFSCEN:-bin/perfscen}

die() { echo "soundness: $*" >&2; exit 2; }
note() { echo "soundness: $*" >&2; }
command -v jq >/dev/null || die "jq is needed to read result files (apt-get install jq)"


case $SOUND_MODEL in
delay)
	MODEL=delay PARAM=delay MODEL_SPEC="shapes: {INPUT0: [16]}"
	[ "$SOUND_SERVER" != triton ] || MODEL=delay_fp32
	;;
cpu)
	MODEL=mlp_reference PARAM=slowdown MODEL_SPEC="batch_size: $SOUND_BATCH"
	[ "$SOUND_SERVER" != triton ] || die "SOUND_SERVER=triton measures the delay model only (SOUND_MODEL=delay)"
	[ "$SOUND_SAME_N" = 0 ] || die "the same-run mode (SOUND_SAME_N) pairs two delay models; set SOUND_SAME_N=0 with SOUND_MODEL=cpu"
	;;
*) die "SOUND_MODEL is delay or cpu, not \"$SOUND_MODEL\"" ;;
esac
case $SOUND_MODE in
history | ab) ;;
*) die "SOUND_MODE is history or ab, not \"$SOUND_MODE\"" ;;
esac
[ "$SOUND_MODE" = history ] || [ "$SOUND_SERVER" != triton ] || die "SOUND_MODE=ab starts two perfscen serve processes; SOUND_SERVER=triton is for history mode"
[ "$SOUND_MODE" = history ] || [ "$SOUND_SAME_N" = 0 ] || die "the same-run mode (SOUND_SAME_N) runs with SOUND_MODE=history; set SOUND_SAME_N=0"
case $SOUND_SERVER in external | embedded | triton) ;; *) die "SOUND_SERVER is external, embedded or triton, not \"$SOUND_SERVER\"" ;; esac
[[ "$SOUND_AB_TOL" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "SOUND_AB_TOL is a percentage (5), not \"$SOUND_AB_TOL\""
case ${SOUND_AB_UNCHANGED:-1} in 0 | 1) ;; *) die "SOUND_AB_UNCHANGED is 1 or 0, not \"$SOUND_AB_UNCHANGED\"" ;; esac
if [ "$SOUND_SERVER" = triton ]; then
	[ -x "$TRITON_DIR/run-triton" ] || die "SOUND_SERVER=triton needs the real Triton at TRITON_DIR=$TRITON_DIR"
fi
[ -x "$PERFSCEN" ] || go build -o "$PERFSCEN" ./cmd/perfscen || die "cannot build $PERFSCEN"

# The work or CPU-time figure where this perfscen has it: a server's CPU
# time per inference does not stretch when the machine is busy, its
# inference time does, and its work does not move with a slower vCPU
# either. perfscen validate refuses a metric it does not know.
if [ -z "${SOUND_CPU_METRIC:-}" ]; then
	probe=$(mktemp)
	SOUND_CPU_METRIC=server_compute_infer
	for m in server_cpu_infer server_work_infer; do
		printf 'version: 1\nname: probe\nserver: {embedded: true}\nmodels: [{name: mlp_reference}]\nbaseline: {path: h.json, metrics: [%s]}\n' "$m" >"$probe"
		! "$PERFSCEN" validate "$probe" >/dev/null 2>&1 || SOUND_CPU_METRIC=$m
	done
	rm -f "$probe"
fi

# dur_us D: a Go duration (10ms, 10.5ms, 900us, 1s) in microseconds.
dur_us() {
	awk -v d="$1" 'BEGIN {
		if (match(d, /^[0-9.]+/) == 0) exit 1
		v = substr(d, 1, RLENGTH); u = substr(d, RLENGTH + 1)
		m = u == "ms" ? 1000 : (u == "us" || u == "µs") ? 1 : u == "s" ? 1000000 : u == "ns" ? 0.001 : -1
		if (m < 0) exit 1
		printf "%d\n", v * m + 0.5 }' || die "cannot read the duration \"$1\" (10ms, 900us)"
}
DELAY_US=$(dur_us "$SOUND_DELAY")
if [ -z "$SOUND_SLOWDOWNS" ]; then
	if [ "$SOUND_MODEL" = cpu ]; then
		SOUND_SLOWDOWNS="2 1.1"
	else
		SOUND_SLOWDOWNS=$(awk -v a="$DELAY_US" -v b="$(dur_us "$SOUND_SLOW_DELAY")" 'BEGIN {printf "%.6g\n", b / a}')
	fi
fi
for f in $SOUND_SLOWDOWNS; do
	[[ "$f" =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v f="$f" 'BEGIN {exit !(f > 1)}' || die "SOUND_SLOWDOWNS holds factors above 1 (\"2 1.1\"), not \"$f\""
done

# The arms: aa (factor 1), then one per slowdown, as x2, x1.1.
ARMS="aa"
for f in $SOUND_SLOWDOWNS; do ARMS="$ARMS x$f"; done
# The arms gated: all of them, or with SOUND_AA=0 the slowdowns alone.
case ${SOUND_AA:=1} in
1) GATED_ARMS=$ARMS ;;
0) GATED_ARMS=${ARMS#aa } ;;
*) die "SOUND_AA is 1 or 0, not \"$SOUND_AA\"" ;;
esac
[ -n "$SOUND_SLOWDOWNS" ] || [ "$SOUND_AA" = 1 ] || die "SOUND_AA=0 needs a slowdown arm (SOUND_SLOWDOWNS)"
factor_of() { [ "$1" = aa ] && echo 1 || echo "${1#x}"; }
# param_value ARM: the model parameter's value for the arm: the delay
# model's service time, or the mlp's slowdown factor.
param_value() {
	local f
	f=$(factor_of "$1")
	if [ "$SOUND_MODEL" = delay ]; then
		awk -v us="$DELAY_US" -v f="$f" 'BEGIN {v = int(us * f + 0.5); if (v % 1000 == 0) printf "%dms\n", v / 1000; else printf "%dus\n", v}'
	else
		echo "$f"
	fi
}
# arm_label ARM: how the summary names it.
arm_label() {
	[ "$1" = aa ] && { echo "A/A (false alarms)"; return; }
	if [ "$SOUND_MODEL" = delay ]; then
		echo "slowdown ${1#x}× (delay $SOUND_DELAY → $(param_value "$1"))"
	else
		echo "slowdown ${1#x}× (mlp_reference.slowdown=${1#x})"
	fi
}

# The gated metrics of the cell.
metrics=$SOUND_METRICS
if [ -z "$metrics" ] && [ "$SOUND_MODE" = ab ]; then
	# p50 alone for the delay model, as ci/examples' A/B gates it: its
	# throughput at concurrency 1 is the inverse of the mean latency,
	# which a busy machine's longest wake-ups (50–250 ms at load 20) set,
	# and no 20 trials decide it within 5% there.
	if [ "$SOUND_MODEL" = cpu ]; then metrics=$SOUND_CPU_METRIC; else metrics=p50; fi
fi
# The figure the summary shows per arm: the first named metric, else the
# one the default gate has for the model.
PRIMARY=${metrics%%,*}
if [ -z "$PRIMARY" ]; then
	if [ "$SOUND_MODEL" = cpu ]; then PRIMARY=server_work_infer; else PRIMARY=p50; fi
fi

# Scratch folder (a fixed parent where TMPDIR is set) and cleanup: every
# process the harness starts is stopped on exit, ^C and TERM.
TMP=$(mktemp -d)
HOG_PID=
CHILD_PID=
stop_hog() { [ -z "$HOG_PID" ] || kill "$HOG_PID" 2>/dev/null || true; HOG_PID=; }
cleanup() {
	[ -z "$CHILD_PID" ] || kill -TERM "$CHILD_PID" 2>/dev/null || true
	stop_hog
	stop_neighbour
	stop_servers
	busy_stop
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck source=lib/busy.sh
. scripts/lib/busy.sh

# run_child CMD...: CMD in the background, waited for, so that a TERM or
# ^C is acted on at once (bash runs no trap while a foreground command
# runs); a ^C at the terminal reaches CMD itself (`trap - INT QUIT` undoes
# the ignoring of SIGINT that bash gives background commands).
run_child() {
	local rc=0
	( trap - INT QUIT; exec "$@" ) &
	CHILD_PID=$!
	wait "$CHILD_PID" || rc=$?
	CHILD_PID=
	return "$rc"
}

# start_neighbour MS / stop_neighbour: on each core (pinned where taskset
# exists), a process busy MS ms of every 100 ms, each in its own process
# group so its busy children go with it.
NEIGHBOUR_PIDS=
start_neighbour() {
	[ "${1:-0}" -gt 0 ] || return 0
	[ "$1" -lt 100 ] || die "a neighbour is busy less than 100 ms of every 100 ms (got $1)"
	local busy idle cpu pin
	busy=$(printf '0.%03d' "$1") idle=$(printf '0.%03d' $((100 - $1)))
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		pin=
		command -v taskset >/dev/null && pin="taskset -c $cpu"
		setsid $pin bash -c "while :; do timeout $busy sh -c 'while :; do :; done'; sleep $idle; done" >/dev/null 2>&1 &
		NEIGHBOUR_PIDS="$NEIGHBOUR_PIDS $!"
	done
	note "neighbour busy $1 ms of every 100 ms on each of $(nproc) core(s)"
}
stop_neighbour() {
	local p
	for p in $NEIGHBOUR_PIDS; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
	NEIGHBOUR_PIDS=
}

# start_hog: one busy loop, on CPU 0 when it can be pinned.
start_hog() {
	[ "$SOUND_HOG" = 1 ] || return 0
	if command -v taskset >/dev/null; then
		taskset -c 0 sh -c 'while :; do :; done' &
	else
		sh -c 'while :; do :; done' &
	fi
	HOG_PID=$!
	note "CPU hog running (pid $HOG_PID)"
}

# ---- servers ----

# start_server NAME PORT VALUE: a `perfscen serve` process serving MODEL with
# its parameter at VALUE on PORT (the scenario's protocol), or the real
# Triton; waits until it listens (perfscen run would also wait for it to
# answer ready, but a server that cannot start at all, a port in use, is a
# setup error, not a run's exit 3).
declare -A SERVER_PIDS=()
start_server() {
	local name=$1 port=$2 value=$3
	if [ "$SOUND_SERVER" = triton ]; then
		start_triton "$value"
		return
	fi
	local http=-1 grpc=-1 log=$TMP/serve-$name.log
	if [ "$SOUND_PROTOCOL" = grpc ]; then grpc=$port; else http=$port; fi
	"$PERFSCEN" serve --models "$MODEL" --model-param "$MODEL.$PARAM=$value" --http-port "$http" --grpc-port "$grpc" >"$log" 2>&1 &
	SERVER_PIDS[$name]=$!
	local i
	for i in $(seq 600); do
		grep -q '^Started ' "$log" && return 0
		kill -0 "${SERVER_PIDS[$name]}" 2>/dev/null || die "perfscen serve ($name, port $port) exited: $(tail -n 5 "$log")"
		sleep 0.1
	done
	note "perfscen serve ($name) has not said it listens after 60 s; the run will wait for it"
}
# start_triton DELAY: the real Triton ($TRITON_DIR/run-triton) serving a
# copy of its model repository whose delay_fp32 sleeps DELAY per execution.
start_triton() {
	local ms
	ms=$(awk -v us="$(dur_us "$1")" 'BEGIN {printf "%g", us / 1000}')
	local repo="$TMP/triton-models-$ms"
	if [ ! -d "$repo" ]; then
		cp -r "$TRITON_DIR/models" "$repo"
		sed -i "s/key: \"delay_ms\" value: { string_value: \"[0-9.]*\" }/key: \"delay_ms\" value: { string_value: \"$ms\" }/" "$repo/delay_fp32/config.pbtxt"
		grep -q "string_value: \"$ms\"" "$repo/delay_fp32/config.pbtxt" || die "could not set delay_ms=$ms in $repo/delay_fp32/config.pbtxt"
	fi
	local grpc=$SOUND_PORT http=$((SOUND_PORT + 1)) metrics=$((SOUND_PORT + 2))
	[ "$SOUND_PROTOCOL" = grpc ] || { http=$SOUND_PORT; grpc=$((SOUND_PORT + 1)); }
	"$TRITON_DIR/run-triton" --http-port "$http" --grpc-port "$grpc" --metrics-port "$metrics" \
		--model-repository "$repo" --model-control-mode explicit --load-model delay_fp32 >"$TMP/serve-triton.log" 2>&1 &
	SERVER_PIDS[triton]=$!
}
stop_servers() {
	local name pid
	for name in "${!SERVER_PIDS[@]}"; do
		pid=${SERVER_PIDS[$name]}
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	SERVER_PIDS=()
}
# servers_up ARM / the external servers of one run of ARM (none for the
# embedded server: the scenario carries the parameters).
servers_up() {
	[ "$SOUND_SERVER" != embedded ] || return 0
	if [ "$SOUND_MODE" = ab ]; then
		start_server base "$SOUND_PORT" "$(param_value aa)"
		start_server candidate $((SOUND_PORT + 10)) "$(param_value "$1")"
	else
		start_server server "$SOUND_PORT" "$(param_value "$1")"
	fi
}

# ---- scenarios ----

# server_entry PORT VALUE: one server's block (indented by the caller).
server_entry() {
	if [ "$SOUND_SERVER" = embedded ]; then
		printf 'embedded: true\nprotocol: %s\nembedded_models:\n  %s: {%s: %s}' "$SOUND_PROTOCOL" "$MODEL" "$PARAM" "$2"
	else
		printf 'url: 127.0.0.1:%s\nprotocol: %s' "$1" "$SOUND_PROTOCOL"
	fi
}
indent() { sed "s/^/$1/"; }

measurement_block() {
	cat <<EOF
measurement:
  window: 1s
  stability: $SOUND_STABILITY
  allow_unstable: $SOUND_ALLOW_UNSTABLE
  max_trials: 8
  trials: $1
EOF
	if [ -n "$SOUND_MAX_EXTRA$SOUND_MAX_EXTRA_TIME" ]; then
		echo "gate:"
		[ -z "$SOUND_MAX_EXTRA" ] || echo "  max_extra_trials: $SOUND_MAX_EXTRA"
		[ -z "$SOUND_MAX_EXTRA_TIME" ] || echo "  max_extra_time: $SOUND_MAX_EXTRA_TIME"
	fi
}

# history_scenario ARM FILE: one point gated against history.json. The
# name and baseline path are the same for every arm.
history_scenario() {
	cat >"$2" <<EOF
version: 1
name: soundness-$SOUND_MODEL
server:
$(server_entry "$SOUND_PORT" "$(param_value "$1")" | indent '  ')
models:
  - name: $MODEL
    $MODEL_SPEC
load:
  mode: concurrency
sweep:
  concurrency: [$SOUND_CONCURRENCY]
$(measurement_block "${SOUND_TRIALS:-5}")
thresholds:
  - errors == 0
baseline:
  path: history.json
$([ -z "$metrics" ] || printf '  metrics: [%s]' "$metrics")
EOF
}

# ab_scenario ARM FILE: base and candidate servers, one comparison per
# gated metric, candidate against base.
ab_scenario() {
	local m tol=$SOUND_AB_TOL unchanged=
	# Two builds of one model: a slowdown fails once shown and beyond the
	# tolerance (SOUND_AB_UNCHANGED=0: once shown beyond the tolerance).
	[ "${SOUND_AB_UNCHANGED:-1}" = 0 ] || unchanged=", unchanged_ratio: 1"
	{
		cat <<EOF
version: 1
name: soundness-ab-$SOUND_MODEL
servers:
  base:
$(server_entry "$SOUND_PORT" "$(param_value aa)" | indent '    ')
  candidate:
$(server_entry $((SOUND_PORT + 10)) "$(param_value "$1")" | indent '    ')
models:
  - name: base/$MODEL
    $MODEL_SPEC
  - name: candidate/$MODEL
    $MODEL_SPEC
load:
  concurrency: $SOUND_CONCURRENCY
$(measurement_block "${SOUND_TRIALS:-20}")
thresholds:
  - errors == 0
comparisons:
EOF
		for m in ${metrics//,/ }; do
			if [ "$m" = throughput ]; then
				printf '  - {name: %s, candidate: candidate/%s, reference: base/%s, metric: %s, min_ratio: %s%s}\n' "$m" "$MODEL" "$MODEL" "$m" "$(awk -v t="$tol" 'BEGIN {printf "%g", 1 - t / 100}')" "$unchanged"
			else
				printf '  - {name: %s, candidate: candidate/%s, reference: base/%s, metric: %s, max_ratio: %s%s}\n' "$m" "$MODEL" "$MODEL" "$m" "$(awk -v t="$tol" 'BEGIN {printf "%g", 1 + t / 100}')" "$unchanged"
			fi
		done
	} >"$2"
}

# samerun_scenario DELAY FILE: candidate `delay` vs reference identity_fp32
# with the unchanged service time as added latency, both in one embedded
# server (server parameters are per model name).
samerun_scenario() {
	cat >"$2" <<EOF
version: 1
name: soundness-samerun
server:
  embedded: true
  protocol: $SOUND_PROTOCOL
  embedded_models:
    delay: {delay: $1}
    identity_fp32: {added_latency: $SOUND_DELAY}
models:
  - name: delay
    alias: candidate
    shapes: {INPUT0: [16]}
  - name: identity_fp32
    alias: reference
    shapes: {INPUT0: [16]}
load:
  mode: concurrency
sweep:
  concurrency: [$SOUND_CONCURRENCY]
$(measurement_block 10)
thresholds:
  - errors == 0
comparisons:
  - name: throughput-not-lower
    candidate: candidate
    reference: reference
    metric: throughput
    min_ratio: 0.95
  - name: p50-not-higher
    candidate: candidate
    reference: reference
    metric: p50
    max_ratio: 1.05
EOF
}

# ---- one run ----

# median_of FIELD: a jq program for the median of a disturbance field over
# every trial of the run, or NaN when no trial recorded it.
median_of() {
	echo "[.points[].trials[]?.disturbance.$1 // empty] | sort | if length == 0 then \"NaN\" else .[length/2|floor] end"
}

TSV_HEADER="mode	arm	run	start_utc	wall_s	exit	failed	gated	throughput	p50_us	p95_us	server_compute_infer_us	server_cpu_infer_us	server_work_infer	server_runq_infer_us	base_throughput	base_p50_us	base_server_compute_infer_us	base_server_cpu_infer_us	base_server_work_infer	load_min	load_median	load_max	builders	other_cpu	run_queue_wait	cpu_pressure	message	server_preempt_infer_us"

# record MODE ARM RUN START END RC JSON LOG: appends one run to runs.tsv.
# The figures are the medians over the kept trials ("figures") of the
# candidate point (ab mode: also of the base point); gated holds every
# baseline or comparison check as "metric value op bound status" (a
# comparison's value is the ratio candidate/base).
record() {
	local mode=$1 arm=$2 run=$3 start=$4 end=$5 rc=$6 json=$7 log=$8
	local failed=- gated=- figs="NaN NaN NaN NaN NaN NaN NaN" base="NaN NaN NaN NaN NaN" busy=NaN wait=NaN press=NaN pre=NaN msg
	if [ -s "$json" ]; then
		failed=$(jq -r '[.verdict.checks[]? | select(.status == "fail") | .name] | unique | if length == 0 then "-" else join(",") end' "$json")
		# The primary metric's check first, then the gated ones, then those
		# "not gated".
		gated=$(jq -r --arg primary "$PRIMARY" '[.verdict.checks[]? | select(.kind == "baseline" or .kind == "comparison")] | sort_by(.metric != $primary, .status == "not_gated") | [.[]
			| "\(.metric // .name) \(if .no_value then "-" else (.value * 1000 | round / 1000) end) \(.op // "") \(if .no_value then "-" else (.bound * 1000 | round / 1000) end) \(.status)"]
			| if length == 0 then "-" else join("; ") end' "$json")
		figs=$(jq -r '[.points[] | select((.model // "") | startswith("base/") | not)][0].figures // {} | "\(.throughput // "NaN") \(.p50_us // "NaN") \(.p95_us // "NaN") \(.server.compute_infer_us // "NaN") \(.process.cpu_us // "NaN") \(.process.work_gemv // .process.work // "NaN") \(.process.run_queue_us // "NaN")"' "$json")
		base=$(jq -r '[.points[] | select((.model // "") | startswith("base/"))][0].figures // {} | "\(.throughput // "NaN") \(.p50_us // "NaN") \(.server.compute_infer_us // "NaN") \(.process.cpu_us // "NaN") \(.process.work_gemv // .process.work // "NaN")"' "$json")
		busy=$(jq -r "$(median_of other_cpu)" "$json")
		wait=$(jq -r "$(median_of run_queue_wait)" "$json")
		press=$(jq -r "$(median_of cpu_pressure)" "$json")
		msg=$(jq -r '.verdict.summary // ""' "$json")
		pre=$(jq -r '[.points[] | select((.model // "") | startswith("base/") | not)][0].figures.process.preempt_us // "NaN"' "$json")
		if [ -n "$SOUND_KEEP" ]; then
			mkdir -p "$SOUND_KEEP" && cp "$json" "$SOUND_KEEP/$mode-$arm-$run.json"
		fi
	fi
	[ -n "${msg:-}" ] || msg=$(grep -v '^ *$' "$log" | tail -n 1)
	msg=$(printf '%s' "$msg" | tr '\t\n' '  ' | cut -c1-400)
	local lmin lmed lmax bmin bmax
	read -r lmin lmed lmax _ bmin bmax <<<"$(busy_stats "$start" "$end")"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$mode" "$arm" "$run" "$(date -u -d "@$start" +%FT%TZ)" $((end - start)) "$rc" "$failed" "$gated" \
		$figs $base "$lmin" "$lmed" "$lmax" "$bmin-$bmax" "$busy" "$wait" "$press" "$msg" "$pre" >>"$TMP/runs.tsv"
	note "$mode $arm #$run: exit $rc in $((end - start)) s; gated: $gated; failed: $failed; load $lmin–$lmax (median $lmed, builders $bmin-$bmax); other-process CPU $busy, run-queue wait $wait, CPU pressure $press"
}

# run_one MODE ARM RUN FILE [FLAGS...]: one gated run, recorded.
run_one() {
	local mode=$1 arm=$2 run=$3 file=$4 rc=0 start end
	shift 4
	servers_up_for "$mode" "$arm"
	start=$(date +%s)
	rm -f "$TMP/last.json"
	run_child "$PERFSCEN" run "$file" "$@" --out "$TMP/last.json" --quiet >"$TMP/last.log" 2>&1 || rc=$?
	end=$(date +%s)
	stop_servers
	[ "$rc" = 2 ] && die "scenario $file is invalid: $(tail -n 5 "$TMP/last.log")"
	record "$mode" "$arm" "$run" "$start" "$end" "$rc" "$TMP/last.json" "$TMP/last.log"
}
servers_up_for() {
	# The same-run mode's servers are embedded, whatever SOUND_SERVER says.
	[ "$1" = samerun ] || servers_up "$2"
}

# ---- the cell ----

: >"$TMP/runs.tsv"
: >"$TMP/hist.tsv"
mkdir -p "$TMP/history" "$TMP/ab" "$TMP/same"
CELL_START=$(date +%s)
CELL_EXIT=0
NOT_RECORDED=

# The load average is sampled through the whole cell; with SOUND_LOAD the
# builds run through it too, history and gated runs alike.
busy_start "${SOUND_LOAD:-0}" || die "cannot start the load sampler"
if [ -n "$SOUND_LOAD" ]; then
	note "staging background work at load average $SOUND_LOAD (loops of cold go build -a; scripts/lib/busy.sh); waiting up to ${SOUND_SETTLE}s for it"
	settle_from=$(date +%s)
	if busy_settle "$SOUND_SETTLE"; then
		read -r _ l b r <<<"$(busy_now)"
		note "load average $l, runnable $r (last 10 s), with $b builder(s) after $(($(date +%s) - settle_from))s"
	else
		read -r _ l b r <<<"$(busy_now)"
		note "load average $l, runnable $r (last 10 s), with $b builder(s) after $(($(date +%s) - settle_from))s, not within ±${BUSY_BAND:-15}% of $SOUND_LOAD; measuring anyway (each run records what it saw)"
	fi
fi

# record_history: K runs of the unchanged server, each added to the
# history. A try that is not exit 0 is not recorded; 2K tries without K
# records end the cell: exit 3, with the reasons perfscen gave.
record_history() {
	local recorded=0 tries=0 rc start end force=
	# An unstable (but complete) point is recordable when the scenario
	# judges such points on their trials.
	[ "$SOUND_ALLOW_UNSTABLE" = true ] && force=--force
	while [ "$recorded" -lt "$SOUND_K" ]; do
		tries=$((tries + 1))
		if [ "$tries" -gt $((2 * SOUND_K)) ]; then
			NOT_RECORDED="could not record $SOUND_K history runs in $((2 * SOUND_K)) tries (recorded $recorded) because the runs ended: $(cut -f2 "$TMP/hist.reasons" | cut -c1-300 | sort | uniq -c | sort -rn | sed 's/^ *\([0-9]*\) /\1 × /' | paste -sd ';' | sed 's/;/; /g')"
			return 1
		fi
		servers_up aa
		rc=0
		start=$(date +%s)
		rm -f "$TMP/hist.json"
		run_child "$PERFSCEN" run "$TMP/history/aa.yaml" --no-baseline --out "$TMP/hist.json" --quiet >"$TMP/hist.log" 2>&1 || rc=$?
		end=$(date +%s)
		stop_servers
		[ "$rc" = 2 ] && die "scenario $TMP/history/aa.yaml is invalid: $(tail -n 5 "$TMP/hist.log")"
		if [ "$rc" = 0 ]; then
			local urc=0
			"$PERFSCEN" baseline update $force --from "$TMP/hist.json" --baseline "$TMP/history/history.json" >"$TMP/update.log" 2>&1 || urc=$?
			case $urc in
			0) recorded=$((recorded + 1)) ;;
			# baseline update could not record it (the machine was too
			# busy for the point to settle): a try that did not count.
			3) rc=update ;;
			*) die "baseline update failed: $(tail -n 5 "$TMP/update.log")" ;;
			esac
		fi
		record history record "$tries" "$start" "$end" "$rc" "$TMP/hist.json" "$TMP/hist.log"
		if [ "$rc" = 0 ]; then
			note "history run $recorded/$SOUND_K recorded"
		else
			local why
			if [ "$rc" = update ]; then
				why="exit 0, not recorded by baseline update (exit 3): $(grep -v '^ *$' "$TMP/update.log" | tail -n 1)"
			else
				why="exit $rc: $(tail -n 1 "$TMP/runs.tsv" | cut -f28)"
			fi
			printf '%s\t%s\n' "$tries" "$why" >>"$TMP/hist.reasons"
			note "history try $tries not recorded: $why"
		fi
	done
}

if [ "$SOUND_N" -gt 0 ]; then
	start_neighbour "$SOUND_NEIGHBOUR"
	for arm in $ARMS; do
		if [ "$SOUND_MODE" = history ]; then history_scenario "$arm" "$TMP/history/$arm.yaml"; else ab_scenario "$arm" "$TMP/ab/$arm.yaml"; fi
	done
	ok=1
	if [ "$SOUND_MODE" = history ]; then
		: >"$TMP/hist.reasons"
		record_history || ok=0
	fi
	if [ "$ok" = 1 ]; then
		if [ "$SOUND_GATE_NEIGHBOUR" != "$SOUND_NEIGHBOUR" ]; then
			stop_neighbour
			start_neighbour "$SOUND_GATE_NEIGHBOUR"
		fi
		start_hog
		for i in $(seq "$SOUND_N"); do
			for arm in $GATED_ARMS; do
				run_one "$SOUND_MODE" "$arm" "$i" "$TMP/$SOUND_MODE/$arm.yaml"
			done
		done
		stop_hog
	else
		CELL_EXIT=3
		note "$NOT_RECORDED"
	fi
	stop_neighbour
fi

if [ "$SOUND_SAME_N" -gt 0 ] && [ "$CELL_EXIT" = 0 ]; then
	start_neighbour "$SOUND_GATE_NEIGHBOUR"
	for arm in $ARMS; do samerun_scenario "$(param_value "$arm")" "$TMP/same/$arm.yaml"; done
	start_hog
	for i in $(seq "$SOUND_SAME_N"); do
		for arm in $GATED_ARMS; do run_one samerun "$arm" "$i" "$TMP/same/$arm.yaml"; done
	done
	stop_hog
	stop_neighbour
fi
CELL_END=$(date +%s)

# ---- the summary ----

# Counts per arm with 95% Wilson intervals of the alarm rate among runs that
# reached a verdict (exit 0, 1 or 4).
summary() {
	local hog="no CPU hog"
	[ "$SOUND_HOG" = 1 ] && hog="CPU hog on one core during the gated runs"
	local nb="no neighbour"
	[ "$SOUND_NEIGHBOUR" -gt 0 ] && nb="neighbour busy $SOUND_NEIGHBOUR ms/100 ms on each core"
	[ "$SOUND_GATE_NEIGHBOUR" != "$SOUND_NEIGHBOUR" ] && nb="$nb while the history was recorded, $SOUND_GATE_NEIGHBOUR ms/100 ms during the gated runs"
	local load="no staged background work"
	[ -z "$SOUND_LOAD" ] || load="background builds held at load average ~$SOUND_LOAD through the whole cell"
	local what model gated
	if [ "$SOUND_MODEL" = delay ]; then model="delay model $SOUND_DELAY"; else model="mlp_reference, batch $SOUND_BATCH"; fi
	if [ "$SOUND_MODE" = history ]; then
		what="baseline history K=$SOUND_K"
		gated=${metrics:-the default gate}
	else
		what="same-job A/B (two perfscen serve processes per run, candidate vs base, tolerance ${SOUND_AB_TOL}%)"
		[ "$SOUND_SERVER" != embedded ] || what="same-job A/B (two embedded servers, candidate vs base, tolerance ${SOUND_AB_TOL}%)"
		gated=$metrics
	fi
	local cmin cmed cmax
	read -r cmin cmed cmax _ <<<"$(busy_stats "$CELL_START" "$CELL_END")"
	echo "Soundness: $model, $SOUND_PROTOCOL, concurrency $SOUND_CONCURRENCY; $what; gated: $gated; $SOUND_SERVER server; $(nproc) CPUs; $load; $hog; $nb; $(date -u -d "@$CELL_START" '+%F %H:%M')–$(date -u -d "@$CELL_END" '+%H:%M') UTC"
	echo
	if [ -n "$NOT_RECORDED" ]; then
		echo "**Exit 3: $NOT_RECORDED.** No gated run was made."
		echo
	fi
	if ! awk -F'\t' '$2 != "record" {found = 1} END {exit !found}' "$TMP/runs.tsv"; then
		echo "No gated run."
		return
	fi
	echo "| mode | arm | runs | exit 1 | exit 0 | exit 4 | exit 3 | exit-1 rate (95% Wilson) | exit-0 rate | median throughput | median p50 µs | median server inference µs | median server CPU µs per inference | gated figure (median, range) | other-process CPU (median, range) | run-queue wait (median, range) | CPU pressure (median, range) | load average (median, range) | median wall s |"
	echo "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|---|---|---|---:|"
	local mode arm
	for mode in history ab samerun; do
		for arm in $ARMS; do
			awk -F'\t' -v mode="$mode" -v arm="$arm" -v label="$(arm_label "$arm")" '
				function median(a, n,   i, j, x) {
					for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
					return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
				function mr(a, n, lo, hi, pct, fmt) {
					if (!n) return "–"
					u = pct ? "%%" : ""
					return sprintf(fmt u " (" fmt "–" fmt u ")", (pct ? 100 : 1) * median(a, n), (pct ? 100 : 1) * lo, (pct ? 100 : 1) * hi) }
				$1 == mode && $2 == arm {
					runs++; c[$6]++; w[runs] = $5
					if ($9 != "NaN") { nt++; t[nt] = $9 }
					if ($10 != "NaN") { np5++; p5[np5] = $10 }
					if ($12 != "NaN") { ns++; s[ns] = $12 }
					if ($13 != "NaN") { nc++; cpu[nc] = $13 }
					# The first gated check'"'"'s value: "metric value op bound status".
					split($8, g, " "); if ($8 != "-" && g[2] != "-") { ng++; gv[ng] = g[2]; gname = g[1]; gmin = (ng == 1 || g[2] + 0 < gmin) ? g[2] : gmin; gmax = (ng == 1 || g[2] + 0 > gmax) ? g[2] : gmax }
					if ($25 != "NaN") { nb++; b[nb] = $25; bmin = (nb == 1 || $25 < bmin) ? $25 : bmin; bmax = (nb == 1 || $25 > bmax) ? $25 : bmax }
					if ($26 != "NaN") { nw++; wq[nw] = $26; wmin = (nw == 1 || $26 < wmin) ? $26 : wmin; wmax = (nw == 1 || $26 > wmax) ? $26 : wmax }
					if ($27 != "NaN") { npr++; pr[npr] = $27; pmin = (npr == 1 || $27 < pmin) ? $27 : pmin; pmax = (npr == 1 || $27 > pmax) ? $27 : pmax }
					if ($22 != "NaN") { nl++; lm[nl] = $22 }
					if ($21 != "NaN") lmin = (nlo++ == 0 || $21 + 0 < lmin) ? $21 : lmin
					if ($23 != "NaN") lmax = (nhi++ == 0 || $23 + 0 > lmax) ? $23 : lmax }
				END {
					if (!runs) exit
					name = mode == "history" ? "baseline history" : mode == "ab" ? "same-job A/B" : "same run"
					k = c[1] + 0; n = c[0] + c[1] + c[4]
					if (n > 0) {
						z = 1.959964; p = k / n; d = 1 + z * z / n
						ctr = (p + z * z / (2 * n)) / d; h = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
						rate = sprintf("%d/%d = %.2f [%.2f, %.2f]", k, n, p, ctr - h < 0 ? 0 : ctr - h, ctr + h > 1 ? 1 : ctr + h)
						pass = sprintf("%d/%d = %.2f", c[0], n, c[0] / n)
					} else { rate = "–"; pass = "–" }
					mt = nt ? sprintf("%.1f", median(t, nt)) : "–"; mp = np5 ? sprintf("%.0f", median(p5, np5)) : "–"
					ms = ns ? sprintf("%.0f", median(s, ns)) : "–"
					mc = nc ? sprintf("%.0f", median(cpu, nc)) : "–"
					mg = ng ? gname " " mr(gv, ng, gmin, gmax, 0, "%.3f") : "–"
					ml = nl ? sprintf("%.1f (%.1f–%.1f)", median(lm, nl), lmin, lmax) : "–"
					printf "| %s | %s | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f |\n", name, label, runs, k, c[0] + 0, c[4] + 0, runs - n, rate, pass, mt, mp, ms, mc, mg, mr(b, nb, bmin, bmax, 1, "%.0f"), mr(wq, nw, wmin, wmax, 1, "%.0f"), mr(pr, npr, pmin, pmax, 1, "%.0f"), ml, median(w, runs)
				}' "$TMP/runs.tsv"
		done
	done
	echo
	echo "Rates are over runs with a verdict (exit 0, 1 or 4); exit 3 runs are left out. Figures are medians over each run's kept trials, of the candidate point; the gated figure is the value of the check on $PRIMARY (a comparison's: the ratio candidate/base; a baseline check's: the run's figure). Load average: the 1-minute average sampled each second through each run (medians of the runs' medians; range: the lowest and highest sample); over the whole cell $cmin–$cmax (median $cmed)."
	if grep -q "^history	record	" "$TMP/runs.tsv"; then
		echo
		awk -F'\t' '$1 == "history" && $2 == "record" {printf "%s#%s exit %s (load %s–%s, other-process CPU %.0f%%, run-queue wait %.0f%%, %s s)", (n++ ? ", " : "History runs: "), $3, $6, $21, $23, 100 * $25, 100 * $26, $5} END {print ""}' "$TMP/runs.tsv"
	fi
	echo
	echo "Failed checks, by arm (how many runs each failed in):"
	echo
	awk -F'\t' '$2 != "record" && $7 != "-" && $7 != "" {n = split($7, f, ","); for (i = 1; i <= n; i++) c[$1 " " $2 ": " f[i]]++}
		END {for (k in c) printf "- %s: %d\n", k, c[k]}' "$TMP/runs.tsv" | sort
}

summary | tee "$TMP/summary.md"
[ -z "$SOUND_OUT" ] || { cp "$TMP/summary.md" "$SOUND_OUT.tmp" && mv "$SOUND_OUT.tmp" "$SOUND_OUT"; }
[ -z "$SOUND_TSV" ] || { { echo "$TSV_HEADER"; cat "$TMP/runs.tsv"; } >"$SOUND_TSV.tmp" && mv "$SOUND_TSV.tmp" "$SOUND_TSV"; }
exit "$CELL_EXIT"
