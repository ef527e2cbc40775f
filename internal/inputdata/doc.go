// Package inputdata owns the request tensors a run sends and the outputs it
// expects back: perf_analyzer's input-data JSON, directories of raw binaries,
// and random or zero data, all checked against a ModelSpec before any load.
//
// The JSON format is perf_analyzer's: {"data": [step, ...]} or, for sequence
// models, {"data": [[step, ...], ...]} with one list per stream; each tensor
// is a list of values, {"content": list | {"b64": s}, "shape": [...]} or
// {"b64": s}, where b64 holds raw little-endian bytes (for BYTES: the
// serialized form, a 4-byte length before each element). "validation_data"
// mirrors "data" step for step. Several files: flat files append their steps
// to one list, stream files add streams; the two forms do not mix. Batching
// follows perf_analyzer: request k of flat data takes steps (k·B+i) mod T.
//
// Where perfscen is stricter or more helpful than perf_analyzer, on purpose:
// unknown keys and duplicate keys are errors (a typo must not silently drop
// validation); a single variable dim is inferred from the element count;
// nested value lists are flattened row-major; zero data gives BYTES elements
// of NUL bytes. A directory's BYTES file holds one element per line.
package inputdata
