package engine

import (
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
)

// Record is one request as its worker saw it (Options.Requests): what was
// sent, when, and when its responses came. Times are instants on the
// session's clock (its epoch plus monotonic offsets), the clock of the
// window bounds in Event.
type Record struct {
	// Step is the data sent (its inputs as the kind prepared them).
	Step *inputdata.Step
	// SequenceID is the correlation id of a sequence model's request, 0
	// otherwise.
	SequenceID uint64
	// Sent is when the request left.
	Sent time.Time
	// Responses are when responses came, in order: every event of a
	// captured stream (kind openai), else the first and the final
	// response of a stream, else the reply.
	Responses []time.Time
	// Outputs are the responses as received, one per Responses entry,
	// where the kind keeps them (kind openai: each server-sent event's
	// data, or the whole reply); nil otherwise.
	Outputs [][]byte
	// Err is the request's failure, nil on success.
	Err error
}

// newRecord builds the record of a completed request sent at epoch+s.Sent.
func newRecord(epoch time.Time, r inputdata.Request, seq *kinds.Sequence, s *sample) *Record {
	rec := &Record{Step: r.Step, Sent: epoch.Add(s.Sent), Err: s.Err}
	if seq != nil {
		rec.SequenceID = seq.ID
	}
	switch {
	case s.Tokens != nil && s.Tokens.Capture && len(s.Tokens.Events) > 0:
		for _, ev := range s.Tokens.Events {
			rec.Responses = append(rec.Responses, epoch.Add(s.Sent+ev.At))
			rec.Outputs = append(rec.Outputs, ev.Data)
		}
	case s.Err != nil:
		// A failed request has no response to time.
	case s.Responses > 1 && s.First > 0:
		rec.Responses = []time.Time{epoch.Add(s.First), epoch.Add(s.Done)}
	default:
		rec.Responses = []time.Time{epoch.Add(s.Done)}
	}
	return rec
}
