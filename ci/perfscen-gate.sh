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
#   PERFSCEN_OUT=out/perfscen  where the reports go (kept as artifacts; the
#                            job's own folder: its *.json are read back)
#   PERFSCEN_FLAGS=          more `perfscen run` flags (e.g. --require-gated)
#   GITHUB_STEP_SUMMARY      set by GitHub: the verdict and the summaries
#                            are appended there, once per scenario
#
# Exit codes (perfscen's, passed through, so the job fails on what it
# should): 0 pass; 1 a regression (fail the job); 2 the scenario or the
# command line is wrong; 3 could not measure (the runner or the server);
# 4 inconclusive (the CI files mark it as a warning, not a failure).
# Exit 4 has four causes, told apart from the result files: checks still
# undecided after their extra trials and a disturbed testbed (a rerun may
# decide), and, with --require-gated, no history for this testbed or a
# history too noisy for a check's tolerance (a rerun will not help).
#
# Files in $PERFSCEN_OUT besides perfscen's reports: exit-code; verdict.txt
# (one line); advice.md (what to do, for exits 3 and 4); step-summary.md
# (perfscen's Markdown summary of every scenario, in run order); and
# comment.md, the verdict, the advice and the summaries, the body of the
# pull-request comment.
set -uo pipefail

PERFSCEN=${PERFSCEN:-perfscen}
OUT=${PERFSCEN_OUT:-out/perfscen}
[ "$#" -gt 0 ] || { echo "perfscen-gate: name the scenarios to run" >&2; exit 2; }
mkdir -p "$OUT" || exit 2
rm -f "$OUT/step-summary.md" "$OUT/advice.md"
read -r -a extra <<<"${PERFSCEN_FLAGS:-}"

# perfscen appends each scenario's summary to $GITHUB_STEP_SUMMARY itself.
# Pointed at a file of ours, the job summary gets that one copy, under the
# verdict, and the comment gets the same text.
GITHUB_STEP_SUMMARY="$OUT/step-summary.md" "$PERFSCEN" run --out-dir "$OUT" \
	--html "$OUT/report.html" --junit "$OUT/junit.xml" --markdown "$OUT/summary.md" \
	"${extra[@]}" "$@"
code=$?

# inconclusive_causes reads the verdicts of the result files whose run
# exited 4 and prints one line per cause: "disturbed N", "blind N", "undecided N",
# "nohistory N", "noise N" (not gated for any other reason). Not-gated checks are a cause only where they
# made the run exit 4 (gate.require_gated or --require-gated).
inconclusive_causes() {
	local require=0
	case " ${PERFSCEN_FLAGS:-} " in *" --require-gated "* | *" --require-gated=true "*) require=1 ;; esac
	awk -v require="$require" '
		FNR == 1 { inv = 0; st = "" }
		/^  "verdict": \{/ { inv = 1; ec = ""; rg = require; next }
		!inv { next }
		/^    "exit_code": / { ec = $2 + 0 }
		/^    "summary": ".*\(gate\.require_gated\)/ { rg = 1 }
		/^        "status": "/ { st = $2; gsub(/[",]/, "", st) }
		/^        "message": "/ {
			if (ec != 4) next
			if (st == "inconclusive") {
				if ($0 ~ /"message": "inconclusive: testbed disturbed/) n["disturbed", FILENAME]++
				else if ($0 ~ /"message": "inconclusive: no baseline check at/) n["blind", FILENAME]++
				else n["undecided", FILENAME]++
			} else if (st == "not_gated") {
				if ($0 ~ /has no baseline history/) g["nohistory", FILENAME]++
				else g["noise", FILENAME]++
			}
		}
		/^      \}/ { st = "" }
		/^  \}/ { if (inv && ec == 4 && rg) for (k in g) { split(k, a, SUBSEP); if (a[2] == FILENAME) n[k] += g[k] } inv = 0 }
		END {
			for (k in n) { split(k, a, SUBSEP); t[a[1]] += n[k] }
			for (c in t) print c, t[c]
		}
	' "$OUT"/*.json 2>/dev/null
}

checks() { if [ "$1" = 1 ]; then echo "1 check"; else echo "$1 checks"; fi; }

