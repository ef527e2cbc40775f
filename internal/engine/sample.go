package engine

import "time"

// sample is what a worker reports for one request. Times are offsets from
// the point's epoch on the monotonic clock. It travels by value in a reused
// batch (outbox.go), so a successful request allocates nothing here.
type sample struct {
	sched time.Duration // when it was due (== sent in closed-loop modes)
	sent  time.Duration
	done  time.Duration

	sendRecv time.Duration // client split reported by the protocol
	wait     time.Duration

	// Streams of decoupled models: when the first response with data came
	// (done is the final response) and how many responses carried data.
	first     time.Duration
	responses int
	decoupled bool // the server marked responses not final, or ended empty

	err error // nil on success; a per-request failure is data

	checked  bool   // outputs were validated
	mismatch string // first validation difference, "" when equal

	llm *llmSample // generation requests only
}

// latency counts from the scheduled time so that open-loop latency includes
// any time a request spent waiting for a worker.
func (s *sample) latency() time.Duration { return s.done - s.sched }

// lateThreshold is how far past its schedule a send may leave before it
// counts as late.
const lateThreshold = time.Millisecond

func (s *sample) late() bool { return s.sent-s.sched > lateThreshold }
