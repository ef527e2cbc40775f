# Sourced by the scripts that measure perfscen against its peers: one way
# to start the reference server on free loopback ports, learn where it
# listens and stop it, so every script measures the same server the same
# way.
#
#   start_server LOG ARGS...  runs "$PERFSCEN" serve --http-port 0 --grpc-port 0 ARGS...
#                             in the background, logging to LOG, and sets
#                             SERVER_PID, HTTP_ADDR and GRPC_ADDR (host:port)
#   server_addr PROTO         prints HTTP_ADDR for http, GRPC_ADDR for grpc
#   stop_server               kills and reaps the server, if one was started
#   make_scratch              sets TMP to a new scratch directory and, on exit,
#                             stops the server and removes TMP
#
# The caller sets PERFSCEN and defines die MESSAGE (print, exit nonzero):
# the scripts differ in its prefix and exit status.

SERVER_PID=

start_server() {
	local log=$1
	shift
	"$PERFSCEN" serve --http-port 0 --grpc-port 0 "$@" >"$log" 2>&1 &
	SERVER_PID=$!
	# The server prints its ports once both listeners are up.
	for _ in $(seq 100); do
		grep -q '^Started GRPCInferenceService' "$log" && break
		kill -0 "$SERVER_PID" 2>/dev/null || die "server exited: $(cat "$log")"
		sleep 0.1
	done
	HTTP_ADDR=$(sed -n 's|^Started HTTPService at http://||p' "$log")
	GRPC_ADDR=$(sed -n 's|^Started GRPCInferenceService at ||p' "$log")
	[ -n "$HTTP_ADDR" ] && [ -n "$GRPC_ADDR" ] || die "server did not report its ports: $(cat "$log")"
}

server_addr() {
	if [ "$1" = http ]; then echo "$HTTP_ADDR"; else echo "$GRPC_ADDR"; fi
}

stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}

make_scratch() {
	TMP=$(mktemp -d)
	trap scratch_cleanup EXIT
}

scratch_cleanup() {
	stop_server
	rm -rf "$TMP"
}
