package refserver

import "sync"

// sequenceParams are the sequence extension's request parameters. IDs may
// be numbers or strings on the wire; both are kept as strings here.
type sequenceParams struct {
	id         string // "" or "0": not in a sequence
	start, end bool
}

func (p sequenceParams) active() bool { return p.id != "" && p.id != "0" }

// sequenceStates holds one running value per correlation id for models
// that keep state across a sequence.
type sequenceStates struct {
	model string // for messages
	mu    sync.Mutex
	m     map[string]int64
}

// step applies start/end around fn, which gets and returns the state. A
// sequence must begin with a start flag, as Triton requires.
func (s *sequenceStates) step(p sequenceParams, fn func(int64) int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]int64{}
	}
	prev, ok := s.m[p.id]
	if p.start {
		prev = 0
	} else if !ok {
		return 0, errorf(codeInvalidArg, "inference request for sequence %s to model '%s' must specify the START flag on the first request of the sequence", p.id, s.model)
	}
	next := fn(prev)
	if p.end {
		delete(s.m, p.id)
	} else {
		s.m[p.id] = next
	}
	return next, nil
}
