# shellcheck shell=bash
# Staged background work: the load of a shared CI runner made by real
# builds, not a busy loop. Loops of `go build -a ./...` (each in its own
# scratch copy of the repository, `git archive HEAD | tar -x`, with its own
# build cache emptied before every build, so every build compiles the
# standard library and every dependency again) are added or removed every
# few seconds by a controller that holds the 1-minute load average near a
# target, whatever else runs on the machine. A busy loop keeps one core
# busy all the time; a build forks compilers, reads and writes files and
# wakes up and sleeps as CI jobs do, which is the disturbance a gate on a
# shared runner meets.
#
# Sourced by scripts/soundness.sh and scripts/busy.sh:
#
#   busy_start TARGET   starts the controller (TARGET 0: it only samples the
#                       load average, adding no builds) in a session and
#                       process group of its own; sets BUSY_DIR
#   busy_settle [MAX_S] waits until the 1-minute load average and the
#                       runnable count averaged over BUSY_STEADY (30) s are
#                       both within BUSY_BAND (±15%) of the target, and at
#                       least BUSY_MIN_SETTLE (120) s, at most MAX_S
#                       seconds (default BUSY_SETTLE_MAX, 300); returns 1
#                       when it did not get there (the builds cannot reach
#                       it), at once (after 20 s) when other work alone
#                       holds the machine above it
#   busy_stats FROM TO  prints "MIN MEDIAN MAX SAMPLES BUILDERS_MIN
#                       BUILDERS_MAX" of the 1-minute load average sampled
#                       between two epoch seconds (NaN where no sample)
#   busy_stop           stops every process it started (the whole process
#                       group) and removes the scratch copies
#
# Settings (environment): BUSY_MAX=12 builders at most; BUSY_PERIOD=5
# seconds between decisions; BUSY_BUILD_FLAGS="-p 1" (one package at a time
# per build, so that one builder is one or two runnable tasks and the load
# can be held in small steps); BUSY_BAND=15 (percent); BUSY_REPO (the
# repository to copy, default the one this file is in); BUSY_SCRATCH (where
# the scratch folder goes, default $TMPDIR or /tmp).
#
# Nothing is left behind: the controller and everything it starts share
# one process group, which busy_stop kills whole; the controller also stops
# on its own (and kills its builds) when the process that started it is
# gone, so a harness killed with SIGKILL leaves no builder running for long.

BUSY_LIB=${BASH_SOURCE[0]}
BUSY_DIR=
BUSY_PID=
BUSY_TARGET=0

