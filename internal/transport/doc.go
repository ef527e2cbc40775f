// Package transport owns how every service kind's client reaches a server,
// whatever the protocol's payloads:
//
//   - the error kinds the engine counts and reports: unreachable
//     (ErrUnavailable, *TransportError), an error the server sent
//     (*ServerError), a reply that makes no sense (*ProtocolError), and
//     GRPCError, which sorts gRPC statuses into them as grpc-go reports
//     them;
//   - perfscen's own connections, one per caller, on which the caller's
//     goroutine does the whole exchange: HTTPConn (HTTP/1.1 keep-alive:
//     any method and path, headers, a body of several buffers written
//     with writev, status, headers and body back, Content-Length, chunked
//     and gzip) and GRPCConn (HTTP/2: a unary call of any method with an
//     already marshalled message, the reply message back, with
//     grpc-timeout, metadata, flow control, GOAWAY and refused streams).
//     Both report the time spent waiting for the reply apart from the
//     client's own, and both take their TCP sockets out of Go's poller
//     when a slot is free (blockingConn);
//   - the library transports set up for load (NewHTTPTransport for
//     net/http, GRPCDial for grpc-go), and TLS configuration.
//
// What a payload means (KServe's JSON and binary tensors, a protobuf
// message) is the kind's: the kinds marshal requests and decode replies
// themselves.
package transport
