#!/usr/bin/env bash
# Does the real gate, on a real (embedded) server, stay quiet when nothing
# changed and speak when something did? The embedded server's `delay` model
# sleeps a set service time per execution, so a slowdown can be injected
# exactly; everything else (server, client, runner, verdict) is the product.
#
# (a) baseline mode: record a history of K runs of a delay-model scenario
#     (delay 10ms), then alternate N unchanged runs (A/A: exit 1 is a false
#     alarm) with N runs where the server's delay is 11ms (exit 1 is a
#     detection), all gated against that history with the default gate.
# (b) same-run mode: one scenario measures two models interleaved, and its
#     comparisons require candidate ≥ 0.95 × reference in throughput and
#     candidate ≤ 1.05 × reference in p50. Not p95: with ~90 requests per
#     1 s trial a trial's p95 is its 5th-slowest request, and 10 trials
#     cannot show a ±5% bound on it, so even an A/A pair fails. A pair needs
#     two model names and server parameters are per model name, so the pair
#     is `delay` (candidate, delay 10ms or 11ms) against `identity_fp32` with
#     added_latency 10ms (reference): both sleep once per execution, then
#     copy the input. The A/A and slowdown scenarios differ only in the
#     candidate's delay.
#
# Exit 3 (server trouble or an unstable measurement) is neither a pass nor an
# alarm; it is counted apart and left out of the rates. Exit 4 (inconclusive:
# the data could not decide even after the extra trials, or the testbed was
# disturbed) is counted apart too: it is not a false alarm, and for a
# slowdown it is not a miss that passes silently.
#
# With SOUND_HOG=1 a CPU hog (a busy loop, pinned to CPU 0 where taskset
# exists) runs during the gated runs, not while the history is recorded:
# the disturbed-machine case. With SOUND_NEIGHBOUR=MS a neighbour on each
# core is busy MS milliseconds of every 100 through the whole harness
# (history and gated runs alike), and SOUND_GATE_NEIGHBOUR=MS gives the
# gated runs a different one: a shared CI runner, whose other tenants are
# never the same twice. Every run's median share of CPU used by other
# processes and the load average are recorded with its exit code.
#
#   make soundness                               # defaults: about 8 minutes on 2 cores
#   make soundness-hog                           # the same with a CPU hog on one core
#   SOUND_N=50 SOUND_SAME_N=20 make soundness    # tighter intervals
#
# Settings (environment):
#   SOUND_K=5            baseline history runs (the gate's prediction interval needs 5)
#   SOUND_N=20           A/A runs and slowdown runs each, baseline mode (0 skips it)
#   SOUND_SAME_N=5       A/A runs and slowdown runs each, same-run mode (0 skips it)
#   SOUND_DELAY=10ms     service time of the unchanged runs
#   SOUND_SLOW_DELAY=11ms  service time of the slowed runs (the delay model
#                        sleeps to within ~15 us, so 10.5ms is a 5% slowdown)
#   SOUND_PROTOCOL=grpc  SOUND_CONCURRENCY=1
#   SOUND_OUT=FILE       also write the summary (Markdown) there
#   SOUND_HOG=1          run a CPU hog on one core during the gated runs
#   SOUND_NEIGHBOUR=0    ms of every 100 ms a neighbour keeps each core
#                        busy, through the history and the gated runs
#   SOUND_GATE_NEIGHBOUR=$SOUND_NEIGHBOUR  the same during the gated runs
#   SOUND_SERVER=triton  baseline mode against the real Triton
#                        (TRITON_DIR, default ../shared/triton): its
#                        delay_fp32 model with delay_ms set to the run's
#                        service time, Triton's own statistics as server
#                        figures (SOUND_METRICS=p50,server_compute_infer
#                        gates them)
#   SOUND_METRICS=       the baseline's gated metrics (default: the gate's)
#   SOUND_SERVER=external  or embedded: baseline mode against a separate
#                        `perfscen serve` process (started per run with the
#                        run's service time, gRPC/HTTP on SOUND_PORT=18611),
#                        as CI measures a real server; the embedded server's
#                        threads otherwise count in perfscen's own run-queue
#                        wait, the disturbance signal
#   SOUND_STABILITY=10%  SOUND_ALLOW_UNSTABLE=false  (a loaded shared machine
#                        needs e.g. 25% and true: the gate then judges the
#                        kept trials of a point that never stabilized)
set -euo pipefail
cd "$(dirname "$0")/.."