busy_start() {
	local target=$1 repo=${BUSY_REPO:-$(cd "$(dirname "$BUSY_LIB")/../.." && pwd)}
	[[ "$target" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "busy: the target load must be a number, got \"$target\"" >&2; return 2; }
	BUSY_TARGET=$target
	BUSY_DIR=$(mktemp -d "${BUSY_SCRATCH:-${TMPDIR:-/tmp}}/busy.XXXXXX")
	# Own session, so its group is its own: a ^C at the terminal reaches the
	# harness (whose trap calls busy_stop), not the builds half-way.
	setsid bash "$BUSY_LIB" __controller "$target" "$BUSY_DIR" "$$" "$repo" >"$BUSY_DIR/controller.log" 2>&1 </dev/null &
	BUSY_PID=$!
	local i
	for i in $(seq 100); do
		[ -s "$BUSY_DIR/pgid" ] && [ -s "$BUSY_DIR/load.tsv" ] && return 0
		kill -0 "$BUSY_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "busy: the controller did not start: $(tail -n 5 "$BUSY_DIR/controller.log")" >&2
	busy_stop
	return 1
}

# busy_now: the newest sample, "EPOCH LOAD1 BUILDERS RUNNABLE".
busy_now() {
	[ -n "$BUSY_DIR" ] && [ -s "$BUSY_DIR/load.tsv" ] || { echo "NaN NaN 0 NaN"; return; }
	tail -n 1 "$BUSY_DIR/load.tsv" | tr '\t' ' '
}

busy_settle() {
	local max=${1:-${BUSY_SETTLE_MAX:-300}} band=${BUSY_BAND:-15} start now load builders runnable least
	start=$(date +%s) least=${BUSY_MIN_SETTLE:-120}
	[ "$least" -le "$max" ] || least=$max
	awk -v t="$BUSY_TARGET" 'BEGIN {exit !(t <= 0)}' && return 0
	while :; do
		read -r _ load builders runnable <<<"$(busy_now)"
		# The 1-minute average lags what runs now by a minute: while the
		# controller is still adding builders (or taking them away) it reads
		# the target with many more (or fewer) tasks runnable, and a builder
		# just started is not yet at its full run queue. So the average and
		# the runnable count over the last BUSY_STEADY (30) seconds must
		# agree, and not before BUSY_MIN_SETTLE (120) seconds: the first
		# minute and a half is the controller's climb and its first
		# overshoot (builders 0, 4, then 0 again at a target of 5), which
		# averages to the target over 30 s without being it. Otherwise the
		# first runs (a history) meet another load than the runs after.
		if [ $(($(date +%s) - start)) -ge "$least" ] && busy__steady "$band"; then
			return 0
		fi
		now=$(date +%s)
		[ $((now - start)) -lt "$max" ] || return 1
		# Other work alone holds the machine above the band: no builder
		# of ours to remove, waiting cannot help. Only when it runs now:
		# an average still falling from earlier work (the last cell's
		# builders) with little runnable is worth waiting for.
		if [ $((now - start)) -ge 20 ] && [ "$builders" = 0 ] &&
			awk -v l="$load" -v r="$runnable" -v t="$BUSY_TARGET" -v b="$band" 'BEGIN {hi = t * (1 + b / 100)
				exit !(l > hi && (r == "" || r == "NaN" || r > hi))}'; then
			return 1
		fi
		sleep 5
	done
}

# busy__steady BAND: the last sample's load average, and the runnable
# count averaged over the last BUSY_STEADY (30) seconds of samples, are
# within BAND percent of the target. (Not the builder count: at a target
# between what two and four builders make runnable the controller moves
# between them for good, and the runnable count over 30 s is what the runs
# meet.)
busy__steady() {
	[ -n "$BUSY_DIR" ] && [ -s "$BUSY_DIR/load.tsv" ] || return 1
	tail -n "${BUSY_STEADY:-30}" "$BUSY_DIR/load.tsv" | awk -F'\t' -v t="$BUSY_TARGET" -v b="$1" -v need="${BUSY_STEADY:-30}" '
		{n++; l = $2; if ($4 == "" || $4 == "NaN") blind = 1; else r += $4}
		END {
			lo = t * (1 - b / 100); hi = t * (1 + b / 100)
			if (n < need || l < lo || l > hi) exit 1
			exit !(blind || (r / n >= lo && r / n <= hi))
		}'
}

busy_stats() {
	local from=$1 to=$2
	[ -n "$BUSY_DIR" ] && [ -s "$BUSY_DIR/load.tsv" ] || { echo "NaN NaN NaN 0 NaN NaN"; return; }
	awk -F'\t' -v from="$from" -v to="$to" '
		$1 >= from && $1 <= to {n++; l[n] = $2; b = $3 + 0
			bmin = (n == 1 || b < bmin) ? b : bmin; bmax = (n == 1 || b > bmax) ? b : bmax}
		END {
			if (!n) { print "NaN NaN NaN 0 NaN NaN"; exit }
			for (i = 2; i <= n; i++) { x = l[i]; for (j = i - 1; j >= 1 && l[j] + 0 > x + 0; j--) l[j + 1] = l[j]; l[j + 1] = x }
			med = n % 2 ? l[(n + 1) / 2] : (l[n / 2] + l[n / 2 + 1]) / 2
			printf "%.2f %.2f %.2f %d %d %d\n", l[1], med, l[n], n, bmin, bmax
		}' "$BUSY_DIR/load.tsv"
}

