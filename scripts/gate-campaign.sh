#!/usr/bin/env bash
# The gate measured on a shared machine with real background work: every
# cell of loads (~5, ~10, ~20) × models (the sleep-bound delay model, the
# CPU-bound mlp_reference) × modes (baseline history, same-job A/B), each
# one scripts/soundness.sh run with the load staged by scripts/lib/busy.sh
# (loops of cold `go build -a` held at the target load average), then
# `make gate` on the unchanged tree, 10 times at load ~10. Every cell's
# Markdown table, raw TSV and log go under CAMPAIGN_DIR; campaign.md
# gathers them.
#
#   scripts/gate-campaign.sh                      (make gate-campaign)
#   CAMPAIGN_DRY=1 scripts/gate-campaign.sh       the plan and its estimated time only
#   CAMPAIGN_ONLY='load10-*' scripts/gate-campaign.sh   some cells (a glob on the names)
#
# Resumable: a cell whose table is already in CAMPAIGN_DIR is skipped (a
# cell stopped half-way starts again from its beginning), as is each
# `make gate` run already recorded. A cell whose history could not be
# recorded (soundness.sh exit 3) is a result, kept as done.
#
# Settings (environment):
#   CAMPAIGN_DIR=out/gate-campaign   results
#   CAMPAIGN_LOADS="5 10 20"         CAMPAIGN_MODELS="delay cpu"   CAMPAIGN_MODES="history ab"
#   CAMPAIGN_MID_LOAD=10             the load with the larger counts
#   CAMPAIGN_N_MID=40                runs of each arm at CAMPAIGN_MID_LOAD
#   CAMPAIGN_N=20                    runs of each arm at the other loads
#   CAMPAIGN_SLOWDOWNS_DELAY="2"     the delay model's slowdown arms
#   CAMPAIGN_SLOWDOWNS_CPU="2"       the cpu model's, and at CAMPAIGN_MID_LOAD
#   CAMPAIGN_SLOWDOWNS_CPU_MID="2 1.1"   (the 10% slowdown arm)
#   CAMPAIGN_GATE_RUNS=10  CAMPAIGN_GATE_LOAD=10   make gate runs (0: none)
#   CAMPAIGN_ONLY=                   a glob: only the cells whose names match
#                                    (load10-cpu-ab, gate-load10, …)
#   CAMPAIGN_DRY=1                   print the plan and the estimate, run nothing
#   SOUND_*                          passed to every cell (SOUND_STABILITY=25%,
#                                    SOUND_ALLOW_UNSTABLE=true, SOUND_K, …)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
: "${CAMPAIGN_DIR:=out/gate-campaign}"
: "${CAMPAIGN_LOADS:=5 10 20}"
: "${CAMPAIGN_MODELS:=delay cpu}"
: "${CAMPAIGN_MODES:=history ab}"
: "${CAMPAIGN_MID_LOAD:=10}"
: "${CAMPAIGN_N_MID:=40}"
: "${CAMPAIGN_N:=20}"
: "${CAMPAIGN_SLOWDOWNS_DELAY:=2}"
: "${CAMPAIGN_SLOWDOWNS_CPU:=2}"
: "${CAMPAIGN_SLOWDOWNS_CPU_MID:=2 1.1}"
: "${CAMPAIGN_GATE_RUNS:=10}"
: "${CAMPAIGN_GATE_LOAD:=10}"
: "${CAMPAIGN_ONLY:=*}"
: "${CAMPAIGN_DRY:=0}"
export PERFSCEN=${PERFSCEN:-bin/perfscen}

die() { echo "gate-campaign: $*" >&2; exit 2; }
note() { echo "gate-campaign: $*" >&2; }
mkdir -p "$CAMPAIGN_DIR" || die "cannot create $CAMPAIGN_DIR"

