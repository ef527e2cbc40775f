#!/usr/bin/env bash
# The perfscen gate as a CI job runs it: the scenarios' run, its reports
# as files the job keeps, the Markdown summary where the CI shows it, and
# an exit code the job can branch on. GitHub Actions (ci/github) and
# GitLab CI (ci/gitlab) both call it; any CI can.
#
#   ci/perfscen-gate.sh scenarios/engine-comparison.yaml scenarios/quickstart.yaml
#
# Environment:
#   PERFSCEN=perfscen        the binary
#   PERFSCEN_OUT=out/perfscen  where the reports go (kept as artifacts)
#   PERFSCEN_FLAGS=          more `perfscen run` flags (e.g. --no-baseline)
#   GITHUB_STEP_SUMMARY      set by GitHub: the summary is appended there
#
# Exit codes (perfscen's, passed through, so the job fails on what it
# should): 0 pass; 1 a regression (fail the job); 2 the scenario or the
# command line is wrong; 3 could not measure (the runner or the server);
# 4 inconclusive, "needs a rerun" (the CI files mark it as a warning, not
# a failure). The code is also written to $PERFSCEN_OUT/exit-code and
# a one-line verdict to $PERFSCEN_OUT/verdict.txt.
set -uo pipefail

PERFSCEN=${PERFSCEN:-perfscen}
OUT=${PERFSCEN_OUT:-out/perfscen}
[ "$#" -gt 0 ] || { echo "perfscen-gate: name the scenarios to run" >&2; exit 2; }
mkdir -p "$OUT"
read -r -a extra <<<"${PERFSCEN_FLAGS:-}"

"$PERFSCEN" run --out-dir "$OUT" --html "$OUT/report.html" --junit "$OUT/junit.xml" \
	--markdown "$OUT/summary.md" "${extra[@]}" "$@"
code=$?

case "$code" in
0) verdict="PASS: no regression" ;;
1) verdict="FAIL: a check failed (a regression); see the summary and the report" ;;
2) verdict="INVALID: a scenario, its data or the command line is wrong (fix it; rerunning will not help)" ;;
3) verdict="COULD NOT MEASURE: the server or the runner kept the gate from measuring (rerun when it is healthy)" ;;
4) verdict="NEEDS A RERUN: the data could not decide (inconclusive); rerun the job, ideally on a quieter runner" ;;
*) verdict="perfscen exited $code" ;;
esac
echo "$code" >"$OUT/exit-code"
echo "$verdict" >"$OUT/verdict.txt"
echo "perfscen-gate: exit $code: $verdict" >&2

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	{
		echo "### perfscen: $verdict"
		echo
		for f in "$OUT"/summary*.md; do
			[ -s "$f" ] && cat "$f"
		done
	} >>"$GITHUB_STEP_SUMMARY"
fi
exit "$code"
