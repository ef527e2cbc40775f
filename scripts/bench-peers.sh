#!/usr/bin/env bash
# perfscen against the load generators people already use, on one reference
# server in one run: ghz (gRPC) and hey (HTTP) send the same bytes as perfscen
# for a fixed request count; we compare throughput and the client's own CPU
# time per request. When a perf_analyzer binary is on PATH (or PERF_ANALYZER
# names one) it gets cells too: same server, same tensor, requests counted by
# the server's statistics endpoint, CPU from the client process's rusage.
# Optional (BENCH_MEMORY=1): perfscen's RSS over 1M requests.
#
#   make bench-peers                      # defaults below, a few minutes
#   BENCH_MEMORY=1 make bench-peers       # adds the 1M-request memory run
#
# Settings (environment):
#   BENCH_REQUESTS=20480        requests per cell (a multiple of every concurrency,
#                               because hey sends floor(n/c)·c)
#   BENCH_CONCURRENCY="1 8 64"  concurrency levels
#   BENCH_REPEAT=5              repetitions of every cell; the table shows medians
#   BENCH_MEMORY=0              1: also run the memory check
#   BENCH_TOOLS=""              only these cells (e.g. "perfscen-http pa-http")
#   PERF_ANALYZER=perf_analyzer the perf_analyzer binary (skipped when absent)
#   BENCH_MEMORY_REQUESTS=1000000, BENCH_MEMORY_CONCURRENCY=8, BENCH_MEMORY_PROTOCOL=grpc
#   BENCH_OUT=docs/bench/results-<UTC date>.md (-<HHMM> added when that exists:
#                        a later run never overwrites an earlier record)
#
# Why the bytes match: perfscen's HTTP client always uses Triton's binary
# tensor extension (a scenario cannot ask for JSON tensors), so the fair hey
# cell posts exactly perfscen's request body (scripts/peers/hey-identity16-binary.bin,
# captured from perfscen) with its Inference-Header-Content-Length header and
# without Accept-Encoding (hey -disable-compression; perfscen sends none, and
# the server would otherwise gzip hey's replies). A hey JSON-tensor cell runs
# too, for information only. ghz sends the ModelInfer message perfscen sends:
# the same tensor in raw_input_contents, one connection (perfscen's default).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

: "${BENCH_REQUESTS:=20480}"
: "${BENCH_CONCURRENCY:=1 8 64}"
: "${BENCH_REPEAT:=5}"
: "${BENCH_MEMORY:=0}"
: "${BENCH_MEMORY_REQUESTS:=1000000}"
: "${BENCH_MEMORY_CONCURRENCY:=8}"
: "${BENCH_MEMORY_PROTOCOL:=grpc}"
: "${BENCH_OUT:=docs/bench/results-$(date -u +%Y-%m-%d).md}"
if [ -e "$BENCH_OUT" ] && [ -z "${BENCH_OUT_SET:-}" ]; then
  BENCH_OUT="${BENCH_OUT%.md}-$(date -u +%H%M).md"
fi
PERFSCEN=${PERFSCEN:-bin/perfscen}
GHZ_VERSION=v0.93.0
HEY_VERSION=v0.1.5
GHZ=bin/ghz
HEY=bin/hey

die() { echo "bench-peers: $*" >&2; exit 2; }
note() { echo "bench-peers: $*" >&2; }

command -v jq >/dev/null || die "jq is needed to read the tools' JSON reports (apt-get install jq)"
[ -x "$PERFSCEN" ] || go build -o "$PERFSCEN" ./cmd/perfscen || die "cannot build $PERFSCEN"

