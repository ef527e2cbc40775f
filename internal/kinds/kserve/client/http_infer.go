package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// httpExchange is the per-request state of one Infer call: transport event
// times (the trace callbacks run on the transport's goroutines, hence
// atomics; nanoseconds since start, plus one so that 0 means "not yet")
// and the request body.
//
// The body is one contiguous buffer behind a *bytes.Reader: net/http
// recognises that type, sets ContentLength and GetBody, and writes headers
// and body with a single write(2). A custom io.Reader costs a second write
// per request (the headers are flushed first).
type httpExchange struct {
	start   time.Time // written before the request is handed over
	wrote   atomic.Int64
	first   atomic.Int64
	wroteOK atomic.Bool // the transport finished writing the body
	trace   httptrace.ClientTrace
	plain   []byte // JSON header followed by the binary inputs
	zbody   []byte // plain, gzipped, when Options.Gzip
	rd      bytes.Reader
	// Large binary inputs are not copied behind the header: the body is
	// then parts (header, then the inputs' own bytes) read in sequence.
	parts   [][]byte
	partsRd partsReader
}

// largeInputs is the binary payload size from which the inputs are sent
// from their own memory instead of being copied behind the header: the
// second write(2) costs less than copying the tensor on every request.
const largeInputs = 64 << 10

// partsReader reads byte slices one after the other without copying them
// together first.
type partsReader struct{ parts [][]byte }

func (r *partsReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.parts) > 0 {
		c := copy(p[n:], r.parts[0])
		n += c
		r.parts[0] = r.parts[0][c:]
		if len(r.parts[0]) == 0 {
			r.parts = r.parts[1:]
		}
	}
	if n == 0 && len(r.parts) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// since is a transport event's time: monotonic nanoseconds since the
// exchange's start, plus one.
func (x *httpExchange) since() int64 { return int64(time.Since(x.start)) + 1 }

// maxPooledBody keeps one huge request from pinning its buffer for good.
const maxPooledBody = 16 << 20

var exchangePool = sync.Pool{New: func() any {
	x := &httpExchange{}
	x.trace.WroteRequest = func(info httptrace.WroteRequestInfo) {
		x.wrote.Store(x.since())
		if info.Err == nil {
			x.wroteOK.Store(true)
		}
	}
	x.trace.GotFirstResponseByte = func() { x.first.Store(x.since()) }
	return x
}}

func getExchange() *httpExchange {
	x := exchangePool.Get().(*httpExchange)
	x.wrote.Store(0)
	x.first.Store(0)
	x.wroteOK.Store(false)
	x.parts = x.parts[:0]
	x.start = time.Now()
	return x
}

// release returns x to the pool. Only call it once the transport can no
// longer touch x: before the request was handed to it, or after a
// completed exchange whose body write was reported done. Elsewhere (errors,
// a reply that raced ahead of the write) x is dropped for the GC, because
// the transport's writer may still read the body or fire WroteRequest,
// which must not land in the next request's buffer or figures.
func (x *httpExchange) release() {
	if cap(x.plain) > maxPooledBody {
		x.plain = nil
	}
	if cap(x.zbody) > maxPooledBody {
		x.zbody = nil
	}
	x.rd.Reset(nil)
	clear(x.parts)
	x.parts = x.parts[:0]
	x.partsRd.parts = nil
	exchangePool.Put(x)
}

