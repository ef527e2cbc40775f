package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadPayloads(t *testing.T) {
	got, err := LoadPayloads("testdata/payload.json", BodyOptions{Model: "llm", Endpoint: EndpointChat, Stream: true, IncludeUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"max_tokens":16,"messages":[{"content":"Say hello.","role":"user"}],"model":"llm","stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true}}`,
		`{"messages":[{"content":"Count to ten.","role":"user"}],"model":"other","stream":true,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"content":"Be brief.","role":"system"},{"content":"Why?","role":"user"}],"model":"llm","stream":true,"stream_options":{"include_usage":true},"temperature":0}`,
	}
	var gs []string
	for _, b := range got {
		gs = append(gs, string(b))
	}
	if diff := cmp.Diff(want, gs); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
	// Not streamed: stream false and no stream_options.
	got, err = LoadPayloads("testdata/payload.json", BodyOptions{Model: "llm", Endpoint: EndpointChat})
	if err != nil || strings.Contains(string(got[0]), "stream_options") || !strings.Contains(string(got[0]), `"stream":false`) {
		t.Errorf("unstreamed body %s (%v)", got[0], err)
	}
}

// Every error names the file and line, an entry that decoded but is
// wrong included, with the entry's JSON path.
func TestLoadPayloadsErrors(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		endpoint string
		want     string
	}{
		{"syntax", "testdata/bad-syntax.json", EndpointChat, "testdata/bad-syntax.json:2: invalid character ']'"},
		{"completions request without prompt", "testdata/payload.json", EndpointCompletions,
			`testdata/payload.json:2: data[0].payload[0]: a v1/completions request needs "prompt"`},
		{"chat request without messages", "testdata/bad-no-messages.json", EndpointChat,
			`testdata/bad-no-messages.json:4: data[1].payload[1]: a v1/chat/completions request needs a non-empty "messages" list`},
		{"payload element not an object", "testdata/bad-payload-not-object.json", EndpointChat,
			"testdata/bad-payload-not-object.json:4: data[0].payload[1]: not a JSON object"},
		{"unknown key in an entry", "testdata/bad-entry-key.json", EndpointChat,
			`testdata/bad-entry-key.json:4: data[1]: unknown key "payloads"`},
		{"empty payload", "testdata/bad-payload-empty.json", EndpointChat,
			"testdata/bad-payload-empty.json:4: data[1].payload: want a non-empty list"},
		{"payload an object, not a list", "testdata/bad-payload-type.json", EndpointChat,
			"testdata/bad-payload-type.json:2: data[0].payload: want a non-empty list"},
		{"entry without payload", "testdata/bad-payload-missing.json", EndpointChat,
			"testdata/bad-payload-missing.json:4: data[1].payload: want a non-empty list"},
		{"missing file", "testdata/missing.json", EndpointChat, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPayloads(tc.file, BodyOptions{Endpoint: tc.endpoint})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSynthetic(t *testing.T) {
	p := Prompts{InputMean: 20, InputStdDev: 5, OutputMean: 8, OutputStdDev: 2, Count: 50, Seed: 3, IgnoreEOS: true}
	o := BodyOptions{Model: "llm", Endpoint: EndpointCompletions, Stream: true, IncludeUsage: true}
	a, err := Synthetic(p, o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Synthetic(p, o)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatal("same seed, different bodies")
	}
	var inSum, outSum int
	for _, body := range a {
		var r struct {
			Prompt        string
			MaxTokens     int  `json:"max_tokens"`
			IgnoreEOS     bool `json:"ignore_eos"`
			Stream        bool
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		if !r.IgnoreEOS || !r.Stream || !r.StreamOptions.IncludeUsage || r.MaxTokens < 1 {
			t.Fatalf("body %s", body)
		}
		inSum += len(strings.Fields(r.Prompt))
		outSum += r.MaxTokens
	}
	// Means of 50 draws: within 3 standard errors of 20 (sd 5) and 8 (sd 2).
	if m := float64(inSum) / 50; m < 17.9 || m > 22.1 {
		t.Errorf("mean input length %g, want ~20", m)
	}
	if m := float64(outSum) / 50; m < 7.1 || m > 8.9 {
		t.Errorf("mean output length %g, want ~8", m)
	}
	c, _ := Synthetic(Prompts{InputMean: 4, Count: 1, Seed: 1}, BodyOptions{Model: "m", Endpoint: EndpointChat})
	if s := string(c[0]); !strings.Contains(s, `"messages":[{"content":"`) || strings.Contains(s, "max_tokens") || !strings.Contains(s, `"stream":false`) {
		t.Errorf("chat body without output length: %s", s)
	}
}

func FuzzLoadPayloads(f *testing.F) {
	f.Add([]byte(`{"data":[{"payload":[{"prompt":"x"}]}]}`))
	f.Add([]byte(`{"data":[{"payload":[]}]}`))
	f.Add([]byte(`{"data":[{"payload":[{"messages":[{"role":"user","content":"x"}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := t.TempDir() + "/in.json"
		if err := writeFile(path, data); err != nil {
			t.Skip()
		}
		for _, ep := range []string{EndpointChat, EndpointCompletions} {
			bodies, err := LoadPayloads(path, BodyOptions{Model: "m", Endpoint: ep, Stream: true, IncludeUsage: true})
			if err != nil {
				continue
			}
			for _, b := range bodies {
				var m map[string]any
				if json.Unmarshal(b, &m) != nil || m["stream"] != true {
					t.Fatalf("accepted input gave body %s", b)
				}
			}
		}
	})
}

func TestShippedPayloadExample(t *testing.T) {
	b, err := LoadPayloads("../../../scenarios/data/openai-chat.json", BodyOptions{Model: "m", Endpoint: EndpointChat, Stream: true, IncludeUsage: true})
	if err != nil || len(b) != 3 {
		t.Fatalf("%d bodies, %v", len(b), err)
	}
}