# install PKG@VER BIN: a failed install keeps an existing binary (offline
# machines) or skips that peer.
install_peer() {
	local pkg=$1 bin=$2
	note "installing $pkg into bin/"
	if GOBIN="$ROOT/bin" go install "$pkg" >/dev/null 2>&1; then
		return 0
	fi
	if [ -x "$bin" ]; then
		note "go install $pkg failed; using the existing $bin (version unchecked)"
		return 0
	fi
	note "go install $pkg failed; its cells are skipped"
	return 1
}
HAVE_GHZ=0 HAVE_HEY=0 HAVE_PA=0
install_peer "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION" "$GHZ" && HAVE_GHZ=1
install_peer "github.com/rakyll/hey@$HEY_VERSION" "$HEY" && HAVE_HEY=1
# perf_analyzer is built from its public source outside this repository;
# its cells run when it is there.
PA=${PERF_ANALYZER:-perf_analyzer}
if command -v "$PA" >/dev/null 2>&1; then
	PA=$(command -v "$PA")
	HAVE_PA=1
	command -v curl >/dev/null || die "curl is needed to read the server's statistics for the perf_analyzer cells"
else
	note "no perf_analyzer on PATH; its cells are skipped"
fi

# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
make_scratch
trap 'exit 130' INT TERM

start_server "$TMP/serve.log" --models identity_fp32
INFER_URL="http://$HTTP_ADDR/v2/models/identity_fp32/infer"
note "server pid $SERVER_PID: http $HTTP_ADDR, grpc $GRPC_ADDR"

BIN_BODY=scripts/peers/hey-identity16-binary.bin
PA_DATA=scripts/peers/pa-identity16.json # perf_analyzer wants FP32 content written as floats
JSON_BODY=scripts/peers/hey-identity16.json
GHZ_BODY=scripts/peers/ghz-identity16.json
RAW_LEN=64 # 16 FP32 values
HDR_LEN=$(($(wc -c <"$BIN_BODY") - RAW_LEN))
# The three request files must carry the same tensor.
cmp -s <(tail -c "$RAW_LEN" "$BIN_BODY") <(jq -r '.raw_input_contents[0]' "$GHZ_BODY" | base64 -d) ||
	die "$BIN_BODY and $GHZ_BODY hold different tensors"

# timed OUT CMD...: runs CMD, leaves "user system" seconds in OUT.
timed() {
	local out=$1
	shift
	local rc=0
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S" -o "$out.raw" "$@" || rc=$?
		tail -n 1 "$out.raw" >"$out"
	else
		local TIMEFORMAT='%3U %3S'
		{ time "$@" 2>"$out.stderr"; } 2>"$out" || rc=$?
	fi
	return "$rc"
}

cpu_seconds() { awk '{printf "%.4f", $1 + $2}' "$1"; }

# scenario PROTO C N ADDR FILE: scripts/peers/identity16.yaml aimed at this server.
scenario() {
	sed -e "s|^  url: .*|  url: $4|" -e "s|^  protocol: .*|  protocol: $1|" \
		-e "s|^  concurrency: .*|  concurrency: $2|" -e "s|^  iterations: .*|  iterations: $3|" \
		-e "s|^    input_data: .*|    input_data: $ROOT/scripts/peers/identity16.data.json|" \
		scripts/peers/identity16.yaml >"$5"
}

# Each cell prints: requests errors throughput cpu_seconds.
cell_perfscen() { # PROTO C N
	scenario "$1" "$2" "$3" "$(server_addr "$1")" "$TMP/sc.yaml"
	timed "$TMP/cpu" "$PERFSCEN" run "$TMP/sc.yaml" --out "$TMP/res.json" --no-baseline --quiet >"$TMP/perfscen.log" 2>&1 ||
		die "perfscen run failed: $(tail -n 5 "$TMP/perfscen.log")"
	jq -r '.points[0].summary | "\(.requests) \(.errors) \(.throughput)"' "$TMP/res.json" | tr '\n' ' '
	cpu_seconds "$TMP/cpu"
	echo
}

