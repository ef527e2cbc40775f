// Package grpc is the service kind of any gRPC service (server.kind:
// grpc): a method of it, unary or streaming, described by .proto files
// compiled at run time (protocompile), a protoset or the server's
// reflection, is called with messages written as JSON (protojson) or as
// perf_analyzer's framed binary messages, through dynamic messages
// (dynamicpb). Replies are checked against expected JSON, whole or by
// field paths, and failures are counted per status code. Its embedded
// server is a demo service of our own whose methods run the reference
// server's built-in models.
//
// A gRPC service reports nothing of its own time: every figure is the
// client's, and server_* metrics do not exist for this kind.
package grpc