func (c *httpClient) Infer(ctx context.Context, req *InferRequest) (*InferResponse, error) {
	const op = "infer"
	if req.Model == "" {
		return nil, fmt.Errorf("http infer: empty model name")
	}
	x := getExchange()
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	body, headerLen, err := c.encodeInfer(x, req)
	if err != nil {
		x.release()
		return nil, fmt.Errorf("http %s: %w", op, err)
	}
	var rd io.Reader = &x.rd
	size := int64(len(body))
	if len(x.parts) > 0 {
		x.partsRd.parts = x.parts
		rd = &x.partsRd
		size = 0
		for _, p := range x.parts {
			size += int64(len(p))
		}
	} else {
		x.rd.Reset(body)
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &x.trace), http.MethodPost,
		c.inferURL(req.Model, req.Version), rd)
	if err != nil {
		x.release()
		return nil, fmt.Errorf("http %s: building request: %w", op, err)
	}
	hreq.ContentLength = size
	c.setHeaders(hreq)
	if headerLen >= 0 {
		hreq.Header["Content-Type"] = contentTypeBinary
		hreq.Header[kservev2.HeaderContentLength] = c.headerLenValue(headerLen)
	} else {
		hreq.Header["Content-Type"] = contentTypeJSON
	}
	if c.opts.Gzip {
		hreq.Header["Content-Encoding"] = contentEncodingGzip
	}
	// The transport directly: Client.Do's redirect bookkeeping copies the
	// headers and URL on every request, and an infer endpoint that
	// redirects is a misconfigured server, reported below by its status.
	resp, err := c.tr.RoundTrip(hreq)
	if err != nil {
		return nil, &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: op, Err: fmt.Errorf("post %s: %w", hreq.URL, err)}
	}
	data, err := c.readBody(resp)
	resp.Body.Close()
	if err != nil {
		return nil, &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, httpServerError(op, &httpReply{status: resp.StatusCode, header: resp.Header, body: data})
	}
	out, err := decodeInferReply(resp.Header.Get(kservev2.HeaderContentLength), data, req, &c.names)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	total := time.Since(x.start)
	wrote, first := x.wrote.Load(), x.first.Load()
	if wrote > 0 && first >= wrote {
		wait := time.Duration(first - wrote)
		out.Timing = Timing{Wait: wait, SendRecv: total - wait}
	} else {
		out.Timing = Timing{SendRecv: total}
	}
	if x.wroteOK.Load() {
		x.release()
	}
	return out, nil
}

// inferURL caches the last model's infer URL: a run sends to one or two
// models, and building the string costs two allocations a request.
func (c *httpClient) inferURL(model, version string) string {
	if e := c.lastURL.Load(); e != nil && e.model == model && e.version == version {
		return e.url
	}
	e := &inferURLEntry{model: model, version: version, url: c.base + modelPath(model, version) + "/infer"}
	c.lastURL.Store(e)
	return e.url
}

type inferURLEntry struct{ model, version, url string }

// headerLenValue caches the last Inference-Header-Content-Length value;
// a scenario's requests mostly share one header length.
func (c *httpClient) headerLenValue(n int) []string {
	if e := c.lastHeaderLen.Load(); e != nil && e.n == n {
		return e.v
	}
	e := &headerLenEntry{n: n, v: []string{strconv.Itoa(n)}}
	c.lastHeaderLen.Store(e)
	return e.v
}

type headerLenEntry struct {
	n int
	v []string
}

// Shared header values: the transport only reads them.
var (
	contentTypeBinary   = []string{"application/octet-stream"}
	contentTypeJSON     = []string{"application/json"}
	contentEncodingGzip = []string{"gzip"}
)

var gzipPool = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

// appendWriter lets gzip compress straight into a reused slice.
type appendWriter struct{ b *[]byte }