cell_ghz() { # C N
	timed "$TMP/cpu" "$GHZ" --insecure --import-paths internal/kservev2/inferencepb --proto internal/kservev2/inferencepb/grpc_service.proto \
		--call inference.GRPCInferenceService/ModelInfer -D "$GHZ_BODY" -n "$2" -c "$1" --connections 1 \
		--format json -o "$TMP/ghz.json" "$GRPC_ADDR" >"$TMP/ghz.log" 2>&1 || die "ghz failed: $(tail -n 5 "$TMP/ghz.log")"
	jq -r '"\(.statusCodeDistribution.OK // 0) \(.count - (.statusCodeDistribution.OK // 0)) \(.rps)"' "$TMP/ghz.json" | tr '\n' ' '
	cpu_seconds "$TMP/cpu"
	echo
}

cell_hey() { # binary|json C N
	local args=(-T application/octet-stream -H "Inference-Header-Content-Length: $HDR_LEN" -D "$BIN_BODY")
	[ "$1" = json ] && args=(-T application/json -D "$JSON_BODY")
	timed "$TMP/cpu" "$HEY" -n "$3" -c "$2" -m POST -disable-compression "${args[@]}" "$INFER_URL" >"$TMP/hey.log" 2>&1 ||
		die "hey failed: $(tail -n 5 "$TMP/hey.log")"
	awk '/Requests\/sec:/ {rps = $2}
		/^Status code distribution:/ {sec = "status"; next}
		/^Error distribution:/ {sec = "error"; next}
		/^ *\[[0-9]+\]/ {k = $1; gsub(/[][]/, "", k); if (sec == "status") {if (k == 200) ok += $2; else bad += $2} else if (sec == "error") bad += k}
		END {printf "%d %d %s ", ok, bad, rps}' "$TMP/hey.log"
	cpu_seconds "$TMP/cpu"
	echo
}

# served: the server's count of successful identity_fp32 requests so far.
served() {
	curl -sf "http://$HTTP_ADDR/v2/models/identity_fp32/stats" | jq -r '.model_stats[0].inference_stats.success.count'
}

# cell_pa PROTO C N: perf_analyzer's synchronous client at concurrency C,
# count windows of N/3 requests (it measures at least three windows and stops
# once stable; stability 1000% keeps it from trying for ever on a loaded
# machine). Requests are the server's count over the invocation, since
# perf_analyzer's report leaves out the requests of unstable windows.
# Prints "requests errors throughput cpu" or fails.
cell_pa() {
	local addr before after
	addr=$(server_addr "$1")
	before=$(served) || die "cannot read the server's statistics"
	rm -f "$TMP/pa.csv"
	if ! timed "$TMP/cpu" "$PA" -m identity_fp32 -u "$addr" -i "$1" --concurrency-range "$2" --input-data "$PA_DATA" \
		--measurement-mode count_windows --measurement-request-count $(($3 / 3)) --stability-percentage 1000 --max-trials 10 \
		-f "$TMP/pa.csv" >"$TMP/pa.log" 2>&1; then
		return 1
	fi
	after=$(served) || die "cannot read the server's statistics"
	printf '%s 0 %s ' "$((after - before))" "$(awk -F, 'NR == 2 {print $2}' "$TMP/pa.csv")"
	cpu_seconds "$TMP/cpu"
	echo
}

# One successful request per tool before measuring, so a mismatch fails fast.
if [ "$HAVE_HEY" = 1 ]; then
	[ "$(cell_hey binary 1 1 | awk '{print $1}')" = 1 ] || die "hey's binary request was not answered 200: $(cat "$TMP/hey.log")"
	[ "$(cell_hey json 1 1 | awk '{print $1}')" = 1 ] || die "hey's JSON request was not answered 200: $(cat "$TMP/hey.log")"
fi
if [ "$HAVE_GHZ" = 1 ]; then
	[ "$(cell_ghz 1 1 | awk '{print $1}')" = 1 ] || die "ghz's request failed: $(cat "$TMP/ghz.json")"