# shellcheck source=lib/busy.sh
. scripts/lib/busy.sh
CHILD_PID=
trap '[ -z "$CHILD_PID" ] || kill -TERM "$CHILD_PID" 2>/dev/null; busy_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# run_child CMD...: as in soundness.sh, so that a TERM reaches the cell at
# once and its own cleanup stops its servers and builds.
run_child() {
	local rc=0
	( trap - INT QUIT; exec "$@" ) &
	CHILD_PID=$!
	wait "$CHILD_PID" || rc=$?
	CHILD_PID=
	return "$rc"
}

# ---- the plan ----

# cells: "NAME LOAD MODEL MODE N SLOWDOWNS…", one a line.
cells() {
	local load model mode n sl
	for load in $CAMPAIGN_LOADS; do
		for model in $CAMPAIGN_MODELS; do
			for mode in $CAMPAIGN_MODES; do
				n=$CAMPAIGN_N
				[ "$load" != "$CAMPAIGN_MID_LOAD" ] || n=$CAMPAIGN_N_MID
				if [ "$model" = delay ]; then
					sl=$CAMPAIGN_SLOWDOWNS_DELAY
				elif [ "$load" = "$CAMPAIGN_MID_LOAD" ]; then
					sl=$CAMPAIGN_SLOWDOWNS_CPU_MID
				else
					sl=$CAMPAIGN_SLOWDOWNS_CPU
				fi
				echo "load$load-$model-$mode $load $model $mode $n $sl"
			done
		done
	done
}
selected() {
	# shellcheck disable=SC2254
	case $1 in $CAMPAIGN_ONLY) return 0 ;; esac
	return 1
}
cell_done() { [ -s "$CAMPAIGN_DIR/$1.md" ] && [ -s "$CAMPAIGN_DIR/$1.exit" ]; }
gate_name=gate-load$CAMPAIGN_GATE_LOAD
gate_done_runs() { ls "$CAMPAIGN_DIR/$gate_name"/run-*.exit 2>/dev/null | wc -l; }

# Seconds per run and per step, for the estimate: medians of what the cells
# already in CAMPAIGN_DIR took where there are some (per model and mode,
# plus 2 s for the servers' start and stop), else the means of short runs
# on a 2-core machine at load average 25-40 (2026-12-06: history runs 6-10
# s; A/B runs 28-34 s for a 2x slowdown, 70-77 s for A/A and 10%, which
# took the extra trials; make gate 387 s).
per_run() {
	local model=$1 mode=$2 fallback s
	case $model-$mode in
	delay-history) fallback=10 ;;
	cpu-history) fallback=12 ;;
	delay-ab) fallback=51 ;;
	cpu-ab) fallback=63 ;;
	esac
	s=$(cat "$CAMPAIGN_DIR"/load*-"$model-$mode".tsv 2>/dev/null | awk -F'\t' '$1 != "mode" && $2 != "record" {n++; w[n] = $5}
		END {if (n < 5) exit; for (i = 2; i <= n; i++) {x = w[i]; for (j = i - 1; j >= 1 && w[j] + 0 > x + 0; j--) w[j + 1] = w[j]; w[j + 1] = x}; printf "%d\n", w[int((n + 1) / 2)] + 2}')
	echo "${s:-$fallback}"
}
SETTLE_S=150   # the load average climbing to its target, per cell
GATE_RUN_S=${CAMPAIGN_GATE_RUN_S:-400}
K=${SOUND_K:-5}

total=0 todo=0 skipped=0 runs=0
plan=$(cells)
echo "gate-campaign: results in $CAMPAIGN_DIR; cells (runs of each arm, arms):" >&2
while read -r name load model mode n sl; do
	selected "$name" || continue
	narms=$(($(echo "$sl" | wc -w) + 1))
	if cell_done "$name"; then
		skipped=$((skipped + 1))
		printf '  %-22s done (exit %s), skipped\n' "$name" "$(cat "$CAMPAIGN_DIR/$name.exit")" >&2
		continue
	fi
	r=$(per_run "$model" "$mode")
	s=$((SETTLE_S + n * narms * r))
	[ "$mode" != history ] || s=$((s + K * r))
	total=$((total + s)) todo=$((todo + 1)) runs=$((runs + n * narms))
	printf '  %-22s %3d × %d arms (A/A and %s×), ~%d s a run: ~%d min\n' "$name" "$n" "$narms" "${sl// /×, }" "$r" $((s / 60)) >&2
