package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

type httpClient struct {
	base    string // scheme://host:port
	opts    Options
	tlsCfg  *tls.Config // nil: plaintext
	hc      *http.Client
	tr      *http.Transport
	headers http.Header
	names   nameCache // output names seen in infer replies

	lastURL       atomic.Pointer[inferURLEntry]
	lastHeaderLen atomic.Pointer[headerLenEntry]
}

func newHTTPClient(_ context.Context, opts Options) (Client, error) {
	hostport, tlsScheme, err := splitURL(plan.ProtocolHTTP, opts.URL)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	tlsCfg := opts.TLS
	if tlsCfg != nil || tlsScheme {
		scheme = "https"
		if tlsCfg == nil {
			tlsCfg = transport.DefaultTLS()
		}
		tlsCfg = tlsCfg.Clone() // the transport may mutate it
	}
	tr := transport.NewHTTPTransport(transport.HTTPTransportOptions{TLS: tlsCfg, Dial: opts.Dial, MaxConns: opts.MaxConnections})
	if opts.NoBinaryTensors {
		opts.JSONTensors = true
	}
	h := make(http.Header, len(opts.Headers))
	for k, v := range opts.Headers {
		h.Set(k, v)
	}
	return &httpClient{
		base:    scheme + "://" + hostport,
		opts:    opts,
		tlsCfg:  tlsCfg,
		hc:      &http.Client{Transport: tr},
		tr:      tr,
		headers: h,
	}, nil
}

func (c *httpClient) Close() error {
	c.tr.CloseIdleConnections()
	return nil
}

func modelPath(name, version string) string {
	p := "/v2/models/" + url.PathEscape(name)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

// httpReply is a fully read reply.
type httpReply struct {
	status int
	header http.Header
	body   []byte
}

// roundTrip sends one request and reads the whole reply. body may be nil.
// Transport failures come back as *TransportError; the status is not judged.
func (c *httpClient) roundTrip(ctx context.Context, op, method, path string, body []byte, hdr map[string]string) (*httpReply, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("http %s: building request: %w", op, err)
	}
	c.setHeaders(req)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: op, Err: stripURL(err)}
	}
	defer resp.Body.Close()
	data, err := c.readBody(resp)
	if err != nil {
		return nil, &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	return &httpReply{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

func (c *httpClient) setHeaders(req *http.Request) {
	for k, v := range c.headers {
		req.Header[k] = v
	}
	if c.opts.Gzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
}

// stripURL keeps the cause of a *url.Error; its URL adds nothing the caller
// does not know and the op already names the call.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %w", ue.Op, ue.URL, ue.Err)
	}
	return err
}

// readBody reads the reply in one allocation when Content-Length is known,
// undoing gzip if the server applied it. The library path's replies live
// as long as the caller keeps them, so each has its own buffer; the cap is
// the own connections' (transport.DefaultMaxReply).
func (c *httpClient) readBody(resp *http.Response) ([]byte, error) {
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("reading gzip reply: %w", err)
		}
		defer zr.Close()
		r = zr
		resp.ContentLength = -1
	}
	if resp.ContentLength > transport.DefaultMaxReply {
		return nil, fmt.Errorf("reply body of %d bytes is over the limit of %d", resp.ContentLength, int64(transport.DefaultMaxReply))
	}
	if resp.ContentLength >= 0 {
		data := make([]byte, resp.ContentLength)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("reading reply body: %w", err)
		}
		return data, nil
	}
	data, err := io.ReadAll(io.LimitReader(r, transport.DefaultMaxReply+1))
	if err != nil {
		return nil, fmt.Errorf("reading reply body: %w", err)
	}
	if len(data) > transport.DefaultMaxReply {
		return nil, fmt.Errorf("reply body over the limit of %d bytes", int64(transport.DefaultMaxReply))
	}
	return data, nil
}

// httpServerError builds the typed error for a non-200 reply.
func httpServerError(op string, r *httpReply) *transport.ServerError {
	msg := ""
	var e kservev2.Error
	if json.Unmarshal(r.body, &e) == nil && e.Error != "" {
		msg = e.Error
	} else {
		msg = truncate(string(r.body), 200)
		if msg == "" {
			msg = http.StatusText(r.status)
		}
	}
	return &transport.ServerError{Protocol: plan.ProtocolHTTP, Op: op, HTTPStatus: r.status, Message: msg}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// call performs a request whose successful reply is JSON decoded into out
// (out may be nil to ignore the body).
func (c *httpClient) call(ctx context.Context, op, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("http %s: encoding request: %w", op, err)
		}
		body = b
	}
	r, err := c.roundTrip(ctx, op, method, path, body, nil)
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return httpServerError(op, r)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		return &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	return nil
}

// health maps Triton's empty-body 200/400 health answers to a bool.
func (c *httpClient) health(ctx context.Context, op, path string) (bool, error) {
	r, err := c.roundTrip(ctx, op, http.MethodGet, path, nil, nil)
	if err != nil {
		return false, err
	}
	switch {
	case r.status == http.StatusOK:
		return true, nil
	case r.status >= 400 && r.status < 500:
		return false, nil
	}
	return false, httpServerError(op, r)
}