fi
# perf_analyzer per protocol: a protocol it cannot run against this server
# (its gRPC client has sent parameters the server refuses) loses its cells,
# with the reason in the report.
PA_PROTOS=
PA_NOTE=
if [ "$HAVE_PA" = 1 ]; then
	for proto in http grpc; do
		if cell_pa "$proto" 1 300 >/dev/null; then
			PA_PROTOS="$PA_PROTOS $proto"
		else
			why=$(grep -m1 -i 'error' "$TMP/pa.log" || tail -n 1 "$TMP/pa.log")
			note "perf_analyzer -i $proto fails against this server, its cells are skipped: $why"
			PA_NOTE="$PA_NOTE perf_analyzer -i $proto failed against this server: \`$why\`."
		fi
	done
fi

LOAD_START=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)
ROWS=$TMP/rows.tsv # rep concurrency tool requests errors throughput cpu_s
: >"$ROWS"
for rep in $(seq "$BENCH_REPEAT"); do
	for c in $BENCH_CONCURRENCY; do
		[ $((BENCH_REQUESTS % c)) = 0 ] || note "BENCH_REQUESTS=$BENCH_REQUESTS is not a multiple of $c: hey sends $((BENCH_REQUESTS / c * c))"
		tools="perfscen-grpc perfscen-http"
		[ "$HAVE_GHZ" = 1 ] && tools="$tools ghz"
		[ "$HAVE_HEY" = 1 ] && tools="$tools hey-binary hey-json"
		for proto in $PA_PROTOS; do tools="$tools pa-$proto"; done
		if [ -n "${BENCH_TOOLS:-}" ]; then
			tools=$(for t in $tools; do case " $BENCH_TOOLS " in *" $t "*) echo "$t" ;; esac; done | tr '\n' ' ')
		fi
		# Alternate the order so drift over a repetition favours no tool.
		[ $((rep % 2)) = 0 ] && tools=$(echo "$tools" | tr ' ' '\n' | tac | tr '\n' ' ')
		for tool in $tools; do
			case $tool in
			perfscen-grpc) r=$(cell_perfscen grpc "$c" "$BENCH_REQUESTS") ;;
			perfscen-http) r=$(cell_perfscen http "$c" "$BENCH_REQUESTS") ;;
			ghz) r=$(cell_ghz "$c" "$BENCH_REQUESTS") ;;
			hey-binary) r=$(cell_hey binary "$c" "$BENCH_REQUESTS") ;;
			hey-json) r=$(cell_hey json "$c" "$BENCH_REQUESTS") ;;
			pa-http | pa-grpc) r=$(cell_pa "${tool#pa-}" "$c" "$BENCH_REQUESTS") || die "perf_analyzer failed: $(tail -n 5 "$TMP/pa.log")" ;;
			esac
			printf '%s\t%s\t%s\t%s\n' "$rep" "$c" "$tool" "$(echo "$r" | tr ' ' '\t')" >>"$ROWS"
			note "rep $rep c=$c $tool: $r"
		done
	done
done

# Medians per (concurrency, tool) of throughput and CPU µs per request.
MED=$TMP/medians.tsv
awk -F'\t' '{k = $2 "\t" $3; n[k]++; t[k, n[k]] = $6; u[k, n[k]] = $7 * 1e6 / $4; e[k] += $5}
	function med(a, k, m,   i, j, x, v) {
		for (i = 1; i <= m; i++) v[i] = a[k, i]
		for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
		return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2 }
	END {for (k in n) printf "%s\t%.0f\t%.2f\t%d\n", k, med(t, k, n[k]), med(u, k, n[k]), e[k]}' "$ROWS" | sort -n >"$MED"
