// Package llmtrace reads LLM request traces in the Mooncake format that
// AIPerf and the Mooncake project replay: JSON Lines, one request a line,
//
//	{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48]}
//
// with the arrival time in milliseconds, the prompt and reply lengths in
// tokens, and the ids of the prompt's blocks: requests naming the same id
// at the same place share that block of their prompt (a shared prefix).
package llmtrace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/perfscen/perfscen/internal/jsonpos"
)

// Limits keep a wrong file (a log, a data set) from planning days of load
// or prompts no server takes.
const (
	MaxRequests = 1 << 20
	MaxTokens   = 1 << 21 // per prompt or reply
	maxLine     = 16 << 20
)

// Request is one line of a trace.
type Request struct {
	// At is the arrival time, from the trace's timestamp (ms).
	At time.Duration
	// Input and Output are the prompt and reply lengths in tokens.
	Input, Output int
	// HashIDs name the prompt's blocks in order; empty when the trace
	// gives none (every prompt is its own).
	HashIDs []int64
	// Line is where the request is in the file.
	Line int
}

// Trace is a parsed trace file, in file order.
type Trace struct {
	Path     string
	Requests []Request
}

// Read parses the trace at path.
func Read(path string) (*Trace, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

type line struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int64   `json:"input_length"`
	OutputLength *int64   `json:"output_length"`
	HashIDs      []int64  `json:"hash_ids"`
}

// Parse reads a trace's contents; name is used in messages, each
// file:line: field: problem. Blank lines are skipped. Timestamps must not
// go back: a trace is a schedule, replayed in file order.
func Parse(name string, src []byte) (*Trace, error) {
	t := &Trace{Path: name}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var first, last float64
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		at := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: "+format, append([]any{name, n}, a...)...)
		}
		if len(t.Requests) == MaxRequests {
			return nil, at("more than %d requests", MaxRequests)
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			if _, col, ok := jsonpos.Of(raw, err); ok {
				return nil, fmt.Errorf("%s:%d:%d: %w", name, n, col, err)
			}
			return nil, at("%v (a line is {\"timestamp\": ms, \"input_length\": n, \"output_length\": n, \"hash_ids\": [...]})", err)
		}
		if dec.More() {
			return nil, at("more than one JSON object on the line")
		}
		switch {
		case l.Timestamp == nil:
			return nil, at("timestamp: required (milliseconds)")
		case math.IsNaN(*l.Timestamp) || *l.Timestamp < 0 || *l.Timestamp > float64(30*24*time.Hour/time.Millisecond):
			return nil, at("timestamp: %v is not a time in milliseconds (0 to 30 days)", *l.Timestamp)
		case l.InputLength == nil:
			return nil, at("input_length: required (tokens)")
		case *l.InputLength < 1 || *l.InputLength > MaxTokens:
			return nil, at("input_length: %d is not in [1, %d]", *l.InputLength, MaxTokens)
		case l.OutputLength == nil:
			return nil, at("output_length: required (tokens)")
		case *l.OutputLength < 1 || *l.OutputLength > MaxTokens:
			return nil, at("output_length: %d is not in [1, %d]", *l.OutputLength, MaxTokens)
		}
		for i, h := range l.HashIDs {
			if h < 0 {
				return nil, at("hash_ids[%d]: %d is negative", i, h)
			}
		}
		ts := *l.Timestamp
		if len(t.Requests) == 0 {
			first = ts
		} else if ts < last {
			return nil, at("timestamp: %v is before the previous line's %v; a trace is replayed in file order", ts, last)
		}
		last = ts
		t.Requests = append(t.Requests, Request{At: time.Duration((ts - first) * float64(time.Millisecond)),
			Input: int(*l.InputLength), Output: int(*l.OutputLength), HashIDs: l.HashIDs, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(t.Requests) == 0 {
		return nil, fmt.Errorf("%s: no requests (one JSON object a line)", name)
	}
	return t, nil
}

// CheckBlocks checks that no request names more blocks of blockSize
// tokens than its prompt holds: such a trace was written with another
// block size.
func (t *Trace) CheckBlocks(blockSize int) error {
	for _, r := range t.Requests {
		if need := (r.Input + blockSize - 1) / blockSize; len(r.HashIDs) > need {
			return fmt.Errorf("%s:%d: hash_ids: %d blocks of %d tokens, but input_length %d fills only %d; was the trace written with another block size?",
				t.Path, r.Line, len(r.HashIDs), blockSize, r.Input, need)
		}
	}
	return nil
}

// Schedule is the trace's sends divided by speedup: the gaps between
// consecutive sends (the last one 0) and the mean rate in requests per
// second (0 for a trace whose requests all arrive at once).
func (t *Trace) Schedule(speedup float64) (gaps []time.Duration, rate float64) {
	gaps = make([]time.Duration, len(t.Requests))
	for i := 1; i < len(t.Requests); i++ {
		gaps[i-1] = time.Duration(float64(t.Requests[i].At-t.Requests[i-1].At) / speedup)
	}
	span := float64(t.Requests[len(t.Requests)-1].At) / speedup
	if span > 0 {
		rate = float64(len(t.Requests)-1) / (span / float64(time.Second))
	}
	return gaps, rate
}

// Scaled is the trace with every prompt s times as long, blocks included:
// input_length and the block size are multiplied by s (rounded; at least
// one token), so requests still share the blocks they named, each now
// s times the tokens; a prompt keeps the hash_ids its scaled length
// fills. Timestamps and output lengths stay. AIPerf's prefix synthesis
// scales a trace's prompts the same way; a small test model with a short
// context replays a production trace so.
func (t *Trace) Scaled(s float64, blockSize int) (*Trace, int) {
	if s == 1 {
		return t, blockSize
	}
	bs := max(int(math.Round(float64(blockSize)*s)), 1)
	out := &Trace{Path: t.Path, Requests: make([]Request, len(t.Requests))}
	for i, r := range t.Requests {
		r.Input = max(int(math.Ceil(float64(r.Input)*s)), 1)
		if n := (r.Input + bs - 1) / bs; len(r.HashIDs) > n {
			r.HashIDs = r.HashIDs[:n]
		}
		out.Requests[i] = r
	}
	return out, bs
}
