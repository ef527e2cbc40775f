#!/usr/bin/env bash
# Large tensors, perfscen against perf_analyzer: identity_int32 with an
# INT32 [1228800] tensor (4.9 MB in, 4.9 MB out: a 1×3×640×640 FP32
# image's size) and with [16], on the real Triton in ../shared/triton and
# on `perfscen serve`, over HTTP and gRPC at concurrency 1, 8 and 32 (and
# any others asked for: the [16] throughput table of docs/performance.md
# is LT_SERVERS=triton LT_SIZES=16 LT_CONCURRENCY="1 8 32 64" LT_REPEAT=2).
# Each cell: throughput, p50, the client's breakdown (send/recv + response
# wait), client CPU per request (user+system of the whole process over the
# requests the server counted during it, warm-up included), the client's
# max RSS, and the load average around it. The two tools alternate, the
# order reversed every other repetition; ratios are the median of the
# per-repetition perfscen ÷ perf_analyzer.
#
#   PERF_ANALYZER=/path/to/perf_analyzer bash scripts/large-tensor-peers.sh
#
# Settings (environment):
#   LT_SERVERS="triton perfscen"  which servers (triton needs ../shared/triton)
#   LT_SIZES="1228800 16"         INPUT0 element counts
#   LT_PROTOCOLS="http grpc"
#   LT_CONCURRENCY="1 8 32"
#   LT_LARGE_REQUESTS=240         measured requests per cell at >= 65536 elements
#   LT_SMALL_REQUESTS=6000        measured requests per cell below
#   LT_TOOLS="perfscen pa"        which tools
#   LT_PA_TIMEOUT=600             seconds before a perf_analyzer cell is given up
#   LT_REPEAT=1                   repetitions of every cell
#   LT_CONNECTIONS=               perfscen's server.kserve.connections (unset:
#                                 the default, each worker its own connection)
#   TRITON_DIR=../shared/triton   PERFSCEN=bin/perfscen
# perfscen: `load.mode: iterations` with a tenth as many warm-up
# iterations; perf_analyzer: synchronous client, count windows of a third
# of the requests (at least three windows), stability 1000% so a loaded
# machine does not make it retry for ever. Shared memory is not measured.
# perf_analyzer is not installed by this script: build it from its public
# source (see docs/performance.md). Prints Markdown; needs jq, curl and
# /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

: "${LT_SERVERS:=triton perfscen}"
: "${LT_SIZES:=1228800 16}"
: "${LT_PROTOCOLS:=http grpc}"
: "${LT_CONCURRENCY:=1 8 32}"
: "${LT_LARGE_REQUESTS:=240}"
: "${LT_SMALL_REQUESTS:=6000}"
: "${LT_TOOLS:=perfscen pa}"
: "${LT_PA_TIMEOUT:=600}"
: "${LT_REPEAT:=1}"
: "${LT_CONNECTIONS:=}"
PERFSCEN=${PERFSCEN:-bin/perfscen}
PA=${PERF_ANALYZER:-$(command -v perf_analyzer || true)}

die() {
	echo "large-tensor-peers: $*" >&2
	exit 1
}
note() { echo "large-tensor-peers: $*" >&2; }