done <<<"$plan"
gate_todo=0
if [ "$CAMPAIGN_GATE_RUNS" -gt 0 ] && selected "$gate_name"; then
	gate_todo=$((CAMPAIGN_GATE_RUNS - $(gate_done_runs)))
	[ "$gate_todo" -gt 0 ] || gate_todo=0
	total=$((total + gate_todo * GATE_RUN_S + (gate_todo > 0 ? SETTLE_S : 0)))
	printf '  %-22s make gate %d times at load ~%s (%d done), ~%d s a run: ~%d min\n' "$gate_name" "$CAMPAIGN_GATE_RUNS" "$CAMPAIGN_GATE_LOAD" $((CAMPAIGN_GATE_RUNS - gate_todo)) "$GATE_RUN_S" $((gate_todo * GATE_RUN_S / 60)) >&2
fi
note "$todo cell(s) to run ($skipped done), $runs gated runs, $gate_todo make gate run(s): estimated $((total / 3600)) h $((total % 3600 / 60)) min in all"
[ "$CAMPAIGN_DRY" = 1 ] && exit 0

[ -x "$PERFSCEN" ] || make build >/dev/null || die "cannot build $PERFSCEN"

# ---- the cells ----

failed=0
while read -r name load model mode n sl; do
	selected "$name" || continue
	cell_done "$name" && continue
	note "$name: SOUND_LOAD=$load SOUND_MODEL=$model SOUND_MODE=$mode SOUND_N=$n SOUND_SLOWDOWNS=\"$sl\" (from $(date -u +%H:%M) UTC; log $CAMPAIGN_DIR/$name.log)"
	rc=0
	SOUND_LOAD=$load SOUND_MODEL=$model SOUND_MODE=$mode SOUND_N=$n SOUND_SLOWDOWNS=$sl SOUND_SAME_N=0 \
		SOUND_OUT=$CAMPAIGN_DIR/$name.md SOUND_TSV=$CAMPAIGN_DIR/$name.tsv \
		run_child bash scripts/soundness.sh >"$CAMPAIGN_DIR/$name.log" 2>&1 || rc=$?
	case $rc in
	0 | 3)
		echo "$rc" >"$CAMPAIGN_DIR/$name.exit"
		note "$name: done, exit $rc ($(date -u +%H:%M) UTC)"
		;;
	*)
		# Not a result: the harness failed (exit 2) or was stopped. The
		# cell is left to run again.
		rm -f "$CAMPAIGN_DIR/$name.md" "$CAMPAIGN_DIR/$name.tsv"
		note "$name: soundness.sh ended $rc, not a result: $(tail -n 3 "$CAMPAIGN_DIR/$name.log")"
		failed=1
		[ "$rc" -lt 128 ] || exit "$rc"
		;;
	esac
done <<<"$plan"

# ---- make gate on the unchanged tree ----

# not_passed LOG: the scenarios of perfscen's roll-up table that did not
# exit 0, "name: outcome (exit N): deciding checks" (cut short).
not_passed() {
	awk -F'  +' '/^scenario +outcome +exit/ {t = 1; next} t && NF < 3 {t = 0} t && $3 != "0" {
		printf "%s%s: %s (exit %s): %s", (n++ ? "; " : ""), $1, $2, $3, substr($4, 1, 160)}' "$1" | tr '\t|' '  '
}