get() { awk -F'\t' -v c="$1" -v t="$2" -v f="$3" '$1 == c && $2 == t {print $f}' "$MED"; }
# pairmed C OURS PEER FIELD: median over repetitions of OURS/PEER within the
# same repetition (run back to back, so they share the machine's state);
# FIELD t = throughput, u = CPU per request.
pairmed() {
	awk -F'\t' -v c="$1" -v a="$2" -v b="$3" -v f="$4" '
		$2 == c && ($3 == a || $3 == b) {v = f == "t" ? $6 : $7 / $4; x[$1, $3] = v; reps[$1] = 1}
		END {
			n = 0
			for (r in reps) if (((r, a) in x) && ((r, b) in x) && x[r, b] > 0) q[++n] = x[r, a] / x[r, b]
			if (!n) {print "n/a"; exit}
			for (i = 2; i <= n; i++) {y = q[i]; for (j = i - 1; j >= 1 && q[j] > y; j--) q[j + 1] = q[j]; q[j + 1] = y}
			printf "%.2f", n % 2 ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
		}' "$ROWS"
}
mark() { awk -v r="$1" -v op="$2" -v b="$3" 'BEGIN {if (r == "n/a") print ""; else if ((op == "le" && r <= b) || (op == "ge" && r >= b)) print "meets"; else print "MISSES"}'; }

table() { # PEER PERFSCEN_TOOL CPU_TARGET [CPU_TARGET_ABOVE_1]
	local peer=$1 ours=$2 target=$3 target_c=${4:-$3}
	local tlabel=$target
	[ "$target_c" != "$target" ] && tlabel="$target at c = 1, $target_c above"
	echo "| c | $ours req/s | $peer req/s | throughput ratio (≥ 1.0) | $ours CPU µs/req | $peer CPU µs/req | CPU ratio (≤ $tlabel) |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
	for c in $BENCH_CONCURRENCY; do
		local ot pt oc pc tr cr
		ot=$(get "$c" "$ours" 3) pt=$(get "$c" "$peer" 3) oc=$(get "$c" "$ours" 4) pc=$(get "$c" "$peer" 4)
		tr=$(pairmed "$c" "$ours" "$peer" t) cr=$(pairmed "$c" "$ours" "$peer" u)
		local tc=$target
		[ "$c" -gt 1 ] && tc=$target_c
		echo "| $c | $ot | ${pt:-–} | $tr $(mark "$tr" ge 1.0) | $oc | ${pc:-–} | $cr $(mark "$cr" le "$tc") |"
	done
}

memory_run() {
	local n=$BENCH_MEMORY_REQUESTS c=$BENCH_MEMORY_CONCURRENCY proto=$BENCH_MEMORY_PROTOCOL addr=$GRPC_ADDR
	[ "$proto" = http ] && addr=$HTTP_ADDR
	scenario "$proto" "$c" "$n" "$addr" "$TMP/mem.yaml"
	note "memory run: $n requests, $proto, concurrency $c"
	"$PERFSCEN" run "$TMP/mem.yaml" --out "$TMP/mem.json" --no-baseline --quiet >"$TMP/mem.log" 2>&1 &
	local pid=$! t=0 rss
	: >"$TMP/rss.tsv"
	while kill -0 "$pid" 2>/dev/null; do
		rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
		[ -n "$rss" ] && printf '%s\t%s\n' "$t" "$rss" >>"$TMP/rss.tsv"
		sleep 1
		t=$((t + 1))
	done
	wait "$pid" || die "memory run failed: $(tail -n 5 "$TMP/mem.log")"
	local got tput
	got=$(jq -r '.points[0].summary.requests' "$TMP/mem.json")
	tput=$(jq -r '.points[0].summary.throughput | floor' "$TMP/mem.json")
	# start = the sample at 1 s (connections and buffers set up), end = the last.
	awk -F'\t' -v got="$got" -v tput="$tput" -v proto="$proto" -v c="$c" '
		NR == 1 || $1 == 1 {start = $2}
		{if ($2 > peak) peak = $2; end = $2; last = $1}
		END {printf "perfscen %s, concurrency %d: %d requests at %d req/s in %d s; VmRSS start %.1f MiB, peak %.1f MiB, end %.1f MiB, end - start %+.1f MiB\n",
			proto, c, got, tput, last, start / 1024, peak / 1024, end / 1024, (end - start) / 1024}' "$TMP/rss.tsv"
}

