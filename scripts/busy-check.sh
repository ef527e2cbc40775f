#!/usr/bin/env bash
# scripts/busy.sh leaves nothing behind: after COMMAND ends, after ^C,
# after TERM, and after the script itself is killed with SIGKILL (its
# controller notices and stops its builds), no process of its group is
# left and its scratch folder is gone. Each case runs with a target load
# far above the machine's, so builders are running when it ends.
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
exit "$fail"
