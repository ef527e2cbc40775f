// Package inputdata owns the request tensors a run sends and the outputs it
// expects back: perf_analyzer's input-data JSON, directories of raw binaries,
// and random or zero data, all checked against a ModelSpec before any load.
package inputdata
