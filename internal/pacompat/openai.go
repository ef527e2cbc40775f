package pacompat

import (
	"encoding/json"
	"fmt"
	"os"
)

// perf_analyzer's openai service kind sends each payload of the input data
// as it is written: a body with "stream": true is read as server-sent
// events, one without as one JSON reply, and stream_options go to the
// server as given. perfscen's openai kind sets stream and
// stream_options.include_usage on every body from its llm settings, so
// the scenario states what the payloads ask for, and payloads that differ
// are refused rather than all sent one way.

// payloadStreaming says whether the payloads of the input-data files
// stream and ask for usage in the stream. ok is false when a file cannot
// be read as payloads: the scenario's loader reports it at its line.
func payloadStreaming(files []string) (stream, usage, ok bool, err error) {
	seen := 0
	for _, f := range files {
		src, rerr := os.ReadFile(f)
		if rerr != nil {
			return false, false, false, nil
		}
		var doc struct {
			Data []struct {
				Payload []map[string]json.RawMessage `json:"payload"`
			} `json:"data"`
		}
		if json.Unmarshal(src, &doc) != nil {
			return false, false, false, nil
		}
		for i, e := range doc.Data {
			for j, body := range e.Payload {
				var s bool
				if raw, has := body["stream"]; has && json.Unmarshal(raw, &s) != nil {
					return false, false, false, nil
				}
				var so struct {
					IncludeUsage bool `json:"include_usage"`
				}
				if raw, has := body["stream_options"]; has {
					_ = json.Unmarshal(raw, &so)
				}
				u := s && so.IncludeUsage
				where := fmt.Sprintf("%s: data[%d].payload[%d]", f, i, j)
				switch {
				case seen == 0:
					stream, usage = s, u
				case s != stream:
					return false, false, false, &UnsupportedError{Option: "--input-data", Reason: fmt.Sprintf(
						"%s has \"stream\": %t, earlier payloads %t: perfscen streams every request of a run or none (llm.stream); give the payloads one value", where, s, stream)}
				case u != usage:
					return false, false, false, &UnsupportedError{Option: "--input-data", Reason: fmt.Sprintf(
						"%s has stream_options.include_usage %t, earlier payloads %t: perfscen asks for usage on every streamed request or none (llm.include_usage); give the payloads one value", where, u, usage)}
				}
				seen++
			}
		}
	}
	return stream, usage, seen > 0, nil
}

// llm writes the llm block of an openai command line: streamed or not,
// and usage in the stream or not, as the payloads say.
func (b *builder) llm(p *Params) error {
	stream, usage, ok, err := payloadStreaming(p.InputData)
	if err != nil {
		return err
	}
	b.line(0, "llm:")
	const from = "the payloads' \"stream\" (perf_analyzer sends each body as written)"
	b.kv(1, "stream", stream, from, "llm.stream")
	if stream {
		b.kv(1, "include_usage", usage, "the payloads' stream_options.include_usage", "llm.include_usage")
	}
	if !ok {
		b.comment(1, "the input data could not be read as payloads here; loading the scenario says why")
	}
	return nil
}
