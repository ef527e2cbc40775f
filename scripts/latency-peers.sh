#!/usr/bin/env bash
# Latency at concurrency 1, perfscen against perf_analyzer, on the reference
# server's delay model (a fixed service time, 1 ms by default) or on the
# real Triton's identity_fp32: p50 and p99 of each tool over HTTP and gRPC,
# the tools alternating, and what each adds to the server's own time (its
# statistics over the same run).
#
#   PERF_ANALYZER=/path/to/perf_analyzer bash scripts/latency-peers.sh
#   PERF_ANALYZER=... LATENCY_SERVER=triton LATENCY_BUSY_POLL="0 100us" bash scripts/latency-peers.sh
#
# Settings: LATENCY_SERVER (perfscen: `perfscen serve`'s delay model;
# triton: ../shared/triton, TRITON_DIR, identity_fp32), LATENCY_DELAY (1ms,
# the delay model's), LATENCY_REQUESTS (4500 measured requests per run),
# LATENCY_WARMUP (100), LATENCY_REPEAT (3), LATENCY_PROTOCOLS ("http grpc"),
# LATENCY_BUSY_POLL (perfscen's server.kserve.busy_poll; several values
# run perfscen once per value, "0" being the default), PERFSCEN
# (bin/perfscen). perf_analyzer is not installed by this script: build it
# from its public source and put it on PATH (or set PERF_ANALYZER). Prints
# Markdown tables; needs jq and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

DELAY=${LATENCY_DELAY:-1ms}
N=${LATENCY_REQUESTS:-4500}
WARMUP=${LATENCY_WARMUP:-100}
REPEAT=${LATENCY_REPEAT:-3}
PROTOCOLS=${LATENCY_PROTOCOLS:-"http grpc"}
SERVER=${LATENCY_SERVER:-perfscen}
BUSY_POLL=${LATENCY_BUSY_POLL:-0}
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
# shellcheck source=scripts/lib/triton.sh
. scripts/lib/triton.sh
make_scratch
trap 'stop_triton; scratch_cleanup' EXIT

case $SERVER in
perfscen)
	MODEL=delay
	start_server "$TMP/serve.log" --models delay --model-param "delay.delay=$DELAY"
	;;
triton)
	MODEL=identity_fp32
	start_triton
	;;
*) die "LATENCY_SERVER is perfscen or triton, not $SERVER" ;;
esac

# The tools, in the order of odd repetitions: perfscen once per busy
# poll ("perfscen" for the default, "perfscen+bp=D" otherwise), then
# perf_analyzer.
TOOLS=
for bp in $BUSY_POLL; do
	if [ "$bp" = 0 ]; then TOOLS="$TOOLS perfscen"; else TOOLS="$TOOLS perfscen+bp=$bp"; fi
done
TOOLS="$TOOLS pa"

# perfscen PROTO BUSY_POLL: prints "p50 p99" in µs.
run_perfscen() {
	cat >"$TMP/sc.yaml" <<EOF
version: 1
name: latency-$MODEL
server:
  url: $(server_addr "$1")
  protocol: $1
  timeout: 10s
  kserve: {busy_poll: $2}
models:
  - name: $MODEL
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
	"$PA" -m "$MODEL" -u "$(server_addr "$1")" -i "$1" --concurrency-range 1 --shape INPUT0:16 \
		--measurement-mode count_windows --measurement-request-count $((N / 3)) --stability-percentage 1000 --max-trials 10 \
		-f "$TMP/pa.csv" >"$TMP/pa.log" 2>&1 || die "perf_analyzer failed: $(tail -n 5 "$TMP/pa.log")"
	awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i}
		NR == 2 {print $col["p50 latency"], $col["p99 latency"]}' "$TMP/pa.csv"
}

# server_success: the model's successful requests and their total time in
# ns, from the server's statistics.
server_success() {
	curl -fsS "http://$HTTP_ADDR/v2/models/$MODEL/stats" |
		jq -r '.model_stats[0].inference_stats.success | "\(.count) \(.ns)"' || die "cannot read the server's statistics"
}

LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
ROWS=$TMP/rows
for rep in $(seq "$REPEAT"); do
	for proto in $PROTOCOLS; do
		order=$TOOLS
		[ $((rep % 2)) = 0 ] && order=$(echo "$TOOLS" | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
		for tool in $order; do
			before=$(server_success)
			case $tool in
			pa) r=$(run_pa "$proto") ;;
			perfscen) r=$(run_perfscen "$proto" 0s) ;;
			*) r=$(run_perfscen "$proto" "${tool#perfscen+bp=}") ;;
			esac
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

WHAT="the delay model ($DELAY) of perfscen serve"
[ "$SERVER" = triton ] && WHAT="Triton ($(find_triton)), identity_fp32 [16]"
echo "# Latency at concurrency 1 on $WHAT — $(date -u '+%Y-%m-%d %H:%M') UTC"
echo
echo "Command: \`LATENCY_SERVER=$SERVER LATENCY_DELAY=$DELAY LATENCY_REQUESTS=$N LATENCY_REPEAT=$REPEAT LATENCY_BUSY_POLL=\"$BUSY_POLL\" bash scripts/latency-peers.sh\`"
echo
echo "- machine: $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)); server and client share them"
echo "- perfscen $(git describe --always --dirty 2>/dev/null || echo unknown); perf_analyzer \`$PA\` ($("$PA" --version 2>&1 | head -n 1))"
echo "- perfscen: \`load.mode: iterations\`, $N requests after $WARMUP warm-up ones; perf_analyzer: synchronous client, \`--shape INPUT0:16 --measurement-mode count_windows --measurement-request-count $((N / 3))\`; tools alternate, order reversed every other repetition"
echo "- load average (1 min) at start $LOAD_START, at end $LOAD_END"
echo
echo "| protocol | tool | p50 µs | perf_analyzer p50 µs | p50 ratio | p99 µs | perf_analyzer p99 µs | p99 ratio |"
echo "|---|---|---|---|---:|---|---|---:|"
for proto in $PROTOCOLS; do
	for tool in $TOOLS; do
		[ "$tool" = pa ] && continue
		awk -v p="$proto" -v t="$tool" -v reps="$REPEAT" '$2 == p {
				if ($3 == t) { s50[$1] = $4; s99[$1] = $5 } else if ($3 == "pa") { a50[$1] = $4; a99[$1] = $5 }
			}
			function median(v, n,   i, j, x) {
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
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
				printf "| %s | %s | %s | %s | %.3f | %s | %s | %.3f |\n", p, t, l50, m50, median(q50, n), l99, m99, median(q99, n)
			}' "$ROWS"
	done
done
echo
echo "Ratios are medians of the per-repetition perfscen ÷ perf_analyzer."
echo
echo "What each tool adds to the server's own time: the server's average request latency over each run (its statistics, warm-up included), each tool's p50 minus it, medians over repetitions, and the median of the per-repetition ratios of perfscen's to perf_analyzer's (each repetition's in brackets):"
echo
echo "| protocol | tool | p50 µs | server average µs | p50 − server average µs | added ÷ perf_analyzer's |"
echo "|---|---|---:|---:|---:|---|"
for proto in $PROTOCOLS; do
	for tool in $TOOLS; do
		awk -v p="$proto" -v t="$tool" '$2 == p && $3 == "pa" { pd[$1] = $4 - $6 }
			$2 == p && $3 == t { n++; rp[n] = $1; a[n] = $4; s[n] = $6; d[n] = $4 - $6 }
			function median(v, n,   i, j, x) {
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
				return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			}
			END {
				m = 0; list = ""
				for (i = 1; i <= n; i++) if (pd[rp[i]] > 0) { q[++m] = d[i] / pd[rp[i]]; list = list (list ? ", " : "") sprintf("%.2f", q[m]) }
				ratio = (t == "pa" || m == 0) ? "–" : sprintf("%.2f [%s]", median(q, m), list)
				printf "| %s | %s | %.0f | %.0f | %.0f | %s |\n", p, (t == "pa" ? "perf_analyzer" : t), median(a, n), median(s, n), median(d, n), ratio
			}' "$ROWS"
	done
done
