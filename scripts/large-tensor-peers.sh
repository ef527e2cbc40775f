#!/usr/bin/env bash
# Large tensors, perfscen against perf_analyzer: identity_int32 with an
# INT32 [1228800] tensor (4.9 MB in, 4.9 MB out: a 1×3×640×640 FP32
# image's size) and with [16], on the real Triton in ../shared/triton and
# on `perfscen serve`, over HTTP and gRPC at concurrency 1, 8 and 32.
# Each cell: throughput, p50, the client's breakdown (send/recv + response
# wait), client CPU per request (user+system of the whole process over the
# requests the server counted during it, warm-up included), the client's
# max RSS, and the load average around it. The two tools alternate.
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
# ../shared/triton beside the checkout (or beside a folder above it, for
# a worktree kept in a subfolder).
find_triton() {
	local d=$ROOT
	for _ in 1 2 3; do
		d=$(dirname "$d")
		[ -x "$d/shared/triton/run-triton" ] && echo "$d/shared/triton" && return
	done
	echo "$ROOT/../shared/triton"
}
TRITON_DIR=${TRITON_DIR:-$(find_triton)}
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
make_scratch
TRITON_PID=
trap 'stop_triton; scratch_cleanup' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_triton: the real server on free ports, on a copy of its model
# repository with the version folders the identity models lack.
start_triton() {
	[ -x "$TRITON_DIR/run-triton" ] || die "no Triton in $TRITON_DIR"
	cp -r "$TRITON_DIR/models" "$TMP/models"
	chmod -R u+w "$TMP/models"
	mkdir -p "$TMP/models/identity_fp32/1" "$TMP/models/identity_int32/1"
	local hp gp mp
	hp=$(free_port) gp=$(free_port) mp=$(free_port)
	"$TRITON_DIR/run-triton" --http-port "$hp" --grpc-port "$gp" --metrics-port "$mp" \
		--model-repository "$TMP/models" >"$TMP/triton.log" 2>&1 &
	TRITON_PID=$!
	for _ in $(seq 600); do
		curl -sf "127.0.0.1:$hp/v2/health/ready" >/dev/null && break
		kill -0 "$TRITON_PID" 2>/dev/null || die "Triton exited: $(tail -n 5 "$TMP/triton.log")"
		sleep 0.1
	done
	curl -sf "127.0.0.1:$hp/v2/health/ready" >/dev/null || die "Triton not ready after 60 s"
	HTTP_ADDR=127.0.0.1:$hp GRPC_ADDR=127.0.0.1:$gp
}

stop_triton() {
	if [ -n "$TRITON_PID" ]; then
		kill "$TRITON_PID" 2>/dev/null || true
		wait "$TRITON_PID" 2>/dev/null || true
		TRITON_PID=
	fi
}

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
				for tool in $LT_TOOLS; do
					before=$(served)
					l0=$(loadavg)
					if r=$("cell_$tool" "$proto" "$size" "$c" "$runs"); then
						after=$(served)
						read -r user sys rss <"$TMP/cpu"
						reqs=$((after - before))
						cpu=$(awk -v u="$user" -v s="$sys" -v n="$reqs" 'BEGIN {printf "%.0f", (n > 0 ? (u + s) / n * 1e6 : 0)}')
						echo "$server $size $proto $c $tool $r $cpu $((rss / 1024)) $reqs $l0 $(loadavg)" >>"$ROWS"
						note "$server $size $proto c=$c $tool: thr p50 sendrecv wait = $r, CPU ${cpu} µs/req, RSS $((rss / 1024)) MB, $reqs requests"
					else
						log=$TMP/perfscen.log
						[ "$tool" = pa ] && log=$TMP/pa.log
						echo "$server $size $proto $c $tool - - - - - - - - $l0 $(loadavg)" >>"$ROWS"
						note "$server $size $proto c=$c $tool did not complete: $(tail -n 3 "$log" | tr '\n' ' ')"
					fi
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
echo "Command: \`LT_SERVERS=\"$LT_SERVERS\" LT_SIZES=\"$LT_SIZES\" LT_PROTOCOLS=\"$LT_PROTOCOLS\" LT_CONCURRENCY=\"$LT_CONCURRENCY\" LT_LARGE_REQUESTS=$LT_LARGE_REQUESTS LT_SMALL_REQUESTS=$LT_SMALL_REQUESTS bash scripts/large-tensor-peers.sh\`"
echo
echo "- machine: $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)), shared; servers and clients on it together"
echo "- perfscen $(git describe --always --dirty 2>/dev/null || echo unknown); perf_analyzer \`${PA:-none}\` ($([ -n "$PA" ] && "$PA" --version 2>&1 | head -n 1))"
echo "- load average (1 min) at start $LOAD_START, at end $LOAD_END"
echo
echo "| server | INPUT0 | protocol | c | tool | infer/s | p50 µs | send/recv + wait µs | CPU µs/req | max RSS MB | load avg |"
echo "|---|---:|---|---:|---|---:|---:|---|---:|---:|---|"
awk '{
	tool = ($5 == "pa" ? "perf_analyzer" : $5)
	if ($6 == "-") { printf "| %s | %s | %s | %s | %s | did not complete | | | | | %s→%s |\n", $1, $2, $3, $4, tool, $14, $15; next }
	printf "| %s | %s | %s | %s | %s | %.1f | %.0f | %.0f + %.0f | %s | %s | %s→%s |\n", $1, $2, $3, $4, tool, $6, $7, $8, $9, $10, $11, $13, $14
}' "$ROWS"
echo
echo "Ratios perfscen ÷ perf_analyzer, and perfscen's RSS against 2 × c × (input + output) + 50 MB:"
echo
echo "| server | INPUT0 | protocol | c | throughput × | p50 × | CPU × | perfscen RSS MB | RSS bound MB |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
awk '{ key = $1 " " $2 " " $3 " " $4
	if ($5 == "perfscen") { st[key] = $6; sp[key] = $7; sc[key] = $10; sr[key] = $11; order[++n] = key }
	else { at[key] = $6; ap[key] = $7; ac[key] = $10 } }
	END { for (i = 1; i <= n; i++) { k = order[i]; split(k, f, " ")
		bound = 2 * f[4] * 2 * 4 * f[2] / 1048576 + 50
		tr = (at[k] != "" && at[k] != "-" && st[k] != "-") ? sprintf("%.2f", st[k] / at[k]) : "–"
		pr = (ap[k] != "" && ap[k] != "-" && sp[k] != "-") ? sprintf("%.2f", sp[k] / ap[k]) : "–"
		cr = (ac[k] != "" && ac[k] != "-" && sc[k] != "-" && ac[k] > 0) ? sprintf("%.2f", sc[k] / ac[k]) : "–"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f |\n", f[1], f[2], f[3], f[4], tr, pr, cr, sr[k], bound } }' "$ROWS"
