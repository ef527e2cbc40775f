package tfserving

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// restAPI is TF Serving's REST API (api_rest.md).
type restAPI struct {
	base    string // scheme://host:port
	hc      *http.Client
	tr      *http.Transport
	headers http.Header
	timeout time.Duration
}

// maxReply bounds a reply body read into memory.
const maxReply = 1 << 30

func newREST(url string, o connOptions) (*restAPI, error) {
	hostport, tlsScheme, err := splitURL(plan.ProtocolHTTP, url)
	if err != nil {
		return nil, err
	}
	scheme, cfg := "http", o.TLS
	if cfg != nil || tlsScheme {
		scheme = "https"
		if cfg == nil {
			cfg = &tls12
		}
		cfg = cfg.Clone()
	}
	dial := o.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	tr := &http.Transport{
		Proxy:           nil, // load generation must hit the server directly
		DialContext:     dial,
		TLSClientConfig: cfg,
		// The engine sizes concurrency: keep enough idle connections that
		// no request pays a fresh handshake at steady state.
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
		// Go's transparent gzip would add decode time the server did not
		// cause; TF Serving answers plain JSON.
		DisableCompression: true,
	}
	h := http.Header{}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	return &restAPI{base: scheme + "://" + hostport, hc: &http.Client{Transport: tr}, tr: tr, headers: h, timeout: o.Timeout}, nil
}

func (r *restAPI) close() error {
	r.tr.CloseIdleConnections()
	return nil
}

// reply is one answer: the status, its body, and its content type.
type reply struct {
	code  int
	body  []byte
	ctype string
}

// do sends one request and reads the whole answer. A failure to reach the
// server or to read its answer is a transport failure.
func (r *restAPI) do(ctx context.Context, op, method, path string, body []byte, trace *httptrace.ClientTrace) (reply, error) {
	ctx, cancel := withTimeout(ctx, r.timeout)
	defer cancel()
	if trace != nil {
		ctx = httptrace.WithClientTrace(ctx, trace)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return reply{}, fmt.Errorf("http %s: %w", op, err)
	}
	for k, v := range r.headers {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return reply{}, &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return reply{}, &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	return reply{code: resp.StatusCode, body: b, ctype: resp.Header.Get("Content-Type")}, nil
}

// serverError is a non-200 answer, with TF Serving's {"error": "..."}
// message when the body is one; such an answer is a tfError, so that a
// 404 in TF Serving's words can be told from another server's page once
// the message has been taken out of its JSON.
func serverError(op string, rp reply) error {
	msg := strings.TrimSpace(string(rp.body))
	var e struct {
		Error *string `json:"error"`
	}
	own := json.Unmarshal(rp.body, &e) == nil && e.Error != nil
	if own {
		msg = *e.Error
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	se := &transport.ServerError{Protocol: plan.ProtocolHTTP, Op: op, HTTPStatus: rp.code, Message: msg}
	if own {
		return &tfError{se}
	}
	return se
}

// tfError is a REST error answered as TF Serving answers one, a JSON
// object with an "error" member; it reads as the ServerError it wraps.
type tfError struct{ *transport.ServerError }

func (e *tfError) Unwrap() error { return e.ServerError }

// errNotTFServing marks an answer in a shape TF Serving never writes.
var errNotTFServing = errors.New("not TensorFlow Serving's answer")

func (r *restAPI) status(ctx context.Context, m modelRef) (*pb.GetModelStatusResponse, error) {
	const op = "model status"
	rp, err := r.do(ctx, op, http.MethodGet, m.path(), nil, nil)
	if err != nil {
		return nil, err
	}
	if rp.code != http.StatusOK {
		return nil, serverError(op, rp)
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(rp.body, &probe) != nil || probe["model_version_status"] == nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op,
			Err: fmt.Errorf("%w: GET %s answered %s", errNotTFServing, m.path(), excerpt(rp))}
	}
	resp := &pb.GetModelStatusResponse{}
	if err := lenientJSON.Unmarshal(rp.body, resp); err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	return resp, nil
}

func (r *restAPI) signatures(ctx context.Context, m modelRef) (*pb.SignatureDefMap, error) {
	const op = "model metadata"
	rp, err := r.do(ctx, op, http.MethodGet, m.path()+"/metadata", nil, nil)
	if err != nil {
		return nil, err
	}
	if rp.code != http.StatusOK {
		return nil, serverError(op, rp)
	}
	_, sigs, err := signaturesFromREST(rp.body)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	return sigs, nil
}

// identify asks the questions other servers answer and TF Serving does
// not: KServe v2's server metadata (Triton, MLServer: GET /v2), an
// OpenAI-compatible model list, TorchServe's /ping.
func (r *restAPI) identify(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var md struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Extensions []string `json:"extensions"`
		Object     string   `json:"object"`
		Status     string   `json:"status"`
	}
	get := func(path string) bool {
		rp, err := r.do(ctx, "identify", http.MethodGet, path, nil, nil)
		md.Name, md.Version, md.Extensions, md.Object, md.Status = "", "", nil, "", ""
		return err == nil && rp.code == http.StatusOK && json.Unmarshal(rp.body, &md) == nil
	}
	switch {
	case get("/v2") && md.Name != "" && md.Version != "":
		return fmt.Sprintf("a KServe v2 HTTP endpoint (%s %s)", md.Name, md.Version)
	case get("/v1/models") && md.Object == "list":
		return "an OpenAI-compatible endpoint (GET /v1/models lists models)"
	case get("/ping") && md.Status != "":
		return fmt.Sprintf("a TorchServe inference endpoint (GET /ping: %s)", md.Status)
	}
	return ""
}

// predictPath is the model's :predict resource.
func predictPath(m modelRef) string { return m.path() + ":predict" }

// predict posts one prepared body and times it: wait runs from the
// request written to the first byte of the answer.
func (r *restAPI) predict(ctx context.Context, path string, body []byte) (reply, time.Duration, error) {
	// The transport calls these from its own goroutines.
	var wrote, first atomic.Int64
	start := time.Now()
	trace := &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote.Store(int64(time.Since(start))) },
		GotFirstResponseByte: func() { first.Store(int64(time.Since(start))) },
	}
	rp, err := r.do(ctx, "predict", http.MethodPost, path, body, trace)
	if err != nil {
		return rp, 0, err
	}
	var wait time.Duration
	if w, f := wrote.Load(), first.Load(); w > 0 && f > w {
		wait = time.Duration(f - w)
	}
	if rp.code != http.StatusOK {
		return rp, wait, serverError("predict", rp)
	}
	return rp, wait, nil
}

// excerpt is an answer for messages: status, type and the start of the body.
func excerpt(rp reply) string {
	b := strings.TrimSpace(string(rp.body))
	if len(b) > 120 {
		b = b[:120] + "…"
	}
	if rp.ctype != "" {
		return fmt.Sprintf("%d (%s) %q", rp.code, rp.ctype, b)
	}
	return fmt.Sprintf("%d %q", rp.code, b)
}

// statusJSON writes GetModelStatus's answer as TF Serving's REST API does.
func statusJSON(resp *pb.GetModelStatusResponse) ([]byte, error) {
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(resp)
	if err != nil {
		return nil, err
	}
	return tfIndent(b), nil
}
