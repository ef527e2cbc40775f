#!/usr/bin/env bash
# The gate over every embedded-server scenario, with perfscen's own exit
# code (0 pass, 1 regression, 2 invalid, 3 could not measure, 4
# inconclusive): make can only say 0 or 2, so CI that branches on the
# code runs this script (make gate calls it and prints the code too).
#
# By default the gate is the scenarios' thresholds and same-run
# comparisons (server A/B, engine A/B): both arms share the testbed's
# noise, so an unchanged tree passes on a loaded shared runner, where a
# baseline history recorded at another load cannot calibrate
# (docs/statistics.md). GATE_BASELINE=1 adds the baseline gate.
#   scripts/gate.sh [perfscen run flags...]
set -uo pipefail
cd "$(dirname "$0")/.."
PERFSCEN=${PERFSCEN:-bin/perfscen}
mapfile -t scenarios < <(grep -l '^ *embedded: *true' scenarios/*.yaml)
flags=()
if [ "${GATE_BASELINE:-0}" != 1 ]; then
  flags+=(--no-baseline)
fi
"$PERFSCEN" run "${flags[@]}" "$@" "${scenarios[@]}"
code=$?
mkdir -p out
echo "$code" > out/gate.exit
echo "perfscen exit code $code (also in out/gate.exit)" >&2
exit "$code"