: "${SOUND_K:=5}"
: "${SOUND_N:=20}"
: "${SOUND_SAME_N:=5}"
: "${SOUND_DELAY:=10ms}"
: "${SOUND_SLOW_DELAY:=11ms}"
: "${SOUND_PROTOCOL:=grpc}"
: "${SOUND_CONCURRENCY:=1}"
: "${SOUND_OUT:=}"
: "${SOUND_HOG:=0}"
: "${SOUND_STABILITY:=10%}"
: "${SOUND_ALLOW_UNSTABLE:=false}"
: "${SOUND_SERVER:=external}"
: "${SOUND_NEIGHBOUR:=0}"
: "${SOUND_GATE_NEIGHBOUR:=$SOUND_NEIGHBOUR}"
: "${SOUND_PORT:=18611}"
: "${TRITON_DIR:=${PERFSCEN_TRITON_DIR:-../shared/triton}}"
: "${SOUND_METRICS:=}"
PERFSCEN=${PERFSCEN:-bin/perfscen}
MODEL=delay
if [ "$SOUND_SERVER" = triton ]; then
	MODEL=delay_fp32
	[ -x "$TRITON_DIR/run-triton" ] || { echo "soundness: SOUND_SERVER=triton needs the real Triton at TRITON_DIR=$TRITON_DIR" >&2; exit 2; }
fi

die() { echo "soundness: $*" >&2; exit 2; }
# cannot_measure: the harness could not measure (exit 3, as perfscen's
# own "could not measure"): never a verdict on the gate, never exit 1 or 2.
cannot_measure() { echo "soundness: $*" >&2; exit 3; }
note() { echo "soundness: $*" >&2; }
command -v jq >/dev/null || die "jq is needed to read result files (apt-get install jq)"
[ -x "$PERFSCEN" ] || go build -o "$PERFSCEN" ./cmd/perfscen || die "cannot build $PERFSCEN"

TMP=$(mktemp -d)
HOG_PID=
stop_hog() { [ -z "$HOG_PID" ] || kill "$HOG_PID" 2>/dev/null || true; HOG_PID=; }
trap 'stop_hog; stop_neighbour; stop_server; rm -rf "$TMP"' EXIT

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
trap 'exit 130' INT TERM

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

# server_block DELAY: the scenario's server, embedded with the delay model
# at DELAY, or the external `perfscen serve` that run_with_server starts.
server_block() {
	if [ "$SOUND_SERVER" = external ] || [ "$SOUND_SERVER" = triton ]; then
		printf '  url: 127.0.0.1:%s\n  protocol: %s' "$SOUND_PORT" "$SOUND_PROTOCOL"
	else
		printf '  embedded: true\n  protocol: %s\n  embedded_models:\n    delay: {delay: %s}' "$SOUND_PROTOCOL" "$1"
	fi
}

# start_server DELAY / stop_server: the external server of one run (a no-op
# for the embedded one). perfscen run waits for it to answer ready.
SERVER_PID=
start_server() {
	if [ "$SOUND_SERVER" = triton ]; then
		start_triton "$1"
		return
	fi
	[ "$SOUND_SERVER" = external ] || return 0
	local http=-1 grpc=-1
	if [ "$SOUND_PROTOCOL" = grpc ]; then grpc=$SOUND_PORT; else http=$SOUND_PORT; fi
	"$PERFSCEN" serve --models delay --model-param "delay.delay=$1" --http-port "$http" --grpc-port "$grpc" >"$TMP/serve.log" 2>&1 &
	SERVER_PID=$!
}
# start_triton DELAY: the real Triton ($TRITON_DIR/run-triton) serving a
# copy of its model repository whose delay_fp32 sleeps DELAY per execution.
start_triton() {
	local ms=${1%ms} repo="$TMP/triton-models-${1%ms}"
	if [ ! -d "$repo" ]; then
		cp -r "$TRITON_DIR/models" "$repo"
		sed -i "s/key: \"delay_ms\" value: { string_value: \"[0-9.]*\" }/key: \"delay_ms\" value: { string_value: \"$ms\" }/" "$repo/delay_fp32/config.pbtxt"
		grep -q "string_value: \"$ms\"" "$repo/delay_fp32/config.pbtxt" || die "could not set delay_ms=$ms in $repo/delay_fp32/config.pbtxt"
	fi
	local grpc=$SOUND_PORT http=$((SOUND_PORT + 1)) metrics=$((SOUND_PORT + 2))
	[ "$SOUND_PROTOCOL" = grpc ] || { http=$SOUND_PORT; grpc=$((SOUND_PORT + 1)); }
	"$TRITON_DIR/run-triton" --http-port "$http" --grpc-port "$grpc" --metrics-port "$metrics" \
		--model-repository "$repo" --model-control-mode explicit --load-model delay_fp32 >"$TMP/serve.log" 2>&1 &
	SERVER_PID=$!
}
stop_server() {
	[ -z "$SERVER_PID" ] && return 0
	kill "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=
}

