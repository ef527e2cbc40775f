// Package conformance holds protocol conformance tests: perfscen's client
// and raw HTTP/gRPC requests against the reference server, checking
// Triton's documented behaviour on both protocols. It has no non-test code.
package conformance