busy_stop() {
	[ -n "$BUSY_DIR" ] || return 0
	local pgid='' i
	[ -s "$BUSY_DIR/pgid" ] && pgid=$(cat "$BUSY_DIR/pgid")
	if [ -n "$BUSY_PID" ]; then
		kill -TERM "$BUSY_PID" 2>/dev/null || true
		# The controller kills its builds and exits; on a loaded machine
		# that takes a few seconds.
		for i in $(seq 200); do kill -0 "$BUSY_PID" 2>/dev/null || break; sleep 0.1; done
	fi
	# Whatever is left of the group (the controller stuck, a compiler
	# orphaned between a builder's death and its own).
	if [ -n "$pgid" ]; then
		kill -KILL -- "-$pgid" 2>/dev/null || true
		for i in $(seq 50); do pgrep -g "$pgid" >/dev/null 2>&1 || break; sleep 0.1; done
	fi
	# (Braces: bash reports a killed job on stderr at wait.)
	[ -z "$BUSY_PID" ] || { wait "$BUSY_PID"; } 2>/dev/null || true
	BUSY_PID=
	# BUSY_KEEP_LOG=FILE keeps the samples (and FILE.controller the
	# controller's decisions) after the folder is gone.
	if [ -n "${BUSY_KEEP_LOG:-}" ]; then
		cp "$BUSY_DIR/load.tsv" "$BUSY_KEEP_LOG" 2>/dev/null || true
		cp "$BUSY_DIR/controller.log" "$BUSY_KEEP_LOG.controller" 2>/dev/null || true
	fi
	rm -rf "$BUSY_DIR"
	BUSY_DIR=
}

# ---- the controller (runs as `bash busy.sh __controller ...`) ----

# busy__tree PID: PID and its descendants, parents first.
busy__tree() {
	local c
	echo "$1"
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do busy__tree "$c"; done
}

# busy__kill_tree PID: stops the whole tree first (a stopped process forks
# nothing), collects it again, then kills it.
busy__kill_tree() {
	local pids
	pids=$(busy__tree "$1")
	# shellcheck disable=SC2086
	kill -STOP $pids 2>/dev/null || true
	pids=$(busy__tree "$1")
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}

# busy__builder IDX: one loop of cold builds in its own copy and cache.
busy__builder() {
	local idx=$1 src=$BUSY_CDIR/src.$1 cache=$BUSY_CDIR/cache.$1 tmp=$BUSY_CDIR/tmp.$1 rc
	if [ ! -d "$src" ]; then
		mkdir -p "$src.tmp" && git -C "$BUSY_REPO" archive HEAD | tar -x -C "$src.tmp" && mv "$src.tmp" "$src" || {
			echo "builder $idx: cannot copy $BUSY_REPO" >&2
			return 1
		}
	fi
	while :; do
		rm -rf "$cache" "$tmp"
		mkdir -p "$tmp"
		rc=0
		# The go command's work folder goes in the scratch folder too, so a
		# build killed half-way leaves nothing in $TMPDIR.
		# shellcheck disable=SC2086
		(cd "$src" && GOCACHE=$cache GOTMPDIR=$tmp GOPROXY=off exec go build -a ${BUSY_BUILD_FLAGS--p 1} ./...) >"$BUSY_CDIR/builder.$idx.log" 2>&1 || rc=$?
		echo "$(date +%s) builder $idx: build exit $rc"
		# A build that cannot run at all would otherwise spin.
		[ "$rc" = 0 ] || { tail -n 3 "$BUSY_CDIR/builder.$idx.log"; sleep 5; }
	done
}