command -v jq >/dev/null || die "jq is needed"
command -v curl >/dev/null || die "curl is needed (the servers' statistics)"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (CPU and max RSS of each tool)"
[ -x "$PERFSCEN" ] || go build -o "$PERFSCEN" ./cmd/perfscen || die "cannot build $PERFSCEN"
if [[ " $LT_TOOLS " == *" pa "* ]] && { [ -z "$PA" ] || [ ! -x "$PA" ]; }; then
	note "no perf_analyzer on PATH (or PERF_ANALYZER): its cells are skipped"
	LT_TOOLS=${LT_TOOLS//pa/}
fi

# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
# shellcheck source=scripts/lib/triton.sh
. scripts/lib/triton.sh
make_scratch
trap 'stop_triton; scratch_cleanup' EXIT

# served: the server's count of successful identity_int32 requests.
served() {
	curl -sf "http://$HTTP_ADDR/v2/models/identity_int32/stats" | jq -r '[.model_stats[].inference_stats.success.count] | add'
}

# timed OUT CMD...: runs CMD, writing "user system maxrss_kb" to OUT.
timed() {
	local out=$1
	shift
	/usr/bin/time -f "%U %S %M" -o "$out.raw" "$@"
	local rc=$?
	tail -n 1 "$out.raw" >"$out"
	return $rc
}

loadavg() { cut -d' ' -f1 /proc/loadavg; }

# cell_perfscen PROTO SIZE C N: prints "thr p50 sendrecv wait".
cell_perfscen() {
	cat >"$TMP/sc.yaml" <<EOF
version: 1
name: large-tensor
server:
  url: $(server_addr "$1")
  protocol: $1
  timeout: 60s
$([ -n "$LT_CONNECTIONS" ] && echo "  kserve: {connections: $LT_CONNECTIONS}")
models:
  - name: identity_int32
    shapes: {INPUT0: [$2]}
load:
  mode: iterations
  concurrency: $3
  iterations: $4
  warmup_iterations: $(($4 / 10))
EOF
	timed "$TMP/cpu" "$PERFSCEN" run "$TMP/sc.yaml" --out "$TMP/res.json" --no-baseline --quiet >"$TMP/perfscen.log" 2>&1 || return 1
	jq -r '.points[0].summary | "\(.throughput) \(.p50_us) \(.client_send_recv_us) \(.client_wait_us)"' "$TMP/res.json"
}

# cell_pa PROTO SIZE C N: prints "thr p50 sendrecv wait" from its CSV.
cell_pa() {
	rm -f "$TMP/pa.csv"
	local limit=()
	command -v prlimit >/dev/null && limit=(prlimit --as=$((32 << 30)))
	timed "$TMP/cpu" timeout "$LT_PA_TIMEOUT" "${limit[@]}" "$PA" -m identity_int32 -u "$(server_addr "$1")" -i "$1" \
		--concurrency-range "$3" --shape "INPUT0:$2" --measurement-mode count_windows \
		--measurement-request-count $(($4 / 3)) --stability-percentage 1000 --max-trials 10 \
		-f "$TMP/pa.csv" --verbose-csv >"$TMP/pa.log" 2>&1 || return 1
	awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i}
		NR == 2 {print $col["Inferences/Second"], $col["p50 latency"], $col["request/response"], $col["response wait"]}' "$TMP/pa.csv"
}