# baseline_scenario DELAY FILE: one delay-model point gated against
# history.json. The name and baseline path stay the same for every run.
baseline_scenario() {
	cat >"$2" <<EOF
version: 1
name: soundness-delay
server:
$(server_block "$1")
models:
  - name: $MODEL
    shapes: {INPUT0: [16]}
load:
  mode: concurrency
sweep:
  concurrency: [$SOUND_CONCURRENCY]
measurement:
  window: 1s
  stability: $SOUND_STABILITY
  allow_unstable: $SOUND_ALLOW_UNSTABLE
  max_trials: 8
  trials: 5
thresholds:
  - errors == 0
baseline:
  path: history.json
$([ -z "$SOUND_METRICS" ] || printf '  metrics: [%s]' "$SOUND_METRICS")
EOF
}

# samerun_scenario DELAY FILE: candidate `delay` vs reference identity_fp32
# with the unchanged service time as added latency.
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
measurement:
  window: 1s
  stability: $SOUND_STABILITY
  allow_unstable: $SOUND_ALLOW_UNSTABLE
  max_trials: 8
  trials: 10
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

# median_of FIELD: a jq program for the median of a disturbance field over
# every trial of the run, or NaN when no trial recorded it.
median_of() {
	echo "[.points[].trials[]?.disturbance.$1 // empty] | sort | if length == 0 then \"NaN\" else .[length/2|floor] end"
}

# run_one FILE TAG: runs the scenario, appends "tag exit throughput p95" to
# $TMP/runs.tsv (figures of the first point, i.e. the candidate).
run_one() {
	local rc=0
	"$PERFSCEN" run "$1" --out "$TMP/last.json" --quiet >"$TMP/last.log" 2>&1 || rc=$?
	[ "$rc" = 2 ] && die "scenario $1 is invalid: $(tail -n 5 "$TMP/last.log")"
	local figs="NaN NaN" busy="NaN"
	[ -s "$TMP/last.json" ] && figs=$(jq -r '.points[0].summary | "\(.throughput) \(.p95_us)"' "$TMP/last.json")
	# Median share of the CPUs other processes used over the run's trials.
	[ -s "$TMP/last.json" ] && busy=$(jq -r '[.points[].trials[]?.disturbance.other_cpu // empty] | sort | if length == 0 then "NaN" else .[length/2|floor] end' "$TMP/last.json")
	# perfscen's own run-queue wait per unit of run time, and CPU pressure
	# (medians over the trials; NaN where the kernel gives neither).
	local wait=NaN press=NaN
	[ -s "$TMP/last.json" ] && wait=$(jq -r "$(median_of run_queue_wait)" "$TMP/last.json")
	[ -s "$TMP/last.json" ] && press=$(jq -r "$(median_of cpu_pressure)" "$TMP/last.json")
	local load
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo NaN)
	# "FAIL: 2 of 5 checks failed: a @ point; b @ point" -> "a,b"
	local failed
	failed=$(sed -n 's/^FAIL: [0-9]* of [0-9]* checks* failed: //p' "$TMP/last.log" | head -n 1 |
		awk -F'; ' '{for (i = 1; i <= NF; i++) {sub(/ @ .*/, "", $i); printf "%s%s", (i > 1 ? "," : ""), $i}}')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$2" "$rc" "$(echo "$figs" | tr ' ' '\t')" "${failed:--}" "$busy" "$load" "$wait" "$press" >>"$TMP/runs.tsv"
	rm -f "$TMP/last.json"
	note "$2: exit $rc, throughput/p95 $figs, other-process CPU $busy, run-queue wait $wait, CPU pressure $press, load $load, failed: ${failed:-none}"
}

: >"$TMP/runs.tsv"
: >"$TMP/hist.tsv"
mkdir -p "$TMP/base" "$TMP/same"

