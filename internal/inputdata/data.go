package inputdata

import "github.com/perfscen/perfscen/internal/tensor"

// Data is the ready-to-send request payloads of one model and source.
type Data struct {
	// Streams holds the requests in send order. Data without streams
	// (random, zero, a directory, or JSON with a flat "data" list) has one
	// stream; JSON streams for sequence models keep one entry per stream,
	// each replayed on its own correlation id.
	Streams [][]Step
	// Sequences is true when the data came as streams: a request's
	// position in its stream gives the sequence start/end flags.
	Sequences bool
	// FromJSON is true for data read from JSON files: unsplit, its steps
	// are one sequence (perf_analyzer's rule); other data is cut into
	// sequences of the sequence length.
	FromJSON  bool
	BatchSize int
}

// Step is one request: inputs with the batch dim applied ([batch, dims...]
// when the model batches) and the outputs expected back, if the data says.
type Step struct {
	Inputs   []tensor.Tensor
	Expected []tensor.Tensor // empty when the data has no validation_data
	Origin   string          // where the first sample came from, for reports ("data.json step 3")
}

// Len is the number of distinct requests.
func (d *Data) Len() int {
	n := 0
	for _, s := range d.Streams {
		n += len(s)
	}
	return n
}

// HasExpected reports whether any request carries validation outputs.
func (d *Data) HasExpected() bool {
	for _, s := range d.Streams {
		for _, st := range s {
			if len(st.Expected) > 0 {
				return true
			}
		}
	}
	return false
}
