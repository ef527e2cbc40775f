package protocol

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

	"github.com/perfscen/perfscen/kserve"
)

// httpTimes collects transport events; the callbacks run on the transport's
// goroutines, hence atomics. Times are monotonic nanoseconds since epoch.
type httpTimes struct {
	start atomic.Int64
	wrote atomic.Int64
	first atomic.Int64
	trace httptrace.ClientTrace
}

// epoch anchors monotonic readings that fit in an int64.
var epoch = time.Now()

func monoNow() int64 { return int64(time.Since(epoch)) }

var timesPool = sync.Pool{New: func() any {
	t := &httpTimes{}
	t.trace.WroteRequest = func(httptrace.WroteRequestInfo) { t.wrote.Store(monoNow()) }
	t.trace.GotFirstResponseByte = func() { t.first.Store(monoNow()) }
	return t
}}

func (c *httpClient) Infer(ctx context.Context, req *InferRequest) (*InferResponse, error) {
	const op = "infer"
	if req.Model == "" {
		return nil, fmt.Errorf("http infer: empty model name")
	}
	times := timesPool.Get().(*httpTimes)
	// Only a completed exchange returns times to the pool: after a failed
	// one the transport's writer may still fire WroteRequest, which must
	// not land in the next request's figures.
	times.wrote.Store(0)
	times.first.Store(0)
	times.start.Store(monoNow())

	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	body, err := c.encodeInfer(req)
	if err != nil {
		return nil, fmt.Errorf("http %s: %w", op, err)
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &times.trace), http.MethodPost,
		c.base+modelPath(req.Model, req.Version)+"/infer", body)
	if err != nil {
		body.Close()
		return nil, fmt.Errorf("http %s: building request: %w", op, err)
	}
	hreq.ContentLength = int64(body.size)
	c.setHeaders(hreq)
	hreq.Header.Set("Content-Type", body.contentType)
	if body.headerLen >= 0 {
		hreq.Header.Set(kserve.HeaderContentLength, strconv.Itoa(body.headerLen))
	}
	if body.gzipped {
		hreq.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, &TransportError{Protocol: "http", Op: op, Err: stripURL(err)}
	}
	data, err := c.readBody(resp)
	resp.Body.Close()
	if err != nil {
		return nil, &TransportError{Protocol: "http", Op: op, Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, httpServerError(op, &httpReply{status: resp.StatusCode, header: resp.Header, body: data})
	}
	out, err := decodeInferReply(resp.Header.Get(kserve.HeaderContentLength), data, req)
	if err != nil {
		return nil, &ProtocolError{Protocol: "http", Op: op, Err: err}
	}
	start := times.start.Load()
	total := time.Duration(monoNow() - start)
	wrote, first := times.wrote.Load(), times.first.Load()
	if wrote > 0 && first >= wrote {
		wait := time.Duration(first - wrote)
		out.Timing = Timing{Wait: wait, SendRecv: total - wait}
	} else {
		out.Timing = Timing{SendRecv: total}
	}
	timesPool.Put(times)
	return out, nil
}

// requestBody streams the JSON header and the raw inputs without first
// concatenating them; it returns its pooled buffers when the transport
// closes it, which may be after Do returns.
type requestBody struct {
	parts       [][]byte
	partsBuf    [9][]byte
	size        int
	headerLen   int // -1: no binary part, header not needed
	contentType string
	gzipped     bool
	hdr         *[]byte
	zbuf        *bytes.Buffer
	closed      atomic.Bool
}

var (
	bodyPool   = sync.Pool{New: func() any { return new(requestBody) }}
	headerPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}
)

func (b *requestBody) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(b.parts) > 0 {
		c := copy(p[n:], b.parts[0])
		n += c
		b.parts[0] = b.parts[0][c:]
		if len(b.parts[0]) == 0 {
			b.parts = b.parts[1:]
		}
	}
	if n == 0 && len(b.parts) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (b *requestBody) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	if b.hdr != nil && cap(*b.hdr) <= 1<<20 {
		*b.hdr = (*b.hdr)[:0]
		headerPool.Put(b.hdr)
	}
	if b.zbuf != nil {
		putBuf(b.zbuf)
	}
	clear(b.partsBuf[:])
	b.parts, b.size, b.headerLen, b.contentType, b.gzipped, b.hdr, b.zbuf = nil, 0, 0, "", false, nil, nil
	bodyPool.Put(b)
	return nil
}

var gzipPool = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

