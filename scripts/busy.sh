#!/usr/bin/env bash
# Runs COMMAND while real background work (loops of cold `go build -a ./...`
# in scratch copies of this repository, scripts/lib/busy.sh) holds the
# machine's 1-minute load average near a target, then prints the load
# average seen while COMMAND ran. Exits with COMMAND's exit status.
#
#   scripts/busy.sh --load 10 -- bin/perfscen run scenarios/quickstart.yaml
#   scripts/busy.sh --load 20 --no-settle -- make gate
#
# Options:
#   --load N        the target 1-minute load average (0: no builds, the load
#                   average is only sampled)
#   --max N         builders at most (default 12; BUSY_MAX)
#   --settle S      wait at most S seconds for the load average and the
#                   runnable count (averaged over 30 s) to come within
#                   ±15% of the target, and at least two minutes (the
#                   builders' climb and first overshoot), before COMMAND
#                   starts (default 300);
#                   --no-settle starts COMMAND at once
#   --log FILE      keep the load samples (epoch, load1, builders, runnable
#                   tasks; tab-separated) in FILE
#
# Every process it starts is in one process group of its own, killed on
# exit, ^C or TERM; nothing is left running afterwards (scripts/busy-check.sh
# checks that). A TERM or INT sent to this script alone stops the builds
# and sends COMMAND a TERM.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/busy.sh
. "$here/lib/busy.sh"

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
load='' settle=${BUSY_SETTLE_MAX:-300} log=''
while [ $# -gt 0 ]; do
	case $1 in
	--load) load=${2:-}; shift 2 || usage ;;
	--max) export BUSY_MAX=${2:-}; shift 2 || usage ;;
	--settle) settle=${2:-}; shift 2 || usage ;;
	--no-settle) settle=0; shift ;;
	--log) log=${2:-}; shift 2 || usage ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) echo "busy.sh: unknown option $1 (--help lists them)" >&2; exit 2 ;;
	esac
done
[ -n "$load" ] || { echo "busy.sh: --load N is required" >&2; exit 2; }
[ $# -gt 0 ] || { echo "busy.sh: no COMMAND after --" >&2; exit 2; }
command -v go >/dev/null || { echo "busy.sh: go is needed for the builds" >&2; exit 2; }

# COMMAND runs in the background so that a TERM or INT sent to this script
# alone is acted on at once (bash runs no trap while a foreground command
# runs): the builds stop first, then COMMAND gets a TERM and is waited for.
# A ^C at the terminal reaches COMMAND itself, as it would without this
# script: `trap - INT QUIT` undoes the ignoring of SIGINT that bash gives
# a background command.
CMD_PID=
on_signal() {
	trap - INT TERM
	busy_stop
	[ -z "$CMD_PID" ] || { kill -TERM "$CMD_PID" 2>/dev/null; wait "$CMD_PID"; } 2>/dev/null
	exit "$1"
}
trap 'busy_stop' EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
[ -z "$log" ] || export BUSY_KEEP_LOG=$log
busy_start "$load" || exit 2
echo "busy.sh: builds in process group $(cat "$BUSY_DIR/pgid") (scratch $BUSY_DIR)" >&2
if [ "$settle" -gt 0 ] && [ "$load" != 0 ]; then
	echo "busy.sh: waiting up to ${settle}s for the load average and the runnable count (over ${BUSY_STEADY:-30}s) to reach $load ± ${BUSY_BAND:-15}%" >&2
	from=$(date +%s)
	if ! busy_settle "$settle"; then
		read -r _ l b r <<<"$(busy_now)"
		echo "busy.sh: load average $l, runnable $r (last 10 s), with $b builder(s) after $(($(date +%s) - from))s, not at the target; starting anyway" >&2
	fi
fi
start=$(date +%s)
( trap - INT QUIT; exec "$@" ) &
CMD_PID=$!
rc=0
wait "$CMD_PID" || rc=$?
CMD_PID=
end=$(date +%s)
read -r lmin lmed lmax n bmin bmax <<<"$(busy_stats "$start" "$end")"
echo "busy.sh: load average while the command ran ($((end - start))s, $n samples): min $lmin, median $lmed, max $lmax; builders $bmin-$bmax (target $load); exit $rc" >&2
exit "$rc"
