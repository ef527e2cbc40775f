// Package client holds the KServe v2 clients perfscen drives load with: one
// Client interface, HTTP (binary tensor extension) and gRPC implementations
// picked by name, typed server errors, and client-side timing of each call.
package client