busy__controller() {
	BUSY_TARGET=$1 BUSY_CDIR=$2 BUSY_OWNER=$3 BUSY_REPO=$4
	local period=${BUSY_PERIOD:-5} max=${BUSY_MAX:-12} band=${BUSY_BAND:-15}
	local -a pids=()
	local -a runq=()
	busy__shutdown() {
		trap - TERM INT HUP EXIT
		local p
		for p in "${pids[@]}"; do busy__kill_tree "$p"; done
		wait 2>/dev/null
		# The owner removes the folder (busy_stop), after the group is
		# gone; when the owner is gone nobody else will. On a loaded
		# machine removing the caches takes tens of seconds.
		kill -0 "$BUSY_OWNER" 2>/dev/null || rm -rf "$BUSY_CDIR"
		echo "$(date +%s) controller: stopped"
		# Anything else of the group still alive (a compiler orphaned
		# between its builder's death and its own).
		local rest
		rest=$(pgrep -g "$(ps -o pgid= $$ | tr -d ' ')" | grep -vx "$$")
		# shellcheck disable=SC2086
		[ -z "$rest" ] || kill -KILL $rest 2>/dev/null
		exit 0
	}
	trap busy__shutdown TERM INT HUP EXIT
	ps -o pgid= $$ | tr -d ' ' >"$BUSY_CDIR/pgid.tmp" && mv "$BUSY_CDIR/pgid.tmp" "$BUSY_CDIR/pgid"
	# Integer arithmetic in hundredths; bash has no floating point.
	local t100 lo hi
	t100=$(awk -v t="$BUSY_TARGET" 'BEGIN {printf "%d", t * 100}')
	lo=$((t100 * (100 - band) / 100)) hi=$((t100 * (100 + band) / 100))
	# Inside the band, a builder is added below 95% of the target and one
	# removed above 105%: the 1-minute average lags the runnable count by
	# a minute, so the decision also asks the runnable count (averaged over
	# the last 10 s) to agree, which stops the controller piling builders on
	# while the average is still climbing towards what it already has.
	local addbelow=$((t100 * 95 / 100)) rmabove=$((t100 * 105 / 100))
	echo "$(date +%s) controller: target $BUSY_TARGET, band $lo-$hi (hundredths), at most $max builders, decisions every ${period}s"
	local tick=0 l1 nr sum n i avg l100 now
	while :; do
		kill -0 "$BUSY_OWNER" 2>/dev/null || { echo "$(date +%s) controller: owner $BUSY_OWNER gone"; busy__shutdown; }
		read -r l1 _ _ nr _ </proc/loadavg
		nr=${nr%/*}
		# This shell is running while it reads.
		runq+=($((nr > 0 ? nr - 1 : 0)))
		[ "${#runq[@]}" -le 10 ] || runq=("${runq[@]:1}")
		sum=0 n=${#runq[@]}
		for i in "${runq[@]}"; do sum=$((sum + i)); done
		avg=$((sum * 100 / n))
		now=$(date +%s)
		printf '%s\t%s\t%d\t%d.%02d\n' "$now" "$l1" "${#pids[@]}" $((avg / 100)) $((avg % 100)) >>"$BUSY_CDIR/load.tsv"
		l100=$((10#${l1%.*} * 100 + 10#${l1#*.}))
		if [ "$t100" -gt 0 ] && [ $((tick % period)) = 0 ] && [ "$tick" -gt 0 ]; then
			if [ "$l100" -lt "$addbelow" ] && [ "$avg" -lt "$t100" ] && [ "${#pids[@]}" -lt "$max" ]; then
				busy__builder "${#pids[@]}" &
				pids+=($!)
				echo "$now controller: load $l1, runnable $((avg / 100)): builder $((${#pids[@]} - 1)) added (${#pids[@]} running)"
			elif [ "$l100" -gt "$rmabove" ] && [ "$avg" -gt "$t100" ] && [ "${#pids[@]}" -gt 0 ]; then
				busy__kill_tree "${pids[-1]}"
				wait "${pids[-1]}" 2>/dev/null
				unset 'pids[-1]'
				echo "$now controller: load $l1, runnable $((avg / 100)): a builder removed (${#pids[@]} running)"
			fi
		fi
		tick=$((tick + 1))
		sleep 1
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = __controller ]; then
	shift
	busy__controller "$@"
fi
