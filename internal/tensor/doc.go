// Package tensor is the tensor model every service kind shares: a named,
// typed, shaped block of row-major bytes, the datatypes and their sizes,
// FP16/BF16 conversion, BYTES element framing, and conversions between raw
// bytes, typed Go slices and JSON data arrays.
package tensor
