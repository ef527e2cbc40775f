// Package kservev2 owns the KServe v2 (Open Inference Protocol) wire formats
// with Triton's extensions that the kserve kind's client and the reference
// server share: the JSON messages, binary tensor data framing, parameters,
// model configuration and statistics, and the gRPC messages (inferencepb).
// It sits outside internal/kinds because it belongs to neither side: both
// speak the protocol.
package kservev2
