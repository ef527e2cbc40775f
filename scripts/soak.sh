#!/usr/bin/env bash
# Soak test: `perfscen serve` in the background, then one run at
# concurrency 256 (SOAK_CONCURRENCY) against identity_fp32 for about
# SOAK_SECONDS (default 120). Reports the client's RSS at start, peak and
# end, its goroutines at start and end, and checks that no request was
# lost: every request sent got a response or an error, and the server saw
# exactly as many as the client sent.
#
# The run uses iterations mode so the number of requests is exact; the
# count is sized from a short calibration run to last SOAK_SECONDS.
set -euo pipefail

seconds=${SOAK_SECONDS:-120}
conc=${SOAK_CONCURRENCY:-256}
model=identity_fp32
cd "$(dirname "$0")/.."

command -v python3 >/dev/null || { echo "soak: python3 is needed to read result JSON" >&2; exit 2; }
go build -o bin/perfscen ./cmd/perfscen

work=$(mktemp -d)
srv_pid=
cleanup() {
  if [ -n "$srv_pid" ] && kill -0 "$srv_pid" 2>/dev/null; then
    kill "$srv_pid"
    wait "$srv_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

bin/perfscen serve --http-port 0 --grpc-port -1 --models "$model" >"$work/serve.log" 2>&1 &
srv_pid=$!
addr=
for _ in $(seq 100); do
  addr=$(sed -nE 's#^Started HTTPService at http://([^ ]+)$#\1#p' "$work/serve.log")
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "soak: server did not start:" >&2; cat "$work/serve.log" >&2; exit 3; }

scenario() { # iterations warmup
  cat <<EOF
version: 1
name: soak
server:
  url: $addr
  protocol: http
  timeout: 30s
models:
  - name: $model
    shapes:
      INPUT0: [64]
load:
  mode: iterations
  concurrency: $conc
  warmup_iterations: $2
  iterations: $1
EOF
}

summary() { # result.json -> "requests errors throughput"
  python3 - "$1" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["points"][0]["summary"]
print(p["requests"], p["errors"], round(p["throughput"], 1))
EOF
}

# served = successful + failed requests the server has counted so far.
served() {
  curl -fsS "http://$addr/v2/models/$model/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)["model_stats"][0]["inference_stats"]
print(s["success"]["count"] + s["fail"]["count"])'
}

scenario 2000 "$conc" >"$work/calibrate.yaml"
bin/perfscen run "$work/calibrate.yaml" -q --no-baseline --out "$work/calibrate.json" >/dev/null
read -r _ _ tput < <(summary "$work/calibrate.json")
iterations=$(python3 -c "print(max(1000, int($tput * $seconds)))")
warmup=$conc
echo "soak: calibrated at $tput infer/s; sending $warmup warm-up + $iterations requests at concurrency $conc (~${seconds}s)"

before=$(served)
scenario "$iterations" "$warmup" >"$work/soak.yaml"
PERFSCEN_DEBUG_GOROUTINES=1 bin/perfscen run "$work/soak.yaml" -q --no-baseline --out "$work/soak.json" \
  >"$work/soak.out" 2>"$work/soak.err" &
pid=$!
rss() { sed -nE 's/^VmRSS:[[:space:]]+([0-9]+) kB/\1/p' "/proc/$pid/status" 2>/dev/null || true; }
start=$(date +%s)
rss_start= rss_peak=0 rss_end=
samples="$work/rss.txt"
while kill -0 "$pid" 2>/dev/null; do
  r=$(rss)
  if [ -n "$r" ]; then
    echo "$(( $(date +%s) - start )) $r" >>"$samples"
    # The first sample after warm-up is the baseline for growth.
    if [ -z "$rss_start" ] && [ $(( $(date +%s) - start )) -ge 3 ]; then rss_start=$r; fi
    [ "$r" -gt "$rss_peak" ] && rss_peak=$r
    rss_end=$r
  fi
  sleep 1
done
code=0
wait "$pid" || code=$?
elapsed=$(( $(date +%s) - start ))
after=$(served)

read -r reqs errs tput < <(summary "$work/soak.json")
gstart=$(sed -nE 's/.*goroutines at start: ([0-9]+)/\1/p' "$work/soak.err")
gend=$(sed -nE 's/.*goroutines at end: ([0-9]+)/\1/p' "$work/soak.err")
sent=$((warmup + iterations))
seen=$((after - before))
answered=$((reqs + errs))

echo "soak: exit $code after ${elapsed}s; $tput infer/s"
echo "soak: measured requests sent $iterations, responses $reqs + errors $errs = $answered"
echo "soak: server counted $seen requests, client sent $sent (warm-up included)"
echo "soak: client RSS start ${rss_start:-?} kB, peak $rss_peak kB, end ${rss_end:-?} kB ($(wc -l <"$samples") samples)"
echo "soak: goroutines at start ${gstart:-?}, at end ${gend:-?}"

fail=0
[ "$code" -eq 0 ] || { echo "soak: FAIL: perfscen exited $code" >&2; cat "$work/soak.err" >&2; fail=1; }
[ "$answered" -eq "$iterations" ] || { echo "soak: FAIL: $((iterations - answered)) measured requests unaccounted for" >&2; fail=1; }
[ "$seen" -eq "$sent" ] || { echo "soak: FAIL: server saw $seen requests, client sent $sent" >&2; fail=1; }
[ "${gend:-0}" -le "${gstart:-0}" ] || { echo "soak: FAIL: goroutines grew from $gstart to $gend" >&2; fail=1; }
exit $fail