if [ "$SOUND_N" -gt 0 ]; then
	baseline_scenario "$SOUND_DELAY" "$TMP/base/same.yaml"
	baseline_scenario "$SOUND_SLOW_DELAY" "$TMP/base/slow.yaml"
	start_neighbour "$SOUND_NEIGHBOUR"
	recorded=0 tries=0 codes= why=
	while [ "$recorded" -lt "$SOUND_K" ]; do
		tries=$((tries + 1))
		# A history that cannot be recorded is the machine's doing, not
		# the gate's: exit 3, with what the last refused run said (on a
		# busy runner, "the machine was too busy for point … to settle
		# (load average …, other processes used …% of the CPUs, …)").
		[ "$tries" -le $((2 * SOUND_K)) ] ||
			cannot_measure "could not record $SOUND_K stable baseline runs in $((2 * SOUND_K)) tries ($recorded recorded; the others exited$codes); the last refused: $why"
		rc=0
		start_server "$SOUND_DELAY"
		"$PERFSCEN" run "$TMP/base/same.yaml" --no-baseline --out "$TMP/hist.json" --quiet >"$TMP/hist.log" 2>&1 || rc=$?
		stop_server
		if [ "$rc" != 0 ]; then
			why=$(grep -E '^(FAIL|COULD NOT MEASURE|INCONCLUSIVE|INTERRUPTED)' "$TMP/hist.log" | tail -n 1)
			[ -n "$why" ] || why=$(tail -n 2 "$TMP/hist.log" | tr '\n' ' ')
			codes="$codes $rc"
			note "history run $tries: exit $rc, not recorded: $why"
			continue
		fi
		# An unstable (but complete) point is recordable when the scenario
		# judges such points on their trials.
		force=
		[ "$SOUND_ALLOW_UNSTABLE" = true ] && force=--force
		urc=0
		"$PERFSCEN" baseline update $force --from "$TMP/hist.json" --baseline "$TMP/base/history.json" >"$TMP/update.log" 2>&1 || urc=$?
		if [ "$urc" = 3 ]; then
			# baseline update could not record it (exit 3: the machine
			# was too busy for a point to settle).
			why=$(tail -n 1 "$TMP/update.log") codes="$codes 3"
			note "history run $tries: not recorded: $why"
			continue
		fi
		[ "$urc" = 0 ] || die "baseline update failed: $(tail -n 5 "$TMP/update.log")"
		recorded=$((recorded + 1))
		hb=$(jq -r "$(median_of other_cpu)" "$TMP/hist.json") hw=$(jq -r "$(median_of run_queue_wait)" "$TMP/hist.json")
		hl=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo NaN)
		printf '%s\t%s\t%s\n' "$hb" "$hw" "$hl" >>"$TMP/hist.tsv"
		note "history run $recorded/$SOUND_K recorded (other-process CPU $hb, run-queue wait $hw, load $hl)"
	done
	if [ "$SOUND_GATE_NEIGHBOUR" != "$SOUND_NEIGHBOUR" ]; then
		stop_neighbour
		start_neighbour "$SOUND_GATE_NEIGHBOUR"
	fi
	start_hog
	for i in $(seq "$SOUND_N"); do
		start_server "$SOUND_DELAY"
		run_one "$TMP/base/same.yaml" baseline-aa
		stop_server
		start_server "$SOUND_SLOW_DELAY"
		run_one "$TMP/base/slow.yaml" baseline-slow
		stop_server
	done
	stop_hog
	stop_neighbour
fi

# Same-run mode compares two models of one embedded server, whatever
# SOUND_SERVER says (server parameters are per model name).
if [ "$SOUND_SAME_N" -gt 0 ]; then
	start_neighbour "$SOUND_GATE_NEIGHBOUR"
	samerun_scenario "$SOUND_DELAY" "$TMP/same/aa.yaml"
	samerun_scenario "$SOUND_SLOW_DELAY" "$TMP/same/slow.yaml"
	start_hog
	for i in $(seq "$SOUND_SAME_N"); do
		run_one "$TMP/same/aa.yaml" samerun-aa
		run_one "$TMP/same/slow.yaml" samerun-slow
	done
	stop_hog
	stop_neighbour
fi

