package engine

import (
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
)

// sample is what a worker reports for one request: the kind's Outcome
// (times are offsets from the point's epoch on the monotonic clock) and
// when the request was due. It travels by value in a reused batch
// (outbox.go), so a successful request allocates nothing here.
type sample struct {
	kinds.Outcome
	sched time.Duration // when it was due (== Sent in closed-loop modes)
	// seqEnd says the request ends its sequence (sequence models).
	seqEnd bool
	// queued says no worker was free to send it at its scheduled time
	// (request-rate modes): perf_analyzer's delayed request.
	queued bool
	// paced marks an open-loop send, which had a schedule to keep; tick
	// is its number in the schedule.
	paced bool
	tick  uint64
	// wait is how a precise send waited for its instant (realtime.go).
	wait waitKind

	llm *llmSample // generation requests only
}

// latency counts from the scheduled time so that open-loop latency includes
// any time a request spent waiting for a worker.
func (s *sample) latency() time.Duration { return s.Done - s.sched }

// lateThreshold is how far past its schedule a send may leave before it
// counts as late.
const lateThreshold = time.Millisecond

func (s *sample) late() bool { return s.Sent-s.sched > lateThreshold }
