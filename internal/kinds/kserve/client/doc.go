// Package client holds the KServe v2 clients perfscen drives load with:
// one Client interface, HTTP (binary tensor extension) and gRPC
// implementations picked by name, and client-side timing of each call. It
// owns the KServe encoding: request bodies and messages, reply decoding
// (Inference-Header-Content-Length, binary tensor slicing, raw output
// contents), admin calls and server errors. How bytes reach the server is
// internal/transport's: the library transports it sets up, and perfscen's
// own connections under each caller's Conn.
package client
