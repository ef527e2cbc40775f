package validate

import "sync/atomic"

// Sampler decides which responses to validate. The first First responses
// are all checked, then one in Every of each data entry's responses: the
// entry's first response after those, and every Every-th after it. Count
// windows and fixed-count runs use Every 1 (check everything: the counts
// are small and the verdict wants every response); heavy time-window
// sweeps use a larger Every so the comparison, though untimed, does not
// compete with the load for CPU.
//
// Counting per entry matters: with a count across the point, a worker
// sending round-robin entries lands on the same entries at every Every-th
// response (2, 5 or 10 entries and Every 10), so the others were never
// checked again after the first responses, and a server that starts
// answering some inputs wrongly after warm-up went unnoticed.
//
// It is safe for concurrent use: one or two atomic adds per response.
type Sampler struct {
	first   uint64
	every   uint64
	n       atomic.Uint64
	entries []atomic.Uint64 // each entry's responses after the first First
}

// NewSampler returns a Sampler for data of entries entries (indexes 0 to
// entries-1); every < 1 means 1 (check all).
func NewSampler(first, every, entries int) *Sampler {
	if every < 1 {
		every = 1
	}
	if first < 0 {
		first = 0
	}
	s := &Sampler{first: uint64(first), every: uint64(every)}
	if every > 1 {
		s.entries = make([]atomic.Uint64, max(entries, 1))
	}
	return s
}

// Sample counts one response to data entry entry and reports whether to
// validate it. An entry outside the data counts as the last one.
func (s *Sampler) Sample(entry int) bool {
	if s.n.Load() < s.first && s.n.Add(1)-1 < s.first {
		return true
	}
	if s.every == 1 {
		return true
	}
	entry = min(max(entry, 0), len(s.entries)-1)
	return (s.entries[entry].Add(1)-1)%s.every == 0
}
