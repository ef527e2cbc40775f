package fleet

import (
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// The coordinator is a network service anyone who reaches its port can
// talk to, so what one peer can make it hold is bounded: connections,
// streams, message sizes, and how long each step may stay silent.
const (
	// maxAgentMessage bounds one message from an agent. The largest an
	// agent sends is a WindowReport or a SessionDone: a histogram of all
	// 23 552 buckets (1 µs to 1 h at 3 significant figures) with random
	// counts as large as an int64 total allows encodes to 211 KB, zlib
	// notwithstanding; the engine keeps at most 64 error classes, 5
	// distinct errors and 5 mismatches, each text clipped to
	// maxReportText. The worst window measures 475 KB, the worst
	// SessionDone 287 KB (TestWorstCaseReportFits); 1 MiB leaves room.
	maxAgentMessage = 1 << 20
	// maxReportText bounds each message or example an agent reports.
	maxReportText = 2 << 10
	// maxHeaderList bounds a stream's metadata: the token and gRPC's own
	// headers (grpc-go's default is 16 MB).
	maxHeaderList = 64 << 10
	// maxToken is the longest token the coordinator accepts to start
	// with, well inside maxHeaderList.
	maxToken = 4 << 10
	// maxStreamsPerConn: an agent holds one stream; a few more leave room
	// for a retry while the old stream ends.
	maxStreamsPerConn = 4
)

// limits are the coordinator's bounds on peers; tests shrink them.
type limits struct {
	// strangers is how many connections not proved yet (door) may be
	// open at once: a newcomer past it takes the place of one of them.
	// agentConns is how many proved ones may be.
	strangers, agentConns int
	// prove is how long a connection may stay open without proving
	// itself: its handshakes and its first stream with the token.
	prove time.Duration
	// joining is how many authenticated streams may wait for their Hello
	// at once.
	joining int
	// hello is how long an authenticated stream may take to send Hello.
	hello time.Duration
	// handshake bounds a new connection's TLS and HTTP/2 handshakes.
	handshake time.Duration
	// idle closes a connection that holds no stream for that long.
	idle time.Duration
	// ping is how long a connection may be silent before the coordinator
	// pings it; pingTimeout how long the answer may take.
	ping, pingTimeout time.Duration
}

// defaultLimits leave room for every agent, a restarted one whose old
// connection has not ended yet, and the probes an agent makes when it
// cannot join (reachability, TLS).
func defaultLimits(agents int) limits {
	return limits{strangers: 64 + 2*agents, agentConns: 4 + 2*agents, prove: 20 * time.Second,
		joining: 16 + 2*agents, hello: 10 * time.Second,
		handshake: 10 * time.Second, idle: 30 * time.Second, ping: 30 * time.Second, pingTimeout: 10 * time.Second}
}

// serverOptions are grpc-go's own bounds, set to what the fleet protocol
// needs.
func (l limits) serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(maxAgentMessage),
		grpc.MaxHeaderListSize(maxHeaderList),
		grpc.MaxConcurrentStreams(maxStreamsPerConn),
		// A peer that opens a connection and says nothing (no TLS hello,
		// no HTTP/2 preface) is cut after this, not after grpc-go's two
		// minutes.
		grpc.ConnectionTimeout(l.handshake),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: l.idle, Time: l.ping, Timeout: l.pingTimeout}),
		// Agents ping every 30 s at most when the stream is quiet
		// (RunAgent's keepalive): allowed; a peer pinging faster is
		// cut (grpc-go's default policy would allow one ping per five
		// minutes and cut an agent with a long --heartbeat).
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 20 * time.Second}),
	}
}

// hostOf is addr without its port: a peer's retries come from new ports
// and are one peer.
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