{
	echo "# perfscen vs ghz and hey — $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	extra=
	[ -n "${BENCH_TOOLS:-}" ] && extra="$extra BENCH_TOOLS=\"$BENCH_TOOLS\""
	[ "$HAVE_PA" = 1 ] && extra="$extra PERF_ANALYZER=$PA"
	[ "$PERFSCEN" != bin/perfscen ] && extra="$extra PERFSCEN=$PERFSCEN"
	echo "Command: \`BENCH_REQUESTS=$BENCH_REQUESTS BENCH_CONCURRENCY=\"$BENCH_CONCURRENCY\" BENCH_REPEAT=$BENCH_REPEAT BENCH_MEMORY=$BENCH_MEMORY$extra make bench-peers\`"
	echo
	echo "- machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || echo unknown)), $(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null); server and clients share them"
	echo "- perfscen $(git describe --tags --always --dirty 2>/dev/null || echo unknown), $(go version | awk '{print $3}'); ghz $GHZ_VERSION; hey $HEY_VERSION"
	echo "- server: \`perfscen serve\` (identity_fp32 only), loopback; request: identity_fp32, INPUT0 FP32 [1,16] = 0..15"
	echo "- $BENCH_REQUESTS requests per cell, no warm-up, $BENCH_REPEAT repetitions (tool order reversed every other one); req/s and µs/req are medians over repetitions, ratios are medians of the per-repetition ratios. Throughput is each tool's own figure; CPU is user+system time of the client process over the whole invocation (start-up and report included) ÷ successful requests"
	echo "- load average (1 min) at start $LOAD_START, at end $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown); anything else running on the machine shows up here"
	if [ "$(nice)" != 0 ]; then
		echo "- run at niceness $(nice) (the server and every client inherit it), so that other work on the machine at niceness 0 yields the CPUs"
	fi
	echo
	echo "## gRPC: perfscen vs ghz (same ModelInfer bytes, one connection)"
	echo
	table ghz perfscen-grpc 0.7
	echo
	echo "## HTTP: perfscen vs hey (same binary-extension body, no compression)"
	echo
	table hey-binary perfscen-http 1.0
	echo
	if [ "$HAVE_PA" = 1 ]; then
		echo "## perf_analyzer (same server and tensor; requests from the server's statistics)"
		echo
		echo "perf_analyzer: \`$PA\` ($("$PA" --version 2>&1 | head -n 1)), synchronous client, \`--concurrency-range C --measurement-mode count_windows --measurement-request-count $((BENCH_REQUESTS / 3)) --stability-percentage 1000 --max-trials 10\`, input \`$PA_DATA\`. Its req/s is its own figure (stable windows); its requests for CPU per request are the server's count over the whole invocation.${PA_NOTE}"
		echo
		for proto in $PA_PROTOS; do
			echo "### $proto: perfscen vs perf_analyzer"
			echo
			table "pa-$proto" "perfscen-$proto" 0.7 0.5
			echo
		done
	fi
	echo "For information, hey posting a JSON-tensor body (JSON reply; perfscen cannot send JSON tensors):"
	echo
	echo "| c | hey JSON req/s | hey JSON CPU µs/req |"
	echo "|---:|---:|---:|"
	for c in $BENCH_CONCURRENCY; do echo "| $c | $(get "$c" hey-json 3) | $(get "$c" hey-json 4) |"; done
	echo
	errs=$(awk -F'\t' '{s += $5} END {print s + 0}' "$ROWS")
	echo "Failed requests over all cells: $errs"
	if [ "$BENCH_MEMORY" = 1 ]; then
		echo
		echo "## Memory"
		echo
		memory_run
	fi
	echo
	echo "<details><summary>every cell (rep, c, tool, requests, errors, req/s, CPU s)</summary>"
	echo
	echo '```'
	cat "$ROWS"
	echo '```'
	echo "</details>"
} >"$TMP/report.md"

cp "$TMP/report.md" "$BENCH_OUT"
cat "$BENCH_OUT"
note "written to $BENCH_OUT"
