package llmsim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server serves the OpenAI-compatible API over its simulated engines.
type Server struct {
	engines map[string]*engine
	apiKey  string
	ids     atomic.Uint64
	created int64

	mu  sync.Mutex
	rng *rand.Rand // fault draws
}

// Options configure a Server.
type Options struct {
	// Params override engine parameters by model then key; models not named
	// run with their defaults.
	Params map[string]map[string]string
	// APIKey, when set, must come as "Authorization: Bearer <key>".
	APIKey string
	// Now is the clock of the engines; nil means time.Now.
	Now func() time.Time
}

// CheckParams reports the first invalid model name or parameter without
// starting anything.
func CheckParams(params map[string]map[string]string) error {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := ParseParams(n, params[n]); err != nil {
			return fmt.Errorf("model %q: %w", n, err)
		}
	}
	return nil
}

// New starts one engine per simulated model; Close stops them.
func New(opts Options) (*Server, error) {
	if err := CheckParams(opts.Params); err != nil {
		return nil, err
	}
	s := &Server{engines: map[string]*engine{}, apiKey: opts.APIKey, created: 1700000000}
	var seed uint64
	for _, name := range Models() {
		p, _ := ParseParams(name, opts.Params[name])
		e := newEngine(p)
		if opts.Now != nil {
			e.now = opts.Now
		}
		e.start()
		s.engines[name] = e
		seed ^= p.Seed
	}
	s.rng = rand.New(rand.NewPCG(seed, 0x6c6c6d))
	return s, nil
}

// SetParam changes one engine parameter for the steps and requests that
// follow.
func (s *Server) SetParam(model, key, value string) error {
	e, ok := s.engines[model]
	if !ok {
		return fmt.Errorf("unknown LLM model %q (simulated: %s)", model, strings.Join(Models(), ", "))
	}
	p := *e.params.Load()
	if err := p.set(key, value); err != nil {
		return fmt.Errorf("model %q: parameter %q: %w", model, key, err)
	}
	e.params.Store(&p)
	return nil
}

// InFlight is the number of sequences model's engine is decoding now.
func (s *Server) InFlight(model string) int {
	if e, ok := s.engines[model]; ok {
		return int(e.inFlight.Load())
	}
	return 0
}

// Close stops the engines; requests still streaming end with an error.
func (s *Server) Close() {
	for _, e := range s.engines {
		e.close()
	}
}

// draw returns a uniform [0,1) number from the fault RNG.
func (s *Server) draw() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64()
}

// ServeHTTP answers /v1/models, /v1/completions, /v1/chat/completions,
// /v1/embeddings and /metrics (the engines' figures under vLLM's names).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.apiKey != "" && r.URL.Path != MetricsPath && r.Header.Get("Authorization") != "Bearer "+s.apiKey {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "missing or wrong API key")
		return
	}
	switch r.URL.Path {
	case "/v1/models":
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use GET")
			return
		}
		s.models(w)
	case "/v1/completions":
		s.generate(w, r, false)
	case "/v1/chat/completions":
		s.generate(w, r, true)
	case "/v1/embeddings":
		s.embed(w, r)
	case MetricsPath:
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use GET")
			return
		}
		s.metrics(w)
	default:
		writeError(w, http.StatusNotFound, "invalid_request_error", "no such endpoint: "+r.URL.Path)
	}
}

func (s *Server) models(w http.ResponseWriter) {
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	for i, n := range Models() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%q,"object":"model","created":%d,"owned_by":"perfscen"}`, n, s.created)
	}
	b.WriteString("]}")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(b.String()))
}

// words is the simulated vocabulary: one word is one token.
var words = strings.Fields(`the a model token stream fast slow queue batch decode prefill cache
memory kernel tensor layer head weight value key query latency rate time step engine server client
request reply graph shape`)

// promptHash seeds a request's token stream, so the same prompt always
// gives the same tokens.
func promptHash(seed uint64, prompt []string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	_, _ = h.Write(b[:])
	for _, p := range prompt {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// tokenText is token i of a stream: a word with its leading space.
func tokenText(h uint64, i int) string {
	x := h + uint64(i)*0x9e3779b97f4a7c15
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return " " + words[x%uint64(len(words))]
}

// promptTokens are the prompt's whitespace-separated words: the simulated
// tokenizer.
func promptTokens(texts []string) []string {
	var out []string
	for _, t := range texts {
		out = append(out, strings.Fields(t)...)
	}
	return out
}
