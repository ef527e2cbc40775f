package llmsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
)

// embeddingDim is the length of a simulated embedding.
const embeddingDim = 64

type embedRequest struct {
	Model string          `json:"model"`
	Input json.RawMessage `json:"input"`
}

// inputs returns the texts to embed: a string or a list of strings.
func (rq *embedRequest) inputs() ([]string, error) {
	var s string
	if err := json.Unmarshal(rq.Input, &s); err == nil {
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(rq.Input, &list); err == nil && len(list) > 0 {
		return list, nil
	}
	return nil, errors.New("input: a string or a non-empty list of strings is required")
}

// embed answers /v1/embeddings: the inputs are prefilled together in one
// engine step (an embedding model's whole work), then each gets a vector
// that depends only on its text.
func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: too large or cut")
		return
	}
	var rq embedRequest
	if err := json.Unmarshal(body, &rq); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "request body: "+err.Error())
		return
	}
	e, ok := s.engines[rq.Model]
	if !ok {
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("the model %q does not exist", rq.Model))
		return
	}
	texts, err := rq.inputs()
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	p := e.params.Load()
	if p.ErrorRate > 0 && s.draw() < p.ErrorRate {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "injected engine failure")
		return
	}
	tokens := promptTokens(texts)
	sq := newSeq(len(tokens), 0, 0)
	sq.tokens, sq.embed = tokens, true
	defer sq.cancelled.Store(true)
	select {
	case e.submit <- sq:
	case <-r.Context().Done():
		return
	case <-e.quit:
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "server shutting down")
		return
	}
	for !sq.finished.Load() {
		select {
		case <-sq.notify:
		case <-r.Context().Done():
			return
		case <-e.quit:
			writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "server shutting down")
			return
		}
	}
	b := []byte(`{"object":"list","data":[`)
	for i, t := range texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":[`...)
		h := promptHash(p.Seed, []string{t})
		for k := range embeddingDim {
			if k > 0 {
				b = append(b, ',')
			}
			x := h + uint64(k)*0x9e3779b97f4a7c15
			x ^= x >> 29
			x *= 0xbf58476d1ce4e5b9
			b = strconv.AppendFloat(b, float64(int64(x))/math.MaxInt64, 'g', 6, 64)
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"model":`...)
	b = strconv.AppendQuote(b, rq.Model)
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(len(tokens)), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(len(tokens)), 10)
	b = append(b, "}}"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
