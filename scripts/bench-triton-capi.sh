#!/usr/bin/env bash
# Triton in process against Triton over loopback, one build, one model:
# perfscen's triton_c_api kind and its gRPC kind (and perf_analyzer's C API
# mode when PERF_ANALYZER names a binary built with it), identity_fp32,
# requests per second and CPU per request at each concurrency.
#
#   bash scripts/bench-triton-capi.sh
#
# Needs the Triton build beside the checkout (../shared/triton, or
# PERFSCEN_TRITON_DIR) with its runtime packages, and bin/perfscen (make build).
# CPU per request is the difference between a run of 3N and a run of N
# requests (user+sys of every process involved: perfscen, and tritonserver
# for the gRPC cells), divided by 2N, so start-up and model loading cancel.
# In process, perfscen's CPU is client and server together; over gRPC the
# two columns are perfscen's and tritonserver's.
#
# Then, when PERF_ANALYZER names a perf_analyzer built with its C API mode,
# the two tools in process at concurrency 1 (the only level perf_analyzer's
# C API mode runs), alternating, BENCH_REPEAT times: throughput, p50 and
# CPU per request (user+sys of the whole process over the requests the
# tool counted, start-up included, so both carry the same overhead), with
# the load average around each run. Both load the same model repository.
#
# Settings: BENCH_N=4000 (N), BENCH_CONCURRENCY="1 8 64", BENCH_REPEAT=3,
# BENCH_PA_N=40000 (requests per side-by-side run), PERF_ANALYZER.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BENCH_N:=4000}"
: "${BENCH_CONCURRENCY:=1 8 64}"
: "${BENCH_REPEAT:=3}"
: "${BENCH_PA_N:=40000}"
TRITON=${PERFSCEN_TRITON_DIR:-../shared/triton}
TRITON=$(cd "$TRITON" && pwd)
BIN=$PWD/bin/perfscen
[ -x "$BIN" ] || { echo "build bin/perfscen first (make build)"; exit 2; }
WORK=$(mktemp -d)
trap 'kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null; rm -rf "$WORK"' EXIT
cp -r "$TRITON/models" "$WORK/models"
mkdir -p "$WORK/models/identity_fp32/1" "$WORK/models/identity_int32/1"

HTTP=48710 GRPC=48711 METRICS=48712
"$TRITON/run-triton" --http-port $HTTP --grpc-port $GRPC --metrics-port $METRICS \
  --model-repository "$WORK/models" --model-control-mode=explicit --load-model=identity_fp32 >"$WORK/triton.log" 2>&1 &
TPID=$!
until curl -sf 127.0.0.1:$HTTP/v2/health/ready >/dev/null; do sleep 0.2; done
TRITON_PID=$(pgrep -P "$TPID" tritonserver || echo "$TPID")

