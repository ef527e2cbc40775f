// Package tritoncapi is the triton_c_api service kind: perfscen loads
// Triton's in-process C API (libtritonserver.so) at run time from the path
// the scenario gives, starts the server inside its own process, loads the
// scenario's models and drives them with TRITONSERVER_ServerInferAsync and
// a response allocator of its own, with no network between client and
// server. Server-side figures come from the server's own statistics, as
// for the HTTP and gRPC kinds.
//
// The library is opened with dlopen through purego, so perfscen builds
// with no Triton present (no header, no library); a machine without the
// library gets exit 2 naming the path tried. Triton's callbacks (output
// allocation and release, responses) are C where perfscen is built with
// cgo, as make build does, so a response never enters Go on Triton's
// thread (callbacks_cgo_linux.go); a build without cgo makes them Go
// functions through purego, at about half the throughput at concurrency
// 1 (docs/performance.md).
package tritoncapi
