#!/usr/bin/env bash
# Records a gate job's passing runs in their baseline histories: what a
# default-branch job does after ci/perfscen-gate.sh, so that the history
# grows with every run that passed there (and never from a pull request).
#
#   ci/perfscen-record.sh
#
# Every result file in $PERFSCEN_OUT (<scenario>.json) is one scenario's
# run. A run whose verdict is a pass is appended to the baseline it was
# gated against (`perfscen baseline update --from`), under the testbed it
# ran on; its points that did not settle (allow_unstable: the gate judged
# them on their kept trials) are recorded marked unstable, and named. A run
# that did not pass is left out, with its verdict. What was recorded and
# what was left out goes to the log, to $PERFSCEN_OUT/recorded.md and to
# the job summary ($GITHUB_STEP_SUMMARY, when set).
#
# Environment: PERFSCEN, PERFSCEN_OUT as for ci/perfscen-gate.sh;
# PERFSCEN_RECORD_FLAGS, more `baseline update` flags (e.g. --keep 20).
#
# Exit: 0 when every passing run was recorded (or none passed); 2 when one
# could not be (its message says why; the others are still recorded).
# With $GITHUB_OUTPUT set, writes recorded=true when a history changed (the
# job saves it then) and recorded=false otherwise.
set -uo pipefail

PERFSCEN=${PERFSCEN:-perfscen}
OUT=${PERFSCEN_OUT:-out/perfscen}
read -r -a extra <<<"${PERFSCEN_RECORD_FLAGS:-}"

# verdict_of prints a result file's recorded outcome and exit code
# ("pass 0"), or nothing when the file records no verdict. An
# inconclusive run whose only undecided checks are "baseline can see a
# change" (a point no check of a noisy history could gate) reads
# "blind 4": it measured fine, and recording it is how that history
# grows steadier; without it such a history would stay blind for good.
verdict_of() {
	awk '
		/^  "verdict": \{/ { inv = 1; next }
		inv && /^    "outcome": / { o = $2; gsub(/[",]/, "", o) }
		inv && /^    "exit_code": / { e = $2 + 0 }
		inv && /^        "name": / { n = $0; sub(/^        "name": "/, "", n); sub(/",?$/, "", n) }
		inv && /^        "status": "inconclusive"/ { if (n == "baseline can see a change") blind++; else other++ }
		inv && /^  \}/ { inv = 0 }
		END { if (o == "inconclusive" && blind > 0 && other == 0) o = "blind"; if (o != "") print o, e }
	' "$1"
}

lines=()
recorded=0 failed=0
shopt -s nullglob
files=("$OUT"/*.json)
if [ "${#files[@]}" -eq 0 ]; then
	lines+=("- no result files in $OUT: nothing to record")
fi
for f in "${files[@]}"; do
	name=$(basename "$f" .json)
	read -r outcome ec < <(verdict_of "$f"; echo)
	if [ -z "${outcome:-}" ]; then
		lines+=("- $name: not recorded: the result records no verdict")
		continue
	fi
	note=""
	if [ "$outcome" = blind ]; then
		note="; inconclusive (exit $ec) only because its history could not gate a point yet: recorded to grow it"
		outcome=pass
	fi
	if [ "$outcome" != pass ]; then
		lines+=("- $name: not recorded: its verdict is $outcome (exit $ec); a history records only runs that passed")
		continue
	fi
	log=$("$PERFSCEN" baseline update --from "$f" "${extra[@]}" 2>&1)
	rc=$?
	printf '%s\n' "$log"
	if [ "$rc" -ne 0 ]; then
		failed=$((failed + 1))
		lines+=("- $name: COULD NOT RECORD (exit $rc): $(printf '%s' "$log" | tail -n 1)")
		continue
	fi
	recorded=$((recorded + 1))
	history=$(printf '%s\n' "$log" | sed -n 's/^testbed \([^:]*\): history \(.*\)$/testbed \1, history \2/p' | head -n 1)
	unstable=$(printf '%s\n' "$log" | sed -n 's/^  ~ point \([^ ]*\) recorded as unstable.*/\1/p' | paste -sd, - | sed 's/,/, /g')
	line="- $name: recorded ($history)$note"
	if [ -n "$unstable" ]; then
		line+="; did not settle, recorded marked unstable (allow_unstable): $unstable"
	fi
	lines+=("$line")
done

{
	echo "#### perfscen: baseline history"
	echo
	printf '%s\n' "${lines[@]}"
} >"$OUT/recorded.md"
printf 'perfscen-record: %s\n' "${lines[@]#- }" >&2
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	{
		echo
		cat "$OUT/recorded.md"
	} >>"$GITHUB_STEP_SUMMARY"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	if [ "$recorded" -gt 0 ]; then echo "recorded=true"; else echo "recorded=false"; fi >>"$GITHUB_OUTPUT"
fi
[ "$failed" -eq 0 ] || exit 2
exit 0
