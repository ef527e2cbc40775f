#!/usr/bin/env bash
# scripts/busy.sh leaves nothing behind: after COMMAND ends, after ^C,
# after TERM, and after the script itself is killed with SIGKILL (its
# controller notices and stops its builds), no process of its group is
# left and its scratch folder is gone. Each case runs with a target load
# far above the machine's, so builders are running when it ends. Then
# busy_settle's decision on recorded samples.
#
#   scripts/busy-check.sh        (make busy-check)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

# case NAME SIGNAL: runs busy.sh in a session of its own (a background job
# of a script ignores SIGINT otherwise), waits until two builders run,
# sends SIGNAL (none: lets COMMAND end), and checks what is left.
case_() {
	local name=$1 sig=$2 cmd="sleep 600" pid pgid dir t0=$SECONDS
	[ "$sig" = none ] && cmd="sleep 15"
	# The subshell undoes the ignoring of SIGINT that bash gives background
	# commands (a shell started with SIGINT ignored cannot trap it).
	(
		trap - INT QUIT
		exec setsid bash scripts/busy.sh --load 999 --max 2 --no-settle -- $cmd 2>"$TMP/$name.log"
	) &
	pid=$!
	for _ in $(seq 300); do
		grep -q 'builds in process group' "$TMP/$name.log" && break
		sleep 0.1
	done
	pgid=$(sed -n 's/.*builds in process group \([0-9]*\) (scratch \(.*\))$/\1/p' "$TMP/$name.log")
	dir=$(sed -n 's/.*builds in process group \([0-9]*\) (scratch \(.*\))$/\2/p' "$TMP/$name.log")
	[ -n "$pgid" ] || { echo "FAIL $name: busy.sh did not start: $(cat "$TMP/$name.log")"; fail=1; kill "$pid" 2>/dev/null; return; }
	# Two builders: the controller adds one every 5 s.
	for _ in $(seq 300); do
		[ "$(pgrep -g "$pgid" -x go | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	local builders
	builders=$(pgrep -g "$pgid" -x go | wc -l)
	[ "$sig" = none ] || kill "-$sig" "$pid"
	local t1=$SECONDS
	{ wait "$pid"; } 2>/dev/null
	# busy.sh acts on the signal at once: it does not wait for COMMAND
	# (sleep 600) to end first. Stopping the builds takes seconds.
	if [ "$sig" != none ] && [ $((SECONDS - t1)) -ge 120 ]; then
		echo "FAIL $name: busy.sh took $((SECONDS - t1)) s to end after SIG$sig"
		fail=1
	fi
	# COMMAND outlives a SIGKILLed busy.sh (it is the caller's, not a build).
	[ "$sig" = KILL ] && kill $(pgrep -g "$pid") 2>/dev/null
	# After SIGKILL the controller stops within a second or two of seeing
	# its owner gone, then removes the scratch copies and build caches
	# itself (tens of seconds on a loaded machine).
	for _ in $(seq 1800); do
		pgrep -g "$pgid" >/dev/null || break
		sleep 0.1
	done
	if pgrep -g "$pgid" >/dev/null; then
		echo "FAIL $name: left behind in process group $pgid:"
		ps -o pid,args -g "$pgid"
		kill -KILL -- "-$pgid" 2>/dev/null
		fail=1
	elif pgrep -g "$pid" >/dev/null; then
		echo "FAIL $name: COMMAND still running after busy.sh ended:"
		ps -o pid,args -g "$pid"
		kill -KILL -- "-$pid" 2>/dev/null
		fail=1
	elif [ -e "$dir" ]; then
		echo "FAIL $name: scratch folder $dir left behind"
		fail=1
	else
		echo "ok   $name: $builders go build(s) were running; nothing left in process group $pgid, $dir removed ($((SECONDS - t0)) s)"
	fi
}
case_ exit none
case_ interrupt INT
case_ term TERM
case_ killed KILL

# settle NAME WANT: busy_settle's answer (0 settled, 1 not) over the
# samples on stdin (epoch, load average, builders, runnable over 10 s), as
# the controller writes them, against a target of 5; no minimum wait, one
# second at most.
settle() {
	local name=$1 want=$2 dir rc
	dir=$(mktemp -d "$TMP/settle.XXXXXX")
	cat >"$dir/load.tsv"
	# shellcheck source=lib/busy.sh
	(source scripts/lib/busy.sh && BUSY_DIR=$dir BUSY_TARGET=5 BUSY_MIN_SETTLE=0 busy_settle 1)
	rc=$?
	if [ "$rc" = "$want" ]; then echo "ok   settle $name: $rc"; else echo "FAIL settle $name: busy_settle returned $rc, want $want"; fail=1; fi
}
samples() { local i; for i in $(seq 30); do printf '%d\t%s\t%s\t%s\n' "$i" "$1" "$2" "$3"; done; }
samples 5.10 2 4.60 | settle steady 0
# The load average at the target while the controller still runs four
# builders: the runnable count is half again the target.
samples 5.10 4 7.80 | settle 'runnable above' 1
samples 6.10 2 5.00 | settle 'average above' 1
# Between two builder counts for good (2: 3.6 runnable, 4: 6.4): the runs
# meet their mean.
for i in $(seq 30); do if [ $((i % 2)) = 1 ]; then printf '%d\t5.10\t2\t3.60\n' "$i"; else printf '%d\t5.10\t4\t6.40\n' "$i"; fi; done | settle alternating 0
samples 5.10 2 4.60 | head -n 10 | settle 'ten seconds of samples' 1
exit "$fail"
