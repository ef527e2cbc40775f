// Package refserver is an embedded Triton-compatible inference server: KServe
// v2 HTTP and gRPC handlers with Triton's extensions, a per-model scheduler
// with instances and dynamic batching, statistics, system shared memory,
// built-in models and fault injection, for tests and local scenarios.
package refserver
