package llmtrace

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	src := `{"timestamp": 1000, "input_length": 40, "output_length": 8, "hash_ids": [0, 1, 2]}

{"timestamp": 1500.5, "input_length": 20, "output_length": 4, "hash_ids": [0, 3]}
{"timestamp": 1500.5, "input_length": 5, "output_length": 1}
`
	tr, err := Parse("t.jsonl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Requests) != 3 {
		t.Fatalf("%d requests", len(tr.Requests))
	}
	r := tr.Requests[1]
	if r.At != 500500*time.Microsecond || r.Input != 20 || r.Output != 4 || len(r.HashIDs) != 2 || r.Line != 3 {
		t.Errorf("request 2: %+v", r)
	}
	gaps, rate := tr.Schedule(2)
	if gaps[0] != 250250*time.Microsecond || gaps[1] != 0 || gaps[2] != 0 {
		t.Errorf("gaps %v", gaps)
	}
	if want := 2 / 0.25025; rate < want*0.999 || rate > want*1.001 {
		t.Errorf("rate %v, want %v", rate, want)
	}
	if err := tr.CheckBlocks(16); err != nil {
		t.Errorf("blocks of 16: %v", err)
	}
	if err := tr.CheckBlocks(32); err == nil || !strings.Contains(err.Error(), "t.jsonl:1: hash_ids: 3 blocks of 32 tokens") {
		t.Errorf("blocks of 32: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{``, "t.jsonl: no requests"},
		{"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 1,", "t.jsonl:2"},
		{`{"timestamp": 0, "input_length": 1}`, "t.jsonl:1: output_length: required"},
		{`{"input_length": 1, "output_length": 1}`, "t.jsonl:1: timestamp: required"},
		{`{"timestamp": 0, "input_length": 0, "output_length": 1}`, "t.jsonl:1: input_length: 0 is not in"},
		{`{"timestamp": -1, "input_length": 1, "output_length": 1}`, "t.jsonl:1: timestamp: -1 is not"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [-2]}`, "t.jsonl:1: hash_ids[0]: -2 is negative"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1, "session": 3}`, `t.jsonl:1: json: unknown field "session"`},
		{`{"timestamp": "0", "input_length": 1, "output_length": 1}`, "t.jsonl:1:18:"},
		{"{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 4, \"input_length\": 1, \"output_length\": 1}", "t.jsonl:2: timestamp: 4 is before the previous line's 5"},
		{`{"timestamp": 0, "input_length": 1, "output_length": 1} {}`, "t.jsonl:1: more than one JSON object"},
	}
	for _, tt := range tests {
		_, err := Parse("t.jsonl", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.src, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 40, "output_length": 8, "hash_ids": [0, 1]}` + "\n" + `{"timestamp": 10, "input_length": 2, "output_length": 1}`))
	f.Add([]byte(`{"timestamp": 1e300, "input_length": 1, "output_length": 1}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		tr, err := Parse("f.jsonl", src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for i, r := range tr.Requests {
			if r.Input < 1 || r.Output < 1 || r.At < 0 || (i > 0 && r.At < tr.Requests[i-1].At) {
				t.Fatalf("request %d accepted: %+v", i, r)
			}
		}
		gaps, rate := tr.Schedule(1)
		if len(gaps) != len(tr.Requests) || rate < 0 {
			t.Fatalf("schedule %v %v", gaps, rate)
		}
		_ = tr.CheckBlocks(1)
	})
}

func TestScaled(t *testing.T) {
	tr, err := Parse("t.jsonl", []byte(`{"timestamp": 0, "input_length": 343, "output_length": 9, "hash_ids": [1, 2, 3, 4, 5, 6]}
{"timestamp": 5, "input_length": 64, "output_length": 2, "hash_ids": [1]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, bs := tr.Scaled(0.125, 64)
	if bs != 8 || s.Requests[0].Input != 43 || len(s.Requests[0].HashIDs) != 6 || s.Requests[1].Input != 8 || s.Requests[0].Output != 9 || s.Requests[1].At != tr.Requests[1].At {
		t.Errorf("scaled %+v, block %d", s.Requests, bs)
	}
	if err := s.CheckBlocks(bs); err != nil {
		t.Error(err)
	}
	// A scale the blocks cannot follow exactly keeps the ids the prompt fills.
	s, bs = tr.Scaled(0.01, 64)
	if bs != 1 || s.Requests[0].Input != 4 || len(s.Requests[0].HashIDs) != 4 {
		t.Errorf("scaled %+v, block %d", s.Requests, bs)
	}
	if same, b := tr.Scaled(1, 64); same != tr || b != 64 {
		t.Error("scale 1 changed the trace")
	}
}
