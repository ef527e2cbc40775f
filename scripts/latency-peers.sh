#!/usr/bin/env bash
# Latency at concurrency 1, perfscen against perf_analyzer, on the reference
# server's delay model (a fixed service time, 1 ms by default): p50 and p99
# of each tool over HTTP and gRPC, the two tools alternating.
#
#   PATH=/path/to/perf_analyzer/bin:$PATH bash scripts/latency-peers.sh
#
# Settings: LATENCY_DELAY (1ms), LATENCY_REQUESTS (4500 measured requests per
# run), LATENCY_WARMUP (100), LATENCY_REPEAT (3), LATENCY_PROTOCOLS
# ("http grpc"), PERFSCEN (bin/perfscen). perf_analyzer is not installed by
# this script: build it from its public source and put it on PATH (or set
# PERF_ANALYZER). Prints Markdown tables; needs jq and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

DELAY=${LATENCY_DELAY:-1ms}
N=${LATENCY_REQUESTS:-4500}
WARMUP=${LATENCY_WARMUP:-100}
REPEAT=${LATENCY_REPEAT:-3}
PROTOCOLS=${LATENCY_PROTOCOLS:-"http grpc"}
PERFSCEN=${PERFSCEN:-bin/perfscen}
PA=${PERF_ANALYZER:-$(command -v perf_analyzer || true)}

die() {
	echo "latency-peers: $*" >&2
	exit 1
}
[ -n "$PA" ] && [ -x "$PA" ] || die "no perf_analyzer on PATH (or PERF_ANALYZER)"
command -v jq >/dev/null || die "jq is needed"
command -v curl >/dev/null || die "curl is needed (the server's statistics)"
[ -x "$PERFSCEN" ] || go build -o "$PERFSCEN" ./cmd/perfscen || die "cannot build $PERFSCEN"

# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
make_scratch

start_server "$TMP/serve.log" --models delay --model-param "delay.delay=$DELAY"

# perfscen PROTO: prints "p50 p99" in µs.
run_perfscen() {
	cat >"$TMP/sc.yaml" <<EOF
version: 1
name: latency-delay
server:
  url: $(server_addr "$1")
  protocol: $1
  timeout: 10s
models:
  - name: delay
    shapes: {INPUT0: [16]}
load:
  mode: iterations
  concurrency: 1
  iterations: $N
  warmup_iterations: $WARMUP
thresholds:
  - errors == 0
EOF
	"$PERFSCEN" run "$TMP/sc.yaml" --out "$TMP/res.json" --no-baseline --quiet >"$TMP/perfscen.log" 2>&1 ||
		die "perfscen run failed: $(tail -n 5 "$TMP/perfscen.log")"
	jq -r '.points[0].summary | "\(.p50_us) \(.p99_us)"' "$TMP/res.json"
}

# perf_analyzer PROTO: count windows of N/3 requests (at least three are
# measured), its own warm-up; prints "p50 p99" in µs from its CSV.
run_pa() {
	rm -f "$TMP/pa.csv"
	"$PA" -m delay -u "$(server_addr "$1")" -i "$1" --concurrency-range 1 --shape INPUT0:16 \
		--measurement-mode count_windows --measurement-request-count $((N / 3)) --stability-percentage 1000 --max-trials 10 \
		-f "$TMP/pa.csv" >"$TMP/pa.log" 2>&1 || die "perf_analyzer failed: $(tail -n 5 "$TMP/pa.log")"
	awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i}
		NR == 2 {print $col["p50 latency"], $col["p99 latency"]}' "$TMP/pa.csv"
}

# server_success: the delay model's successful requests and their total
# time in ns, from the server's statistics.
server_success() {
	curl -fsS "http://$HTTP_ADDR/v2/models/delay/stats" |
		jq -r '.model_stats[0].inference_stats.success | "\(.count) \(.ns)"' || die "cannot read the server's statistics"
}

LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
ROWS=$TMP/rows
for rep in $(seq "$REPEAT"); do
	for proto in $PROTOCOLS; do
		order="perfscen pa"
		[ $((rep % 2)) = 0 ] && order="pa perfscen"
		for tool in $order; do
			before=$(server_success)
			if [ "$tool" = perfscen ]; then r=$(run_perfscen "$proto"); else r=$(run_pa "$proto"); fi
			# The server's own average request latency over this run: what
			# both tools time, without either client's cost.
			after=$(server_success)
			srv=$(echo "$before $after" | awk '$3 > $1 {printf "%.0f", ($4 - $2) / ($3 - $1) / 1000}')
			[ -n "$srv" ] || die "the server counted no request during $tool's $proto run ($before -> $after)"
			echo "latency-peers: rep $rep $proto $tool: p50 p99 = $r µs, server average $srv µs" >&2
			echo "$rep $proto $tool $r $srv" >>"$ROWS"
		done
	done
done
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)

echo "# Latency at concurrency 1 on the delay model ($DELAY) — $(date -u '+%Y-%m-%d %H:%M') UTC"
echo
echo "Command: \`LATENCY_DELAY=$DELAY LATENCY_REQUESTS=$N LATENCY_REPEAT=$REPEAT bash scripts/latency-peers.sh\`"
echo
echo "- machine: $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)); server and client share them"
echo "- perfscen $(git describe --always --dirty 2>/dev/null || echo unknown); perf_analyzer \`$PA\` ($("$PA" --version 2>&1 | head -n 1))"
echo "- perfscen: \`load.mode: iterations\`, $N requests after $WARMUP warm-up ones; perf_analyzer: synchronous client, \`--shape INPUT0:16 --measurement-mode count_windows --measurement-request-count $((N / 3))\`; tools alternate, order reversed every other repetition"
echo "- load average (1 min) at start $LOAD_START, at end $LOAD_END"
echo
echo "| protocol | perfscen p50 µs | perf_analyzer p50 µs | p50 ratio | perfscen p99 µs | perf_analyzer p99 µs | p99 ratio |"
echo "|---|---|---|---:|---|---|---:|"
for proto in $PROTOCOLS; do
	awk -v p="$proto" -v reps="$REPEAT" '$2 == p {
			if ($3 == "perfscen") { s50[$1] = $4; s99[$1] = $5 } else { a50[$1] = $4; a99[$1] = $5 }
		}
		function median(v, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}
		END {
			n = 0
			for (r = 1; r <= reps; r++) {
				n++
				l50 = l50 (l50 ? ", " : "") s50[r]; m50 = m50 (m50 ? ", " : "") a50[r]
				l99 = l99 (l99 ? ", " : "") s99[r]; m99 = m99 (m99 ? ", " : "") a99[r]
				q50[n] = s50[r] / a50[r]; q99[n] = s99[r] / a99[r]
			}
			printf "| %s | %s | %s | %.3f | %s | %s | %.3f |\n", p, l50, m50, median(q50, n), l99, m99, median(q99, n)
		}' "$ROWS"
done
echo
echo "Ratios are medians of the per-repetition perfscen ÷ perf_analyzer; the goal is within 2% (0.98–1.02)."
echo
echo "What each tool adds to the server's own time: the server's average request latency over each run (its statistics, warm-up included), and each tool's p50 minus it, medians over repetitions:"
echo
echo "| protocol | tool | p50 µs | server average µs | p50 − server average µs |"
echo "|---|---|---:|---:|---:|"
for proto in $PROTOCOLS; do
	for tool in perfscen pa; do
		awk -v p="$proto" -v t="$tool" '$2 == p && $3 == t { n++; a[n] = $4; s[n] = $6; d[n] = $4 - $6 }
			function median(v, n,   i, j, x) {
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
				return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			}
			END { printf "| %s | %s | %.0f | %.0f | %.0f |\n", p, (t == "pa" ? "perf_analyzer" : t), median(a, n), median(s, n), median(d, n) }' "$ROWS"
	done
done