func (w appendWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// encodeInfer lays out the request body in x: the JSON header, then each
// binary input in order, gzipped when asked. headerLen is -1 when no binary
// part follows (a pure JSON body needs no Inference-Header-Content-Length).
func (c *httpClient) encodeInfer(x *httpExchange, req *InferRequest) (body []byte, headerLen int, err error) {
	buf, binary, err := c.appendInferHeader(x.plain[:0], req)
	if err != nil {
		return nil, 0, err
	}
	headerLen = -1
	if binary && !c.opts.Gzip && binaryInputSize(c, req) >= largeInputs {
		headerLen = len(buf)
		x.plain = buf
		x.parts = append(x.parts[:0], buf)
		for i := range req.Inputs {
			if c.sendsBinary(&req.Inputs[i]) {
				x.parts = append(x.parts, req.Inputs[i].Raw)
			}
		}
		return nil, headerLen, nil
	}
	if binary {
		headerLen = len(buf)
		for i := range req.Inputs {
			if c.sendsBinary(&req.Inputs[i]) {
				buf = append(buf, req.Inputs[i].Raw...)
			}
		}
	}
	x.plain = buf
	if !c.opts.Gzip {
		return buf, headerLen, nil
	}
	x.zbody = x.zbody[:0]
	zw := gzipPool.Get().(*gzip.Writer)
	zw.Reset(appendWriter{&x.zbody})
	zw.Write(buf) // appendWriter cannot fail
	zw.Close()
	zw.Reset(io.Discard) // drop the reference to x
	gzipPool.Put(zw)
	return x.zbody, headerLen, nil
}

// binaryInputSize is the number of bytes the binary parts add to a request.
func binaryInputSize(c *httpClient, req *InferRequest) int {
	n := 0
	for i := range req.Inputs {
		if c.sendsBinary(&req.Inputs[i]) {
			n += len(req.Inputs[i].Raw)
		}
	}
	return n
}

// sendsBinary reports whether in travels as a binary part after the header.
func (c *httpClient) sendsBinary(in *Input) bool {
	return in.Shm == nil && !c.sendsJSON(in.DataType)
}

// sendsJSON reports whether a tensor of type dt travels as JSON data.
func (c *httpClient) sendsJSON(dt tensor.DataType) bool {
	return c.opts.JSONTensors && (c.opts.NoBinaryTensors || tensor.JSONAllowed(dt))
}

// appendInferHeader writes the request JSON. binary reports whether any
// binary part follows; encodeInfer appends those parts in input order
// (sendsBinary picks the same inputs).
func (c *httpClient) appendInferHeader(dst []byte, req *InferRequest) (_ []byte, binary bool, err error) {
	dst = append(dst, '{')
	if req.ID != "" {
		dst = append(dst, `"id":`...)
		dst = appendJSONString(dst, req.ID)
		dst = append(dst, ',')
	}
	var extra []kv
	if len(req.Outputs) == 0 && !c.opts.JSONTensors {
		extra = append(extra, kv{kservev2.ParamBinaryDataOutput, true})
	}
	if len(req.Parameters) > 0 || len(extra) > 0 {
		dst = append(dst, `"parameters":`...)
		if dst, err = appendParams(dst, req.Parameters, extra...); err != nil {
			return nil, false, err
		}
		dst = append(dst, ',')
	}
	dst = append(dst, `"inputs":[`...)
	var pbuf [3]kv
	for i := range req.Inputs {
		in := &req.Inputs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = appendJSONString(dst, in.Name)
		dst = append(dst, `,"shape":`...)
		dst = appendShape(dst, in.Shape)
		dst = append(dst, `,"datatype":`...)
		dst = appendJSONString(dst, string(in.DataType))
		switch {
		case in.Shm != nil:
			dst = append(dst, `,"parameters":`...)
			if dst, err = appendParams(dst, nil, shmParams(pbuf[:0], in.Shm)...); err != nil {
				return nil, false, err
			}
		case c.sendsJSON(in.DataType):
			data, err := tensor.MarshalJSONData(in.Tensor)
			if err != nil {
				return nil, false, fmt.Errorf("input %q: %w", in.Name, err)
			}
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		default:
			dst = append(dst, `,"parameters":{"binary_data_size":`...)
			dst = strconv.AppendInt(dst, int64(len(in.Raw)), 10)
			dst = append(dst, '}')
			binary = true
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if len(req.Outputs) > 0 {
		dst = append(dst, `,"outputs":[`...)
		for i, o := range req.Outputs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = appendJSONString(dst, o.Name)
			if o.Shm == nil && c.opts.NoBinaryTensors {
				// A server without the extension may not know binary_data.
				dst = append(dst, '}')
				continue
			}
			dst = append(dst, `,"parameters":`...)
			if o.Shm != nil {
				// Triton refuses shm together with binary_data: true.
				dst, err = appendParams(dst, nil, append(shmParams(pbuf[:0], o.Shm), kv{kservev2.ParamBinaryData, false})...)
			} else {
				dst, err = appendParams(dst, nil, kv{kservev2.ParamBinaryData, !c.opts.JSONTensors})
			}
			if err != nil {
				return nil, false, err
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), binary, nil
}

// replyOutput decodes only the output parameters the client acts on; a
// generic parameters map costs a JSON decoder per output on the hot path.
type replyOutput struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	DataType   tensor.DataType `json:"datatype"`
	Parameters struct {
		BinaryDataSize *int64  `json:"binary_data_size"`
		ShmRegion      *string `json:"shared_memory_region"`
	} `json:"parameters"`
	Data json.RawMessage `json:"data"`

	binSize int64 // backs Parameters.BinaryDataSize for the hand scanner
}

type reply struct {
	ID           string              `json:"id"`
	ModelName    string              `json:"model_name"`
	ModelVersion string              `json:"model_version"`
	Parameters   kservev2.Parameters `json:"parameters"`
	Outputs      []replyOutput       `json:"outputs"`
}

// decodeInferReply parses a 200 reply body, binary extension included.
// names may be nil.
func decodeInferReply(headerLen string, body []byte, req *InferRequest, names *nameCache) (*InferResponse, error) {
	jsonPart, rest := body, []byte(nil)
	if headerLen != "" {
		n, err := kservev2.ParseHeaderLength(headerLen, len(body))
		if err != nil {
			return nil, err
		}
		if jsonPart, rest, err = kservev2.SplitBinaryBody(body, n); err != nil {
			return nil, err
		}
	}
	var r reply
	if !scanReplyHeader(jsonPart, req, names, &r) {
		r = reply{}
		if err := json.Unmarshal(jsonPart, &r); err != nil {
			return nil, fmt.Errorf("decoding reply JSON: %w", err)
		}
	}
	var sizesBuf [8]int64
	sizes := sizesBuf[:0]
	for _, o := range r.Outputs {
		sz := int64(-1)
		if p := o.Parameters.BinaryDataSize; p != nil {
			if *p < 0 {
				return nil, fmt.Errorf("output %q: binary_data_size %d is negative", o.Name, *p)
			}
			sz = *p
		}
		sizes = append(sizes, sz)
	}
	bins, err := kservev2.SliceBinary(sizes, rest)
	if err != nil {
		return nil, err
	}
	out := &InferResponse{Model: r.ModelName, Version: r.ModelVersion, ID: r.ID, Outputs: make([]tensor.Tensor, len(r.Outputs))}
	if len(r.Parameters) > 0 {
		out.Parameters = r.Parameters
	}
	for i := range r.Outputs {
		o := &r.Outputs[i]
		t := tensor.Tensor{Name: o.Name, DataType: o.DataType, Shape: o.Shape}
		switch {
		case bins[i] != nil || sizes[i] == 0:
			// A zero-byte binary output (an empty tensor) may come without
			// Inference-Header-Content-Length, as plain JSON; it is still data.
			t.Raw = bins[i]
			if t.Raw == nil {
				t.Raw = []byte{}
			}
			if err := t.Check(); err != nil {
				return nil, fmt.Errorf("output %q: %w", o.Name, err)
			}
		case len(o.Data) > 0:
			if t, err = tensor.FromJSONData(o.Name, o.DataType, o.Shape, o.Data); err != nil {
				return nil, err
			}
		default:
			if o.Parameters.ShmRegion == nil && !requestedInShm(req, o.Name) {
				return nil, fmt.Errorf("output %q carries no data, binary data or shared-memory region", o.Name)
			}
		}
		out.Outputs[i] = t
	}
	return out, nil
}

func requestedInShm(req *InferRequest, name string) bool {
	if req == nil {
		return false
	}
	for _, o := range req.Outputs {
		if o.Name == name {
			return o.Shm != nil
		}
	}
	return false
}
