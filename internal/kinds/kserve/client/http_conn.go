package client

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// httpConn is one caller's own connection for infer requests: the
// KServe encoding (encodeInfer, decodeInferReply, shared with the library
// path so both send and accept the same) over perfscen's own HTTP/1.1
// connection (transport.HTTPConn).
type httpConn struct {
	c    *httpClient
	conn *transport.HTTPConn

	x      httpExchange // request body buffers
	req    transport.HTTPRequest
	one    [1][]byte               // the body when it is one buffer
	extra  []transport.HeaderField // Options.Headers, flattened once
	header []transport.HeaderField // this request's, reused

	lastHdrLen string // last reply Inference-Header-Content-Length value
}

// NewConn returns a connection of the caller's own, or nil when the options
// need the shared transport: a cap on connections (MaxConnections) is the
// transport's to keep, and header values it would refuse stay its errors.
func (c *httpClient) NewConn() Conn {
	if c.opts.MaxConnections > 0 || !validHeaders(c.headers) {
		return nil
	}
	hc := &httpConn{c: c, conn: transport.NewHTTPConn(transport.HTTPConnConfig{
		Addr: c.base[len(c.scheme())+3:], TLS: c.tlsCfg, Dial: c.opts.Dial, Timeout: c.opts.Timeout, BusyPoll: c.opts.BusyPoll,
	})}
	hc.req = transport.HTTPRequest{Op: "infer", Method: http.MethodPost}
	for k, vs := range c.headers {
		if c.opts.Gzip && k == "Accept-Encoding" {
			continue
		}
		for _, v := range vs {
			hc.extra = append(hc.extra, transport.HeaderField{Name: k, Value: v})
		}
	}
	return hc
}

func (c *httpClient) scheme() string {
	if c.tlsCfg != nil {
		return "https"
	}
	return "http"
}

// validHeaders holds when every extra header can go on the wire as is.
func validHeaders(h http.Header) bool {
	for k, vs := range h {
		for _, v := range vs {
			if !transport.ValidHeader(k, v) {
				return false
			}
		}
	}
	return true
}

func (hc *httpConn) Infer(ctx context.Context, req *InferRequest, timeout time.Duration) (*InferResponse, error) {
	const op = "infer"
	if req.Model == "" {
		return nil, fmt.Errorf("http infer: empty model name")
	}
	start := time.Now()
	c := hc.c
	hc.x.parts = hc.x.parts[:0]
	body, headerLen, err := c.encodeInfer(&hc.x, req)
	if err != nil {
		return nil, fmt.Errorf("http %s: %w", op, err)
	}
	hc.req.Path = c.inferURL(req.Model, req.Version)[len(c.base):]
	hc.req.Header = hc.headers(headerLen)
	if len(hc.x.parts) > 0 {
		hc.req.Body = hc.x.parts
	} else {
		hc.one[0] = body
		hc.req.Body = hc.one[:]
	}
	r, err := hc.conn.Do(ctx, &hc.req, timeout)
	if err != nil {
		return nil, err
	}
	if r.Status != http.StatusOK {
		return nil, httpServerError(op, &httpReply{status: r.Status, body: r.Body})
	}
	out, err := decodeInferReply(hc.hdrLen(r), r.Body, req, &c.names)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	out.Timing = Timing{Wait: r.Wait, SendRecv: time.Since(start) - r.Wait}
	return out, nil
}

// headers are the request's headers as net/http sends them for the same
// request on the library path.
func (hc *httpConn) headers(headerLen int) []transport.HeaderField {
	h := hc.header[:0]
	if headerLen >= 0 {
		h = append(h, transport.HeaderField{Name: "Content-Type", Value: "application/octet-stream"},
			transport.HeaderField{Name: kservev2.HeaderContentLength, Value: hc.c.headerLenValue(headerLen)[0]})
	} else {
		h = append(h, transport.HeaderField{Name: "Content-Type", Value: "application/json"})
	}
	if hc.c.opts.Gzip {
		h = append(h, transport.HeaderField{Name: "Content-Encoding", Value: "gzip"},
			transport.HeaderField{Name: "Accept-Encoding", Value: "gzip"})
	}
	hc.header = append(h, hc.extra...)
	return hc.header
}

// hdrLen is the reply's Inference-Header-Content-Length, "" when absent;
// the last value is kept, as replies mostly repeat it.
func (hc *httpConn) hdrLen(r *transport.HTTPReply) string {
	v, ok := r.Header(kservev2.HeaderContentLength)
	if !ok {
		return ""
	}
	if string(v) != hc.lastHdrLen {
		hc.lastHdrLen = string(v)
	}
	return hc.lastHdrLen
}

func (hc *httpConn) Close() error { return hc.conn.Close() }
