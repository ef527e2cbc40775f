#!/usr/bin/env bash
# Distributed runs against one run from one process, on this machine:
# `perfscen serve` in the background, then the same scenario (total
# concurrency FLEET_CONCURRENCY, default 16) from one process and from 1, 2
# and 4 agents with a coordinator, FLEET_ROUNDS times in turn (default 2),
# so drift hits every configuration alike. Prints, per run, total
# throughput and the merged p50 and p99 (medians over the kept trials),
# and for distributed runs the coordinator's cost: bytes of window reports
# per agent per window (the messages alone, and every byte of the agents'
# connections: framing, TLS, probes, heartbeats), and its CPU time (user + system, everything it did:
# opening the server, statistics calls, merging) per agent per window.
#
#   scripts/fleet-bench.sh            # or: make bench-fleet
set -euo pipefail

conc=${FLEET_CONCURRENCY:-16}
rounds=${FLEET_ROUNDS:-2}
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "fleet-bench: python3 is needed to read result JSON" >&2; exit 2; }
go build -o bin/perfscen ./cmd/perfscen

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The delay model with enough instances that the server is not the limit
# of a concurrency of $conc: a 5 ms service time, 64 instances.
bin/perfscen serve --http-port 0 --grpc-port -1 --models delay \
  --model-param delay.delay=5ms --model-param delay.instance_count=64 >"$work/serve.log" 2>&1 &
pids+=($!)
addr=
for _ in $(seq 100); do
  addr=$(sed -nE 's#^Started HTTPService at http://([^ ]+)$#\1#p' "$work/serve.log")
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "fleet-bench: server did not start:" >&2; cat "$work/serve.log" >&2; exit 3; }

cat >"$work/fleet.yaml" <<EOF
version: 1
name: fleet-bench
server: {url: "$addr", protocol: http, timeout: 10s}
models: [{name: delay, shapes: {INPUT0: [16]}}]
load: {concurrency: $conc}
measurement: {window: 2s, stability: 30%, max_trials: 6, trials: 5, allow_unstable: true}
EOF

export PERFSCEN_AGENT_TOKEN=fleet-bench
port=17700

summary() { # result.json
  python3 - "$1" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
p = r["points"][0]
t = [x["metrics"] for x in p["trials"]]
med = lambda k: statistics.median(m[k] for m in t)
print(f'{med("throughput"):8.1f}/s  p50 {med("p50_us")/1000:6.2f} ms  p99 {med("p99_us")/1000:6.2f} ms  trials {len(t)}', end="")
PY
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  echo "== round $round"
  printf 'one process       '
  bin/perfscen run -q --out "$work/single.json" "$work/fleet.yaml" >/dev/null 2>"$work/single.err" || true
  summary "$work/single.json"
  echo
  for n in 1 2 4; do
    port=$((port + 1))
    /usr/bin/env time -f '%U %S' -o "$work/coord.cpu" bin/perfscen run -q --agents "$n" --listen "127.0.0.1:$port" \
      --out "$work/dist.json" "$work/fleet.yaml" >/dev/null 2>"$work/coord.err" &
    coord=$!
    agents=()
    for i in $(seq 0 $((n - 1))); do
      bin/perfscen agent --coordinator "127.0.0.1:$port" --index "$i" --name "a$i" "$work/fleet.yaml" >/dev/null 2>>"$work/agents.err" &
      agents+=($!)
    done
    wait "$coord" || true
    for a in "${agents[@]}"; do wait "$a" || true; done
    printf '%d agent(s)        ' "$n"
    summary "$work/dist.json"
    python3 - "$work/dist.json" "$work/coord.cpu" "$n" "$work/coord.err" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
n = int(sys.argv[3])
w = sum(a["windows"] for a in r["agents"]) / n
b = sum(a["window_bytes"] for a in r["agents"]) / sum(a["windows"] for a in r["agents"])
# The coordinator's count of every byte of the agents' connections.
m = re.search(r"connections carried \d+ bytes in, \d+ out .*: (\d+) in and (\d+) out per agent per window", open(sys.argv[4]).read())
wire = f", whole connection {m[1]} in + {m[2]} out B/agent/window" if m else ""
print(f'  | reports {b:5.0f} B/agent/window{wire}, coordinator CPU {1000*(u+s)/(n*w):5.1f} ms/agent/window ({w:.0f} windows each)')
PY
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
