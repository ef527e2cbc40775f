package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/perfscen/perfscen/internal/jsonpos"
)

// BodyOptions are applied to every request body so runs are comparable
// whatever the input file says.
type BodyOptions struct {
	Model        string // set when a payload names none
	Endpoint     string // EndpointChat or EndpointCompletions
	Stream       bool
	IncludeUsage bool // stream_options.include_usage on streamed requests
}

// Prompts describe synthetic requests (see plan.Prompts).
type Prompts struct {
	InputMean, InputStdDev   float64
	OutputMean, OutputStdDev float64 // OutputMean 0: no max_tokens
	Count                    int
	Seed                     uint64
	IgnoreEOS                bool
	// SharedCount system prompts of SharedTokens words start the
	// prompts, request i with prompt i mod SharedCount; 0: none.
	SharedCount, SharedTokens int
	// Batch is the inputs of an embeddings request (0 or 1: one).
	Batch int
}

// vocabulary is common English words: most tokenizers encode each as one
// token, so a prompt of n words is close to n tokens on a real server and
// exactly n on the embedded one.
var vocabulary = strings.Fields(`time year people way day man thing woman life child world school state
family student group country problem hand part place case week company system program question work
government number night point home water room mother area money story fact month lot right study book
eye job word business issue side kind head house service friend father power hour game line end member
law car city community name president team minute idea kid body information back parent face others
level office door health person art war history party result change morning reason research girl guy
moment air teacher force education`)

// length draws a token length from a normal distribution, at least 1.
func length(r *rand.Rand, mean, sd float64) int {
	return max(int(math.Round(mean+sd*r.NormFloat64())), 1)
}

// Synthetic returns p.Count request bodies with lengths drawn from p.
func Synthetic(p Prompts, o BodyOptions) ([][]byte, error) {
	if p.Count < 1 || p.InputMean < 1 {
		return nil, fmt.Errorf("synthetic prompts: count %d and input mean %g must be at least 1", p.Count, p.InputMean)
	}
	r := rand.New(rand.NewPCG(p.Seed, 0x70726f6d))
	out := make([][]byte, 0, p.Count)
	var prefixes []string
	if p.SharedCount > 0 {
		prefixes = sharedPrefixes(p.Seed, p.SharedCount, p.SharedTokens)
	}
	var sb strings.Builder
	for i := range p.Count {
		system := ""
		if prefixes != nil {
			system = prefixes[i%len(prefixes)]
		}
		if o.Endpoint == EndpointEmbeddings {
			inputs := make([]string, max(p.Batch, 1))
			for k := range inputs {
				sb.Reset()
				words(&sb, r, length(r, p.InputMean, p.InputStdDev))
				inputs[k] = sb.String()
				if system != "" {
					inputs[k] = system + " " + inputs[k]
				}
			}
			b, err := json.Marshal(map[string]any{"model": o.Model, "input": inputs})
			if err != nil {
				return nil, err
			}
			out = append(out, b)
			continue
		}
		sb.Reset()
		words(&sb, r, length(r, p.InputMean, p.InputStdDev))
		req := map[string]any{"model": o.Model}
		setPrompt(req, o, system, sb.String())
		if p.OutputMean > 0 {
			req["max_tokens"] = length(r, p.OutputMean, p.OutputStdDev)
			if p.IgnoreEOS {
				req["ignore_eos"] = true
			}
		}
		b, err := finish(req, o)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// finish applies the stream settings and encodes the body.
func finish(req map[string]any, o BodyOptions) ([]byte, error) {
	req["stream"] = o.Stream
	if o.Stream && o.IncludeUsage {
		so, _ := req["stream_options"].(map[string]any)
		if so == nil {
			so = map[string]any{}
		}
		so["include_usage"] = true
		req["stream_options"] = so
	} else if !o.Stream {
		delete(req, "stream_options")
	}
	return json.Marshal(req)
}

// LoadPayloads reads perf_analyzer's OpenAI input-data form,
//
//	{"data": [{"payload": [{...request body...}]}, ...]}
//
// one request per payload element, in order. Each body keeps its own
// fields; model is filled in when absent, stream and stream_options follow
// o. Errors name the file and line, and the entry's JSON path.
func LoadPayloads(path string, o BodyOptions) ([][]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", where(path, raw, err), err)
	}
	if len(doc.Data) == 0 {
		return nil, fmt.Errorf("%s: no requests: want {\"data\": [{\"payload\": [{...}]}]}", path)
	}
	var out [][]byte
	for i, entry := range doc.Data {
		for k := range entry {
			if k != "payload" {
				return nil, fmt.Errorf("%s: data[%d]: unknown key %q (an OpenAI entry holds \"payload\")", at(path, raw, "data", i, k), i, k)
			}
		}
		var payloads []json.RawMessage
		if err := json.Unmarshal(entry["payload"], &payloads); err != nil || len(payloads) == 0 {
			pos := at(path, raw, "data", i, "payload")
			if _, ok := entry["payload"]; !ok {
				pos = at(path, raw, "data", i)
			}
			return nil, fmt.Errorf("%s: data[%d].payload: want a non-empty list of request objects", pos, i)
		}
		for j, p := range payloads {
			b, err := payloadBody(p, o)
			if err != nil {
				return nil, fmt.Errorf("%s: data[%d].payload[%d]: %w", at(path, raw, "data", i, "payload", j), i, j, err)
			}
			out = append(out, b)
		}
	}
	return out, nil
}

func payloadBody(p json.RawMessage, o BodyOptions) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(p, &req); err != nil || req == nil {
		return nil, errors.New("not a JSON object")
	}
	if _, ok := req["model"]; !ok {
		req["model"] = o.Model
	}
	if o.Endpoint == EndpointChat {
		if m, ok := req["messages"].([]any); !ok || len(m) == 0 {
			return nil, fmt.Errorf("a %s request needs a non-empty \"messages\" list", o.Endpoint)
		}
	} else if _, ok := req["prompt"]; !ok {
		return nil, fmt.Errorf("a %s request needs \"prompt\"", o.Endpoint)
	}
	return finish(req, o)
}

// where turns a decoding error's byte offset into file:line.
func where(path string, raw []byte, err error) string {
	line, _, ok := jsonpos.Of(raw, err)
	if !ok {
		return path
	}
	return fmt.Sprintf("%s:%d", path, line)
}

// at names the line of the value at a JSON path as file:line, so an entry
// that decoded but is wrong is found the way a syntax error is. A key
// step names the key's value; for an unknown key that is its own line.
func at(path string, raw []byte, steps ...any) string {
	line, _, ok := jsonpos.Find(raw, steps...)
	if !ok {
		return path
	}
	return fmt.Sprintf("%s:%d", path, line)
}