gate_runs() {
	local dir=$CAMPAIGN_DIR/$gate_name i rc code start end lmin lmed lmax bmin bmax
	mkdir -p "$dir"
	busy_start "$CAMPAIGN_GATE_LOAD" || die "cannot start the background work"
	note "$gate_name: staging load ~$CAMPAIGN_GATE_LOAD"
	busy_settle || note "$gate_name: load average $(busy_now | cut -d' ' -f2) after the wait, not at ~$CAMPAIGN_GATE_LOAD; measuring anyway"
	for i in $(seq "$CAMPAIGN_GATE_RUNS"); do
		[ -s "$dir/run-$i.exit" ] && continue
		rm -f out/gate.exit
		start=$(date +%s) rc=0
		run_child make gate >"$dir/run-$i.log" 2>&1 || rc=$?
		end=$(date +%s)
		[ "$rc" -lt 128 ] || exit "$rc"
		# make says 0 or 2; perfscen's own code is in out/gate.exit.
		code=$(cat out/gate.exit 2>/dev/null || echo "make-$rc")
		read -r lmin lmed lmax _ bmin bmax <<<"$(busy_stats "$start" "$end")"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$(date -u -d "@$start" +%FT%TZ)" $((end - start)) "$code" "$lmin" "$lmed" "$lmax" "$bmin-$bmax" \
			"$(not_passed "$dir/run-$i.log")" >"$dir/run-$i.tsv"
		echo "$code" >"$dir/run-$i.exit"
		note "$gate_name run $i: perfscen exit $code in $((end - start)) s, load $lmin–$lmax"
	done
	busy_stop
	{
		echo "\`make gate\` on an unchanged tree, $CAMPAIGN_GATE_RUNS times, background builds held at load average ~$CAMPAIGN_GATE_LOAD ($(nproc) CPUs):"
		echo
		echo "| run | start (UTC) | wall s | perfscen exit | load average (median, range) | builders | not passed |"
		echo "|---:|---|---:|---:|---|---|---|"
		for i in $(seq "$CAMPAIGN_GATE_RUNS"); do
			[ -s "$dir/run-$i.tsv" ] && awk -F'\t' '{printf "| %s | %s | %s | %s | %s (%s–%s) | %s | %s |\n", $1, $2, $3, $4, $6, $5, $7, $8, $9 == "" ? "–" : $9}' "$dir/run-$i.tsv"
		done
		echo
		cat "$dir"/run-*.exit | sort | uniq -c | awk '{printf "%sexit %s: %d", (n++ ? ", " : "Counts: "), $2, $1} END {print ""}'
	} >"$CAMPAIGN_DIR/$gate_name.md.tmp" && mv "$CAMPAIGN_DIR/$gate_name.md.tmp" "$CAMPAIGN_DIR/$gate_name.md"
}
if [ "$gate_todo" -gt 0 ]; then
	gate_runs
fi

# ---- campaign.md ----
{
	echo "# Gate campaign ($(date -u '+%F %H:%M') UTC, $(git rev-parse --short HEAD 2>/dev/null))"
	while read -r name _; do
		[ -s "$CAMPAIGN_DIR/$name.md" ] || continue
		echo
		echo "## $name (soundness.sh exit $(cat "$CAMPAIGN_DIR/$name.exit" 2>/dev/null || echo '?'))"
		echo
		cat "$CAMPAIGN_DIR/$name.md"
	done <<<"$plan"
	if [ -s "$CAMPAIGN_DIR/$gate_name.md" ]; then
		echo
		echo "## $gate_name"
		echo
		cat "$CAMPAIGN_DIR/$gate_name.md"
	fi
} >"$CAMPAIGN_DIR/campaign.md.tmp" && mv "$CAMPAIGN_DIR/campaign.md.tmp" "$CAMPAIGN_DIR/campaign.md"
note "tables gathered in $CAMPAIGN_DIR/campaign.md"
exit "$failed"