func (c *httpClient) encodeInfer(req *InferRequest) (*requestBody, error) {
	b := bodyPool.Get().(*requestBody)
	b.closed.Store(false)
	b.parts = b.partsBuf[:1] // slot 0 is the JSON header, filled below
	b.hdr = headerPool.Get().(*[]byte)
	hdr, binary, err := c.appendInferHeader((*b.hdr)[:0], req, &b.parts)
	if err != nil {
		b.Close()
		return nil, err
	}
	*b.hdr = hdr
	b.parts[0] = hdr
	b.headerLen = -1
	b.contentType = "application/json"
	if binary {
		b.headerLen = len(hdr)
		b.contentType = "application/octet-stream"
	}
	for _, p := range b.parts {
		b.size += len(p)
	}
	if c.opts.Gzip {
		b.zbuf = getBuf()
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(b.zbuf)
		for _, p := range b.parts {
			zw.Write(p) // writes to a bytes.Buffer cannot fail
		}
		zw.Close()
		gzipPool.Put(zw)
		b.parts = append(b.parts[:0], b.zbuf.Bytes())
		b.size = b.zbuf.Len()
		b.gzipped = true
	}
	return b, nil
}

// appendInferHeader writes the request JSON and collects the binary parts in
// input order. binary reports whether any binary part follows.
func (c *httpClient) appendInferHeader(dst []byte, req *InferRequest, parts *[][]byte) (_ []byte, binary bool, err error) {
	dst = append(dst, '{')
	if req.ID != "" {
		dst = append(dst, `"id":`...)
		dst = appendJSONString(dst, req.ID)
		dst = append(dst, ',')
	}
	var extra []kv
	if len(req.Outputs) == 0 && !c.opts.JSONTensors {
		extra = append(extra, kv{kserve.ParamBinaryDataOutput, true})
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
		case c.opts.JSONTensors && kserve.JSONAllowed(in.DataType):
			data, err := kserve.MarshalJSONData(in.Tensor)
			if err != nil {
				return nil, false, fmt.Errorf("input %q: %w", in.Name, err)
			}
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		default:
			dst = append(dst, `,"parameters":{"binary_data_size":`...)
			dst = strconv.AppendInt(dst, int64(len(in.Raw)), 10)
			dst = append(dst, '}')
			*parts = append(*parts, in.Raw)
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
			dst = append(dst, `,"parameters":`...)
			if o.Shm != nil {
				// Triton refuses shm together with binary_data: true.
				dst, err = appendParams(dst, nil, append(shmParams(pbuf[:0], o.Shm), kv{kserve.ParamBinaryData, false})...)
			} else {
				dst, err = appendParams(dst, nil, kv{kserve.ParamBinaryData, !c.opts.JSONTensors})
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
	DataType   kserve.DataType `json:"datatype"`
	Parameters struct {
		BinaryDataSize *int64  `json:"binary_data_size"`
		ShmRegion      *string `json:"shared_memory_region"`
	} `json:"parameters"`
	Data json.RawMessage `json:"data"`
}

type reply struct {
	ID           string            `json:"id"`
	ModelName    string            `json:"model_name"`
	ModelVersion string            `json:"model_version"`
	Parameters   kserve.Parameters `json:"parameters"`
	Outputs      []replyOutput     `json:"outputs"`
}

// decodeInferReply parses a 200 reply body, binary extension included.
func decodeInferReply(headerLen string, body []byte, req *InferRequest) (*InferResponse, error) {
	jsonPart, rest := body, []byte(nil)
	if headerLen != "" {
		n, err := kserve.ParseHeaderLength(headerLen, len(body))
		if err != nil {
			return nil, err
		}
		if jsonPart, rest, err = kserve.SplitBinaryBody(body, n); err != nil {
			return nil, err
		}
	}
	var r reply
	if err := json.Unmarshal(jsonPart, &r); err != nil {
		return nil, fmt.Errorf("decoding reply JSON: %w", err)
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
	bins, err := kserve.SliceBinary(sizes, rest)
	if err != nil {
		return nil, err
	}
	out := &InferResponse{Model: r.ModelName, Version: r.ModelVersion, ID: r.ID, Outputs: make([]kserve.Tensor, len(r.Outputs))}
	if len(r.Parameters) > 0 {
		out.Parameters = r.Parameters
	}
	for i := range r.Outputs {
		o := &r.Outputs[i]
		t := kserve.Tensor{Name: o.Name, DataType: o.DataType, Shape: o.Shape}
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
			if t, err = kserve.FromJSONData(o.Name, o.DataType, o.Shape, o.Data); err != nil {
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