# cpu_of PID: user+sys clock ticks of a process.
cpu_of() { awk '{print $14+$15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)

scenario() { # kind conc n
  local server
  if [ "$1" = capi ]; then
    server="server:
  kind: triton_c_api
  triton_c_api:
    library: $TRITON/lib/libtritonserver.so
    model_repository: $WORK/models"
  else
    server="server:
  grpc_url: 127.0.0.1:$GRPC
  protocol: grpc"
  fi
  cat >"$WORK/s.yaml" <<EOF
version: 1
name: bench-$1
$server
models:
  - name: identity_fp32
load:
  mode: iterations
  iterations: $3
  warmup_iterations: 200
sweep:
  concurrency: [$2]
EOF
}

# run KIND CONC N -> "throughput perfscen_cpu_s triton_cpu_s p50_us"
run() {
  scenario "$1" "$2" "$3"
  local t0 t1
  t0=$(cpu_of "$TRITON_PID")
  /usr/bin/time -f "%U %S" -o "$WORK/time" "$BIN" run --no-baseline -q --out "$WORK/r.json" "$WORK/s.yaml" >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; exit 1; }
  t1=$(cpu_of "$TRITON_PID")
  local thr p50
  thr=$(python3 -c "import json;print(json.load(open('$WORK/r.json'))['points'][0]['summary']['throughput'])")
  p50=$(python3 -c "import json;print(json.load(open('$WORK/r.json'))['points'][0]['summary']['p50_us'])")
  echo "$thr $(awk '{print $1+$2}' "$WORK/time") $(echo "($t1-$t0)/$TICK" | bc -l) $p50"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| kind | c | infer/s (3N run) | p50 us | CPU us/request: perfscen | tritonserver | total |\n|---|---|---|---|---|---|---|\n'
for c in $BENCH_CONCURRENCY; do
  for kind in capi grpc; do
    read -r _ p1 s1 _ < <(run $kind "$c" "$BENCH_N")
    read -r thr p3 s3 p50 < <(run $kind "$c" $((3 * BENCH_N)))
    python3 - "$kind" "$c" "$thr" "$p1" "$p3" "$s1" "$s3" "$BENCH_N" "$p50" <<'EOF'
import sys
kind, c, thr, p1, p3, s1, s3, n, p50 = sys.argv[1:]
d = 2 * int(n)
pc = (float(p3) - float(p1)) / d * 1e6
sc = (float(s3) - float(s1)) / d * 1e6
name = "C API (in process)" if kind == "capi" else "gRPC (loopback)"
server = "(in perfscen)" if kind == "capi" else f"{sc:.1f}"
total = pc if kind == "capi" else pc + sc
print(f"| {name} | {c} | {float(thr):.0f} | {float(p50):.0f} | {pc:.1f} | {server} | {total:.1f} |")
EOF
  done
done
if [ -n "${PERF_ANALYZER:-}" ] && [ -x "$PERF_ANALYZER" ]; then
  echo
  echo "In process at concurrency 1, perfscen's triton_c_api kind and perf_analyzer's C API mode, alternating ($BENCH_PA_N requests a run):"
  echo
  printf '| rep | tool | infer/s | p50 us | CPU us/request (perf_analyzer: upper bound) | load avg before → after |\n|---|---|---|---|---|---|\n'
  for rep in $(seq "$BENCH_REPEAT"); do
    order="perfscen pa"
    [ $((rep % 2)) = 0 ] && order="pa perfscen"
    for tool in $order; do
      l0=$(cut -d' ' -f1 /proc/loadavg)
      if [ "$tool" = perfscen ]; then
        scenario capi 1 "$BENCH_PA_N"
        /usr/bin/time -f "%U %S" -o "$WORK/time" "$BIN" run --no-baseline -q --out "$WORK/r.json" "$WORK/s.yaml" >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; exit 1; }
        read -r thr p50 n < <(python3 -c "import json;s=json.load(open('$WORK/r.json'))['points'][0]['summary'];print(s['throughput'], s['p50_us'], s['requests'])")
        n=$((n + 200)) # the warm-up requests
      else
        PYTHONDONTWRITEBYTECODE=1 /usr/bin/time -f "%U %S" -o "$WORK/time" "$PERF_ANALYZER" --service-kind=triton_c_api \
          --triton-server-directory="$TRITON" --model-repository="$WORK/models" -m identity_fp32 --shape INPUT0:16 --concurrency-range 1:1 \
          --measurement-mode count_windows --measurement-request-count "$BENCH_PA_N" --stability-percentage 1000 --max-trials 10 >"$WORK/pa.log" 2>&1 ||
          { tail -5 "$WORK/pa.log"; exit 1; }
        thr=$(sed -n 's/^ *Throughput: \([0-9.]*\) infer\/sec.*/\1/p' "$WORK/pa.log" | tail -1)
        p50=$(sed -n 's/^ *p50 latency: \([0-9]*\) usec.*/\1/p' "$WORK/pa.log" | tail -1)
        # The requests of the windows it reported (its discarded windows are
        # not printed): its CPU per request is an upper bound.
        n=$(sed -n 's/^ *Request count: \([0-9]*\).*/\1/p' "$WORK/pa.log" | awk '{s += $1} END {print s}')
      fi
      cpu=$(awk -v n="$n" '{printf "%.1f", ($1 + $2) / n * 1e6}' "$WORK/time")
      echo "| $rep | $tool | $(printf %.0f "$thr") | $(printf %.0f "$p50") | $cpu | $l0 → $(cut -d' ' -f1 /proc/loadavg) |"
    done
  done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
