# shellcheck shell=bash
# Sourced by the scripts that measure perfscen against its peers on the
# real Triton (../shared/triton beside the checkout): one way to start it on
# free loopback ports, on a copy of its model repository with the version
# folders the identity models lack.
#
#   find_triton     prints the Triton directory (TRITON_DIR wins)
#   start_triton    starts it, logging to $TMP/triton.log, and sets
#                   TRITON_PID, HTTP_ADDR and GRPC_ADDR (host:port)
#   stop_triton     stops and reaps it, if one was started
#
# The caller sets ROOT and TMP and defines die MESSAGE.

TRITON_PID=

find_triton() {
	if [ -n "${TRITON_DIR:-}" ]; then
		echo "$TRITON_DIR"
		return
	fi
	# ../shared/triton beside the checkout (or beside a folder above it,
	# for a worktree kept in a subfolder).
	local d=$ROOT
	for _ in 1 2 3; do
		d=$(dirname "$d")
		[ -x "$d/shared/triton/run-triton" ] && echo "$d/shared/triton" && return
	done
	echo "$ROOT/../shared/triton"
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start_triton() {
	local dir
	dir=$(find_triton)
	[ -x "$dir/run-triton" ] || die "no Triton in $dir"
	rm -rf "$TMP/models"
	cp -r "$dir/models" "$TMP/models"
	chmod -R u+w "$TMP/models"
	mkdir -p "$TMP/models/identity_fp32/1" "$TMP/models/identity_int32/1"
	local hp gp mp
	hp=$(free_port) gp=$(free_port) mp=$(free_port)
	"$dir/run-triton" --http-port "$hp" --grpc-port "$gp" --metrics-port "$mp" \
		--model-repository "$TMP/models" >"$TMP/triton.log" 2>&1 &
	TRITON_PID=$!
	for _ in $(seq 600); do
		curl -sf "127.0.0.1:$hp/v2/health/ready" >/dev/null && break
		kill -0 "$TRITON_PID" 2>/dev/null || die "Triton exited: $(tail -n 5 "$TMP/triton.log")"
		sleep 0.1
	done
	curl -sf "127.0.0.1:$hp/v2/health/ready" >/dev/null || die "Triton not ready after 60 s"
	# shellcheck disable=SC2034 # the sourcing script reads them
	HTTP_ADDR=127.0.0.1:$hp GRPC_ADDR=127.0.0.1:$gp
}

stop_triton() {
	if [ -n "$TRITON_PID" ]; then
		kill "$TRITON_PID" 2>/dev/null || true
		wait "$TRITON_PID" 2>/dev/null || true
		TRITON_PID=
	fi
}