# Counts per arm with 95% Wilson intervals of the alarm rate among runs that
# reached a verdict (exit 0, 1 or 4).
summary() {
	local hog="no CPU hog"
	[ "$SOUND_HOG" = 1 ] && hog="CPU hog on one core during the gated runs"
	local nb="no neighbour"
	[ "$SOUND_NEIGHBOUR" -gt 0 ] && nb="neighbour busy $SOUND_NEIGHBOUR ms/100 ms on each core"
	[ "$SOUND_GATE_NEIGHBOUR" != "$SOUND_NEIGHBOUR" ] && nb="$nb while the history was recorded, $SOUND_GATE_NEIGHBOUR ms/100 ms during the gated runs"
	echo "Soundness: $SOUND_PROTOCOL, concurrency $SOUND_CONCURRENCY, delay $SOUND_DELAY vs $SOUND_SLOW_DELAY; baseline history K=$SOUND_K; $SOUND_SERVER server; $(nproc) CPUs; $hog; $nb"
	echo
	echo "| mode | arm | runs | exit 1 | exit 0 | exit 4 | exit 3 | exit-1 rate | 95% Wilson interval | exit-0 rate | median throughput | median p95 µs | other-process CPU (median, range) | run-queue wait (median, range) | CPU pressure (median, range) | load average (range) |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---|---|---|"
	for tag in baseline-aa baseline-slow samerun-aa samerun-slow; do
		awk -F'\t' -v tag="$tag" '
			function median(a, n,   i, j, x) {
				for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
			$1 == tag {runs++; c[$2]++; if ($3 != "NaN") {nt++; t[nt] = $3; q[nt] = $4}
				if ($6 != "NaN" && $6 != "") {nb++; b[nb] = $6; bmin = (nb == 1 || $6 < bmin) ? $6 : bmin; bmax = (nb == 1 || $6 > bmax) ? $6 : bmax}
				if ($7 != "NaN" && $7 != "") {nl++; lmin = (nl == 1 || $7 < lmin) ? $7 : lmin; lmax = (nl == 1 || $7 > lmax) ? $7 : lmax}
				if ($8 != "NaN" && $8 != "") {nw++; w[nw] = $8; wmin = (nw == 1 || $8 < wmin) ? $8 : wmin; wmax = (nw == 1 || $8 > wmax) ? $8 : wmax}
				if ($9 != "NaN" && $9 != "") {np++; pr[np] = $9; pmin = (np == 1 || $9 < pmin) ? $9 : pmin; pmax = (np == 1 || $9 > pmax) ? $9 : pmax}}
			END {
				if (!runs) exit
				mode = tag ~ /^baseline/ ? "baseline history" : "same run"
				arm = tag ~ /-aa$/ ? "A/A (false alarms)" : "slowdown (detections)"
				k = c[1] + 0; n = c[0] + c[1] + c[4]
				if (n > 0) {
					z = 1.959964; p = k / n; d = 1 + z * z / n
					ctr = (p + z * z / (2 * n)) / d; h = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
					rate = sprintf("%d/%d = %.2f", k, n, p); ci = sprintf("[%.2f, %.2f]", ctr - h < 0 ? 0 : ctr - h, ctr + h > 1 ? 1 : ctr + h)
				} else { rate = "–"; ci = "–" }
				mt = nt ? sprintf("%.1f", median(t, nt)) : "–"; mq = nt ? sprintf("%.0f", median(q, nt)) : "–"
				pass = n > 0 ? sprintf("%d/%d = %.2f", c[0], n, c[0] / n) : "–"
				mb = nb ? sprintf("%.0f%% (%.0f–%.0f%%)", 100 * median(b, nb), 100 * bmin, 100 * bmax) : "–"
				ml = nl ? sprintf("%.1f–%.1f", lmin, lmax) : "–"
				mw = nw ? sprintf("%.0f%% (%.0f–%.0f%%)", 100 * median(w, nw), 100 * wmin, 100 * wmax) : "–"
				mp = np ? sprintf("%.0f%% (%.0f–%.0f%%)", 100 * median(pr, np), 100 * pmin, 100 * pmax) : "–"
				printf "| %s | %s | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mode, arm, runs, k, c[0] + 0, c[4] + 0, runs - n, rate, ci, pass, mt, mq, mb, mw, mp, ml
			}' "$TMP/runs.tsv"
	done
	echo
	echo "Rates are over runs with a verdict (exit 0, 1 or 4); exit 3 runs are left out. Throughput and p95 medians are of the candidate point."
	if [ -s "$TMP/hist.tsv" ]; then
		echo
		awk -F'\t' '{printf "%s%.0f%%/%.0f%%/%s", (NR > 1 ? ", " : "History runs (other-process CPU / run-queue wait / load average): "), 100 * $1, 100 * $2, $3} END {print ""}' "$TMP/hist.tsv"
	fi
	echo
	echo "Failed checks, by arm (how many runs each failed in):"
	echo
	awk -F'\t' '$5 != "-" && $5 != "" {n = split($5, f, ","); for (i = 1; i <= n; i++) c[$1 ": " f[i]]++}
		END {for (k in c) printf "- %s: %d\n", k, c[k]}' "$TMP/runs.tsv" | sort
}

summary | tee "$TMP/summary.md"
[ -z "$SOUND_OUT" ] || cp "$TMP/summary.md" "$SOUND_OUT"