advice=()
case "$code" in
0) verdict="PASS: no regression" ;;
1) verdict="FAIL: a check failed (a regression); see the summary and the report" ;;
2) verdict="INVALID: a scenario, its data or the command line is wrong (fix it; rerunning will not help)" ;;
3)
	verdict="COULD NOT MEASURE: the server or the runner kept the gate from measuring"
	advice+=("Rerun when the server and the runner are healthy. Where the runner is too busy to settle (the summary names the contention), gate against the base revision in the same job instead: it needs no history (ci/README.md, \"Same-job A/B\").")
	;;
4)
	declare -A cause=()
	while read -r c n; do [ -n "$c" ] && cause[$c]=$n; done < <(inconclusive_causes)
	rerun=() norerun=()
	if [ -n "${cause[undecided]:-}" ]; then
		rerun+=("$(checks "${cause[undecided]}") undecided")
		advice+=("$(checks "${cause[undecided]}") still undecided after the extra trials (the interval straddles the bound): a rerun measures afresh and may decide. If it keeps happening, raise gate.max_extra_trials and gate.max_extra_time, or gate against the base revision in the same job (ci/README.md, \"Same-job A/B\").")
	fi
	if [ -n "${cause[disturbed]:-}" ]; then
		rerun+=("$(checks "${cause[disturbed]}") inconclusive on a disturbed testbed")
		advice+=("$(checks "${cause[disturbed]}") inconclusive because the testbed was disturbed: the machine was busier than in the baseline runs, enough to explain the change. Rerun on a quieter runner, or gate against the base revision in the same job, where the noise hits both arms alike (ci/README.md, \"Same-job A/B\").")
	fi
	if [ -n "${cause[blind]:-}" ]; then
		norerun+=("${cause[blind]} point(s) the history cannot gate")
		advice+=("${cause[blind]} point(s) where no baseline check could see a change: the history on this testbed varies too much to gate them, so the run cannot pass on them, and a rerun will not help. The default branch records such runs (perfscen-record.sh), which steadies the history as it grows; or record a steadier one (\`perfscen baseline calibrate --runs 10 --record SCENARIO\` on a quieter runner of this class), or gate against the base revision in the same job (ci/README.md, \"Same-job A/B\").")
	fi
	if [ -n "${cause[nohistory]:-}" ]; then
		norerun+=("no baseline history for this testbed")
		advice+=("No baseline history for testbed ${PERFSCEN_TESTBED:-(derived)} and gate.require_gated/--require-gated is set: a rerun will not help. Record the history first: the default branch's passing runs record it (leave --require-gated off there until it holds 5 runs), or run \`perfscen baseline calibrate --runs 5 --record SCENARIO\` on this runner class and commit baselines/.")
	fi
	if [ -n "${cause[noise]:-}" ]; then
		norerun+=("$(checks "${cause[noise]}") not gated")
		advice+=("$(checks "${cause[noise]}") not gated: each cannot detect the change it exists for on this testbed (the summary says why: a history that varies more than the tolerance, or too few requests a trial for a tail percentile), and gate.require_gated/--require-gated is set: a rerun will not help. Record more history runs, lengthen measurement.window, widen the tolerance or gate steadier metrics, or gate against the base revision in the same job (ci/README.md, \"Same-job A/B\").")
	fi
	join() { local IFS=';'; local s="$*"; echo "${s//;/; }"; }
	if [ "${#norerun[@]}" -gt 0 ]; then
		verdict="INCONCLUSIVE, A RERUN WILL NOT HELP: $(join "${norerun[@]}" "${rerun[@]}")"
	elif [ "${#rerun[@]}" -gt 0 ]; then
		verdict="NEEDS A RERUN: $(join "${rerun[@]}")"
	else
		verdict="INCONCLUSIVE: the data could not decide; see the summary"
	fi
	;;
*) verdict="perfscen exited $code" ;;
esac
echo "$code" >"$OUT/exit-code"
echo "$verdict" >"$OUT/verdict.txt"
echo "perfscen-gate: exit $code: $verdict" >&2
: >"$OUT/advice.md"
for a in "${advice[@]}"; do
	echo "- $a" >>"$OUT/advice.md"
	echo "perfscen-gate: $a" >&2
done
touch "$OUT/step-summary.md"

# body is the verdict, the advice and every scenario's summary.
body() {
	echo "$1 $verdict"
	echo
	if [ -s "$OUT/advice.md" ]; then
		cat "$OUT/advice.md"
		echo
	fi
	cat "$OUT/step-summary.md"
}
body "**perfscen:**" >"$OUT/comment.md"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	body "### perfscen:" >>"$GITHUB_STEP_SUMMARY"
fi
exit "$code"
