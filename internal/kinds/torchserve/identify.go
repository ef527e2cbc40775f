package torchserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/perfscen/perfscen/internal/failure"
)

// errWrongPort marks an answer that is not TorchServe's inference API:
// waiting will not change it, and it is the scenario's fault (exit 2).
var errWrongPort = errors.New("not TorchServe's inference API")

// wrongTransport recognises a transport failure that says what listens
// instead of an HTTP/1.1 API: a gRPC (HTTP/2-only) port, or TLS against
// plain HTTP and the reverse.
func wrongTransport(url string, err error) error {
	s := err.Error()
	malformed := strings.Contains(s, "malformed HTTP")
	switch {
	case malformed && strings.Contains(s, `"\x00\x00`):
		return failure.Invalid(fmt.Errorf("%w: %s speaks HTTP/2 only, as gRPC ports do (TorchServe's gRPC inference API is on 7070); give the REST inference API, port 8080 by default", errWrongPort, url))
	case malformed && strings.Contains(s, `"\x15\x03`):
		return failure.Invalid(fmt.Errorf("%w: %s answers with TLS; write the URL as https://", errWrongPort, url))
	case strings.Contains(s, "server gave HTTP response to HTTPS client"):
		return failure.Invalid(fmt.Errorf("%w: %s answers plain HTTP; write the URL as http:// (or drop tls)", errWrongPort, url))
	}
	return nil
}

// identify says what answered GET /ping at the inference URL when it was
// not TorchServe's inference API, by asking what other APIs answer: a
// TorchServe management or metrics port, a KServe v2 (Triton) server, an
// OpenAI-compatible one, or something else.
func (a *api) identify(ctx context.Context, ping reply) error {
	base := a.ep.inference
	if e, ok := errorOf(ping.body); ok && e.Type == "ResourceNotFoundException" {
		if r, err := a.do(ctx, http.MethodGet, base+"/models"); err == nil && r.status == http.StatusOK && strings.Contains(string(r.body), `"models"`) {
			return failure.Invalid(fmt.Errorf("%w: %s is TorchServe's management API (GET /models answers there); server.url is the inference API, port 8080 by default (the management API goes in server.torchserve.management_url)", errWrongPort, base))
		}
		if r, err := a.do(ctx, http.MethodGet, base+"/metrics"); err == nil && r.status == http.StatusOK {
			return failure.Invalid(fmt.Errorf("%w: %s is TorchServe's metrics API (GET /metrics answers there); server.url is the inference API, port 8080 by default (the metrics API goes in server.torchserve.metrics_url)", errWrongPort, base))
		}
		return failure.Invalid(fmt.Errorf("%w: %s answers like TorchServe but has no GET /ping (%s); is it the inference API (port 8080 by default)?", errWrongPort, base, messageOf(ping)))
	}
	if r, err := a.do(ctx, http.MethodGet, base+"/v2"); err == nil && r.status == http.StatusOK {
		var md struct {
			Name       string   `json:"name"`
			Version    string   `json:"version"`
			Extensions []string `json:"extensions"`
		}
		if json.Unmarshal(r.body, &md) == nil && md.Name != "" {
			return failure.Invalid(fmt.Errorf("%w: %s is a KServe v2 server (%s %s, as Triton's HTTP port 8000 is); measure it with kind: kserve, or give TorchServe's inference API (port 8080 by default)", errWrongPort, base, md.Name, md.Version))
		}
	}
	if r, err := a.do(ctx, http.MethodGet, base+"/v1/models"); err == nil && r.status == http.StatusOK && strings.Contains(string(r.body), `"data"`) {
		return failure.Invalid(fmt.Errorf("%w: %s is an OpenAI-compatible server (GET /v1/models answers); measure it with kind: openai, or give TorchServe's inference API (port 8080 by default)", errWrongPort, base))
	}
	return failure.Invalid(fmt.Errorf("%w: %s does not answer TorchServe's GET /ping (HTTP %d: %s); is it TorchServe's inference API (port 8080 by default)?", errWrongPort, base, ping.status, messageOf(ping)))
}