ROWS=$TMP/rows
LOAD_START=$(loadavg)
for server in $LT_SERVERS; do
	case $server in
	triton) start_triton ;;
	perfscen) start_server "$TMP/serve.log" --models identity_int32 ;;
	*) die "unknown server $server" ;;
	esac
	for size in $LT_SIZES; do
		n=$LT_SMALL_REQUESTS
		[ "$size" -ge 65536 ] && n=$LT_LARGE_REQUESTS
		for proto in $LT_PROTOCOLS; do
			for c in $LT_CONCURRENCY; do
				runs=$(( (n + c - 1) / c * c )) # a multiple of the concurrency
				for rep in $(seq "$LT_REPEAT"); do
				order=$LT_TOOLS
				[ $((rep % 2)) = 0 ] && order=$(echo "$LT_TOOLS" | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
				for tool in $order; do
					before=$(served)
					l0=$(loadavg)
					if r=$("cell_$tool" "$proto" "$size" "$c" "$runs"); then
						after=$(served)
						read -r user sys rss <"$TMP/cpu"
						reqs=$((after - before))
						cpu=$(awk -v u="$user" -v s="$sys" -v n="$reqs" 'BEGIN {printf "%.0f", (n > 0 ? (u + s) / n * 1e6 : 0)}')
						echo "$server $size $proto $c $tool $r $cpu $((rss / 1024)) $reqs $l0 $(loadavg) $rep" >>"$ROWS"
						note "$server $size $proto c=$c rep $rep $tool: thr p50 sendrecv wait = $r, CPU ${cpu} µs/req, RSS $((rss / 1024)) MB, $reqs requests"
					else
						log=$TMP/perfscen.log
						[ "$tool" = pa ] && log=$TMP/pa.log
						echo "$server $size $proto $c $tool - - - - - - - - $l0 $(loadavg) $rep" >>"$ROWS"
						note "$server $size $proto c=$c $tool did not complete: $(tail -n 3 "$log" | tr '\n' ' ')"
					fi
				done
				done
			done
		done
	done
	stop_triton
	stop_server
done
LOAD_END=$(loadavg)

echo "# Large tensors: perfscen and perf_analyzer — $(date -u '+%Y-%m-%d %H:%M') UTC"
echo
echo "Command: \`LT_SERVERS=\"$LT_SERVERS\" LT_SIZES=\"$LT_SIZES\" LT_PROTOCOLS=\"$LT_PROTOCOLS\" LT_CONCURRENCY=\"$LT_CONCURRENCY\" LT_LARGE_REQUESTS=$LT_LARGE_REQUESTS LT_SMALL_REQUESTS=$LT_SMALL_REQUESTS LT_REPEAT=$LT_REPEAT${LT_CONNECTIONS:+ LT_CONNECTIONS=$LT_CONNECTIONS} bash scripts/large-tensor-peers.sh\`"
echo
echo "- machine: $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)), shared; servers and clients on it together"
echo "- perfscen $(git describe --always --dirty 2>/dev/null || echo unknown); perf_analyzer \`${PA:-none}\` ($([ -n "$PA" ] && "$PA" --version 2>&1 | head -n 1))"
echo "- load average (1 min) at start $LOAD_START, at end $LOAD_END"
echo
echo "| server | INPUT0 | protocol | c | rep | tool | infer/s | p50 µs | send/recv + wait µs | CPU µs/req | max RSS MB | load avg |"
echo "|---|---:|---|---:|---:|---|---:|---:|---|---:|---:|---|"
awk '{
	tool = ($5 == "pa" ? "perf_analyzer" : $5)
	if ($6 == "-") { printf "| %s | %s | %s | %s | %s | %s | did not complete | | | | | %s→%s |\n", $1, $2, $3, $4, $NF, tool, $14, $15; next }
	printf "| %s | %s | %s | %s | %s | %s | %.1f | %.0f | %.0f + %.0f | %s | %s | %s→%s |\n", $1, $2, $3, $4, $NF, tool, $6, $7, $8, $9, $10, $11, $13, $14
}' "$ROWS"
echo
echo "Ratios perfscen ÷ perf_analyzer (median of the per-repetition ratios; each repetition's in brackets), perfscen's median RSS against 2 × c × (input + output) + 50 MB, and the load average over each cell's repetitions:"
echo
echo "| server | INPUT0 | protocol | c | throughput × | p50 × | CPU × | perfscen RSS MB | RSS bound MB | load avg |"
echo "|---|---:|---|---:|---|---|---|---:|---:|---|"
awk 'function median(v, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	# ratios K COL: "median [r1, r2, ...]" of perfscen ÷ perf_analyzer
	# over the repetitions where both completed, or –.
	function ratios(k, col,   r, n, list, v, s, a) {
		n = 0; list = ""
		for (r = 1; r <= reps[k]; r++) {
			if (!((k, r, "perfscen") in row) || !((k, r, "pa") in row)) continue
			split(row[k, r, "perfscen"], s, " "); split(row[k, r, "pa"], a, " ")
			if (s[col] == "-" || a[col] == "-" || a[col] + 0 == 0) continue
			v[++n] = s[col] / a[col]; list = list (list ? ", " : "") sprintf("%.2f", v[n])
		}
		return n ? sprintf("%.2f [%s]", median(v, n), list) : "–"
	}
	{ key = $1 " " $2 " " $3 " " $4
	  if (!(key in reps)) { order[++nk] = key; l0[key] = ($6 == "-" ? $14 : $13) }
	  if ($NF > reps[key]) reps[key] = $NF
	  row[key, $NF, $5] = $0
	  l1[key] = ($6 == "-" ? $15 : $14)
	  if ($5 == "perfscen" && $6 != "-") rss[key, ++nr[key]] = $11 }
	END { for (i = 1; i <= nk; i++) { k = order[i]; split(k, f, " ")
		bound = 2 * f[4] * 2 * 4 * f[2] / 1048576 + 50
		n = nr[k]; for (j = 1; j <= n; j++) m[j] = rss[k, j]
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %s→%s |\n", f[1], f[2], f[3], f[4], ratios(k, 6), ratios(k, 7), ratios(k, 10), (n ? median(m, n) : "–"), bound, l0[k], l1[k] } }' "$ROWS"
