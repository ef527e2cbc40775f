// Package kserve owns the KServe v2 (Open Inference Protocol) wire formats with
// Triton's extensions that both the clients and the reference server speak:
// datatypes, raw tensor encodings, JSON messages and the binary data extension.
package kserve
