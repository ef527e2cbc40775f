package validate

import "sync/atomic"

// Sampler decides which responses to validate. The first First responses
// are all checked, then one in Every. Count-window and fixed-count runs use
// Every 1 (check everything: the counts are small and the verdict wants
// every response); heavy time-window sweeps use a larger Every so the
// comparison, though untimed, does not compete with the load for CPU.
// It is safe for concurrent use: one atomic add per response.
type Sampler struct {
	first uint64
	every uint64
	n     atomic.Uint64
}

// NewSampler returns a Sampler; every < 1 means 1 (check all).
func NewSampler(first, every int) *Sampler {
	if every < 1 {
		every = 1
	}
	if first < 0 {
		first = 0
	}
	return &Sampler{first: uint64(first), every: uint64(every)}
}

// Sample counts one response and reports whether to validate it.
func (s *Sampler) Sample() bool {
	i := s.n.Add(1) - 1
	return i < s.first || (i-s.first)%s.every == 0
}
