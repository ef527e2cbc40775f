// Package conformance holds protocol conformance tests: perfscen's client
// and raw HTTP/gRPC requests against the reference server, checking
// Triton's documented behaviour on both protocols. Infer calls run over
// both kinds of connection (transports): the library transports and
// perfscen's own connections, which the runner's workers use. It has no
// non-test code.
package conformance