func (c *httpClient) ServerLive(ctx context.Context) (bool, error) {
	return c.health(ctx, "server live", "/v2/health/live")
}

func (c *httpClient) ServerReady(ctx context.Context) (bool, error) {
	return c.health(ctx, "server ready", "/v2/health/ready")
}

func (c *httpClient) ModelReady(ctx context.Context, name, version string) (bool, error) {
	return c.health(ctx, "model ready", modelPath(name, version)+"/ready")
}

func (c *httpClient) ServerMetadata(ctx context.Context) (*kservev2.ServerMetadata, error) {
	var md kservev2.ServerMetadata
	if err := c.call(ctx, "server metadata", http.MethodGet, "/v2", nil, &md); err != nil {
		return nil, err
	}
	return &md, nil
}

func (c *httpClient) ModelMetadata(ctx context.Context, name, version string) (*kservev2.ModelMetadata, error) {
	var md kservev2.ModelMetadata
	if err := c.call(ctx, "model metadata", http.MethodGet, modelPath(name, version), nil, &md); err != nil {
		return nil, err
	}
	return &md, nil
}

func (c *httpClient) ModelConfig(ctx context.Context, name, version string) (*ModelConfig, error) {
	const op = "model config"
	var raw json.RawMessage
	if err := c.call(ctx, op, http.MethodGet, modelPath(name, version)+"/config", nil, &raw); err != nil {
		return nil, err
	}
	cfg, err := kservev2.UnmarshalModelConfigJSON(raw)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	sum, err := kservev2.SummarizeModelConfig(cfg)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	sum.JSON = raw // keep the server's own rendering, unknown fields included
	return sum, nil
}

func (c *httpClient) RepositoryIndex(ctx context.Context) ([]kservev2.RepositoryModel, error) {
	var out []kservev2.RepositoryModel
	if err := c.call(ctx, "repository index", http.MethodPost, "/v2/repository/index", struct{}{}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *httpClient) LoadModel(ctx context.Context, name string) error {
	return c.call(ctx, "load model", http.MethodPost, "/v2/repository/models/"+url.PathEscape(name)+"/load", struct{}{}, nil)
}

func (c *httpClient) UnloadModel(ctx context.Context, name string) error {
	return c.call(ctx, "unload model", http.MethodPost, "/v2/repository/models/"+url.PathEscape(name)+"/unload", struct{}{}, nil)
}

func (c *httpClient) ModelStatistics(ctx context.Context, name, version string) ([]ModelStats, error) {
	path := "/v2/models/stats"
	if name != "" {
		path = modelPath(name, version) + "/stats"
	}
	var out kservev2.StatisticsResponse
	if err := c.call(ctx, "model statistics", http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return out.ModelStats, nil
}

func shmPath(kind, name, action string) string {
	if name == "" {
		return "/v2/" + kind + "/" + action
	}
	return "/v2/" + kind + "/region/" + url.PathEscape(name) + "/" + action
}

func (c *httpClient) RegisterSystemSharedMemory(ctx context.Context, name, key string, offset, byteSize uint64) error {
	if name == "" {
		return fmt.Errorf("http register system shared memory: empty region name")
	}
	body := kservev2.SystemSharedMemoryRegister{Key: key, Offset: offset, ByteSize: byteSize}
	return c.call(ctx, "register system shared memory", http.MethodPost, shmPath("systemsharedmemory", name, "register"), body, nil)
}

func (c *httpClient) UnregisterSystemSharedMemory(ctx context.Context, name string) error {
	return c.call(ctx, "unregister system shared memory", http.MethodPost, shmPath("systemsharedmemory", name, "unregister"), nil, nil)
}

func (c *httpClient) SystemSharedMemoryStatus(ctx context.Context, name string) ([]kservev2.SystemSharedMemoryStatus, error) {
	var out []kservev2.SystemSharedMemoryStatus
	if err := c.call(ctx, "system shared memory status", http.MethodGet, shmPath("systemsharedmemory", name, "status"), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *httpClient) RegisterCUDASharedMemory(ctx context.Context, name string, rawHandle []byte, deviceID int64, byteSize uint64) error {
	if name == "" {
		return fmt.Errorf("http register cuda shared memory: empty region name")
	}
	body := kservev2.CUDASharedMemoryRegister{RawHandle: kservev2.CUDAHandle{B64: base64.StdEncoding.EncodeToString(rawHandle)}, DeviceID: deviceID, ByteSize: byteSize}
	return c.call(ctx, "register cuda shared memory", http.MethodPost, shmPath("cudasharedmemory", name, "register"), body, nil)
}

// UnregisterCUDASharedMemory unregisters a CUDA region ("" = all).
func (c *httpClient) UnregisterCUDASharedMemory(ctx context.Context, name string) error {
	return c.call(ctx, "unregister cuda shared memory", http.MethodPost, shmPath("cudasharedmemory", name, "unregister"), nil, nil)
}
