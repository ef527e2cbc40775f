// Package torchserve is the TorchServe service kind (server.kind:
// torchserve): predictions over TorchServe's REST inference API
// (POST /predictions/{model}[/{version}]) with request bodies prepared
// from input data (JSON, raw bytes, files, or perf_analyzer's
// TORCHSERVE_INPUT file paths sent as a multipart part), a preflight over
// GET /ping and the management API (the model is registered and has
// workers), the server's own request and queue time from the metrics API
// (Prometheus ts_* counters), and response checks against expected JSON
// or bytes. Its embedded flavour serves the reference server's built-in
// models through the same three APIs.
package torchserve
