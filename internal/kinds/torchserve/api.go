package torchserve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// api reaches TorchServe's inference (ping, API description), management
// and metrics endpoints outside the load: preflight and statistics.
type api struct {
	hc     *http.Client
	ep     endpoints
	header http.Header
}

// newTransport is an HTTP/1.1 transport for TorchServe (its netty
// frontend speaks HTTP/1.1), dialled through dial when set.
func newTransport(tlsCfg *tls.Config, dial func(ctx context.Context, network, addr string) (net.Conn, error), conns int) *http.Transport {
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		TLSClientConfig:     tlsCfg,
		DisableCompression:  true,
	}
	if dial != nil {
		tr.DialContext, tr.Proxy = dial, nil
	}
	return tr
}

// reply is a whole HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// tsError is TorchServe's error body: {"code": 404, "type":
// "ModelNotFoundException", "message": "..."}.
type tsError struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// errorOf reads TorchServe's error body; ok is false for any other body.
func errorOf(body []byte) (tsError, bool) {
	var e tsError
	if json.Unmarshal(body, &e) != nil || e.Type == "" || e.Code == 0 {
		return tsError{}, false
	}
	return e, true
}

// messageOf is a one-line account of an error answer, for messages.
func messageOf(r reply) string {
	if e, ok := errorOf(r.body); ok {
		return e.Type + ": " + e.Message
	}
	s := strings.Join(strings.Fields(string(r.body)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = http.StatusText(r.status)
	}
	return s
}

func (a *api) do(ctx context.Context, method, u string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return reply{}, err
	}
	for k, v := range a.header {
		req.Header[k] = v
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return reply{}, &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: method + " " + u, Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return reply{}, &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: method + " " + u, Err: err}
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// ping asks GET /ping. TorchServe answers {"status": "Healthy"} when its
// frontend is up (a worker may still be loading), and 500 with another
// status while it is not.
func (a *api) ping(ctx context.Context) (reply, error) {
	return a.do(ctx, http.MethodGet, a.ep.inference+"/ping")
}

// healthy reads a /ping answer.
func healthy(r reply) (ok, isPing bool) {
	var st struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(r.body, &st) != nil || st.Status == "" {
		return false, false
	}
	return r.status == http.StatusOK && st.Status == "Healthy", true
}

// serverVersion is the version in the inference API's description
// (OPTIONS /, an OpenAPI document); "" when it says none.
func (a *api) serverVersion(ctx context.Context) string {
	r, err := a.do(ctx, http.MethodOptions, a.ep.inference+"/")
	if err != nil || r.status != http.StatusOK {
		return ""
	}
	var doc struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if json.Unmarshal(r.body, &doc) != nil {
		return ""
	}
	return doc.Info.Version
}

// modelDesc is one version of a model as GET /models/{model} describes it.
type modelDesc struct {
	ModelName    string `json:"modelName"`
	ModelVersion string `json:"modelVersion"`
	MinWorkers   int    `json:"minWorkers"`
	MaxWorkers   int    `json:"maxWorkers"`
	BatchSize    int    `json:"batchSize"`
	Workers      []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"workers"`
}

// readyWorkers counts the workers in status READY, and lists every
// worker's status.
func (d modelDesc) readyWorkers() (int, []string) {
	n := 0
	var all []string
	for _, w := range d.Workers {
		if w.Status == "READY" {
			n++
		}
		all = append(all, w.Status)
	}
	return n, all
}

// notRegistered is a 404 from the management API: the model (or
// version) is not registered. It carries TorchServe's message.
type notRegistered struct{ msg string }

func (e *notRegistered) Error() string { return e.msg }

// describe asks GET /models/{model}[/{version}].
func (a *api) describe(ctx context.Context, model, version string) ([]modelDesc, error) {
	u := a.ep.management + "/models/" + url.PathEscape(model)
	if version != "" {
		u += "/" + url.PathEscape(version)
	}
	r, err := a.do(ctx, http.MethodGet, u)
	if err != nil {
		return nil, err
	}
	if r.status == http.StatusNotFound {
		return nil, &notRegistered{messageOf(r)}
	}
	if r.status != http.StatusOK {
		return nil, &transport.ServerError{Protocol: plan.ProtocolHTTP, Op: "describe model", HTTPStatus: r.status, Message: messageOf(r)}
	}
	var out []modelDesc
	if err := json.Unmarshal(r.body, &out); err != nil || len(out) == 0 {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: "describe model",
			Err: fmt.Errorf("GET %s: want a JSON list of model versions: %s", u, clip(r.body))}
	}
	return out, nil
}

// models lists the registered models (GET /models, every page).
func (a *api) models(ctx context.Context) ([]string, error) {
	var names []string
	token := ""
	for range 100 {
		u := a.ep.management + "/models?limit=1000"
		if token != "" {
			u += "&next_page_token=" + url.QueryEscape(token)
		}
		r, err := a.do(ctx, http.MethodGet, u)
		if err != nil {
			return nil, err
		}
		if r.status != http.StatusOK {
			return nil, &transport.ServerError{Protocol: plan.ProtocolHTTP, Op: "list models", HTTPStatus: r.status, Message: messageOf(r)}
		}
		var page struct {
			NextPageToken string `json:"nextPageToken"`
			Models        []struct {
				ModelName string `json:"modelName"`
			} `json:"models"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: "list models", Err: fmt.Errorf("%v: %s", err, clip(r.body))}
		}
		for _, m := range page.Models {
			names = append(names, m.ModelName)
		}
		if page.NextPageToken == "" || len(page.Models) == 0 {
			break
		}
		token = page.NextPageToken
	}
	return names, nil
}

// clip quotes the start of b for messages.
func clip(b []byte) string {
	if len(b) > 160 {
		return fmt.Sprintf("%q…", b[:160])
	}
	return fmt.Sprintf("%q", b)
}
